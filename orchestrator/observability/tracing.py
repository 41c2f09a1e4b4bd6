"""OpenTelemetry traces of each request, its workflow's nodes and its model calls (optional).

Off by default: nothing here imports OpenTelemetry, and the dispatcher's hooks cost one
attribute check, until :func:`configure_tracing` is called (``orchestrator chat|ui --trace
console|otlp``, or the standard ``OTEL_TRACES_EXPORTER`` variable through
:func:`tracing_from_env`). The SDK and the OTLP exporter are the ``otel`` extra
(``pip install 'moe-orchestrator[otel]'``: ``opentelemetry-sdk``,
``opentelemetry-exporter-otlp-proto-http``).

One trace per request (every span has explicit parents, so it does not matter which asyncio
task LangGraph runs a node in)::

    orchestrator.request          request.id, request.kind (handle|stream|resume), channel,
      │                           route, route.confidence, classifier.rules, workflow,
      │                           request.status (error status for failed)
      └─ orchestrator.workflow    workflow
           └─ orchestrator.node   langgraph.node, langgraph.step, node.interrupted
                └─ orchestrator.model_call
                                  gen_ai.system=vllm, gen_ai.request.model, .max_tokens,
                                  .temperature, gen_ai.usage.input_tokens / output_tokens,
                                  gen_ai.response.finish_reasons, model_call.latency_ms,
                                  model_call.ttft_ms, expert_routing.source (engine|replay),
                                  expert_routing.moe_layers, expert_routing.top_experts
                                  ("L1:E3:0.412" per layer's most used),
                                  expert_routing.mean_router_confidence

Node spans come from LangGraph's callbacks (:meth:`RequestTrace.callbacks`, a
``langchain_core`` callback handler run inline). Model text is never put on a span.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from uuid import UUID

from orchestrator.exceptions import UserError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span, Tracer

#: Exporters :func:`configure_tracing` knows by name.
EXPORTERS = ("console", "otlp", "memory")

_lock = threading.Lock()
_provider: TracerProvider | None = None
_tracer: Tracer | None = None
_exporter: SpanExporter | None = None

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float]


def tracing_enabled() -> bool:
    """Whether :func:`configure_tracing` is in effect."""
    return _tracer is not None


def configure_tracing(
    exporter: str | SpanExporter = "console",
    *,
    endpoint: str | None = None,
    service_name: str = "moe-orchestrator",
) -> SpanExporter:
    """Turn tracing on, for this process, with one exporter (replacing an earlier setup).

    Args:
        exporter: ``console`` (spans as JSON on standard error, batched), ``otlp`` (OTLP over
            HTTP, batched; ``endpoint`` or ``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, default
            ``http://localhost:4318/v1/traces``), ``memory`` (kept in an
            ``InMemorySpanExporter``, exported as each span ends: for tests), or any
            ``SpanExporter``.
        endpoint: The OTLP endpoint (``otlp`` only).
        service_name: The ``service.name`` resource attribute.

    Returns:
        The exporter (an ``InMemorySpanExporter`` for ``memory``: read
        ``get_finished_spans()``).

    Raises:
        UserError: An unknown exporter name, or the ``otel`` extra is not installed (the
            message says what to install).
    """
    global _provider, _tracer, _exporter
    if isinstance(exporter, str) and exporter not in EXPORTERS:
        raise UserError(f"unknown trace exporter {exporter!r}; use one of {', '.join(EXPORTERS)}")
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SimpleSpanProcessor,
        )
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as exc:
        raise UserError(
            f"tracing needs the otel extra ({exc}): pip install 'moe-orchestrator[otel]' "
            "(opentelemetry-sdk, opentelemetry-exporter-otlp-proto-http)"
        ) from exc
    chosen: SpanExporter
    if exporter == "console":
        chosen = ConsoleSpanExporter(out=sys.stderr)
    elif exporter == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as exc:
            raise UserError(
                "the otlp exporter needs opentelemetry-exporter-otlp-proto-http: "
                "pip install 'moe-orchestrator[otel]'"
            ) from exc
        chosen = OTLPSpanExporter(endpoint=endpoint) if endpoint else OTLPSpanExporter()
    elif exporter == "memory":
        chosen = InMemorySpanExporter()
    else:  # an exporter object (a name not in EXPORTERS was refused above)
        assert not isinstance(exporter, str)
        chosen = exporter
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    processor = (
        SimpleSpanProcessor(chosen)
        if isinstance(chosen, InMemorySpanExporter)
        else BatchSpanProcessor(chosen)
    )
    provider.add_span_processor(processor)
    with _lock:
        previous = _provider
        _provider, _exporter = provider, chosen
        _tracer = provider.get_tracer("orchestrator")
    if previous is not None:
        previous.shutdown()
    return chosen


def tracing_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """Configure tracing from OpenTelemetry's own variable ``OTEL_TRACES_EXPORTER``
    (``console`` or ``otlp``; unset or ``none``: off).

    Returns:
        The exporter turned on, or None.

    Raises:
        UserError: Another value (OpenTelemetry's ``zipkin``, several names...), or the
            ``otel`` extra is missing.
    """
    env = os.environ if environ is None else environ
    value = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if value in ("", "none"):
        return None
    if value not in ("console", "otlp"):
        raise UserError(f"OTEL_TRACES_EXPORTER={value!r}: use console, otlp or none")
    configure_tracing(value)
    return value


def shutdown_tracing() -> None:
    """Export what is pending and turn tracing off (safe when it is off)."""
    global _provider, _tracer, _exporter
    with _lock:
        provider, _provider, _tracer, _exporter = _provider, None, None, None
    if provider is not None:
        provider.shutdown()


def _clean(attributes: Mapping[str, Any]) -> dict[str, AttributeValue]:
    """OpenTelemetry attribute values: None dropped, tuples/lists as lists of one type."""
    out: dict[str, AttributeValue] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, list | tuple):
            out[key] = [v if isinstance(v, int | float | bool) else str(v) for v in value]  # type: ignore[assignment]  # one type in the lists passed
        elif isinstance(value, str | bool | int | float):
            out[key] = value
        else:
            out[key] = str(value)
    return out


@functools.cache
def _node_handler_class() -> type:
    """The ``langchain_core`` callback handler class that opens one span per LangGraph node
    run, a child of the workflow span (made on first use: only when tracing is on)."""
    from langchain_core.callbacks import BaseCallbackHandler
    from opentelemetry.trace import Status, StatusCode

    class NodeSpans(BaseCallbackHandler):
        run_inline = True  # called in the node's own task, no executor thread

        def __init__(self, trace: RequestTrace) -> None:
            self.trace = trace
            self.roots: set[UUID] = set()
            self.spans: dict[UUID, Span] = {}
            self.by_node: dict[str, list[Span]] = {}

        def on_chain_start(
            self,
            serialized: dict[str, Any] | None,
            inputs: Any,
            *,
            run_id: UUID,
            parent_run_id: UUID | None = None,
            metadata: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> None:
            if parent_run_id is None:  # the graph itself
                self.roots.add(run_id)
                return
            meta = metadata or {}
            node = meta.get("langgraph_node")
            if parent_run_id not in self.roots or not node or kwargs.get("name") != node:
                return  # a router or a runnable inside a node: not a node of its own
            span = self.trace.start_child(
                "orchestrator.node",
                self.trace.workflow_span,
                {"langgraph.node": node, "langgraph.step": meta.get("langgraph_step")},
            )
            if span is not None:
                self.spans[run_id] = span
                self.by_node.setdefault(str(node), []).append(span)

        def _end(self, run_id: UUID, error: BaseException | None) -> None:
            span = self.spans.pop(run_id, None)
            if span is None:
                return
            for spans in self.by_node.values():
                if span in spans:
                    spans.remove(span)
            if error is not None and type(error).__name__ == "GraphInterrupt":
                span.set_attribute("node.interrupted", True)  # waits for a person: no error
            elif error is not None:
                span.record_exception(error)
                span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
            span.end()

        def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
            self._end(run_id, None)

        def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            self._end(run_id, error)

    return NodeSpans


class RequestTrace:
    """The spans of one request (see the module's tree); every method is a no-op when tracing
    is off, so the dispatcher and the gateway call them unconditionally.

    Args:
        kind: ``handle``, ``stream`` or ``resume``.
        request_id: The request's id.
        traced: False for a trace that is never recorded, even with tracing on.
        attributes: More attributes of the request span (channel, thread...).
    """

    def __init__(
        self, kind: str, request_id: str, *, traced: bool = True, **attributes: Any
    ) -> None:
        tracer = _tracer if traced else None
        self.tracer = tracer
        self.request_span: Span | None = None
        self.workflow_span: Span | None = None
        self._nodes: Any = None
        if tracer is not None:
            self.request_span = tracer.start_span(
                "orchestrator.request",
                attributes=_clean({"request.id": request_id, "request.kind": kind, **attributes}),
            )

    @property
    def active(self) -> bool:
        """Whether this request is traced."""
        return self.request_span is not None

    def start_child(
        self,
        name: str,
        parent: Span | None,
        attributes: Mapping[str, Any],
        start_ns: int | None = None,
    ) -> Span | None:
        """A span under ``parent`` (the request span when None); None when not traced."""
        under = parent or self.request_span  # the request span is set whenever a tracer is
        if self.tracer is None or under is None:
            return None
        from opentelemetry.trace import set_span_in_context

        context = set_span_in_context(under)
        return self.tracer.start_span(
            name, context=context, attributes=_clean(attributes), start_time=start_ns
        )

    def set(self, **attributes: Any) -> None:
        """Set attributes of the request span."""
        if self.request_span is not None:
            self.request_span.set_attributes(_clean(attributes))

    def classified(self, route: str, confidence: float, rules: Sequence[str], reason: str) -> None:
        """The classifier's decision, on the request span."""
        self.set(
            route=route,
            **{"route.confidence": confidence, "classifier.rules": list(rules)},
            **{"route.reason": reason[:200]},
        )

    def workflow(self, name: str) -> None:
        """The workflow starts (its span, under the request's)."""
        self.set(workflow=name)
        self.workflow_span = self.start_child("orchestrator.workflow", None, {"workflow": name})

    def callbacks(self) -> list[Any]:
        """LangGraph callbacks that open a span per node (``[]`` when not traced)."""
        if self.workflow_span is None:
            return []
        if self._nodes is None:
            self._nodes = _node_handler_class()(self)
        return [self._nodes]

    def node_span(self, node: str) -> Span | None:
        """The open span of node ``node`` (its latest run), or the workflow span."""
        if self._nodes is not None and self._nodes.by_node.get(node):
            return self._nodes.by_node[node][-1]
        return self.workflow_span

    @contextmanager
    def model_call(self, node: str, **attributes: Any) -> Iterator[Span | None]:
        """A span around one model call of ``node`` (under the node's span); an exception is
        recorded on it with an error status and re-raised."""
        if self.tracer is None:
            yield None
            return
        span = self.start_child(
            "orchestrator.model_call",
            self.node_span(node),
            {"gen_ai.system": "vllm", "gen_ai.operation.name": "chat", "node": node, **attributes},
            start_ns=time.time_ns(),
        )
        assert span is not None
        try:
            yield span
        except BaseException as exc:
            from opentelemetry.trace import Status, StatusCode

            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
            raise
        finally:
            span.end()

    def record_call(self, span: Span | None, call: Any) -> None:
        """Put a finished model call's attributes (:func:`call_attributes`) on ``span``."""
        if span is not None:
            span.set_attributes(_clean(call_attributes(call)))

    def finish(self, status: str, error: str | None = None) -> None:
        """End the request (and its workflow span): ``failed`` and ``cancelled`` get an error
        status with ``error``."""
        if self.request_span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        self.set(**{"request.status": status, "request.error": (error or "")[:500] or None})
        for span in (self.workflow_span, self.request_span):
            if span is None or not span.is_recording():
                continue
            if status in ("failed", "cancelled"):
                span.set_status(Status(StatusCode.ERROR, (error or status)[:500]))
            span.end()


def call_attributes(call: Any) -> dict[str, Any]:
    """The span attributes of a finished model call (a
    :class:`~orchestrator.core.client.ModelCall`, read by attribute so this layer needs no
    import of it): usage, finish reason, latency and the expert routing (source, MoE layers,
    the most used experts per layer with their load share, mean router confidence)."""
    routing = call.routing
    has_routing = bool(getattr(routing, "has_routing", False))
    top: list[str] = []
    if has_routing:
        top = [f"L{layer}:E{expert}:{share:.3f}" for layer, expert, share in routing.top_experts(3)]
    source = getattr(routing, "source", None)
    return {
        "gen_ai.request.model": getattr(call, "model", None),
        "gen_ai.usage.input_tokens": getattr(call, "prompt_tokens", None),
        "gen_ai.usage.output_tokens": getattr(call, "completion_tokens", None),
        "gen_ai.response.finish_reasons": [str(call.finish_reason)]
        if getattr(call, "finish_reason", None)
        else None,
        "model_call.latency_ms": getattr(call, "latency_ms", None),
        "model_call.ttft_ms": getattr(call, "ttft_ms", None),
        "model_call.tool_calls": len(getattr(call, "tool_calls", ()) or ()),
        "expert_routing.source": getattr(source, "value", source),
        "expert_routing.moe_layers": list(routing.moe_layers) if has_routing else None,
        "expert_routing.top_experts": top or None,
        "expert_routing.mean_router_confidence": routing.mean_confidence() if has_routing else None,
    }
