"""A customer's message on a thread whose write waits for a person (tester7 F20, F21).

A withdrawal (English or Chinese, the customer's own words) resolves the handoff as withdrawn
by the customer: nothing is written, a person's later approval is refused (409 in the UI
service, exit 2 in the CLI) and the customer is told the write will not be made. Any other
message keeps it waiting and is shown to the person deciding. A withdrawal racing a person's
approval from two real processes gives exactly one outcome. A decision needs a non-blank
decider name. ScriptedModel (a test double of the model), real SQLite and PostgreSQL stores.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.exceptions import HandoffDecidedError, UserError
from orchestrator.textnorm import to_traditional
from workflows.customer_service import open_workflow
from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.schema import HandoffDecision
from workflows.customer_service.store.threads import HandoffWithdrawnError
from workflows.customer_service.withdrawing import withdraws

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel
from handoff_races import refundable_orders, run_racers, waiting_handoffs
from postgres_server import PostgresServer

REFUND = {"tool": "start_refund", "arguments": {"order_id": "ORD-100321"}}
CANCEL = {"tool": "cancel_order", "arguments": {"order_id": "ORD-100321"}}

WITHDRAWALS_EN = [
    "Please don't go ahead with the refund, I've decided to keep the blender",
    "I no longer need the refund, thanks",
    "scratch that, no refund for ORD-100321",
    "Never mind, I'll keep it.",
    "I'd like to withdraw my refund request",
    "Hmm, on second thought forget it",
]
WITHDRAWALS_ZH = [
    "退款不用了，东西我留着",
    "我改主意了，别退款",
    "算了，不退了",
    "撤回我的退款申请",
    "不需要退款了，谢谢",
    "那笔退款就取消吧",  # the write called off, which the ask reader reads as no ask at all
    "退款申请作废",
]
NOT_WITHDRAWALS = [
    "any news?",
    "how long will the review take? I don't know when I'll be home",
    "谢谢，我等着",
    "有进展吗？",
    "yes, please refund it as soon as possible",
    "can I still cancel the refund request?",
    "my husband says don't refund it",
    "Don't refund ORD-999999, that one is fine",
    "我再想想",
    "我在考虑要不要撤回退款",  # not decided yet: the person reads it
    "maybe I'll keep it, not sure yet",
    "我朋友说取消退款",  # someone else's words
]


#: Messages that insist on the waiting refund (tester8 F3): each kept it waiting, not withdrawn.
UI_INSISTENCES = [
    "any news?",
    "Don't cancel my refund request please, I still want it",
    "Please don't forget about my refund, I can't wait much longer!",
    "No rush on the refund, take your time",
    "不要忘了我的退款，谢谢",
    "請不要撤回我的退款申請",
]


@pytest.mark.parametrize("text", WITHDRAWALS_EN + WITHDRAWALS_ZH)
def test_a_withdrawal_of_the_pending_refund_is_read(text: str) -> None:
    assert withdraws(text, REFUND)


@pytest.mark.parametrize("text", NOT_WITHDRAWALS)
def test_other_messages_withdraw_nothing(text: str) -> None:
    assert not withdraws(text, REFUND)


def test_the_withdrawal_is_of_the_pending_write_kind() -> None:
    assert withdraws("算了，不用取消了", CANCEL) and withdraws("never mind, keep it going", CANCEL)
    assert not withdraws("please cancel it as soon as possible", CANCEL)  # asks for it again
    assert not withdraws("don't refund it, I'll keep it", CANCEL)  # another kind of write
    assert not withdraws("never mind", None)  # nothing to withdraw
    address = {"tool": "change_address", "arguments": {"order_id": "ORD-100321"}}
    assert withdraws("地址就不改了，谢谢", address)
    assert withdraws("please keep my current address, don't change anything", address)
    assert withdraws("订单还是不取消了", CANCEL)


@pytest.fixture
def waiting(tmp_path: Path) -> tuple[Settings, OrderStore, str, str]:
    """A refund over the automatic limit, confirmed, waiting for a person on thread ``w``."""
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    store = OrderStore(url)
    store.seed(20, seed=7)
    ((customer, order),) = refundable_orders(store, 20, 1)
    settings = Settings(cs_database_url=url, database_url=f"sqlite:///{tmp_path / 'tel.db'}")
    asyncio.run(waiting_handoffs(settings, [("w", customer, order)]))
    return settings, store, customer, order


async def _say(settings: Settings, customer: str, text: str, thread: str = "w") -> Any:
    telemetry = TelemetryStore(settings.database_url)
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
        outcome = await orch.handle(Request(text=text, thread_id=thread, customer_id=customer))
    telemetry.close()
    return outcome


async def _approve(settings: Settings, by: str = "olga", thread: str = "w") -> Any:
    telemetry = TelemetryStore(settings.database_url)
    try:
        async with open_workflow(settings) as workflow:
            orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
            return await orch.resume(thread, approve=True, note="ok", by=by)
    finally:
        telemetry.close()


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("Actually I'd rather keep it, please don't refund", "will not be made"),
        ("I withdraw the request, thanks anyway", "will not be made"),
        ("我想了想，不用退款了", "不会进行"),
        ("算了不用退了，谢谢", "不会进行"),
        ("I don't want the refund any more", "will not be made"),  # tester8 F3: the mirror
        ("不用退了", "不会进行"),
    ],
)
async def test_a_withdrawal_writes_nothing_and_a_later_approval_is_refused(
    waiting: tuple[Settings, OrderStore, str, str], text: str, told: str
) -> None:
    settings, store, customer, order = waiting
    outcome = await _say(settings, customer, text)
    assert outcome.status == "succeeded", outcome.headline
    reply = outcome.result["reply"]["text"]
    assert told in reply and order in reply
    (row,) = store.handoffs(None)
    assert row["status"] == "withdrawn" and row["note"] == text  # recorded, with their words
    with pytest.raises(HandoffWithdrawnError, match=r"customer \(C\d+\) withdrew"):
        await _approve(settings)
    assert store.tools(customer).refund_count(order) == 0
    with store.sessions() as session:
        rows = list(session.scalars(select(HandoffDecision)))
    assert [(r.decision, r.decided_by) for r in rows] == [("withdrawn", f"customer:{customer}")]


async def test_a_withdrawal_turn_says_nothing_of_a_person(
    waiting: tuple[Settings, OrderStore, str, str],
) -> None:
    """The handoff node runs again from its start when it is resumed: it emitted a second
    handoff event, so the withdrawal turn also said "handed to a person" (tester13 M)."""
    settings, _, customer, _ = waiting
    telemetry = TelemetryStore(settings.database_url)
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
        turn = Request(text="I withdraw my refund request", thread_id="w", customer_id=customer)
        kinds = [event.kind async for event in orch.stream(turn)]
    telemetry.close()
    assert "handoff" not in kinds and kinds[-1] == "done", kinds


async def test_a_message_that_is_no_withdrawal_waits_and_the_person_sees_it(
    waiting: tuple[Settings, OrderStore, str, str],
) -> None:
    settings, store, customer, order = waiting
    for text in ("any news on this?", "有进展吗？"):
        outcome = await _say(settings, customer, text)
        assert outcome.status == "needs_human"
    (row,) = store.handoffs("waiting")
    noted = [m["text"] for m in row["context"]["customer_messages"]]
    assert noted == ["any news on this?", "有进展吗？"]
    outcome = await _approve(settings)
    assert outcome.status == "succeeded"
    assert store.tools(customer).refund_count(order) == 1


async def test_a_withdrawal_after_the_approval_is_told_it_was_approved(
    waiting: tuple[Settings, OrderStore, str, str],
) -> None:
    settings, store, customer, order = waiting
    await _approve(settings)
    outcome = await _say(settings, customer, "never mind, don't refund it after all")
    assert "already approved" in outcome.result["reply"]["text"]
    assert store.tools(customer).refund_count(order) == 1
    chinese = await _say(settings, customer, "算了，我不要退款了")
    assert "已经批准" not in chinese.result["reply"]["text"]  # told once, on the next message only


async def test_a_withdrawal_whose_run_failed_ends_on_the_next_message(
    waiting: tuple[Settings, OrderStore, str, str],
) -> None:
    """The claim was taken but its process died before the graph ran: the case is not left
    stuck waiting; the customer's next message ends it as withdrawn."""
    settings, store, customer, order = waiting
    assert store.coordination.withdraw_handoff("w", 1, customer, "算了不要退款了")
    outcome = await _say(settings, customer, "hello?")
    assert outcome.status == "succeeded" and "will not be made" in outcome.result["reply"]["text"]
    assert store.handoffs(None)[0]["note"] == "算了不要退款了"  # the words that withdrew it
    with pytest.raises(HandoffWithdrawnError):
        await _approve(settings)
    assert store.tools(customer).refund_count(order) == 0


