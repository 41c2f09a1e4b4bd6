"""The dispatcher and the customer-service graph with ScriptedModel, a test double of the
model (no vLLM here), and a real SQLite file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pytest
from langgraph.runtime import Runtime
from pydantic import BaseModel

from orchestrator import (
    ModelCallError,
    Orchestrator,
    Request,
    ServerUnavailableError,
    TelemetryStore,
    UserError,
    run_batch,
)
from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall
from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.routes import Route
from orchestrator.telemetry import decode_counts
from orchestrator.testing import ScriptedModel
from tests.unit.workflow_doubles import one_node_graph
from workflows import CustomerServiceWorkflow
from workflows.customer_service.claims import code_reply


@pytest.fixture
def store(tmp_path: Path) -> TelemetryStore:
    return TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")


async def test_customer_service_request_writes_one_row_per_model_call(store) -> None:
    model = ScriptedModel(replies=["We are sorry; a refund is on its way."])
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    outcome = await orch.handle(Request(text="I was charged twice for my order, refund please"))

    assert outcome.status == "succeeded"
    assert outcome.workflow == "customer_service"
    # code answers the refund intent first; "a refund is on its way" states what no tool said,
    # so the claim checker drops that model sentence (workflows/customer_service/claims.py)
    assert outcome.result["reply"]["text"] == code_reply(None, "refund", "en")
    assert outcome.result["triage"]["parsed"] is True
    rows = store.calls(request_id=outcome.request_id)
    assert [r.node for r in rows] == ["triage_issue", "draft_reply"]
    for row in rows:
        counts = decode_counts(row)
        assert counts is not None and counts.shape == (3, 8)
        assert (counts.sum(axis=1) == row.routed_tokens * row.top_k).all()
        assert row.routed_tokens == row.prompt_tokens + row.completion_tokens - 1
        assert row.expert_routing_source == "scripted"
        assert row.route == "customer_service" and 0 < row.route_confidence <= 1
        # the row keeps the evidence of the tier that decided (a fast-tier decision fires
        # no rule, so its signals are empty; a rules decision lists its cs.* rules)
        assert row.classifier_signals == [
            s.model_dump(mode="json") for s in outcome.classification.signals
        ]
        assert all(s["rule_id"].startswith("cs.") for s in row.classifier_signals)
    # the customer's text reaches the model as delimited data
    assert "<message>" in model.calls[0][1].content


async def test_unparseable_triage_is_kept_as_data_not_executed(store) -> None:
    model = ScriptedModel(json_reply="__import__('os').system('echo pwned')")
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    outcome = await orch.handle(Request(text="where is my order"))
    triage = outcome.result["triage"]
    assert triage["parsed"] is False and triage["issue_type"] == "other"
    assert triage["raw"].startswith("__import__")


async def test_fallback_route_calls_no_model(store) -> None:
    model = ScriptedModel()
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    outcome = await orch.handle(Request(text="what is the boiling point of water"))
    assert outcome.status == "needs_human" and outcome.workflow is None
    assert model.calls == [] and store.count_calls() == 0
    assert store.requests()[0].status == "needs_human"


async def test_route_without_workflow_is_reported_not_crashed(store) -> None:
    orch = Orchestrator(ScriptedModel(), store, [CustomerServiceWorkflow()])
    outcome = await orch.handle(Request(text="please moderate this post: you are all idiots"))
    assert outcome.classification.route == "content_moderation"
    assert outcome.status == "no_workflow"
    assert "content_moderation" in (outcome.error or "")


async def test_failure_in_second_node_keeps_first_row_and_marks_request_failed(store) -> None:
    model = ScriptedModel(fail_on_call=(2, lambda: ModelCallError("HTTP 500: boom")))
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    request = Request(text="my card payment failed")
    outcome = await orch.handle(request)
    assert outcome.status == "failed"
    assert request.id in (outcome.error or "") and "draft_reply" in (outcome.error or "")
    rows = store.calls(request_id=request.id)
    assert [r.node for r in rows] == ["triage_issue"]  # the finished call stays, complete
    assert decode_counts(rows[0]) is not None
    assert store.requests(status="failed")[0].id == request.id


async def test_a_bug_in_a_workflow_surfaces_and_the_request_is_marked_failed(store) -> None:
    model = ScriptedModel(fail_on_call=(1, lambda: TypeError("bad operand")))
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    request = Request(text="my card payment failed")
    with pytest.raises(TypeError, match="bad operand"):
        await orch.handle(request)
    (row,) = store.requests()
    assert row.status == "failed" and row.error == "internal error: TypeError: bad operand"


class HangingModel(ScriptedModel):
    """ScriptedModel whose calls never answer (a server that hangs), to cancel a request."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        self.started.set()
        await asyncio.sleep(3600)
        return await super().chat(messages, options)


