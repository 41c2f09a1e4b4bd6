"""A one-off request (no thread id) leaves no checkpoints in the workflow's saver once it has
finished (a batch's in-process saver grew with every row), is checkpointed once at exit rather
than after every step, and a conversation's turn, or a one-off waiting for a person, keeps its
state."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.core.dispatcher import Orchestrator, _forget_one_off, durability
from orchestrator.request import Request
from orchestrator.routes import Route
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows import default_workflows

TEXTS = [
    "I was charged twice for my order, please refund me",
    "Where is my package? It has not arrived after two weeks",
    "My account is locked and I cannot log in",
]


@pytest.fixture
def setup(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    orch = Orchestrator(ScriptedModel(), store, default_workflows())
    workflow = orch.workflows[Route("customer_service")]
    yield orch, workflow, workflow.graph.checkpointer
    store.close()


async def test_finished_one_off_requests_leave_no_checkpoints(setup) -> None:  # type: ignore[no-untyped-def]
    orch, workflow, saver = setup
    requests = [Request(id=f"one-off-{i}", text=t) for i, t in enumerate(TEXTS)]
    outcomes = [await orch.handle(r) for r in requests]
    assert [o.workflow for o in outcomes] == [workflow.name] * len(TEXTS)
    assert all(o.status == "succeeded" for o in outcomes)
    streamed = Request(id="one-off-streamed", text=TEXTS[0])
    events = [e async for e in orch.stream(streamed)]
    assert events[-1].kind == "done" and events[-1].status == "succeeded"  # type: ignore[union-attr]
    left = {r.id for r in [*requests, streamed]} & set(saver.storage)
    assert left == set()


def test_a_one_off_request_is_checkpointed_at_exit_a_conversation_after_each_step(setup) -> None:  # type: ignore[no-untyped-def]
    orch, workflow, _saver = setup
    assert durability(Request(text="refund please"), workflow) == "exit"
    assert durability(Request(text="refund please", thread_id="t1"), workflow) is None
    no_saver = orch.workflows[Route("content_moderation")]
    assert no_saver.graph.checkpointer is None
    assert durability(Request(text="x"), no_saver) is None  # LangGraph would warn


async def test_a_conversation_and_a_one_off_waiting_for_a_person_keep_their_state(setup) -> None:  # type: ignore[no-untyped-def]
    orch, workflow, saver = setup
    turn = Request(id="turn-1", text=TEXTS[0], thread_id="conv-1", customer_id="C1")
    await orch.handle(turn)
    assert "conv-1" in saver.storage
    waiting = Request(id="one-off-human", text=TEXTS[1])
    await orch.handle(waiting)
    assert "one-off-human" not in saver.storage
    # the state of a one-off that waits for a person is kept: handoff resume needs it
    saver.storage["kept"] = {"": {}}
    await _forget_one_off(Request(id="kept", text="x"), workflow, "needs_human")
    assert "kept" in saver.storage
    await _forget_one_off(Request(id="kept", text="x"), workflow, "succeeded")
    assert "kept" not in saver.storage
