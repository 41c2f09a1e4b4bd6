"""Typed events of :meth:`Orchestrator.stream <orchestrator.core.dispatcher.Orchestrator.stream>`.

A stream yields, in order: one :class:`ClassificationEvent`; for each graph node a
:class:`NodeStarted` and a :class:`NodeFinished`; between them what the node reports through
LangGraph's stream writer (:class:`ToolCallEvent`, :class:`ToolResultEvent`,
:class:`ReplyFacts`, :class:`ReplyToken`, :class:`SentenceDropped`, :class:`HandoffEvent`);
then one :class:`CallExperts` per model call (with its expert-routing source), and last one
:class:`StreamDone` with the request's outcome. Every event is a frozen pydantic model with a
``kind`` literal, so ``match event.kind`` or ``isinstance`` both work, and
``event.model_dump_json()`` is one line of a JSON event stream.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: How a request ended (``RequestOutcome.status``, ``StreamDone.status``): ``succeeded``;
#: ``rejected`` (the workflow refused its input, or the turn was refused); ``failed``;
#: ``needs_human`` (handed to a person); ``no_workflow`` (no workflow for its route).
RequestStatus = Literal["succeeded", "rejected", "failed", "needs_human", "no_workflow"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class ClassificationEvent(_Event):
    """The request's route and confidence (``secondary_routes`` for a compound request), and
    the rules that fired (``signals``: each :class:`~orchestrator.classifier.Signal` as JSON,
    ``rule_id``, ``route``, ``weight``, ``matched``, ``span``..., so a front end need not
    classify the request a second time), and what each tier of the classifier contributed
    (``tiers``: each :class:`~orchestrator.classifier.models.TierContribution` as JSON,
    ``tier``, ``consulted``, ``decided``, ``scores``, ``note``; empty for a fixed route)."""

    kind: Literal["classification"] = "classification"
    request_id: str
    route: str
    confidence: float
    reason: str
    secondary_routes: tuple[str, ...] = ()
    signals: tuple[dict[str, Any], ...] = ()
    tiers: tuple[dict[str, Any], ...] = ()


class NodeStarted(_Event):
    """A graph node began."""

    kind: Literal["node_started"] = "node_started"
    node: str


class NodeFinished(_Event):
    """A graph node ended (``interrupted``: it paused for a person)."""

    kind: Literal["node_finished"] = "node_finished"
    node: str
    interrupted: bool = False


class ToolCallEvent(_Event):
    """The model asked for a tool (``arguments``: its JSON text, untrusted); ``valid`` says
    whether the arguments passed validation (an invalid call is never executed)."""

    kind: Literal["tool_call"] = "tool_call"
    tool: str
    arguments: str
    valid: bool
    attempt: int = 1
    error: str = ""


class ToolResultEvent(_Event):
    """What a tool returned: facts (placeholder → value) or a refusal code."""

    kind: Literal["tool_result"] = "tool_result"
    tool: str
    ok: bool
    facts: dict[str, str] = Field(default_factory=dict)
    error_code: str | None = None


class ReplyFacts(_Event):
    """The reply's fact sentence, written by code from tool results (no model text)."""

    kind: Literal["reply_facts"] = "reply_facts"
    text: str


class ReplyToken(_Event):
    """A piece of the reply prose as it streams: one whole model sentence that passed the
    claim checker (``workflows/customer_service/claims.py``), or the prose code wrote when
    no model sentence was left."""

    kind: Literal["reply_token"] = "reply_token"
    text: str


class SentenceDropped(_Event):
    """A model sentence the claim checker kept from the customer, and why (``reason`` starts
    with its kind: ``state:``, ``figure:``, ``broken:``, ``language:``, ``intent:``). The
    sentence is model output: data, escape it before showing it."""

    kind: Literal["sentence_dropped"] = "sentence_dropped"
    reason: str
    sentence: str


class HandoffEvent(_Event):
    """The conversation waits for a person (``orchestrator handoff resume THREAD``)."""

    kind: Literal["handoff"] = "handoff"
    thread_id: str
    reason: str


class CallExperts(_Event):
    """One model call's experts: ``(layer, expert, load share)`` of the most used, the whole
    load (``moe_layers`` and ``expert_counts``: activations per MoE layer and expert, each row
    summing to routed tokens × top-k; empty without routing), and where they came from
    (``replay``: transformers replay of the call's token ids; ``engine``)."""

    kind: Literal["call_experts"] = "call_experts"
    node: str
    expert_routing_source: str
    top_experts: list[tuple[int, int, float]]
    moe_layers: tuple[int, ...] = ()
    expert_counts: list[list[int]] = Field(default_factory=list)
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float


class StreamDone(_Event):
    """The end: the request's status, headline and result (as in ``handle``)."""

    kind: Literal["done"] = "done"
    request_id: str
    status: RequestStatus
    headline: str
    result: dict[str, Any] | None = None
    error: str | None = None


#: Any event of a stream.
StreamEvent = (
    ClassificationEvent
    | NodeStarted
    | NodeFinished
    | ToolCallEvent
    | ToolResultEvent
    | ReplyFacts
    | ReplyToken
    | SentenceDropped
    | HandoffEvent
    | CallExperts
    | StreamDone
)
