"""Metric definitions of ``analysis.skew.metrics``, checked against independent formulas."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy as scipy_entropy

from orchestrator.analysis.skew import metrics
from orchestrator.analysis.skew.fingerprint import fingerprint, jsd, jsd_terms

E = 64


def test_uniform_and_one_hot_hit_the_documented_bounds() -> None:
    counts = np.stack([np.full(E, 10), np.eye(E, dtype=int)[5] * 640])
    assert metrics.balancedness(counts) == pytest.approx([1.0, 1 / E])
    assert metrics.max_violation(counts) == pytest.approx([0.0, E - 1])
    assert metrics.coefficient_of_variation(counts) == pytest.approx([0.0, np.sqrt(E - 1)])
    assert metrics.normalised_entropy(counts) == pytest.approx([1.0, 0.0])
    assert metrics.effective_experts(counts) == pytest.approx([E, 1.0])
    assert metrics.gini(counts) == pytest.approx([0.0, 1 - 1 / E])
    assert metrics.topk_share(counts, 6) == pytest.approx([6 / E, 1.0])


def test_metrics_match_independent_formulas_row_by_row() -> None:
    rng = np.random.default_rng(7)
    counts = rng.poisson(rng.gamma(0.7, 30, size=(5, E)))
    for row, c in enumerate(counts):
        p = c / c.sum()
        # Gini from the mean absolute difference: sum |xi - xj| / (2 n^2 mean)
        mad = np.abs(c[:, None] - c[None, :]).sum() / (2 * E * E * c.mean())
        assert metrics.gini(counts)[row] == pytest.approx(mad)
        assert metrics.entropy(counts)[row] == pytest.approx(scipy_entropy(p))
        assert metrics.effective_experts(counts)[row] == pytest.approx(np.exp(scipy_entropy(p)))
        assert metrics.coefficient_of_variation(counts)[row] == pytest.approx(c.std() / c.mean())
        assert metrics.max_violation(counts)[row] == pytest.approx(c.max() / c.mean() - 1)
        assert metrics.balancedness(counts)[row] == pytest.approx(1 / (1 + c.max() / c.mean() - 1))
        assert metrics.topk_share(counts, 2)[row] == pytest.approx(np.sort(p)[-2:].sum())
    assert metrics.load_shares(counts).sum(axis=1) == pytest.approx(np.ones(5))


def test_empty_rows_measure_zero_instead_of_nan() -> None:
    counts = np.zeros((2, E), dtype=int)
    for fn in (
        metrics.balancedness,
        metrics.max_violation,
        metrics.coefficient_of_variation,
        metrics.gini,
        metrics.effective_experts,
        metrics.normalised_entropy,
    ):
        assert np.all(fn(counts) == 0), fn.__name__
    assert not metrics.dead_mask(counts, 5).any() and not metrics.hot_mask(counts, 2, 5).any()


def test_hot_and_dead_follow_the_threshold_and_the_sample_guard() -> None:
    counts = np.full(E, 100)
    counts[3], counts[7], counts[9] = 201, 0, 199  # 2.01x and 1.99x uniform (before renorm)
    mean = counts.sum() / E
    hot = metrics.hot_mask(counts, 2.0, 5.0)
    assert list(np.flatnonzero(hot)) == [e for e in range(E) if counts[e] > 2 * mean]
    assert list(np.flatnonzero(metrics.dead_mask(counts, 5.0))) == [7]
    # the same shape with too few activations per expert is not judged at all
    small = np.zeros(E, dtype=int)
    small[:3] = [40, 30, 20]  # 90 activations: 1.4 per expert < 5
    assert not metrics.judgeable(small, 5.0)
    assert not metrics.dead_mask(small, 5.0).any() and not metrics.hot_mask(small, 2.0, 5.0).any()
    assert metrics.dead_mask(small, 1.0).sum() == E - 3  # a laxer guard judges it


def test_jsd_is_scipys_squared_distance_and_its_terms_add_up() -> None:
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(E), size=4)
    q = rng.dirichlet(np.ones(E), size=4)
    expected = jensenshannon(p, q, base=2, axis=1) ** 2
    assert jsd(p, q) == pytest.approx(expected)
    assert jsd_terms(p, q).sum(axis=1) == pytest.approx(expected)
    assert (jsd_terms(p, q) >= 0).all()
    assert jsd(p, p) == pytest.approx(np.zeros(4), abs=1e-12)
    disjoint = np.zeros((2, E))
    disjoint[0, :2], disjoint[1, 2:4] = 0.5, 0.5
    assert jsd(disjoint[0], disjoint[1]) == pytest.approx(1.0)
    assert jsd(np.zeros(E), p[0]) == 0.0  # an empty side has nothing to compare


def test_fingerprint_names_the_expert_a_scope_overuses() -> None:
    rng = np.random.default_rng(3)
    base = rng.multinomial(60_000, np.full(E, 1 / E), size=2)
    shares = np.full(E, 1.0)
    shares[11] = 6.0
    scope = rng.multinomial(20_000, shares / shares.sum(), size=2)
    result = fingerprint("workflow", "wf", 10, scope, base + scope, [1, 2])
    top = result.distinguishing[0]
    assert (top.expert, top.direction) == (11, "over")
    assert top.share > top.global_share
    assert result.jsd == pytest.approx(np.mean(result.jsd_per_layer))
    assert sum(d.contribution for d in result.distinguishing) <= result.jsd + 1e-12
