"""The truth benchmark: does any false or broken sentence reach a user? (issue 44 item 5)

``run_customer_service`` (this part; the workbook part is another function of this module):
customer-service turns in English and Chinese over all seven tools, handoff decisions and
no-tool questions, against a freshly seeded order store, on a real vLLM server (the default
checkpoint). Each turn runs the tool for real (writes through the policy path, confirmed),
then the reply stage the workflow runs (``workflows/customer_service/replying.write_prose``:
the model's streamed prose through the claim checker).

It judges with its OWN oracle, never the checker's verdict:

* an independent parser (this file: :class:`Truth` and :func:`oracle_verdict`, its own
  lexicon and rules) of the store's rows for the turn's order and of the tool results, which
  reads every model sentence shown and calls it ``false`` (a state or a figure the store or the
  tool result contradicts or does not hold) or ``broken`` (fragment, hole, field name, JSON,
  wrong language);
* 101 sentences labelled by reading (``benchmarks/truth_data/labelled_sentences.jsonl``,
  written before the checker was tuned and kept out of every unit test), on which both the
  checker and this oracle are scored.

Report: false sentences shown (target 0), broken sentences shown (target 0), the share of turns
whose model prose survives (aim 0.7), first visible text of the reply stage against the old
token-by-token path (≤ 1.1×), and the checker's cost per sentence (p99 ≤ 1 ms).

Usage::

    python -m benchmarks.truth --server-url http://127.0.0.1:8044/v1 --limit 40
    python -m benchmarks.truth --offline        # labelled sentences and cost only, no server
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from benchmarks.first_visible import order_rows
from benchmarks.harness import BenchParser, host_info, median, percentile, write_dated_results
from workflows.customer_service.store.tools import ToolName

NAME = "truth"
DATA = Path(__file__).parent / "truth_data"
#: The kinds of turn: each tool of the workflow (its own list, in order), a handoff, none.
KINDS = (*get_args(ToolName), "handoff", "no_tool")

# --- the oracle: its own reading of facts and sentences (not the checker's code) ------------


@dataclass
class Truth:
    """What is true of one turn, read by the oracle from store rows or tool results.

    Attributes:
        status: The order's status (``processing``, ``shipped``, ``delivered``,
            ``cancelled``) or None when unknown.
        refunded: A refund of the order exists.
        approved: Something was approved this turn (a refund, an address change, a person).
        declined: Something was refused or rejected this turn.
        figures: Every id, amount, date and tracking number the turn may name.
    """

    status: str | None = None
    refunded: bool = False
    approved: bool = False
    declined: bool = False
    figures: set[str] = field(default_factory=set)


_DIGITS = re.compile(r"[0-9A-Za-z.\-/]*\d[0-9A-Za-z.\-/]*")


def _digit_tokens(text: str) -> set[str]:
    text = unicodedata.normalize("NFKC", text)
    return {t.strip(".-/").upper() for t in _DIGITS.findall(text) if t.strip(".-/")}


def truth_from_results(results: Iterable[Mapping[str, Any]], decision: str | None) -> Truth:
    """The oracle's reading of tool results (``{"tool", "ok", "facts"}``) and a decision."""
    truth = Truth()
    for result in results:
        facts = {k: str(v) for k, v in (result.get("facts") or {}).items()}
        for value in facts.values():
            truth.figures |= _digit_tokens(value)
        tool, ok = result.get("tool"), bool(result.get("ok", True))
        if facts.get("status") in ("processing", "shipped", "delivered", "cancelled"):
            truth.status = facts["status"]
        if facts.get("shipment_status") == "delivered":
            truth.status = "delivered"
        elif facts.get("shipment_status") == "in_transit":
            truth.status = "shipped"
        said = re.search(
            r"\bis (processing|shipped|delivered|cancelled)\b", facts.get("reason", "")
        )
        if said:
            truth.status = said.group(1)
        if tool in ("start_refund", "check_refund_eligibility") and ok:
            truth.status = truth.status or "delivered"
        if tool == "start_refund" and ok:
            truth.refunded = truth.approved = True
        if tool == "change_address" and ok:
            truth.approved = True
        if not ok and (facts.get("reason") or tool == "check_refund_eligibility"):
            truth.declined = True
    truth.approved |= decision == "approved"
    truth.declined |= decision == "rejected"
    return truth


