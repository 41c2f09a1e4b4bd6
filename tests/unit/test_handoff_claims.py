"""Exactly one decision per handoff across processes (issue 43, item 2).

Two real processes (``multiprocessing``, spawn) resume the same waiting handoff at the same
moment (a barrier), one approving and one rejecting, 50 times on SQLite and 50 times on a real
PostgreSQL. Each race must end with one winner, a loser told "decided already by ...", the
handoff record holding the winner's decision, and a refund row only when the winner approved.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator, TelemetryStore
from orchestrator.config import Settings
from orchestrator.exceptions import HandoffDecidedError, HandoffError
from workflows.customer_service import open_workflow
from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.schema import HandoffDecision

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel
from handoff_races import (
    one_waiting_handoff,
    race_worker,
    refundable_orders,
    run_racers,
    waiting_handoffs,
)
from postgres_server import PostgresServer

RACES = 50
CUSTOMERS = 160


def _race(url: str, tmp_path: Path) -> dict[str, int]:
    """Run :data:`RACES` races on the store at ``url``; returns the counts measured."""
    store = OrderStore(url)
    store.seed(CUSTOMERS, seed=7)
    cases = [
        (f"race-{i}", customer, order)
        for i, (customer, order) in enumerate(refundable_orders(store, CUSTOMERS, RACES))
    ]
    before = {order: store.tools(customer).refund_count(order) for _, customer, order in cases}
    settings = {"cs_database_url": url}
    asyncio.run(waiting_handoffs(Settings(**settings), cases))
    threads = [thread for thread, _, _ in cases]
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(
            target=race_worker,
            args=(settings, threads, barrier, approve, f"sqlite:///{tmp_path}/t{approve}.db", out),
        )
        for approve in (True, False)
    ]
    results = run_racers(procs, out, timeout=600)
    counts = {"races": 0, "approved": 0, "rejected": 0, "double": 0, "refunds": 0}
    handoffs = {h["thread_id"]: h for h in store.handoffs(None)}
    for i, (thread, customer, order) in enumerate(cases):
        mine = {approve: results[approve][i] for approve in (True, False)}
        assert all(r[0] == thread for r in mine.values())
        won = [approve for approve, r in mine.items() if r[1] == "won"]
        lost = [r[1] for r in mine.values() if r[1] != "won"]
        counts["double"] += max(0, len(won) - 1)
        assert len(won) == 1, (thread, mine)  # exactly one decision
        assert len(lost) == 1 and lost[0].startswith("decided: handoff on thread"), lost
        assert "decided already by p-" in lost[0]
        decision = "approved" if won[0] else "rejected"
        refunds = store.tools(customer).refund_count(order) - before[order]
        assert handoffs[thread]["status"] == decision  # the record agrees with the refunds
        assert refunds == (1 if won[0] else 0), (thread, decision, refunds)
        counts["races"] += 1
        counts[decision] += 1
        counts["refunds"] += refunds
    with store.sessions() as session:
        rows = list(session.scalars(select(HandoffDecision)))
    assert len(rows) == RACES and {r.outcome for r in rows} == {"done"}
    store.close()
    print(f"handoff races on {url.split(':')[0]}: {counts}")
    return counts


def test_fifty_races_on_sqlite_give_one_decision_each(tmp_path: Path) -> None:
    counts = _race(f"sqlite:///{tmp_path / 'cs.db'}", tmp_path)
    assert counts["races"] == RACES and counts["double"] == 0


def test_fifty_races_on_postgres_give_one_decision_each(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    counts = _race(postgres.create_database("cs_races"), tmp_path)
    assert counts["races"] == RACES and counts["double"] == 0


async def test_a_failed_resume_releases_the_claim_and_a_person_decides_again(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    settings = Settings(cs_database_url=url)
    store, customer, order = await one_waiting_handoff(settings, "t-fail")
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")

    async with open_workflow(settings) as workflow:
        graph = workflow.graph

        async def crash(*args: Any, **kwargs: Any) -> Any:
            raise OSError("the checkpoint write failed")

        workflow.graph = type("G", (), {"ainvoke": crash, "aget_state": graph.aget_state})()
        orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
        with pytest.raises(OSError):
            await orch.resume("t-fail", approve=True, by="first")
        workflow.graph = graph
        # released: the handoff waits again, the failure is on record
        assert [h["thread_id"] for h in store.handoffs("waiting")] == ["t-fail"]
        with store.sessions() as session:
            first = session.scalar(select(HandoffDecision))
            assert first.outcome == "failed" and "checkpoint write failed" in first.error
        outcome = await orch.resume("t-fail", approve=False, by="second")
        assert outcome.status == "succeeded"
        with pytest.raises(HandoffDecidedError, match="decided already by second"):
            await orch.resume("t-fail", approve=True, by="third")
        with pytest.raises(HandoffError):  # still a HandoffError for old callers
            await orch.resume("t-fail", approve=True, by="third")
    assert store.handoffs(None)[0]["status"] == "rejected"
    assert store.tools(customer).refund_count(order) == 0
    # the CLI: a decided handoff is refused before any model server is reached, exit 2
    from typer.testing import CliRunner

    from orchestrator.cli import app

    cli = CliRunner().invoke(app, ["handoff", "resume", "t-fail", "--approve", "--db", url])
    assert cli.exit_code == 2
    assert "decided already by second" in cli.output and "(rejected)" in cli.output


def test_the_ui_service_answers_409_when_another_process_claimed_first(
    ui_settings: Settings,
) -> None:
    """The graph still waits (the other process is resuming it now), but the store's claim is
    taken: the UI's decision is refused with who decided, and nothing is written."""
    from starlette.testclient import TestClient
    from test_ui_service_auth import SECRET, _auth

    from orchestrator.testing import ScriptedModel
    from orchestrator.ui import build_app

    settings = ui_settings
    store, customer, order = asyncio.run(one_waiting_handoff(settings, "t-ui"))
    store.coordination.claim_handoff("t-ui", 1, False, "bob-in-another-process", "no")
    before = store.tools(customer).refund_count(order)
    with TestClient(build_app(settings, client=ScriptedModel(), secret=SECRET)) as client:
        answer = client.post(
            "/api/handoffs/t-ui/decide", json={"approve": True}, headers=_auth("operator")
        )
    assert answer.status_code == 409, answer.text
    assert "decided already by bob-in-another-process" in answer.json()["error"]
    assert "(rejected)" in answer.json()["error"]
    assert store.tools(customer).refund_count(order) == before
    assert store.handoffs(None)[0]["status"] == "rejected"