@pytest.mark.parametrize("by", ["", "   "])
async def test_a_decision_needs_a_decider_name(
    waiting: tuple[Settings, OrderStore, str, str], by: str
) -> None:
    settings, store, customer, order = waiting
    with pytest.raises(UserError, match="non-blank name"):
        await _approve(settings, by=by)
    with pytest.raises(UserError, match="non-blank name"):
        store.coordination.claim_handoff("w", 1, True, by)
    assert store.handoffs("waiting") and store.tools(customer).refund_count(order) == 0


def test_the_cli_refuses_a_blank_decider_and_a_withdrawn_handoff(
    waiting: tuple[Settings, OrderStore, str, str],
) -> None:
    from orchestrator.cli import app

    settings, store, customer, order = waiting
    url = str(settings.cs_database_url)
    blank = CliRunner().invoke(
        app, ["handoff", "resume", "w", "--approve", "--by", " ", "--db", url]
    )
    assert blank.exit_code == 2 and "non-blank" in blank.output
    asyncio.run(_say(settings, customer, "any update?"))
    listed = CliRunner().invoke(app, ["handoff", "list", "--db", url])
    assert "customer wrote since" in listed.output and "any update?" in listed.output
    asyncio.run(_say(settings, customer, "I changed my mind, I'll keep it"))
    listed = CliRunner().invoke(app, ["handoff", "list", "--all", "--db", url])
    assert "withdrawn by the customer: I changed my mind, I'll keep it" in listed.output
    cli = CliRunner().invoke(app, ["handoff", "resume", "w", "--approve", "--db", url])
    assert cli.exit_code == 2 and "withdrew the request" in cli.output
    assert len(cli.output.strip().splitlines()) == 1 and "Traceback" not in cli.output
    assert store.tools(customer).refund_count(order) == 0