def truth_from_store(store: Any, order_id: str | None, base: Truth) -> Truth:
    """``base`` (from the turn's tool results) completed with the store's own rows for
    ``order_id``: its status, refunds, ids, amounts, dates and tracking number."""
    if order_id is None:
        return base
    from sqlalchemy import select
    from sqlalchemy.orm import selectinload

    from workflows.customer_service.store import Order

    with store.sessions() as session:
        order = session.scalars(
            select(Order)
            .where(Order.id == order_id)
            .options(selectinload(Order.shipment), selectinload(Order.refunds))
        ).one_or_none()
        if order is None:
            return base
        base.status = order.status
        base.refunded |= bool(order.refunds)
        texts = [order.id, f"{order.total_cents / 100:.2f}", str(order.placed_at.date())]
        texts += [f"{r.amount_cents / 100:.2f}" for r in order.refunds]
        texts += [f"RF-{r.id:06d}" for r in order.refunds]
        if order.shipment is not None:
            s = order.shipment
            texts += [s.tracking_number, str(s.shipped_at.date())]
            texts += [str(d.date()) for d in (s.delivered_at, s.estimated_delivery) if d]
            texts += [str(e.at.date()) for e in s.events]
    for text in texts:
        base.figures |= _digit_tokens(text)
    return base


#: The oracle's lexicon: (what a sentence claims, pattern). Negated claims first.
_EN_CLAIMS = (
    ("declined", r"\b(declined|rejected|denied|not possible|not eligible|cannot|can't|unable)\b"),
    ("not_shipped", r"\b(not|n't|yet to)\b[\w ]{0,12}\b(shipped|dispatched|ship)\b"),
    ("not_delivered", r"\b(not|n't)\b[\w ]{0,12}\b(delivered|arrived)\b"),
    ("in_transit", r"\b(on (its|the) way|in transit|en route|out for delivery)\b"),
    ("refunded", r"\b(refunded|refund (has been|was|is) (approved|issued|processed|completed))\b"),
    ("delivered", r"\b(delivered|arrived)\b"),
    ("shipped", r"\b(shipped|dispatched)\b"),
    ("cancelled", r"\bcancell?ed\b"),
    ("approved", r"\bapproved\b"),
)
_ZH_CLAIMS = (
    ("declined", r"拒绝|无法|不能|未批准|未获批|不符合"),
    ("not_shipped", r"(未|没有?|尚未|还未)(发货|发出)"),
    ("not_delivered", r"(未|没有?|尚未|还未)(送达|签收|收到)"),
    ("in_transit", r"运输中|配送中|派送中|在路上|在途"),
    ("refunded", r"已退款|退款已|已为您退款|退款成功"),
    ("delivered", r"已送达|已签收|已到达"),
    ("shipped", r"已发货|已发出|已寄出"),
    ("cancelled", r"已取消"),
    ("approved", r"已批准|已通过|审核通过"),
)


def _claim_true(claim: str, truth: Truth) -> bool:
    status = truth.status
    return {
        "declined": truth.declined,
        "not_shipped": status in ("processing", "cancelled"),
        "not_delivered": status in ("processing", "shipped", "cancelled"),
        "in_transit": status == "shipped",
        "refunded": truth.refunded,
        "delivered": status == "delivered",
        "shipped": status in ("shipped", "delivered"),
        "cancelled": status == "cancelled",
        "approved": truth.approved,
    }[claim]


def _oracle_broken(sentence: str, lang: str) -> str | None:
    cjk = len(re.findall(r"[\u4e00-\u9fff]", sentence))
    latin = len(re.findall(r"[A-Za-z]", sentence))
    checks = (
        ("field name", re.search(r"[a-z]+_[a-z]+", sentence)),
        ("markup", re.search(r"[{}<>\[\]`*|]", sentence)),
        ("unbalanced quote", sentence.count('"') % 2 == 1),
        ("hole", re.search(r"\s\s|\s[.,;:!?。，]", sentence)),
        ("unfinished", sentence[-1:] not in ".!?。！？"),
        ("wrong language", (lang == "en" and cjk > 0) or (lang == "zh" and latin > 2 * cjk)),
        ("other script", re.search(r"[\u0400-\u04ff\u3040-\u30ff\uac00-\ud7af]", sentence)),
        ("starts mid-sentence", lang == "en" and sentence[:1].islower()),
        ("repeated", re.search(r"(\b\w+\b.{3,30}?)\1|(.{4,})\2", sentence)),
    )  # fmt: skip
    return next((name for name, hit in checks if hit), None)