async def test_a_cancelled_request_is_marked_cancelled_not_left_running(store) -> None:
    model = HangingModel()
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    task = asyncio.create_task(orch.handle(Request(text="where is my order")))
    await asyncio.wait_for(model.started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [r.status for r in store.requests()] == ["cancelled"]


async def test_batch_stops_when_the_server_goes_away(store) -> None:
    url = "http://127.0.0.1:9/v1"
    model = ScriptedModel(fail_on_call=(3, lambda: ServerUnavailableError(url, "refused")))
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    requests = [Request(text=f"refund for order {i}") for i in range(5)]
    report = await run_batch(orch, requests, concurrency=1)
    assert [o.status for o in report.outcomes] == ["succeeded", "failed"]
    assert report.aborted and url in report.aborted
    assert len(report.not_started) == 3
    assert store.count_calls() == 2  # the first request's two calls; the second never got one


async def test_handle_rejects_non_requests(store) -> None:
    orch = Orchestrator(ScriptedModel(), store, [CustomerServiceWorkflow()])
    with pytest.raises(UserError, match="Request"):
        await orch.handle("where is my refund")  # type: ignore[arg-type]


def test_stored_counts_round_trip_exactly(store, tmp_path: Path) -> None:
    import asyncio

    model = ScriptedModel()
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    outcome = asyncio.run(orch.handle(Request(text="cancel my subscription please")))
    reopened = TelemetryStore(store.url)
    rows = reopened.calls(request_id=outcome.request_id)
    assert len(rows) == 2
    assert json.loads(json.dumps(rows[0].moe_layers)) == [1, 2, 3]
    assert np.issubdtype(decode_counts(rows[0]).dtype, np.integer)


class EchoState(TypedDict, total=False):
    """State of the one-node workflow below."""

    text: str
    echo: str


class EchoResult(BaseModel):
    echo: str
    length: int


class EchoWorkflow(Workflow[EchoState, EchoResult]):
    """A workflow written against the generic contract: typed state and result, no casts."""

    name = "echo"
    route = Route("customer_service")

    def __init__(self) -> None:
        async def echo(state: EchoState, runtime: Runtime[WorkflowContext]) -> dict[str, Any]:
            call = await runtime.context.llm.chat("echo", [ChatMessage(role="user", content="x")])
            return {"echo": f"{state['text']} / {call.text}"}

        self.graph = one_node_graph(EchoState, echo)
        self.states: list[EchoState] = []

    def initial_state(self, request: Request) -> EchoState:
        return EchoState(text=request.text)

    def result(self, state: EchoState) -> EchoResult:
        self.states.append(state)
        return EchoResult(echo=state["echo"], length=len(state["echo"]))

    def headline(self, result: EchoResult) -> str:
        return f"{result.length}: {result.echo}"


async def test_the_dispatcher_runs_any_workflow_through_the_generic_contract(store) -> None:
    workflow = EchoWorkflow()
    orch = Orchestrator(ScriptedModel(replies=["pong"]), store, [workflow])
    text = "refund for my order please"
    outcome = await orch.handle(Request(text=text))
    echo = f"{text} / pong"
    assert outcome.status == "succeeded" and outcome.workflow == "echo"
    assert outcome.result == {"echo": echo, "length": len(echo)}
    assert outcome.headline == f"{len(echo)}: {echo}"
    assert workflow.states == [{"text": text, "echo": echo}]  # the graph's final state
    (row,) = store.requests()
    assert row.result == outcome.result
