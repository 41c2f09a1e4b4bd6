"""The model gateway: how workflow nodes call the model. One call, one telemetry row.

A :class:`ModelGateway` is scoped to one request. It knows the request id, the classifier's
decision and the workflow, so a node only names itself and its messages; the gateway adds the
routing aggregates and writes the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from orchestrator.classifier import Classification
from orchestrator.core.client import ChatMessage, ModelCall, ModelClient
from orchestrator.exceptions import ModelCallError
from orchestrator.telemetry import TelemetryStore
from serving.expert_routing import ExpertRoutingSource


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


class ModelGateway:
    """Calls the model on behalf of one request and records every call.

    Args:
        client: The model client.
        store: Where rows go.
        request_id: The request being served.
        classification: The classifier's decision for it (copied into each row).
        workflow: The workflow's name.
        max_tokens: Default completion limit.
    """

    def __init__(
        self,
        client: ModelClient,
        store: TelemetryStore,
        *,
        request_id: str,
        classification: Classification,
        workflow: str,
        max_tokens: int = 48,
    ) -> None:
        self.client = client
        self.store = store
        self.request_id = request_id
        self.classification = classification
        self.workflow = workflow
        self.max_tokens = max_tokens
        self.calls: list[CallSummary] = []

    async def chat(
        self,
        node: str,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> ModelCall:
        """Call the model for ``node`` and write the call's telemetry row.

        Raises:
            ServerUnavailableError: The server cannot be reached (nothing is written).
            ModelCallError: The call failed; the error names this request and node.
            TelemetryError: The row could not be written.
        """
        try:
            call = await self.client.chat(
                messages, max_tokens=max_tokens or self.max_tokens, json_schema=json_schema
            )
        except ModelCallError as exc:
            raise ModelCallError(str(exc), request_id=self.request_id, node=node) from exc
        await self.store.arecord_call(
            request_id=self.request_id,
            classification=self.classification,
            workflow=self.workflow,
            node=node,
            model=call.model,
            latency_ms=call.latency_ms,
            finish_reason=call.finish_reason,
            routing=call.routing,
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
        return call