def oracle_verdict(sentence: str, lang: str, truth: Truth) -> tuple[str, str]:
    """``("ok" | "false" | "broken", why)`` for one sentence shown to a customer."""
    sentence = sentence.strip()
    if not sentence:
        return "broken", "empty"
    broken = _oracle_broken(sentence, lang)
    if broken:
        return "broken", broken
    invented = _digit_tokens(sentence) - truth.figures
    if invented:
        return "false", f"figure {sorted(invented)[0]}"
    if re.search(
        r"\b(two|three|four|five|six|seven|ten|several)\b|[两三四五六七十]\s*[个天周]", sentence
    ):
        return "false", "a count no tool gave"
    text = sentence
    for claim, pattern in _ZH_CLAIMS if lang == "zh" else _EN_CLAIMS:
        if re.search(pattern, text, re.I):
            if not _claim_true(claim, truth):
                return "false", claim
            text = re.sub(pattern, " ", text, flags=re.I)
    return "ok", ""


# --- the labelled sentences -------------------------------------------------------------------


def run_labelled() -> dict[str, Any]:
    """The checker and the oracle on the sentences labelled by reading."""
    from workflows.customer_service.claims import ReplyChecker, TurnFacts

    scenarios = json.loads((DATA / "scenarios.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (DATA / "labelled_sentences.jsonl").open()]
    counts: dict[str, dict[str, int]] = {}
    oracle_agrees = 0
    misses: list[dict[str, str]] = []
    for row in rows:
        scenario = scenarios[row["scenario"]]
        results, decision = scenario["results"], scenario.get("decision")
        checker = ReplyChecker(
            TurnFacts.of(results, decision),
            scenario["lang"],
            intent=scenario.get("intent"),
            require_topic=not results and decision is None,
        )
        shown = bool(checker.feed(row["sentence"] + " ") + checker.flush())
        label = row["label"]
        cell = counts.setdefault(label, {"n": 0, "shown": 0})
        cell["n"] += 1
        cell["shown"] += shown
        if shown != (label == "ok"):
            misses.append({"label": label, "sentence": row["sentence"], "shown": str(shown)})
        verdict, _ = oracle_verdict(
            row["sentence"], scenario["lang"], truth_from_results(results, decision)
        )
        oracle_agrees += (verdict == "ok") == (label == "ok")
    return {
        "n": len(rows),
        "by_label": counts,
        "false_shown": counts.get("false", {}).get("shown", 0),
        "broken_shown": counts.get("broken", {}).get("shown", 0),
        "ok_kept_share": round(counts["ok"]["shown"] / counts["ok"]["n"], 3),
        "oracle_agreement": round(oracle_agrees / len(rows), 3),
        "checker_misses": misses,
    }  # fmt: skip


def checker_cost(sentences: list[tuple[str, str, Any]], repeat: int = 20) -> dict[str, Any]:
    """Microseconds per ``check_sentence`` call over ``(sentence, lang, facts)``."""
    from workflows.customer_service.claims import check_sentence

    samples: list[float] = []
    per_sentence: list[float] = []  # each sentence's median over its repeats
    check_sentence("Warm-up.", sentences[0][2], "en")  # loads OpenCC's tables once
    for sentence, lang, facts in sentences:
        mine: list[float] = []
        for _ in range(repeat):
            start = time.perf_counter()
            check_sentence(sentence, facts, lang)  # type: ignore[arg-type]
            mine.append((time.perf_counter() - start) * 1e6)
        samples += mine
        per_sentence.append(median(mine) or 0.0)
    return {
        "sentences": len(sentences),
        "calls": len(samples),
        "p50_us": round(median(samples) or 0.0, 1),
        "p99_us": round(percentile(samples, 99) or 0.0, 1),
        "max_us": round(max(samples, default=0.0), 1),
        # the machine's noise (a 2-core box shared by several processes) taken out: the p99
        # over sentences of each sentence's median cost
        "p99_of_sentence_medians_us": round(percentile(per_sentence, 99) or 0.0, 1),
        "load_average": list(__import__("os").getloadavg()),
    }


# --- customer-service turns -----------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One benchmark turn: a message of ``kind`` about ``order_id`` from ``customer``."""

    kind: str
    lang: str
    message: str
    customer: str
    order_id: str | None
    decision: str | None = None


#: The order statuses each kind of turn is asked about (the first most often).
_STATUSES: dict[str, tuple[str, ...]] = {
    "lookup_order": ("delivered", "shipped", "processing", "cancelled"),
    "track_shipment": ("shipped", "delivered", "processing"),
    "check_refund_eligibility": ("delivered", "shipped"),
    "start_refund": ("delivered", "processing"),
    "cancel_order": ("processing", "shipped"),
    "change_address": ("processing", "delivered"),
    "open_ticket": ("delivered", "shipped"),
    "handoff": ("delivered",),
}


def make_turns(store: Any, count: int) -> list[Turn]:
    """At least ``count`` turns (rounds over every message), orders drawn round-robin from the
    seeded store per language and status."""
    messages = json.loads((DATA / "messages.json").read_text(encoding="utf-8"))
    pools: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for order_id, status, customer, locale in order_rows(store):
        pools.setdefault((locale[:2], status), []).append((order_id, customer))
    by_kind: dict[str, list[Turn]] = {kind: [] for kind in KINDS}
    spin = 0
    while sum(map(len, by_kind.values())) < count:
        for kind in KINDS:
            for lang in ("en", "zh"):
                for text in messages[kind][lang]:
                    spin += 1
                    by_kind[kind].append(_turn(kind, lang, text, pools, spin))
    # interleaved (one of each kind in turn, languages alternating), so --limit keeps the mix
    for kind in KINDS:
        en = [t for t in by_kind[kind] if t.lang == "en"]
        zh = [t for t in by_kind[kind] if t.lang == "zh"]
        by_kind[kind] = [t for pair in itertools.zip_longest(en, zh) for t in pair if t]
    mixed = itertools.zip_longest(*by_kind.values())
    return [t for group in mixed for t in group if t is not None]


def _turn(kind: str, lang: str, text: str, pools: Mapping[Any, list[Any]], spin: int) -> Turn:
    if kind == "no_tool":
        customer = "C00001"
        return Turn(kind, lang, text, customer, None)
    statuses = _STATUSES[kind]
    status = statuses[spin % len(statuses)] if spin % 3 == 0 else statuses[0]
    pool = pools.get((lang, status)) or pools[(lang, statuses[0])]
    order_id, customer = pool[spin % len(pool)]
    decision = ("approved", "rejected")[spin % 2] if kind == "handoff" else None
    return Turn(kind, lang, text.replace("{id}", order_id), customer, order_id, decision)


def run_tool(store: Any, turn: Turn, key: str) -> list[dict[str, Any]]:
    """The turn's tool results, run for real on the store (writes through the policy path,
    as the customer asked and confirmed them)."""
    from workflows.customer_service.policy import WriteAction, execute_write
    from workflows.customer_service.store import ToolError, ToolResult

    tools = store.tools(turn.customer)
    if turn.kind == "no_tool":
        return []
    tool = "start_refund" if turn.kind == "handoff" else turn.kind
    args: dict[str, Any] = {"order_id": turn.order_id}
    try:
        if tool in ("lookup_order", "track_shipment", "check_refund_eligibility"):
            return [tools.run(tool, args).model_dump()]
        if turn.decision == "rejected":
            facts = {"order_id": str(turn.order_id), "reason": "declined after review"}
            return [ToolResult(tool=tool, ok=False, error_code="policy", facts=facts).model_dump()]
        args = _write_args(tools, tool, turn, args)
        action = WriteAction(
            tool=tool, customer_id=turn.customer, arguments=args, key=key,
            ask=turn.message, confirmation="yes", confirmed_by=turn.customer,
        )  # fmt: skip
        person = "person:benchmark" if turn.decision == "approved" else None
        return [execute_write(tools, action, approved_by=person).model_dump()]
    except ToolError as exc:
        facts = {"order_id": str(turn.order_id)}
        if exc.code == "policy":
            facts["reason"] = str(exc).split(": ", 1)[-1][:200]
        return [ToolResult(tool=tool, ok=False, facts=facts, error_code=exc.code).model_dump()]


def _write_args(tools: Any, tool: str, turn: Turn, args: dict[str, Any]) -> dict[str, Any]:
    from workflows.customer_service.asks import extract_address, normalise, own_words

    if tool == "start_refund":
        left = tools.run("check_refund_eligibility", args).facts["refundable"]
        args["amount_cents"] = round(float(left.split()[-1]) * 100) or None
    elif tool == "change_address":
        args["new_address"] = extract_address(own_words(normalise(turn.message)))[0]
    elif tool == "open_ticket":
        args.update(subject=turn.message[:80], body=turn.message)
    return args


#: The triage the reply prompt is given per kind of turn (code's, to spend the CPU on replies).
_ISSUE = {
    "lookup_order": ("order_status", "status"),
    "track_shipment": ("delivery", "track"),
    "check_refund_eligibility": ("refund", "refund"),
    "start_refund": ("refund", "refund"),
    "cancel_order": ("cancellation", "cancel"),
    "change_address": ("order_status", "change_address"),
    "open_ticket": ("complaint", None),
    "handoff": ("refund", "refund"),
    "no_tool": ("other", None),
}


async def _reply(gateway: Any, turn: Turn, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The workflow's reply stage on one turn, timed: the first raw token (what the old
    token-by-token path showed first) and the first checked sentence."""
    from orchestrator.core.client import TextDelta
    from skills import IssueTriage, triage_issue
    from workflows.customer_service.claims import reply_intent
    from workflows.customer_service.replying import intent_answer, write_prose

    issue, plan_intent = _ISSUE[turn.kind]
    triage = IssueTriage(issue_type=issue, urgency="medium", sentiment="neutral")  # type: ignore[arg-type]
    pre_reply_s = 0.0
    if turn.kind == "no_tool":  # the main job's turn: the triage call comes first, for real
        began = time.perf_counter()
        triage = await triage_issue(gateway, turn.message)
        pre_reply_s = time.perf_counter() - began
        issue = triage.issue_type
    started = time.perf_counter()
    marks: dict[str, float] = {}
    stream = gateway.stream

    async def timed(*args: Any, **kwargs: Any) -> Any:
        async for item in stream(*args, **kwargs):
            if isinstance(item, TextDelta) and item.text.strip():
                marks.setdefault("raw", time.perf_counter() - started)
            yield item

    gateway.stream = timed
    shown: list[str] = []

    def emit(event: Any) -> None:
        if event.kind == "reply_token":
            marks.setdefault("checked", time.perf_counter() - started)
            shown.append(event.text.strip())

    intent = reply_intent(plan_intent, turn.message, issue)
    # as the workflow: code answers a no-tool intent with the fact sentences, before the model
    answer = intent_answer(results, turn.decision, intent, turn.lang, turn.message)  # type: ignore[arg-type]
    if answer or results:
        marks["code"] = time.perf_counter() - started
    prose = await write_prose(
        gateway, message=turn.message, triage=triage, results=results, decision=turn.decision,
        lang=turn.lang,  # type: ignore[arg-type]
        intent=intent, emit=emit, answered=answer is not None,
    )  # fmt: skip
    return {
        "model_sentences": [] if prose.code_written or prose.cut else shown,
        "code_written": prose.code_written,
        "cut": prose.cut,
        "dropped": prose.dropped,
        "pre_reply_s": pre_reply_s,
        "code_answer": answer,
        "first_raw_s": marks.get("raw"),
        # what the customer sees first now: code's sentences, else the first checked one
        "first_checked_s": marks.get("code", marks.get("checked")),
        "total_s": time.perf_counter() - started,
    }


async def _run_turns(server_url: str, store: Any, turns: list[Turn], folder: Path) -> list[dict]:
    from orchestrator.classifier import Classification
    from orchestrator.core.client import VLLMClient
    from orchestrator.core.gateway import ModelGateway
    from orchestrator.request import Request
    from orchestrator.routes import Route
    from orchestrator.telemetry import TelemetryStore
    from orchestrator.testing import SCRIPTED_ARCH
    from serving.capture import NoCapture

    # routing capture off: this benchmark reads what the model wrote, not its experts
    client = VLLMClient(server_url, "ernie", NoCapture(SCRIPTED_ARCH), timeout_s=300)
    await client.check()
    telemetry = TelemetryStore(f"sqlite:///{folder / 'telemetry.db'}")
    route = Classification(route=Route("customer_service"), confidence=1.0, scores={}, reason="b")
    out: list[dict[str, Any]] = []
    try:
        for number, turn in enumerate(turns):
            request = Request(text=turn.message, customer_id=turn.customer)
            await telemetry.astart_request(request, route, "customer_service")
            gateway = ModelGateway(
                client, telemetry, request_id=request.id, classification=route,
                workflow="customer_service", max_tokens=64,
            )  # fmt: skip
            results = run_tool(store, turn, key=f"truth:{number}")
            reply = await _reply(gateway, turn, results)
            base = truth_from_results(results, turn.decision)
            truth = truth_from_store(store, turn.order_id, base)
            verdicts = [oracle_verdict(s, turn.lang, truth) for s in reply["model_sentences"]]
            out.append({"turn": turn.__dict__, "results": results, **reply, "verdicts": verdicts})
            await telemetry.afinish_request(request.id, "succeeded")
    finally:
        await client.aclose()
        telemetry.close()
    return out


def summarise_turns(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The headline figures of the customer-service turns."""
    shown = [v for r in rows for v in r["verdicts"]]
    no_tool = [r for r in rows if r["turn"]["kind"] == "no_tool"]
    timed = [r for r in no_tool if r["first_raw_s"] is not None]
    med_before = median([r["first_raw_s"] for r in timed])
    med_after = median([r["first_checked_s"] for r in timed])
    turn_before = median([r["pre_reply_s"] + r["first_raw_s"] for r in timed])
    turn_after = median([r["pre_reply_s"] + r["first_checked_s"] for r in timed])
    by_kind: dict[str, dict[str, int]] = {}
    for r in rows:
        cell = by_kind.setdefault(
            f"{r['turn']['kind']}/{r['turn']['lang']}", {"turns": 0, "kept": 0}
        )
        cell["turns"] += 1
        cell["kept"] += bool(r["model_sentences"])
    reasons: dict[str, int] = {}
    for r in rows:
        for d in r["dropped"]:
            kind = d["reason"].split(":")[0]
            reasons[kind] = reasons.get(kind, 0) + 1
    return {
        "turns": len(rows),
        "model_sentences_shown": len(shown),
        "false_shown": sum(v == "false" for v, _ in shown),
        "broken_shown": sum(v == "broken" for v, _ in shown),
        "prose_survives_share": round(sum(bool(r["model_sentences"]) for r in rows) / len(rows), 3),
        "code_written_turns": sum(r["code_written"] for r in rows),
        "cut_turns": sum(r["cut"] for r in rows),
        "dropped_by_kind": reasons,
        "kept_by_turn_kind": by_kind,
        "no_tool_first_visible_s": {
            "turns": len(timed), "reply_stage_before": med_before, "reply_stage_after": med_after,
            "reply_stage_ratio": _ratio(med_after, med_before),
            "turn_before": turn_before, "turn_after": turn_after,
            "turn_ratio": _ratio(turn_after, turn_before),
        },
        "tool_turns_first_visible": "code's fact sentence, before the model call, as before",
        "reply_stage_median_s": median([r["total_s"] for r in rows]),
    }  # fmt: skip


def _ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a and b else None


def run_customer_service(server_url: str, count: int, *, customers: int = 60) -> dict[str, Any]:
    """The customer-service part: ``count`` turns (at least) on ``server_url`` against a store
    seeded for this run, judged by the oracle; plus the labelled sentences and the cost."""
    from workflows.customer_service.claims import TurnFacts
    from workflows.customer_service.store import OrderStore

    with tempfile.TemporaryDirectory() as tmp:
        store = OrderStore(f"sqlite:///{Path(tmp) / 'cs.db'}")
        store.seed(customers, seed=44, as_of=datetime(2026, 12, 1, tzinfo=UTC))
        turns = make_turns(store, count)[:count]
        rows = asyncio.run(_run_turns(server_url, store, turns, Path(tmp)))
        store.close()
    sentences = [
        (s, r["turn"]["lang"], TurnFacts.of(r["results"], r["turn"]["decision"]))
        for r in rows
        for s in r["model_sentences"] + [d["sentence"] for d in r["dropped"]]
    ]
    return {
        "summary": summarise_turns(rows),
        "labelled": run_labelled(),
        "checker_cost": checker_cost(sentences) if sentences else None,
        "shown_and_judged": [
            {"turn": r["turn"]["message"], "sentence": s, "oracle": v}
            for r in rows for s, v in zip(r["model_sentences"], r["verdicts"], strict=True)
        ],
        "rows": rows,
    }  # fmt: skip


def _offline_cost() -> dict[str, Any]:
    """The checker's cost on the labelled sentences (no server needed)."""
    from workflows.customer_service.claims import TurnFacts

    scenarios = json.loads((DATA / "scenarios.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (DATA / "labelled_sentences.jsonl").open()]
    picked = [(r["sentence"], scenarios[r["scenario"]]) for r in rows]
    sentences = [
        (text, sc["lang"], TurnFacts.of(sc["results"], sc.get("decision"))) for text, sc in picked
    ]
    return checker_cost(sentences, repeat=200)


def markdown(data: Mapping[str, Any]) -> str:
    """The human summary."""
    lab = data["labelled"]
    lines = [
        f"# Truth benchmark ({data['date']})",
        "",
        f"Machine: {data['host'].get('cpu_model', '?')}, {data['host'].get('cpus')} CPUs, no GPU. "
        f"Server: {data.get('server_url')}.",
        "",
        "## Labelled sentences (read by a person; never used to tune the checker)",
        "",
        f"- {lab['n']} sentences: false shown **{lab['false_shown']}** of "
        f"{lab['by_label']['false']['n']}, broken shown **{lab['broken_shown']}** of "
        f"{lab['by_label']['broken']['n']}, true sentences kept {lab['ok_kept_share']}",
        f"- the oracle agrees with the labels on {lab['oracle_agreement']} of them",
        "",
        f"Checker cost per sentence: {data.get('checker_cost')}",
    ]
    cs = data.get("customer_service")
    if cs:
        s = cs["summary"]
        lines += [
            "",
            "## Customer-service turns on the real server",
            "",
            f"- turns: {s['turns']}; model sentences shown: {s['model_sentences_shown']}",
            f"- false sentences shown (oracle): **{s['false_shown']}** (target 0)",
            f"- broken sentences shown (oracle): **{s['broken_shown']}** (target 0)",
            f"- share of turns whose model prose survives: **{s['prose_survives_share']}** "
            "(aim 0.7)",
            f"- dropped by kind: {s['dropped_by_kind']}",
            f"- first visible text, no-tool turns: {s['no_tool_first_visible_s']}",
            f"- tool turns: {s['tool_turns_first_visible']}",
        ]
    if "reports" in data:  # the workbook part (benchmarks/truth_reports.py, issue 44 item 5)
        from benchmarks import truth_reports

        lines += ["", truth_reports.markdown(data["reports"]).replace("# ", "## ", 1)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = BenchParser(NAME, __doc__, repeat=None)
    parser.add_argument("--server-url", default="http://127.0.0.1:8044/v1")
    parser.add_argument("--limit", type=int, default=320, help="Turns to run (300+ for a run).")
    parser.add_argument("--offline", action="store_true", help="No server: labelled and cost.")
    parser.add_argument(
        "--customer-service-only", action="store_true", help="Leave out the workbook part."
    )
    args = parser.parse_args()
    when = datetime.now(UTC).replace(microsecond=0)
    data: dict[str, Any] = {"date": when.date().isoformat(), "host": host_info()}
    if args.offline:
        data.update(labelled=run_labelled(), checker_cost=_offline_cost())
    else:
        cs = run_customer_service(args.server_url, args.limit)
        data.update(server_url=args.server_url, customer_service=cs, labelled=cs["labelled"],
                    checker_cost=cs["checker_cost"])  # fmt: skip
    if not args.customer_service_only:  # the workbook part: benchmarks/truth_reports.py
        from benchmarks import truth_reports

        data["reports"] = truth_reports.run_part(None if args.offline else args.server_url)
    write_dated_results(args, NAME, data, markdown(data), when)


if __name__ == "__main__":
    main()