def test_the_ui_service_409_after_a_withdrawal_and_a_customer_cannot_decide(
    waiting: tuple[Settings, OrderStore, str, str], tmp_path: Path
) -> None:
    from starlette.testclient import TestClient
    from test_ui_service_auth import SECRET, _auth

    from orchestrator.testing import ScriptedModel
    from orchestrator.ui import build_app
    from orchestrator.ui.auth import Caller, sign_caller
    from orchestrator.ui.service import CUSTOMER_STATUS, CUSTOMER_STATUS_ZH

    settings, store, customer, order = waiting
    settings = settings.model_copy(update={"report_dir": tmp_path / "reports"})
    me, ops = _auth("customer", customer), _auth("operator")
    blank = sign_caller(SECRET, Caller(name="  ", role="operator"), ttl_s=600)
    nobody = {"Authorization": f"Bearer {blank}"}
    with TestClient(build_app(settings, client=ScriptedModel(), secret=SECRET)) as client:
        for approve in (True, False):  # the customer cannot approve their own refund
            own = client.post("/api/handoffs/w/decide", json={"approve": approve}, headers=me)
            assert own.status_code == 403, own.text
        for text in UI_INSISTENCES:  # tester8 F3: insisting never withdraws the refund
            turn = client.post("/api/turn", json={"text": text, "thread_id": "w"}, headers=me)
            want = CUSTOMER_STATUS["needs_human"]  # in the customer's language (cs9 d)
            if text in UI_INSISTENCES[-2:]:  # Simplified, then Traditional Chinese
                zh = CUSTOMER_STATUS_ZH["needs_human"]
                want = to_traditional(zh) if text == UI_INSISTENCES[-1] else zh
            assert turn.status_code == 200 and want in turn.text, text
            assert "withdrawn" not in turn.text and "不会进行" not in turn.text, text
        listed = client.get("/api/handoffs", headers=ops).json()
        assert [(h["thread_id"], h["status"]) for h in listed] == [("w", "waiting")]
        noted = [m["text"] for m in listed[0]["context"]["customer_messages"]]
        assert noted == UI_INSISTENCES  # the person deciding reads each of them
        said = "我不要退款了，撤回申请"
        turn = client.post("/api/turn", json={"text": said, "thread_id": "w"}, headers=me)
        assert turn.status_code == 200 and "不会进行" in turn.text
        blank = client.post("/api/handoffs/w/decide", json={"approve": True}, headers=nobody)
        assert blank.status_code == 400 and "non-blank name" in blank.json()["error"]
        answer = client.post("/api/handoffs/w/decide", json={"approve": True}, headers=ops)
        assert answer.status_code == 409, answer.text
        assert "withdrew the request" in answer.json()["error"]
        assert client.get("/api/handoffs", headers=ops).json() == []
    assert store.tools(customer).refund_count(order) == 0


