"""OpenTelemetry traces (issue 17), with the SDK's in-memory exporter and ScriptedModel (a test
double of the model; no vLLM here): off by default; one trace per request with the route, the
workflow, a span per LangGraph node and a span per model call under its node, carrying usage
and expert routing; failures and early stops end the trace with an error status."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator import ModelCallError, Orchestrator, Request, TelemetryStore, UserError
from orchestrator.observability import tracing
from orchestrator.observability.tracing import (
    configure_tracing,
    shutdown_tracing,
    tracing_enabled,
    tracing_from_env,
)
from orchestrator.testing import ScriptedModel
from workflows import CustomerServiceWorkflow

TEXT = "I was charged twice for my order, refund please"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TelemetryStore]:
    s = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    yield s
    s.close()


@pytest.fixture
def spans() -> Iterator[Any]:
    exporter = configure_tracing("memory")
    yield exporter
    shutdown_tracing()


def _by_name(finished: Any, name: str) -> list[Any]:
    return [s for s in finished if s.name == name]


def test_tracing_is_off_by_default_and_records_nothing() -> None:
    assert not tracing_enabled()
    trace = tracing.RequestTrace("handle", "r1")
    assert not trace.active and trace.callbacks() == []
    with trace.model_call("node") as span:
        assert span is None
    trace.finish("succeeded")  # a no-op


async def test_a_request_is_one_trace_request_workflow_node_model_call(
    store: TelemetryStore, spans: Any
) -> None:
    model = ScriptedModel(replies=["We are sorry; a refund is on its way."])
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()], classifier=None)
    outcome = await orch.handle(Request(text=TEXT, customer_id="C1", thread_id="t-1"))
    assert outcome.status == "succeeded"
    finished = spans.get_finished_spans()
    (request,) = _by_name(finished, "orchestrator.request")
    (workflow,) = _by_name(finished, "orchestrator.workflow")
    nodes = _by_name(finished, "orchestrator.node")
    calls = _by_name(finished, "orchestrator.model_call")
    assert {s.context.trace_id for s in finished} == {request.context.trace_id}
    assert request.attributes["request.id"] == outcome.request_id
    assert request.attributes["route"] == "customer_service"
    assert request.attributes["request.status"] == "succeeded"
    assert 0 < request.attributes["route.confidence"] <= 1
    assert workflow.parent.span_id == request.context.span_id
    assert workflow.attributes["workflow"] == "customer_service"
    # every graph node that ran has its span under the workflow's, in the order they ran
    assert nodes and all(n.parent.span_id == workflow.context.span_id for n in nodes)
    node_names = [n.attributes["langgraph.node"] for n in sorted(nodes, key=lambda n: n.start_time)]
    assert "triage_issue" in node_names and "draft_reply" in node_names
    # one model-call span per telemetry row, under the span of the node that made it
    rows = store.calls(request_id=outcome.request_id)
    assert len(calls) == len(rows) == len(outcome.calls)
    node_of = {n.context.span_id: n.attributes["langgraph.node"] for n in nodes}
    assert sorted(node_of[c.parent.span_id] for c in calls) == sorted(r.node for r in rows)
    for call, summary in zip(sorted(calls, key=lambda c: c.start_time), outcome.calls, strict=True):
        a = call.attributes
        assert a["node"] == summary.node
        assert a["gen_ai.usage.input_tokens"] == summary.prompt_tokens
        assert a["gen_ai.usage.output_tokens"] == summary.completion_tokens
        assert a["expert_routing.source"] == "scripted"
        assert list(a["expert_routing.moe_layers"]) == [1, 2, 3]
        tops = list(a["expert_routing.top_experts"])
        assert tops == [f"L{layer}:E{e}:{s:.3f}" for layer, e, s in summary.top_experts]
        assert call.start_time <= call.end_time
    # model text never goes on a span
    assert all("refund is on its way" not in str(s.attributes) for s in finished)


async def test_stream_traces_like_handle_and_an_early_stop_is_cancelled(
    store: TelemetryStore, spans: Any
) -> None:
    model = ScriptedModel(replies=["We are sorry; a refund is on its way."])
    orch = Orchestrator(model, store, [CustomerServiceWorkflow()])
    kinds = [e.kind async for e in orch.stream(Request(text=TEXT))]
    assert kinds[-1] == "done"
    (request,) = _by_name(spans.get_finished_spans(), "orchestrator.request")
    assert request.attributes["request.kind"] == "stream"
    assert request.attributes["request.status"] == "succeeded"
    assert _by_name(spans.get_finished_spans(), "orchestrator.model_call")
    spans.clear()

    stream = orch.stream(Request(text=TEXT))
    async for event in stream:
        if event.kind == "node_started":
            break
    await stream.aclose()
    # the metrics wrapper (observed_stream) leaves the inner generator to the loop's
    # finaliser, which closes it on a later turn of the loop
    for _ in range(100):
        if _by_name(spans.get_finished_spans(), "orchestrator.request"):
            break
        await asyncio.sleep(0.01)
    (request,) = _by_name(spans.get_finished_spans(), "orchestrator.request")
    assert request.attributes["request.status"] == "cancelled"
    assert request.status.status_code.name == "ERROR"
    assert store.requests()[-1].status == "cancelled"  # the stop still reaches the store


class FailingModel(ScriptedModel):
    async def chat(self, *args: Any, **kwargs: Any) -> Any:
        raise ModelCallError("the server answered HTTP 500")


async def test_a_failed_call_is_an_error_on_its_span_and_the_request(
    store: TelemetryStore, spans: Any
) -> None:
    orch = Orchestrator(FailingModel(), store, [CustomerServiceWorkflow()])
    outcome = await orch.handle(Request(text=TEXT))
    assert outcome.status == "failed"
    finished = spans.get_finished_spans()
    (call,) = _by_name(finished, "orchestrator.model_call")
    assert call.status.status_code.name == "ERROR" and "HTTP 500" in call.status.description
    assert call.events and call.events[0].name == "exception"
    (request,) = _by_name(finished, "orchestrator.request")
    assert request.status.status_code.name == "ERROR"
    assert request.attributes["request.status"] == "failed"


async def test_the_fallback_route_is_a_trace_without_a_workflow(
    store: TelemetryStore, spans: Any
) -> None:
    orch = Orchestrator(ScriptedModel(), store, [CustomerServiceWorkflow()])
    await orch.handle(Request(text="what is the boiling point of water"))
    finished = spans.get_finished_spans()
    assert [s.name for s in finished] == ["orchestrator.request"]
    assert finished[0].attributes["request.status"] == "needs_human"


def test_configure_refuses_an_unknown_exporter_and_env_is_off_unless_set() -> None:
    with pytest.raises(UserError, match="unknown trace exporter 'jaeger'"):
        configure_tracing("jaeger")
    assert tracing_from_env({}) is None and not tracing_enabled()
    assert tracing_from_env({"OTEL_TRACES_EXPORTER": "none"}) is None
    with pytest.raises(UserError, match="console, otlp or none"):
        tracing_from_env({"OTEL_TRACES_EXPORTER": "zipkin"})
    try:
        assert tracing_from_env({"OTEL_TRACES_EXPORTER": "console"}) == "console"
        assert tracing_enabled()
    finally:
        shutdown_tracing()
    assert not tracing_enabled()


def test_cli_refuses_an_unknown_trace_exporter_before_any_server() -> None:
    from typer.testing import CliRunner

    from orchestrator.cli.app import app

    for command in (["chat", "--message", "hi"], ["ui"]):
        flags = ["--server-url", "http://127.0.0.1:9/v1", "--no-launch", "--trace", "jaeger"]
        result = CliRunner().invoke(app, [*command, *flags])
        assert result.exit_code == 2, result.output
        assert "unknown trace exporter 'jaeger'" in result.output
    assert not tracing_enabled()
