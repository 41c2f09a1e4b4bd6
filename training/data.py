"""Training data for the trained offline ERNIE-MoE, built from the project's labelled sets.

Every example is one chat call exactly as a skill sends it (the skill's own system prompt and
``delimit``-ed user turn) plus a target answer written by code from the dataset's labels:

==========  ===========================================  =====================================
task        prompt (skill)                               target (code, from labels)
==========  ===========================================  =====================================
triage      :mod:`skills.triage` on a customer-service   compact JSON; ``issue_type`` and
            utterance (bitext, banking77, clinc150,      ``urgency`` from the row's intent /
            waimai)                                      category label, ``sentiment`` from
                                                         the label (waimai: its 0/1 label)
risk        :mod:`skills.assess_risk` on a moderation    compact JSON; decision, severity and
            post (tune split only)                       categories from the flagged / hate /
                                                         offensive labels
reply       :mod:`skills.reply` ``stream_reply`` with    a template per issue type and
            tool facts as placeholders                   language that names facts only as
                                                         placeholders (code fills them in)
report      :mod:`skills.write_report` on a list of      compact JSON citing figures as
            figures (``F1 label = value``)               ``{F1}``, never a number
==========  ===========================================  =====================================

**Splits.** Customer-service rows use the labelled request set's stable hash
(:func:`orchestrator.classifier.labelled_set.split_of`, ``file name|text``) and moderation posts
the moderation set's split (:func:`workflows.content_moderation.dataset.load_moderation_set`,
the same hash). Only ``tune`` rows are ever trained on; ``test`` rows are only evaluated
(:func:`held_out_examples`).

**Determinism.** Everything is drawn from ``random.Random(seed)`` over rows read in file order,
so the same data folder and seed give the same examples; :func:`data_hashes` records SHA-256 of
every input file and of the built examples.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from orchestrator.classifier.labelled_set import split_of
from orchestrator.datasets import TEXT_COLUMNS
from orchestrator.exceptions import UserError
from skills.assess_risk import EVIDENCE_MAX_CHARS, build_messages
from skills.prompting import delimit
from skills.triage import SYSTEM as TRIAGE_SYSTEM
from skills.triage import IssueTriage
from training.jobs import (
    ToolWorld,
    draft_messages,
    excel_examples,
    fact_reply,
    plain_reply,
    reply_messages,
    tool_call_text,
    tool_messages,
    tool_of,
)
from workflows.content_moderation.dataset import LabelledPost, language, load_moderation_set
from workflows.content_moderation.graph import prepare_post
from workflows.content_moderation.judgement import MODEL_CATEGORIES
from workflows.content_moderation.policy import load_policy
from workflows.customer_service.signals import INTENT_TOOL

_T = TypeVar("_T")
Task = Literal["triage", "risk", "reply", "reply_plain", "draft", "tool", "interpret", "report"]
TASKS: tuple[Task, ...] = (
    "triage", "risk", "reply", "reply_plain", "draft", "tool", "interpret", "report",
)  # fmt: skip
#: The workflow (route) each task's calls belong to, for the specialisation measurements.
WORKFLOW_OF: dict[Task, str] = {
    "triage": "customer_service",
    "reply": "customer_service",
    "reply_plain": "customer_service",
    "draft": "customer_service",
    "tool": "customer_service",
    "risk": "content_moderation",
    "interpret": "excel_report",
    "report": "excel_report",
}


class Example(BaseModel):
    """One training or evaluation example.

    Attributes:
        task: triage / risk / reply / report.
        lang: ``en`` or ``zh`` (of the user text).
        source: ``file.csv:row`` (or ``synthetic:N`` for report figure lists).
        split: ``tune`` (trained on) or ``test`` (evaluation only).
        messages: The chat turns the skill sends (``role``, ``content``).
        target: The answer the model is trained to give (code-written).
        label: The label the target encodes (triage: issue type; risk: ``flagged``/``ok``...).
        facts: reply only: placeholder name → value (what the tools returned).
    """

    model_config = ConfigDict(frozen=True)

    task: Task
    lang: Literal["en", "zh"]
    source: str
    split: Literal["tune", "test"]
    messages: tuple[dict[str, str], ...]
    target: str
    label: str = ""
    facts: dict[str, str] = {}


# --------------------------------------------------------------------------- triage labels

#: Substrings of a dataset's intent / category label → issue type (first match wins).
_ISSUE_RULES: tuple[tuple[str, str], ...] = (
    ("refund", "refund"),
    ("cancel", "cancellation"),
    ("complaint", "complaint"),
    ("review", "product_feedback"),
    ("feedback", "product_feedback"),
    ("track", "order_status"),
    ("order", "order_status"),
    ("deliver", "delivery"),
    ("shipping", "delivery"),
    ("arrival", "delivery"),
    ("card", "card"),
    ("atm", "card"),
    ("pin", "account_access"),
    ("passcode", "account_access"),
    ("password", "account_access"),
    ("account", "account_access"),
    ("verify", "account_access"),
    ("identity", "account_access"),
    ("login", "account_access"),
    ("sign", "account_access"),
    ("invoice", "billing"),
    ("bill", "billing"),
    ("fee", "billing"),
    ("charge", "billing"),
    ("payment", "payment"),
    ("pay", "payment"),
    ("transfer", "payment"),
    ("top_up", "payment"),
    ("topping_up", "payment"),
    ("cash", "payment"),
    ("exchange", "payment"),
    ("transaction", "payment"),
    ("balance", "payment"),
)
_HIGH = ("lost", "stolen", "compromised", "fraud", "declined", "failed", "reverted", "freeze")
_MEDIUM = ("refund", "complaint", "not_received", "pending", "cancel", "wrong", "charge")
_NEGATIVE = (*_HIGH, "complaint", "not_received", "wrong", "not_working", "damaged", "broke")


def issue_type_of(label: str) -> str:
    """The :data:`skills.triage.IssueType` a dataset label stands for (``other`` if none).

    Example:
        >>> issue_type_of("REFUNDS/get_refund"), issue_type_of("lost_or_stolen_card")
        ('refund', 'card')
    """
    low = label.lower()
    return next((issue for key, issue in _ISSUE_RULES if key in low), "other")


def urgency_of(label: str) -> str:
    """``high`` for lost/stolen/fraud/declined-like labels, ``medium`` for refunds and
    complaints, else ``low``."""
    low = label.lower()
    if any(k in low for k in _HIGH):
        return "high"
    return "medium" if any(k in low for k in _MEDIUM) else "low"


def sentiment_of(label: str) -> str:
    """``negative`` for problem labels, else ``neutral``."""
    return "negative" if any(k in label.lower() for k in _NEGATIVE) else "neutral"


class CSRow(BaseModel):
    """A labelled customer-service utterance."""

    model_config = ConfigDict(frozen=True)

    source: str
    text: str
    lang: Literal["en", "zh"]
    split: Literal["tune", "test"]
    issue_type: str
    urgency: str
    sentiment: str
    label: str


def _label(row: dict[str, str]) -> tuple[str, str | None] | None:
    """``(label text, waimai sentiment)`` of a row, or None when the file has no usable label."""
    if "intent" in row and row.get("category"):  # bitext: CATEGORY/intent
        return f"{row['category']}/{row['intent']}", None
    if "intent" in row and "domain" in row:  # clinc150 (oos rows are 'other')
        return f"{row['domain']}/{row['intent']}", None
    if "category" in row:  # banking77
        return row["category"], None
    if "review" in row and row.get("label") in ("0", "1"):  # waimai: 1 positive, 0 negative
        return ("delivery/review_positive" if row["label"] == "1" else "delivery/complaint"), (
            "positive" if row["label"] == "1" else "negative"
        )
    return None


def customer_service_rows(data_dir: Path) -> list[CSRow]:
    """Every labelled utterance of ``data_dir/customer_service/*.csv`` (files sorted by name).

    Files without an intent/category/sentiment label (e.g. ATEC's paraphrase pairs) are skipped.

    Raises:
        UserError: The folder is missing or holds no CSV; a file cannot be read.
    """
    folder = Path(data_dir) / "customer_service"
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        raise UserError(f"no CSV files in {folder}; point --data-dir at the data folder")
    rows: list[CSRow] = []
    for path in files:
        try:
            with path.open(encoding="utf-8-sig", newline="") as handle:
                reader = csv.DictReader(handle)
                column = next((c for c in TEXT_COLUMNS if c in (reader.fieldnames or [])), None)
                if column is None:
                    continue
                for i, row in enumerate(reader):
                    text = (row.get(column) or "").strip()
                    labelled = _label(row)
                    if not text or labelled is None:
                        continue
                    label, sentiment = labelled
                    rows.append(
                        CSRow(
                            source=f"{path.name}:{i + 2}",
                            text=text,
                            lang=language(text),
                            split=split_of(path.name, text),
                            issue_type=issue_type_of(label),
                            urgency=urgency_of(label),
                            sentiment=sentiment or sentiment_of(label),
                            label=label,
                        )
                    )
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise UserError(f"{path}: cannot read as UTF-8 CSV: {exc}") from exc
    return rows


def _json(value: object) -> str:
    """Compact JSON as the grammar-constrained server writes it (no whitespace, UTF-8)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def triage_example(row: CSRow) -> Example:
    """The triage call for ``row`` and its label-derived JSON answer."""
    answer = {"issue_type": row.issue_type, "urgency": row.urgency, "sentiment": row.sentiment}
    return Example(
        task="triage",
        lang=row.lang,
        source=row.source,
        split=row.split,
        messages=(
            {"role": "system", "content": TRIAGE_SYSTEM},
            {"role": "user", "content": delimit("message", row.text)},
        ),
        target=_json(answer),
        label=row.issue_type,
    )


# --------------------------------------------------------------------------- risk

_RATIONALE = {
    ("en", "allow"): "No abuse, threat or hate found; ordinary content.",
    ("en", "hate"): "Attacks people for a protected trait: hate speech.",
    ("en", "offensive"): "Insulting or profane language aimed at someone.",
    ("en", "flagged"): "Offensive language; a person should look.",
    ("zh", "allow"): "未发现辱骂、威胁或仇恨内容。",
    ("zh", "hate"): "针对群体的攻击或歧视性言论。",
    ("zh", "offensive"): "包含侮辱或冒犯性语言。",
    ("zh", "flagged"): "包含冒犯性内容，需要人工复核。",
}
_WORD = re.compile(r"\w+", re.UNICODE)


def _evidence(text: str) -> list[str]:
    """One short quote from the post (at most 32 characters, whole words where possible)."""
    words = _WORD.findall(text)
    quote = ""
    for word in words:
        if len(quote) + len(word) + 1 > EVIDENCE_MAX_CHARS:
            break
        quote = f"{quote} {word}".strip()
    return [quote or text[:EVIDENCE_MAX_CHARS]] if text.strip() else []


def risk_target(post: LabelledPost) -> tuple[str, str]:
    """``(JSON answer, kind)`` for a labelled post; kind is allow / hate / offensive /
    flagged."""
    truth = post.truth
    if not truth.get("flagged"):
        kind, decision, severity, cats, conf = "allow", "allow", "none", [], 80
    elif truth.get("hate"):
        kind, decision, severity, conf = "hate", "block", "high", 80
        cats = [{"category": "hate", "score": 80}]
    elif truth.get("offensive"):
        kind, decision, severity, conf = "offensive", "review", "medium", 70
        cats = [{"category": "harassment", "score": 70}, {"category": "profanity", "score": 60}]
    else:  # COLD: flagged without a kind (its offensive posts target groups)
        group = (post.fine or "").startswith("group") or "group" in (post.fine or "")
        kind, decision, severity, conf = "flagged", "review", "medium", 70
        cats = [{"category": "hate" if group else "harassment", "score": 70}]
    answer = {
        "decision": decision,
        "severity": severity,
        "categories": cats,
        "confidence": conf,
        "rationale": _RATIONALE[(post.lang, kind)],
        "evidence": [] if kind == "allow" else _evidence(post.text),
    }
    return _json(answer), kind


def risk_example(post: LabelledPost, window: str) -> Example:
    """The assess_risk call for ``post`` (its model window) and the label-derived answer."""
    target, _kind = risk_target(post)
    messages = build_messages(window, MODEL_CATEGORIES)
    return Example(
        task="risk",
        lang=post.lang,
        source=post.id,
        split=post.split,
        messages=tuple({"role": m.role, "content": m.content} for m in messages),
        target=target,
        label="flagged" if post.truth.get("flagged") else "ok",
    )


# --------------------------------------------------------------------------- replies, tools


def _triage_of(row: CSRow) -> IssueTriage:
    return IssueTriage(
        issue_type=row.issue_type,
        urgency=row.urgency,
        sentiment=row.sentiment,
    )


def reply_example(row: CSRow, rng: random.Random, world: ToolWorld) -> Example:
    """The ``draft_reply`` node's call for ``row`` after the tool the workflow picks for it ran
    on a seeded order store (``task="reply"``, facts = the tool's facts, target naming them
    only as placeholders); ``task="reply_plain"`` when the workflow picks no tool (facts
    ``{}``, placeholders ``none``, a target with no placeholder or figure)."""
    tool = tool_of(row.text, row.issue_type)
    if tool is None:
        return plain_example(row, rng)
    outcome, results, _args = world.run_usually_ok(tool, row.lang, rng)
    facts: dict[str, str] = {}
    for result in results:
        facts.update({k: str(v) for k, v in (result.get("facts") or {}).items()})
    return Example(
        task="reply",
        lang=row.lang,
        source=row.source,
        split=row.split,
        messages=reply_messages(row.text, _triage_of(row), facts),
        target=fact_reply(outcome, facts, row.lang, rng),
        label=outcome,
        facts=facts,
    )


def plain_example(row: CSRow, rng: random.Random, *, draft: bool = False) -> Example:
    """The reply call with no tool result (the main job: no order store), or with
    ``draft=True`` the classic ``draft_reply`` skill's call; a template answer per issue type
    with no placeholder and no figure."""
    triage = _triage_of(row)
    return Example(
        task="draft" if draft else "reply_plain",
        lang=row.lang,
        source=row.source,
        split=row.split,
        messages=draft_messages(row.text, triage)
        if draft
        else reply_messages(row.text, triage, {}),
        target=plain_reply(row.issue_type, row.lang, rng),
        label=row.issue_type,
    )


def tool_example(row: CSRow, rng: random.Random, world: ToolWorld) -> Example:
    """The ``select_tool`` node's call (:func:`skills.tool_call.request_tool_call`) for a
    tool-needing message with an order id written in; the target is the arguments JSON."""
    tool = tool_of(row.text, row.issue_type) or rng.choice(sorted(set(INTENT_TOOL.values())))
    text, args = tool_call_text(row.text, tool, row.lang, world, rng)
    return Example(
        task="tool",
        lang=row.lang,
        source=row.source,
        split=row.split,
        messages=tool_messages(text),
        target=_json(args),
        label=tool,
        facts={k: str(v) for k, v in args.items()},
    )


# --------------------------------------------------------------------------- reports


def excel_pair(
    rng: random.Random, counter: object, n: int, split: Literal["tune", "test"], seed: int
) -> tuple[list[Example], list[Example]]:
    """``n`` generated workbooks' ``interpret`` and ``write_report`` calls (see
    :func:`training.jobs.excel_examples`)."""
    interpret, report = [], []
    for lang, source, i_turns, i_target, r_turns, r_target in excel_examples(
        n, rng, counter, seed=seed
    ):
        interpret.append(Example(task="interpret", lang=lang, source=source, split=split,
                                 messages=i_turns, target=i_target))  # fmt: skip
        report.append(Example(task="report", lang=lang, source=source, split=split,
                              messages=r_turns, target=r_target))  # fmt: skip
    return interpret, report


def _counter() -> object:
    """The token counter the Excel workflow uses with the committed checkpoint (bytes when
    it is absent)."""
    from workflows.excel_report.encoding import default_counter

    folder = Path(__file__).resolve().parents[1] / "serving" / "checkpoints" / "ernie45-moe-trained"
    return default_counter(folder if folder.is_dir() else None)


# --------------------------------------------------------------------------- building


class DataSpec(BaseModel):
    """How many examples of each task to build, and the seed.

    Attributes:
        seed: Seeds every draw (row order, reply templates, tool facts, report figures).
        triage: Triage examples (tune-split rows, balanced over issue types by repetition).
        risk: Risk examples (tune-split posts; repeated when fewer).
        reply: Reply examples after the workflow's tool ran (``reply``; rows whose message
            needs no tool become ``reply_plain``).
        reply_plain: Reply examples with no tool result (the main job's replies).
        draft: Classic ``draft_reply`` examples.
        tool: ``select_tool`` examples.
        workbooks: Generated workbooks (one ``interpret`` and one ``report`` example each).
    """

    model_config = ConfigDict(frozen=True)

    seed: int = 0
    triage: int = 6000
    risk: int = 3000
    reply: int = 2400
    reply_plain: int = 1600
    draft: int = 300
    tool: int = 800
    workbooks: int = 500


def _moderation_windows(posts: Sequence[LabelledPost]) -> Iterator[tuple[LabelledPost, str]]:
    """Each post with the window the moderation workflow shows the model."""
    limits = load_policy().limits
    for post in posts:
        prepared = prepare_post(post.text, limits)
        if not prepared.report.empty:
            yield post, prepared.window


def _take(pool: Sequence[_T], n: int, rng: random.Random) -> list[_T]:
    """``n`` items drawn from ``pool``: a shuffled pass, repeated while short."""
    out: list[_T] = []
    while pool and len(out) < n:
        batch = list(pool)
        rng.shuffle(batch)
        out.extend(batch[: n - len(out)])
    return out


def build_examples(data_dir: Path, spec: DataSpec | None = None) -> list[Example]:
    """The training examples (``tune`` split only), in a seeded order.

    Raises:
        UserError: The data folder lacks ``customer_service/`` or ``moderation/`` CSVs.
    """
    spec = spec or DataSpec()
    rng = random.Random(spec.seed)
    rows = [r for r in customer_service_rows(data_dir) if r.split == "tune"]
    posts = load_moderation_set(data_dir, "tune")
    # triage: balance issue types (rare ones repeated), so "other" does not swamp the rest
    by_issue: dict[str, list[Example]] = {}
    for row in rows:
        by_issue.setdefault(row.issue_type, []).append(triage_example(row))
    per_issue = max(1, spec.triage // max(len(by_issue), 1))
    triage = [e for issue in sorted(by_issue) for e in _take(by_issue[issue], per_issue, rng)]
    risk = _take([risk_example(p, w) for p, w in _moderation_windows(posts)], spec.risk, rng)
    world = ToolWorld(seed=spec.seed)
    tool_rows = [r for r in rows if tool_of(r.text, r.issue_type)]
    reply = [reply_example(r, rng, world) for r in _by_lang(tool_rows, spec.reply, rng)]
    plain = [plain_example(r, rng) for r in _by_lang(rows, spec.reply_plain, rng)]
    draft = [plain_example(r, rng, draft=True) for r in _take(rows, spec.draft, rng)]
    tools = [tool_example(r, rng, world) for r in _by_lang(tool_rows, spec.tool, rng)]
    interpret, report = excel_pair(rng, _counter(), spec.workbooks, "tune", spec.seed)
    examples = triage + risk + reply + plain + draft + tools + interpret + report
    rng.shuffle(examples)
    assert all(e.split == "tune" for e in examples), "a test-split row reached the training set"
    return examples


#: Share of Chinese rows in the reply and tool examples (Chinese rows rarely name a tool, so
#: drawing over all rows would leave a few hundred Chinese replies).
ZH_SHARE = 0.3


def _by_lang(rows: Sequence[CSRow], n: int, rng: random.Random) -> list[CSRow]:
    """``n`` rows, :data:`ZH_SHARE` of them Chinese (repeated while short), the rest English."""
    zh = [r for r in rows if r.lang == "zh"]
    en = [r for r in rows if r.lang != "zh"]
    n_zh = round(n * ZH_SHARE) if zh and en else (n if zh else 0)
    return _take(zh, n_zh, rng) + _take(en, n - n_zh, rng)


def held_out_examples(
    data_dir: Path, *, per_task: int = 200, seed: int = 0
) -> dict[Task, list[Example]]:
    """Held-out evaluation examples (``test`` split only), ``per_task`` of each task drawn with
    ``seed``; risk examples keep both languages (up to ``per_task`` each)."""
    rng = random.Random(seed + 1)
    rows = [r for r in customer_service_rows(data_dir) if r.split == "test"]
    posts = load_moderation_set(data_dir, "test")
    triage_rows = _sample(rows, per_task, rng)
    risk: list[Example] = []
    for lang in ("en", "zh"):
        chosen = _sample([p for p in posts if p.lang == lang], per_task, rng)
        risk += [risk_example(p, w) for p, w in _moderation_windows(chosen)]
    world = ToolWorld(seed=seed + 1)
    tool_rows = [r for r in rows if tool_of(r.text, r.issue_type)]
    small = max(per_task // 2, 1)
    interpret, report = excel_pair(rng, _counter(), max(per_task // 4, 1), "test", seed + 1)
    return {
        "triage": [triage_example(r) for r in triage_rows],
        "risk": risk,
        "reply": [reply_example(r, rng, world) for r in _sample(tool_rows, per_task, rng)],
        "reply_plain": [plain_example(r, rng) for r in _sample(rows, per_task, rng)],
        "tool": [tool_example(r, rng, world) for r in _sample(tool_rows, small, rng)],
        "interpret": interpret,
        "report": report,
    }


def _sample(items: Sequence[_T], n: int, rng: random.Random) -> list[_T]:
    return list(items) if len(items) <= n else rng.sample(list(items), n)


def data_hashes(data_dir: Path, examples: Sequence[Example]) -> dict[str, str]:
    """SHA-256 of every input CSV (``customer_service/``, ``moderation/``) and of the built
    examples (their JSON lines), as the model card records them."""
    hashes: dict[str, str] = {}
    for kind in ("customer_service", "moderation"):
        for path in sorted((Path(data_dir) / kind).glob("*.csv")):
            hashes[f"{kind}/{path.name}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    digest = hashlib.sha256()
    for example in examples:
        digest.update(example.model_dump_json().encode() + b"\n")
    hashes["examples"] = digest.hexdigest()
    return hashes


def write_jsonl(examples: Sequence[Example], path: Path) -> Path:
    """Write one example per line (UTF-8 JSON); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for example in examples:
            handle.write(example.model_dump_json() + "\n")
    return path


def read_jsonl(path: Path) -> list[Example]:
    """Examples written by :func:`write_jsonl`.

    Raises:
        UserError: A line is not an example (the message names the line).
    """
    out: list[Example] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            out.append(Example.model_validate_json(line))
        except ValueError as exc:
            raise UserError(f"{path}:{n}: not a training example: {exc}") from exc
    return out