# --- two processes: the customer's withdrawal and a person's approval at once ---------------
RACES = 8
#: What the customer says in race i: a withdrawal (even i) or an insistence (odd i, tester8
#: F3), which never withdraws: the approval is the one outcome there.
RACE_TEXTS = [
    "sorry, wrong amount: please make it USD 5 only",  # an amendment withdraws (tester9 F4)
    "Please don't forget about my refund",
    "算了，不用退款了",
    "不要取消我的退款，我还在等",
]


def _race_worker(
    settings: dict[str, Any], cases: list[tuple[str, str]], barrier: Any, role: str, out: Any
) -> None:
    """One process of the race: the customer (``role`` ``customer``) or the person."""

    async def run() -> list[str]:
        results: list[str] = []
        telemetry = TelemetryStore(settings["database_url"].replace(".db", f"-{role}.db"))
        async with open_workflow(Settings(**settings)) as workflow:
            orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
            for i, (thread, customer) in enumerate(cases):
                barrier.wait(timeout=120)
                try:
                    if role == "customer":
                        text = RACE_TEXTS[i % len(RACE_TEXTS)]
                        done = await orch.handle(
                            Request(text=text, thread_id=thread, customer_id=customer)
                        )
                        results.append(str((done.result or {}).get("reply", {}).get("text")))
                    else:
                        await orch.resume(thread, approve=True, note="race", by="olga")
                        results.append("approved")
                except HandoffDecidedError as exc:
                    results.append(f"refused: {exc}")
                except Exception as exc:  # anything else fails the test
                    results.append(f"error: {type(exc).__name__}: {exc}")
        telemetry.close()
        return results

    out.put((role, asyncio.run(run())))


def _race(url: str, tmp_path: Path) -> dict[str, int]:
    store = OrderStore(url)
    store.seed(60, seed=11)
    pairs = refundable_orders(store, 60, RACES)
    cases = [(f"wr-{i}", customer, order) for i, (customer, order) in enumerate(pairs)]
    settings = {"cs_database_url": url, "database_url": f"sqlite:///{tmp_path}/tel.db"}
    asyncio.run(waiting_handoffs(Settings(**settings), cases))
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    threads = [(thread, customer) for thread, customer, _ in cases]
    procs = [
        ctx.Process(target=_race_worker, args=(settings, threads, barrier, role, out))
        for role in ("customer", "person")
    ]
    results = run_racers(procs, out, timeout=600)
    status = {h["thread_id"]: h["status"] for h in store.handoffs(None)}
    counts = {"withdrawn": 0, "approved": 0}
    for i, (thread, customer, order) in enumerate(cases):
        said, decided = results["customer"][i], results["person"][i]
        refunds = store.tools(customer).refund_count(order)
        if i % 2:  # an insistence: approved and made whenever it came, never withdrawn
            assert status[thread] == "approved" and decided == "approved", (thread, decided)
            assert refunds == 1 and "will not be made" not in said and "不会进行" not in said
        elif status[thread] == "withdrawn":  # the withdrawal won: nothing written
            told = ("will not be made", "不会进行", "is withdrawn")  # the last: an amendment
            assert any(w in said for w in told) and refunds == 0, said
            assert decided.startswith("refused: the customer") and "withdrew" in decided
        else:  # the approval won: one refund, and the customer is told it was approved
            assert status[thread] == "approved" and decided == "approved", (thread, decided)
            assert ("already approved" in said or "已经批准" in said) and refunds == 1, said
        counts[status[thread]] += 1
    assert sum(counts.values()) == RACES
    return counts


def test_a_withdrawal_racing_an_approval_on_sqlite_gives_one_outcome(tmp_path: Path) -> None:
    counts = _race(f"sqlite:///{tmp_path / 'cs.db'}", tmp_path)
    print("withdrawal races on sqlite:", counts)


def test_a_withdrawal_racing_an_approval_on_postgres_gives_one_outcome(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    counts = _race(postgres.create_database("cs_withdraw_races"), tmp_path)
    print("withdrawal races on postgresql:", counts)
