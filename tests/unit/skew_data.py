"""Synthetic telemetry for the skew tests, written through the store's public API.

Every call's expert ids are drawn from a known per-layer share vector with the Gumbel-top-k
trick (top-k without replacement, like a router), so tests know the ground truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache

import numpy as np
import pytest

from orchestrator import Request, RuleClassifier, TelemetryStore
from serving import ExpertRoutingSource, ExpertRoutingTrace

LAYERS = (1, 2, 3)
EXPERTS = 16
TOP_K = 2
T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def draw_ids(rng: np.random.Generator, shares: np.ndarray, tokens: int, top_k: int) -> np.ndarray:
    """``(tokens, L, top_k)`` ids: top-k without replacement, weighted by ``shares`` (L, E)."""
    with np.errstate(divide="ignore"):
        keys = np.log(shares)[None] + rng.gumbel(size=(tokens, *shares.shape))
    return np.argsort(-keys, axis=-1)[..., :top_k].astype(np.int16)


def trace(
    rng: np.random.Generator,
    shares: np.ndarray,
    tokens: int,
    *,
    top_k: int = TOP_K,
    layers: Sequence[int] = LAYERS,
    confidence: float = 0.6,
    source: ExpertRoutingSource = ExpertRoutingSource.SCRIPTED,
) -> ExpertRoutingTrace:
    """A routing trace of ``tokens`` routed tokens drawn from ``shares``."""
    return routing_trace(
        tokens,
        source=source,
        layers=layers,
        experts=shares.shape[-1],
        top_k=top_k,
        expert_ids=draw_ids(rng, shares, tokens, top_k),
        router_confidence=np.clip(
            rng.normal(confidence, 0.05, (tokens, len(layers))), 0.01, 1
        ).astype(np.float32),
    )


def routing_trace(
    tokens: int,
    *,
    layers: Sequence[int] = LAYERS,
    experts: int = EXPERTS,
    top_k: int = TOP_K,
    source: ExpertRoutingSource = ExpertRoutingSource.ENGINE,
    **data: object,
) -> ExpertRoutingTrace:
    """A trace of ``tokens`` prompt tokens and one completion token on the MoE shape
    (``layers``, ``experts``, ``top_k``); ``data``: its ``expert_ids`` or ``counts`` and any
    other field (``family``, ``capture_sampling_rate``, ...)."""
    return ExpertRoutingTrace(
        source=source,
        moe_layers=tuple(layers),
        num_experts=experts,
        top_k=top_k,
        prompt_tokens=tokens,
        completion_tokens=1,
        **data,  # type: ignore[arg-type]
    )


@lru_cache(maxsize=1)
def _classifier() -> RuleClassifier:
    return RuleClassifier()


def add_request(
    store: TelemetryStore,
    text: str,
    workflow: str,
    calls: Sequence[tuple[str, ExpertRoutingTrace]],
    *,
    request_id: str | None = None,
    model: str = "scripted-model",
) -> str:
    """Write one request and its calls (node, trace) to served ``model``; returns the request
    id (a new UUID hex unless ``request_id`` is given)."""
    request = Request(text=text) if request_id is None else Request(id=request_id, text=text)
    classification = _classifier().classify(request)
    store.start_request(request, classification, workflow)
    for node, routing in calls:
        store.record_call(
            request_id=request.id,
            classification=classification,
            workflow=workflow,
            node=node,
            model=model,
            latency_ms=1.0,
            finish_reason="stop",
            routing=routing,
        )
    store.finish_request(request.id, "succeeded")
    return request.id


def uniform(layers: int = len(LAYERS), experts: int = EXPERTS) -> np.ndarray:
    return np.full((layers, experts), 1.0 / experts)


def freeze_time(monkeypatch: pytest.MonkeyPatch, store: TelemetryStore, moment: datetime) -> None:
    """Make ``store`` stamp new rows with ``moment`` (through its public ``clock``)."""
    monkeypatch.setattr(store, "clock", lambda: moment)
