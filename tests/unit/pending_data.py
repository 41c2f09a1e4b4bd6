"""Model calls recorded with expert routing deferred (``pending``), for the fill and
read-only telemetry tests: a pending trace of given token ids, and calls written through the
store's public API."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from orchestrator.classifier import RuleClassifier
from orchestrator.config import Settings
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from serving.architecture import MoEArchitecture
from serving.capture import PENDING_REASON, PendingReplayTrace
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace, shape_fields

#: The checkpoint the pending calls name (the replay worker loads it to fill them).
CHECKPOINT = Settings().checkpoint_dir
#: The first call's time; each next call is 20 minutes later.
T0 = datetime(2026, 11, 30, 10, 15, tzinfo=UTC)


def pending_trace(
    arch: MoEArchitecture, prompt: Sequence[int], completion: Sequence[int]
) -> PendingReplayTrace:
    """A ``pending`` trace of ``prompt`` and ``completion`` token ids on :data:`CHECKPOINT`."""
    return PendingReplayTrace(
        source=ExpertRoutingSource.PENDING,
        **shape_fields(arch),  # as serving.capture's deferred capture writes it
        prompt_tokens=len(prompt),
        completion_tokens=len(completion),
        reason=PENDING_REASON,
        prompt_ids=tuple(prompt),
        completion_ids=tuple(completion),
        checkpoint=str(CHECKPOINT.resolve()),
    )


def record_calls(
    store: TelemetryStore,
    traces: Sequence[ExpertRoutingTrace],
    *,
    batch: str | None = None,
) -> None:
    """One request per two calls (ids ``r0``, ``r2``, ...; of ``batch`` when given), calls
    spread over two hours (:data:`T0` + 20 minutes each) and two nodes."""
    classification = RuleClassifier().classify(Request(text="refund my order"))
    request = None
    for i, trace in enumerate(traces):
        if i % 2 == 0:
            metadata = {"batch_id": batch} if batch else {}
            request = Request(id=f"r{i}", text="refund my order", metadata=metadata)
            store.start_request(request, classification, "customer_service")
        store.clock = lambda i=i: T0 + timedelta(minutes=20 * i)
        assert request is not None
        store.record_call(
            request_id=request.id,
            classification=classification,
            workflow="customer_service",
            node=("triage", "reply")[i % 2],
            model="ernie",
            latency_ms=10.0,
            finish_reason="stop",
            routing=trace,
        )
