"""A thread belongs to one customer, and its turns run one at a time (issue 43, items 3, 4).

Owner: the customer of a thread's first turn is bound in the order store (``cs_threads``);
another customer on that thread id is refused with ThreadOwnerError, the refusal recorded in
``cs_thread_refusals`` and on the request's telemetry row (``rejected``). Without a store (a
batch) the checkpointed state's customer is the owner.

Turns: two turns of one thread sent at once (two tasks of one process, two processes) both
run, one after the other: both are in the thread's history and the turn count is 2.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.exceptions import ThreadOwnerError, TurnBusyError
from workflows.customer_service import CustomerServiceWorkflow, open_workflow
from workflows.customer_service.store import OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel


@pytest.fixture
def url(orders_url: Callable[[int, int], str]) -> str:
    return orders_url(10, 3)


def _status(telemetry: TelemetryStore, request_id: str) -> tuple[str, str]:
    with telemetry.engine.connect() as conn:
        row = conn.execute(
            text("SELECT status, error FROM requests WHERE id = :id"), {"id": request_id}
        ).one()
    return row[0], row[1] or ""


@pytest.mark.parametrize("thread", ["shared-1", "shared-2"])
async def test_another_customer_is_refused_and_recorded(
    url: str, tmp_path: Path, thread: str
) -> None:
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    store = OrderStore(url)
    orch = Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow(store)])
    first = await orch.handle(
        Request(text="where is my order?", thread_id=thread, customer_id="C00001")
    )
    assert first.status in ("succeeded", "needs_human")
    for intruder, call in (("C00002", "handle"), ("C00003", "stream"), (None, "handle")):
        request = Request(text="我的订单在哪里？", thread_id=thread, customer_id=intruder)
        with pytest.raises(ThreadOwnerError, match="belongs to another customer") as refused:
            if call == "handle":
                await orch.handle(request)
            else:
                _ = [event async for event in orch.stream(request)]
        assert "start a new conversation" in str(refused.value)
        assert "C00001" not in str(refused.value)  # the owner is not named
        assert _status(telemetry, request.id) == ("rejected", str(refused.value))
    refusals = store.coordination.refusals(thread)
    assert [(r["owner_id"], r["customer_id"]) for r in refusals] == [
        ("C00001", "C00002"),
        ("C00001", "C00003"),
        ("C00001", ""),
    ]
    # the owner continues, and a new thread id works for the other customer
    again = await orch.handle(Request(text="thanks", thread_id=thread, customer_id="C00001"))
    assert again.status in ("succeeded", "needs_human")
    other = await orch.handle(Request(text="hello", thread_id=thread + "b", customer_id="C00002"))
    assert other.status in ("succeeded", "needs_human")


async def test_without_a_store_the_checkpointed_customer_owns_the_thread(tmp_path: Path) -> None:
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    orch = Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow()])
    await orch.handle(Request(text="hi", thread_id="b1", customer_id="C00001"))
    with pytest.raises(ThreadOwnerError):
        await orch.handle(Request(text="hi", thread_id="b1", customer_id="C00009"))


async def test_two_concurrent_calls_both_land_in_the_memory(url: str, tmp_path: Path) -> None:
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    workflow = CustomerServiceWorkflow(OrderStore(url))
    orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
    texts = ["where is my parcel?", "also, what is my order status?", "我的订单现在到哪里了？"]
    outcomes = await asyncio.gather(
        *(orch.handle(Request(text=t, thread_id="dbl", customer_id="C00001")) for t in texts)
    )
    assert all(o.status in ("succeeded", "needs_human") for o in outcomes)
    state = (await workflow.graph.aget_state({"configurable": {"thread_id": "dbl"}})).values
    assert state["turn"] == 3
    said = [h["text"] for h in state["history"] if h["role"] == "customer"]
    assert sorted(said) == sorted(texts)


async def test_a_turn_past_the_wait_is_refused_not_dropped(url: str, tmp_path: Path) -> None:
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    store = OrderStore(url)
    workflow = CustomerServiceWorkflow(store)
    workflow.turns.wait_s = 0.3
    orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
    assert store.coordination.try_lease("busy", "another-process")  # a turn runs elsewhere
    request = Request(text="hello?", thread_id="busy", customer_id="C00001")
    with pytest.raises(TurnBusyError, match="a turn is already running on thread busy; try again"):
        await orch.handle(request)
    assert _status(telemetry, request.id)[0] == "rejected"
    store.coordination.release_turn("busy", "another-process")
    assert (await orch.handle(request.model_copy(update={"id": "r2"}))).status != "failed"


async def _one_turn(url: str, text_: str, telemetry: str, barrier: Any) -> str:
    async with open_workflow(Settings(cs_database_url=url)) as workflow:
        orch = Orchestrator(ScriptedToolModel(), TelemetryStore(telemetry), [workflow])
        barrier.wait(timeout=120)
        outcome = await orch.handle(Request(text=text_, thread_id="two-proc", customer_id="C00001"))
        return outcome.status


def turn_worker(url: str, text_: str, telemetry: str, barrier: Any, out: Any) -> None:
    """One process sending one turn (a ``multiprocessing`` target): puts the outcome's
    status, or the error, so that a failed process fails the test at once with its reason."""
    try:
        status = asyncio.run(_one_turn(url, text_, telemetry, barrier))
    except BaseException as exc:
        status = f"error: {exc!r}"
    out.put(status)


def test_two_processes_on_one_thread_both_land_in_the_memory(url: str, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    texts = ["first process: where is my order?", "second process: 我要查订单"]
    procs = [
        ctx.Process(
            target=turn_worker, args=(url, t, f"sqlite:///{tmp_path}/tel{i}.db", barrier, out)
        )
        for i, t in enumerate(texts)
    ]
    for proc in procs:
        proc.start()
    statuses = [out.get(timeout=300) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert all(s in ("succeeded", "needs_human") for s in statuses), statuses

    async def read() -> dict[str, Any]:
        async with open_workflow(Settings(cs_database_url=url)) as workflow:
            config = {"configurable": {"thread_id": "two-proc"}}
            return (await workflow.graph.aget_state(config)).values

    state = asyncio.run(read())
    assert state["turn"] == 2
    said = [h["text"] for h in state["history"] if h["role"] == "customer"]
    assert sorted(said) == sorted(texts)


async def test_a_batch_row_on_another_customers_thread_fails_alone(tmp_path: Path) -> None:
    from test_batch import ScriptedFactory, _run, read_results, write_csv

    from orchestrator.batch import ColumnMapping, open_input
    from orchestrator.testing import ScriptedModel

    rows = [
        ["r1", "Where is my package? It has not arrived", "th-1", "C00001"],
        ["r2", "我的包裹还没到，请帮我查一下", "th-1", "C00002"],  # another customer, same thread
        ["r3", "And can you check it again please", "th-1", "C00001"],
    ]
    sheet = write_csv(tmp_path / "in.csv", ["id", "text", "thread", "customer"], rows)
    mapping = ColumnMapping(text="text", id="id", thread="thread", customer="customer")
    db = f"sqlite:///{tmp_path / 'tel.db'}"
    factory = ScriptedFactory(db, {"u1": ScriptedModel(replies=["Thanks."])})
    options_kw = {"concurrency": 1, "backoff_initial_s": 0, "backoff_max_s": 0}
    from orchestrator.batch import BatchOptions

    out = tmp_path / "out.xlsx"
    await _run(open_input(sheet, mapping), factory, options=BatchOptions(**options_kw), out=out)
    results = {r["id"]: r for r in read_results(out)}
    assert results["r2"]["status"] == "failed"
    assert "belongs to another customer" in str(results["r2"]["error"])
    assert results["r1"]["status"] != "failed" and results["r3"]["status"] != "failed"


def test_the_ui_service_binds_the_thread_in_the_store_and_records_a_refusal(
    url: str, ui_settings: Settings
) -> None:
    from starlette.testclient import TestClient
    from test_ui_service_auth import SECRET, _auth

    from orchestrator.testing import ScriptedModel
    from orchestrator.ui import build_app

    settings = ui_settings.model_copy(update={"cs_database_url": url})
    ann, bob = _auth("customer", "C00001"), _auth("customer", "C00002")
    with TestClient(build_app(settings, client=ScriptedModel(), secret=SECRET)) as client:
        fresh = "1b4e28ba-2fa1-41d2-883f-0016d3cca427"  # a UUID4: a conversation starts on one
        body = {"text": "Where is my order?", "thread_id": fresh}
        assert client.post("/api/turn", json=body, headers=ann).status_code == 200
        refused = client.post("/api/turn", json=body, headers=bob)
        assert refused.status_code == 404 and "no such conversation of yours" in refused.text
    store = OrderStore(url)
    assert [
        (r["owner_id"], r["customer_id"], r["channel"]) for r in store.coordination.refusals()
    ] == [("C00001", "C00002", "ui")]


def test_chat_refuses_another_customer_with_one_line(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib

    from typer.testing import CliRunner

    from orchestrator.cli import app, common
    from orchestrator.cli import chat as chat_cli

    monkeypatch.setenv("ORCH_DATABASE_URL", f"sqlite:///{tmp_path / 'tel.db'}")
    monkeypatch.setattr(
        common, "model_server", lambda *a, **k: contextlib.nullcontext("http://x/v1")
    )
    monkeypatch.setattr(chat_cli, "make_client", lambda settings: ScriptedToolModel())
    args = ["chat", "--thread", "c-1", "--db", url, "--message", "where is my order?"]
    first = CliRunner().invoke(app, [*args, "--customer", "C00001"])
    assert first.exit_code == 0, first.output
    second = CliRunner().invoke(app, [*args, "--customer", "C00002"])
    assert second.exit_code == 2
    assert "error: thread c-1 belongs to another customer" in second.output
    assert "Traceback" not in second.output
    refusals = OrderStore(url).coordination.refusals("c-1")
    assert [(r["owner_id"], r["customer_id"]) for r in refusals] == [("C00001", "C00002")]
