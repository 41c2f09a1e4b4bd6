"""Drift test (chi-square / between-call dispersion) and the rollup dispersion sums."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from orchestrator.analysis.skew.drift import layer_drift, pearson_dispersion, scope_drift
from orchestrator.analysis.skew.models import Thresholds
from orchestrator.telemetry import RollupDelta

E, L, K = 16, 3, 2
LAYERS = [1, 2, 3]


def _window(
    rng: np.random.Generator,
    shares: np.ndarray,
    calls: int,
    tokens: int,
    concentration: float | None = None,
) -> tuple[RollupDelta, np.ndarray]:
    """Sums of ``calls`` calls; with ``concentration`` each call draws its own shares from a
    Dirichlet around ``shares`` (clustered calls, as real prompts are)."""
    counts = np.empty((calls, L, E), dtype=np.int64)
    for i in range(calls):
        p = (
            shares
            if concentration is None
            else np.stack([rng.dirichlet(concentration * s) for s in shares])
        )
        counts[i] = np.stack([rng.multinomial(tokens * K, row) for row in p])
    delta = RollupDelta.of_calls(
        counts, np.full(calls, tokens), K, np.full(calls, np.nan), np.full((calls, L), np.nan)
    )
    return delta, counts


def test_rollup_dispersion_equals_pearsons_statistic_over_calls() -> None:
    rng = np.random.default_rng(0)
    shares = rng.dirichlet(np.ones(E) * 3, size=L)
    delta, counts = _window(rng, shares, 30, 40, concentration=20.0)
    x2, df = pearson_dispersion(delta)
    pooled = counts.sum(0) / counts.sum(axis=(0, 2))[:, None]
    n = counts.sum(axis=2, keepdims=True)
    direct = ((counts - n * pooled) ** 2 / (n * pooled)).sum(axis=(0, 2))
    assert x2 == pytest.approx(direct, rel=1e-9)
    assert list(df) == [(30 - 1) * (E - 1)] * L


def test_same_routing_is_not_drift_and_a_moved_expert_is() -> None:
    rng = np.random.default_rng(1)
    shares = np.full((L, E), 1 / E)
    before, _ = _window(rng, shares, 60, 50)
    after, _ = _window(rng, shares, 60, 50)
    t = Thresholds()
    same = scope_drift("global", "all", before, after, LAYERS, t)
    assert same.status == "tested" and same.drifted_layers == []
    moved = shares.copy()
    moved[1, 4] *= 3  # layer 2: expert 4 triples its weight
    moved /= moved.sum(axis=1, keepdims=True)
    changed, _ = _window(rng, moved, 60, 50)
    result = scope_drift("global", "all", before, changed, LAYERS, t)
    assert result.drifted_layers == [2]
    assert (result.largest_changes[0].layer, result.largest_changes[0].expert) == (2, 4)
    assert result.largest_changes[0].current_share > result.largest_changes[0].baseline_share


def test_clustered_calls_are_not_called_drift_on_noise() -> None:
    """Calls that each route their own way (overdispersion) but share one mean: the plain
    chi-square says "changed", the dispersion-corrected test does not."""
    rng = np.random.default_rng(2)
    shares = np.full((L, E), 1 / E)
    before, _ = _window(rng, shares, 12, 200, concentration=4.0)
    after, _ = _window(rng, shares, 12, 200, concentration=4.0)
    t = Thresholds()
    plain = [
        chi2_contingency(np.stack([before.counts[i], after.counts[i]]), correction=False).pvalue
        for i in range(L)
    ]
    assert min(plain) < t.drift_alpha / L  # naive test would raise an alarm
    layers = layer_drift(before, after, LAYERS, t)
    assert all(d.dispersion > 5 for d in layers)
    assert not any(d.significant for d in layers)


def test_too_few_calls_or_activations_is_insufficient_not_drift() -> None:
    rng = np.random.default_rng(3)
    shares = np.full((L, E), 1 / E)
    one, _ = _window(rng, shares, 1, 500)
    many, _ = _window(rng, shares, 20, 50)
    result = scope_drift("workflow", "w", one, many, LAYERS, Thresholds())
    assert result.status == "insufficient" and "baseline window has 1 call" in result.reason
    tiny, _ = _window(rng, shares, 3, 2)  # 12 activations over 16 experts
    result = scope_drift("workflow", "w", many, tiny, LAYERS, Thresholds())
    assert result.status == "insufficient" and "activations per expert" in result.reason
    assert result.layers == []
