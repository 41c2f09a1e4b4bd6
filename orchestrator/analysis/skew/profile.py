"""Scope profiles: the metrics of one scope's summed counts, per MoE layer.

All metrics of all layers are computed with one vectorised call each over the ``(L, E)``
count array (:mod:`orchestrator.analysis.skew.metrics`).
"""

from __future__ import annotations

import numpy as np

from orchestrator.analysis.skew import metrics
from orchestrator.analysis.skew.intervals import share_intervals, verdicts
from orchestrator.analysis.skew.models import (
    ConfidenceSummary,
    LayerMetrics,
    ModelShape,
    ScopeKind,
    ScopeProfile,
    Thresholds,
)
from orchestrator.telemetry import CONFIDENCE_BINS, RollupDelta


def _quantile(histogram: np.ndarray, q: float) -> float | None:
    """The ``q`` quantile of a ``[0, 1]`` histogram, linear within the bin."""
    total = histogram.sum()
    if total == 0:
        return None
    cumulative = np.cumsum(histogram)
    target = q * total
    i = int(np.searchsorted(cumulative, target))
    below = cumulative[i - 1] if i else 0
    inside = (target - below) / histogram[i] if histogram[i] else 0.0
    return float((i + inside) / len(histogram))


def confidence_summary(delta: RollupDelta) -> ConfidenceSummary:
    """Router-confidence summary of a scope's sums."""
    hist = np.asarray(delta.conf_hist, dtype=np.int64)
    return ConfidenceSummary(
        calls=delta.conf_calls,
        mean=delta.conf_sum / delta.conf_tokens if delta.conf_tokens else None,
        bin_edges=[round(i / CONFIDENCE_BINS, 4) for i in range(CONFIDENCE_BINS + 1)],
        histogram=[int(v) for v in hist],
        p10=_quantile(hist, 0.1),
        p50=_quantile(hist, 0.5),
        p90=_quantile(hist, 0.9),
    )


def scope_profile(
    kind: ScopeKind,
    name: str,
    delta: RollupDelta,
    shape: ModelShape,
    thresholds: Thresholds,
    sources: dict[str, int],
    sizes: float = 1.0,
) -> ScopeProfile:
    """Metrics of every MoE layer of one scope.

    Args:
        kind: Scope kind.
        name: Scope name.
        delta: The scope's summed counts, ``counts`` of shape ``(L, E)``.
        shape: The model shape.
        thresholds: Hot, dead and collapse thresholds (hot and dead from the share intervals
            of :mod:`orchestrator.analysis.skew.intervals`).
        sources: Calls per expert-routing source.
        sizes: :func:`~orchestrator.analysis.skew.intervals.size_ratio` of the scope's calls
            (1 = equal lengths, or unknown).
    """
    counts = np.asarray(delta.counts)
    bounds = share_intervals(counts, delta.sq_counts, delta.calls, thresholds, sizes)
    shares = bounds.shares
    hot, dead = verdicts(bounds, thresholds)
    columns = {
        "balancedness": metrics.balancedness(counts),
        "max_violation": metrics.max_violation(counts),
        "cv": metrics.coefficient_of_variation(counts),
        "normalised_entropy": metrics.normalised_entropy(counts),
        "effective_experts": metrics.effective_experts(counts),
        "gini": metrics.gini(counts),
        "topk_share": metrics.topk_share(counts, shape.top_k),
    }
    judged = bounds.judgeable
    layer_conf = np.asarray(delta.layer_conf_sum) / delta.conf_tokens if delta.conf_tokens else None
    layers = []
    for i, layer in enumerate(shape.moe_layers):
        hot_ids = np.flatnonzero(hot[i])
        layers.append(
            LayerMetrics(
                layer=layer,
                activations=int(counts[i].sum()),
                shares=[round(float(s), 7) for s in shares[i]],
                **{k: round(float(v[i]), 6) for k, v in columns.items()},
                collapsed=bool(columns["topk_share"][i] > thresholds.collapse_share),
                judgeable=bool(judged[i]),
                hot=[int(e) for e in hot_ids[np.argsort(-shares[i][hot_ids], kind="stable")]],
                dead=[int(e) for e in np.flatnonzero(dead[i])],
                mean_confidence=None if layer_conf is None else round(float(layer_conf[i]), 6),
                share_low=[round(float(v), 7) for v in bounds.low[i]],
                share_high=[round(float(v), 7) for v in bounds.high[i]],
                design_effect=round(float(bounds.design_effect[i].max()), 4),
            )
        )
    return ScopeProfile(
        kind=kind,
        name=name,
        calls=delta.calls,
        routed_tokens=delta.routed_tokens,
        sources=sources,
        layers=layers,
        confidence=confidence_summary(delta),
    )
