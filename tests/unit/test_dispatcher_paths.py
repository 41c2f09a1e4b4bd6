"""handle, stream and resume share one run path (Orchestrator._execute): the same request ends
the same way whichever entry point runs it, and each ending is recorded once."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from orchestrator import ModelCallError, Orchestrator, Request, TelemetryStore, UserError
from orchestrator.core.dispatcher import RequestOutcome
from orchestrator.core.events import RequestStatus, StreamDone
from orchestrator.core.workflow import HandoffWorkflow
from orchestrator.testing import ScriptedModel
from tests.unit.test_dispatcher import EchoWorkflow
from workflows import CustomerServiceWorkflow

TEXTS = ["refund for my order please", "我的退款什么时候到账？订单号 12345"]


@pytest.fixture
def store(tmp_path: Path) -> TelemetryStore:
    return TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")


async def _streamed(orch: Orchestrator, request: Request) -> StreamDone:
    events = [event async for event in orch.stream(request)]
    assert isinstance(events[-1], StreamDone)
    return events[-1]


@pytest.mark.parametrize("text", TEXTS)
async def test_handle_and_stream_end_a_request_the_same_way(store, text: str) -> None:
    orch = Orchestrator(ScriptedModel(replies=["pong"]), store, [EchoWorkflow()])
    handled = await orch.handle(Request(text=text))
    done = await _streamed(orch, Request(text=text))
    assert (done.status, done.headline, done.result, done.error) == (
        handled.status,
        handled.headline,
        handled.result,
        handled.error,
    )
    assert [r.status for r in store.requests()] == ["succeeded", "succeeded"]


@pytest.mark.parametrize("text", TEXTS)
async def test_a_failed_call_fails_the_request_alike_on_both_paths(store, text: str) -> None:
    def failing() -> ScriptedModel:
        return ScriptedModel(fail_on_call=(1, lambda: ModelCallError("HTTP 500: boom")))

    handled = await Orchestrator(failing(), store, [EchoWorkflow()]).handle(Request(text=text))
    request = Request(text=text)
    done = await _streamed(Orchestrator(failing(), store, [EchoWorkflow()]), request)
    assert handled.status == done.status == "failed"
    assert done.error is not None and request.id in done.error and "node echo" in done.error
    assert done.headline == f"failed: {done.error}"
    rows = {r.id: r for r in store.requests()}
    assert rows[request.id].status == "failed" and rows[request.id].error == done.error
    assert rows[handled.request_id].status == "failed"


def test_the_handoff_protocol_tells_the_workflows_apart() -> None:
    assert isinstance(CustomerServiceWorkflow(), HandoffWorkflow)
    assert not isinstance(EchoWorkflow(), HandoffWorkflow)


async def test_resume_refuses_a_workflow_without_a_handoff(store) -> None:
    orch = Orchestrator(ScriptedModel(), store, [EchoWorkflow()])
    with pytest.raises(UserError, match="cannot be resumed"):
        await orch.resume("thread-1", approve=True)
    assert store.requests() == []  # refused before anything was recorded


def test_the_status_is_one_typed_set() -> None:
    statuses = set(typing.get_args(RequestStatus))
    assert statuses == {"succeeded", "rejected", "failed", "needs_human", "no_workflow"}
    assert RequestOutcome.model_fields["status"].annotation == RequestStatus
    assert StreamDone.model_fields["status"].annotation == RequestStatus
