"""The model gateway: how workflow nodes call the model. One call, one telemetry row.

A :class:`ModelGateway` is scoped to one request. It knows the request id, the classifier's
decision and the workflow, so a node only names itself and its messages; the gateway adds the
routing aggregates and writes the row. :meth:`ModelGateway.structured` is the one way to ask
for JSON output: schema, parse and validation in one place (:mod:`orchestrator.core.structured`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from orchestrator.classification import Classification
from orchestrator.core.client import (
    ChatMessage,
    ChatOptions,
    ModelCall,
    ModelClient,
    StreamItem,
    TextDelta,
    TruncatedStreamError,
)
from orchestrator.core.structured import OutputT, StructuredAnswer, output_schema
from orchestrator.exceptions import ModelCallError, UserError
from orchestrator.observability.metrics import observe_model_call
from orchestrator.observability.tracing import RequestTrace
from orchestrator.telemetry import TelemetryStore
from serving.expert_routing import ExpertRoutingSource

#: A skill's kind of output, which picks its temperature preset.
TemperatureKind = Literal["judging", "factual", "free_text"]

#: Presets per kind of skill: greedy for judging and extraction, near-greedy for factual
#: replies, 0.7 for free text (report prose). Settings override them (``ORCH_TEMPERATURE_*``).
TEMPERATURE_PRESETS: dict[str, float] = {"judging": 0.0, "factual": 0.1, "free_text": 0.7}


#: The trace of a gateway made without one: every span call is a no-op.
_UNTRACED = RequestTrace("untraced", "", traced=False)


class CallSummary(BaseModel):
    """What the console shows of one model call.

    Attributes:
        node: The workflow node that made the call.
        prompt_tokens: Prompt tokens.
        completion_tokens: Completion tokens.
        latency_ms: HTTP wall time in milliseconds.
        expert_routing_source: Who filled the routing (``replay`` is an estimate).
        top_experts: ``(layer, expert, load share)`` of the most-used experts.
        mean_router_confidence: Mean chosen-expert probability mass, or None.
    """

    model_config = ConfigDict(frozen=True)

    node: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    expert_routing_source: ExpertRoutingSource
    top_experts: list[tuple[int, int, float]]
    mean_router_confidence: float | None


@dataclass(eq=False, repr=False)
class ModelGateway:
    """Calls the model on behalf of one request and records every call.

    Args:
        client: The model client.
        store: Where rows go.
        request_id: The request being served.
        classification: The classifier's decision for it (copied into each row).
        workflow: The workflow's name.
        max_tokens: Default completion limit.
        temperatures: Temperature presets by kind (``judging``, ``factual``, ``free_text``);
            :data:`TEMPERATURE_PRESETS` when None (``ORCH_TEMPERATURE_*`` in the settings).
        trace: The request's OpenTelemetry spans; each call gets an
            ``orchestrator.model_call`` span (usage, latency, expert routing) under its node's.
            Untraced by default (and when tracing is off).

    Attributes:
        calls: What the console shows of each call so far, in order.
        expert_loads: Per call (aligned with ``calls``): its MoE layers and
            ``(layers, experts)`` activation counts, ``((), [])`` for a call without routing.
    """

    client: ModelClient
    store: TelemetryStore
    _: KW_ONLY
    request_id: str
    classification: Classification
    workflow: str
    max_tokens: int = 48
    temperatures: Mapping[str, float] | None = None
    trace: RequestTrace = _UNTRACED
    calls: list[CallSummary] = field(default_factory=list, init=False)
    expert_loads: list[tuple[tuple[int, ...], list[list[int]]]] = field(
        default_factory=list, init=False
    )

    def temperature(self, kind: TemperatureKind, override: float | None = None) -> float:
        """The temperature for a skill of ``kind``: ``override`` when given, else the preset.

        Raises:
            UserError: ``kind`` has no preset, or ``override`` is outside 0..2.
        """
        if override is not None:
            if not 0.0 <= override <= 2.0:
                raise UserError(f"temperature must be within 0..2, got {override}")
            return override
        presets = TEMPERATURE_PRESETS if self.temperatures is None else self.temperatures
        try:
            return presets[kind]
        except KeyError:
            raise UserError(f"no temperature preset {kind!r}; presets: {sorted(presets)}") from None

    async def chat(
        self,
        node: str,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
        temperature: float | None = None,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> ModelCall:
        """Call the model for ``node`` and write the call's telemetry row.

        Args:
            node: The workflow node making the call (recorded in telemetry).
            messages: The conversation, system turn first.
            max_tokens: Completion token limit; the gateway's default when None.
            json_schema: Constrain the output to this schema (prefer :meth:`structured`).
            temperature: Sampling temperature; the client's default when None.
            tools: OpenAI function tools; the answer's ``tool_calls`` hold what the model
                asked for (arguments as untrusted JSON text).
            tool_choice: ``"required"``, ``"auto"`` or a named tool (see
                :meth:`VLLMClient.chat <orchestrator.core.client.VLLMClient.chat>`).

        Raises:
            ServerUnavailableError: The server cannot be reached (nothing is written).
            ModelCallError: The call failed; the error names this request and node.
            TelemetryError: The row could not be written.
        """
        options = ChatOptions(
            max_tokens=max_tokens or self.max_tokens,
            json_schema=json_schema,
            temperature=temperature,
            tools=tuple(tools or ()),
            tool_choice=tool_choice,
        )
        call = await self._chat_unrecorded(node, messages, options)
        await self._record(node, call)
        return call

    async def _chat_unrecorded(
        self, node: str, messages: Sequence[ChatMessage], options: ChatOptions
    ) -> ModelCall:
        """:meth:`chat`'s traced call, without the telemetry row (the caller writes it)."""
        with self.trace.model_call(
            node,
            **{
                "gen_ai.request.max_tokens": options.max_tokens,
                "gen_ai.request.temperature": options.temperature,
                "model_call.structured": options.json_schema is not None,
                "model_call.tools_offered": len(options.tools),
            },
        ) as span:
            try:
                call = await self.client.chat(messages, options)
            except ModelCallError as exc:
                exc.at(request_id=self.request_id, node=node)
                raise
            self.trace.record_call(span, call)
        return call

    async def _record(
        self, node: str, call: ModelCall, checks: list[dict[str, str]] | None = None
    ) -> None:
        """Write ``call``'s telemetry row (with what ``checks`` dropped) and keep its summary."""
        await self.store.arecord_call(
            request_id=self.request_id,
            classification=self.classification,
            workflow=self.workflow,
            node=node,
            model=call.model,
            latency_ms=call.latency_ms,
            finish_reason=call.finish_reason,
            routing=call.routing,
            checks=checks,
        )
        observe_model_call(  # Prometheus: latency, tokens, expert load over the window
            node=node,
            latency_ms=call.latency_ms,
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
            moe_layers=call.routing.moe_layers if call.routing.has_routing else (),
            expert_counts=call.routing.expert_counts() if call.routing.has_routing else None,
        )
        self.expert_loads.append(
            (tuple(call.routing.moe_layers), call.routing.expert_counts().tolist())
            if call.routing.has_routing
            else ((), [])
        )
        self.calls.append(
            CallSummary(
                node=node,
                prompt_tokens=call.prompt_tokens,
                completion_tokens=call.completion_tokens,
                latency_ms=call.latency_ms,
                expert_routing_source=call.routing.source,
                top_experts=call.routing.top_experts(3),
                mean_router_confidence=call.routing.mean_confidence(),
            )
        )

    async def stream(
        self,
        node: str,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        review: Callable[[ModelCall], list[dict[str, str]]] | None = None,
    ) -> AsyncIterator[StreamItem]:
        """Stream a free-text call for ``node``: :class:`TextDelta` pieces, then the finished
        :class:`ModelCall` once, after its telemetry row is written.

        ``review``, when given, is called with the finished call just before its row is
        written; what it returns (``{"reason", "sentence"}`` per sentence a check dropped) is
        recorded on the row (``model_calls.checks``). A stream cut mid-answer is recorded
        with ``finish_reason`` ``truncated`` and raised as :class:`TruncatedStreamError`.

        A client without ``stream_chat`` (a test double) is called once, non-streamed, and
        its whole text comes as one piece. How a streamed call's experts are obtained is in
        :meth:`VLLMClient.stream_chat <orchestrator.core.client.VLLMClient.stream_chat>`.

        Raises:
            ServerUnavailableError, ModelCallError, TelemetryError: As :meth:`chat`.
        """
        options = ChatOptions(max_tokens=max_tokens or self.max_tokens, temperature=temperature)
        stream_chat = getattr(self.client, "stream_chat", None)
        if stream_chat is None:
            call = await self._chat_unrecorded(node, messages, options)
            yield TextDelta(text=call.text)
            await self._record(node, call, review(call) if review else None)
            yield call
            return
        with self.trace.model_call(
            node,
            **{
                "gen_ai.request.max_tokens": options.max_tokens,
                "gen_ai.request.temperature": temperature,
                "model_call.streamed": True,
            },
        ) as span:
            try:
                async for item in stream_chat(messages, options):
                    if isinstance(item, ModelCall):
                        self.trace.record_call(span, item)
                        await self._record(node, item, review(item) if review else None)
                    yield item
            except TruncatedStreamError as exc:  # a failed call: its row says truncated
                self.trace.record_call(span, exc.call)
                await self._record(node, exc.call)
                exc.at(request_id=self.request_id, node=node)
                raise
            except ModelCallError as exc:
                exc.at(request_id=self.request_id, node=node)
                raise

    async def structured(
        self,
        node: str,
        messages: Sequence[ChatMessage],
        *,
        output: type[OutputT],
        schema: dict[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> StructuredAnswer[OutputT]:
        """Call the model for JSON that fits ``output``; parse and validate it once.

        The call is made and recorded like :meth:`chat`. An answer that is not JSON, or does
        not validate, is not an error: it comes back with ``value=None`` and the reason in
        ``error`` (with ``finish_reason=length`` named when the answer was cut), so the skill
        can fall back.

        Args:
            node: The workflow node making the call (recorded in telemetry).
            messages: The conversation, system turn first.
            output: The pydantic model the answer must satisfy.
            schema: The JSON schema sent to the server; ``output``'s own
                (:func:`~orchestrator.core.structured.output_schema`) when None. Pass an
                explicit one where strings must be bounded more tightly than the model says.
                Not sent when the client has structured output off
                (``ORCH_STRUCTURED_OUTPUT=false``); the text is parsed the same way.
            context: Validation context for ``output``'s validators.
            max_tokens: Completion token limit; the gateway's default when None.
            temperature: Sampling temperature; the client's default when None.

        Raises:
            ServerUnavailableError: The server cannot be reached (nothing is written).
            ModelCallError: The server answered with an error; the error names this request
                and node.
            TelemetryError: The row could not be written.
        """
        call = await self.chat(
            node,
            messages,
            max_tokens=max_tokens,
            json_schema=output_schema(output) if schema is None else schema,
            temperature=temperature,
        )
        return StructuredAnswer.parse(
            call.text,
            output,
            model=call.model,
            finish_reason=call.finish_reason,
            context=context,
        )
