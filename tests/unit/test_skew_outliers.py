"""The outlier scoring's JSD (issue 51 acceptance: vectorised) against a float64 reference."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import entr

from orchestrator.analysis.skew.outliers import call_jsd


def _reference(counts: np.ndarray, profiles: np.ndarray) -> np.ndarray:
    """Mean-over-layers JSD in bits, float64, straight from the definition."""
    total = counts.sum(axis=-1, keepdims=True)
    p = np.divide(counts, total, out=np.zeros(counts.shape), where=total > 0)
    m = (p + profiles) / 2
    h = lambda x: entr(x).sum(axis=-1)  # noqa: E731
    return np.clip((h(m) - (h(p) + h(profiles)) / 2) / np.log(2), 0, 1).mean(axis=-1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_call_jsd_matches_a_float64_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shares = rng.dirichlet(np.full(16, 0.5), size=(3, 4))  # (groups, layers, experts)
    shares[1, 2, :5] = 0.0  # a profile that never uses five experts
    shares /= shares.sum(axis=-1, keepdims=True)
    groups = rng.integers(0, 3, 500)
    tokens = rng.integers(1, 400, 500)
    counts = rng.multinomial((tokens * 2)[:, None], shares[groups]).astype(np.int32)
    counts[7] = 0  # a call with no activation in any layer
    counts[8, 1] = 0  # and one with none in one layer
    counts[9] = 0
    counts[9, :, 15] = 10  # one expert only: far from every profile
    got = call_jsd(counts, groups, shares.astype(np.float32))
    want = _reference(counts.astype(np.float64), shares[groups])
    assert got.shape == (500,) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, atol=2e-6)
    assert got[9] > 10 * np.median(got)  # the odd call stands out
    assert (got >= 0).all() and (got <= 1).all()
