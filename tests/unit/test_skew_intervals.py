"""Hot and dead with statistics (issue 51 item 1): the share intervals and their verdicts.

Synthetic traffic with a known truth. Each call draws its own share vector around the layer's
profile (a Dirichlet: the tokens of one call route alike, the clustering real prompts show) and
its counts from it, summed through :meth:`RollupDelta.of_calls` as the telemetry store does.
The healthy profile spans 0.26 to 2.5 times a uniform share, like the project's trained
router on served traffic (tests/integration/test_skew_ground_truth.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from orchestrator.analysis.skew.intervals import (
    design_effects,
    goodman_z2,
    share_intervals,
    size_ratio,
    verdicts,
    wilson,
)
from orchestrator.analysis.skew.models import Thresholds
from orchestrator.telemetry import RollupDelta

E, L, TOP_K = 64, 3, 6
T = Thresholds()


def healthy(experts: int = E) -> np.ndarray:
    """A trained router's profile: shares from 0.26x to 2.5x uniform, shuffled per layer."""
    w = np.exp(np.linspace(np.log(0.25), np.log(2.4), experts))
    rng = np.random.default_rng(0)
    rows = np.stack([rng.permutation(w) for _ in range(L)])
    return rows / rows.sum(axis=1, keepdims=True)


def replay(
    rng: np.random.Generator,
    profile: np.ndarray,
    calls: int,
    concentration: float = 300.0,
    tokens: tuple[int, int] = (20, 300),
) -> tuple[RollupDelta, float]:
    """``calls`` calls of 20-300 routed tokens; each call's shares ~ Dirichlet around
    ``profile`` (``(L, E)``), its counts multinomial over ``tokens * top_k`` picks. Returns
    the sums and the calls' :func:`size_ratio`."""
    routed = rng.integers(*tokens, size=calls)
    counts = np.empty((calls, L, E), dtype=np.int64)
    for layer in range(L):
        alpha = np.maximum(profile[layer] * concentration, 1e-9)
        q = rng.dirichlet(alpha, size=calls)
        counts[:, layer] = rng.multinomial(routed * TOP_K, q)
    nan = np.full(calls, np.nan)
    delta = RollupDelta.of_calls(counts, routed, TOP_K, nan, np.full((calls, L), np.nan))
    return delta, size_ratio(routed * TOP_K)


def test_wilson_matches_the_textbook_values() -> None:
    # Wilson 1927 / Newcombe 1998 (Stat Med 17:857, table I): 81 of 263 -> 0.2553 to 0.3662
    low, high = wilson(np.array([81.0]), np.array([263.0]), 1.959964**2)
    assert low[0] == pytest.approx(0.2553, abs=1e-4) and high[0] == pytest.approx(0.3662, abs=1e-4)
    low, high = wilson(np.array([0.0]), np.array([10.0]), 1.959964**2)  # 0 of 10
    assert low[0] == 0 and high[0] == pytest.approx(0.2775, abs=1e-4)


def test_goodman_is_wilson_at_the_bonferroni_level() -> None:
    assert goodman_z2(1, 0.95) == pytest.approx(1.959964**2, rel=1e-5)
    assert goodman_z2(64, 0.95) > goodman_z2(8, 0.95) > goodman_z2(1, 0.95)


def test_the_design_effect_is_one_for_independent_picks_and_large_for_clustered_calls() -> None:
    rng = np.random.default_rng(1)
    loose, _ = replay(rng, healthy(), 2000, concentration=1e7)  # every call routes alike
    tight, _ = replay(rng, healthy(), 2000, concentration=50.0)  # calls differ a lot
    d_loose = design_effects(loose.counts, loose.sq_counts, loose.calls)
    d_tight = design_effects(tight.counts, tight.sq_counts, tight.calls)
    assert np.median(d_loose) == pytest.approx(1.0, abs=0.1)
    # a Dirichlet-multinomial's design effect is (n + a) / (1 + a) for n picks a call
    assert np.median(d_tight) > 5


def test_intervals_cover_the_truth_over_calls_and_would_not_without_the_design_effect() -> None:
    rng = np.random.default_rng(2)
    profile = healthy()
    covered, naive, unsized = [], [], []
    z2 = goodman_z2(E, 0.95)
    for _ in range(60):
        delta, sizes = replay(rng, profile, 1000, concentration=100.0)
        b = share_intervals(delta.counts, delta.sq_counts, delta.calls, T, sizes)
        covered.append(np.all((b.low <= profile) & (profile <= b.high), axis=1))
        n = np.broadcast_to(delta.counts.sum(axis=1, keepdims=True), (L, E)).astype(float)
        lo, hi = wilson(delta.counts.astype(float), n, z2)  # picks taken as independent
        naive.append(np.all((lo <= profile) & (profile <= hi), axis=1))
        b1 = share_intervals(delta.counts, delta.sq_counts, delta.calls, T)  # lengths ignored
        unsized.append(np.all((b1.low <= profile) & (profile <= b1.high), axis=1))
    # each layer's 64 intervals hold together in >= 95% of replays (nominal), within noise
    assert np.mean(covered) >= 0.9
    assert np.mean(naive) < 0.2  # far too narrow
    assert np.mean(unsized) < np.mean(covered)  # calls of 20-300 tokens: the length term counts


def test_size_ratio_is_one_plus_the_squared_coefficient_of_variation() -> None:
    assert size_ratio(np.full(10, 7.0)) == pytest.approx(1.0)
    n = np.array([1.0, 3.0])
    assert size_ratio(n) == pytest.approx(1 + (n.std() / n.mean()) ** 2)


@pytest.mark.parametrize("seed", range(12))
def test_clean_replays_of_10k_calls_raise_no_alarm(seed: int) -> None:
    delta, sizes = replay(np.random.default_rng(100 + seed), healthy(), 10_000)
    b = share_intervals(delta.counts, delta.sq_counts, delta.calls, T, sizes)
    hot, dead = verdicts(b, T)
    assert b.judgeable.all()
    assert not hot.any() and not dead.any()


@pytest.mark.parametrize("seed", range(12))
def test_planted_hot_and_dead_experts_are_always_found_and_nothing_else(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    profile = healthy()
    hot_e, dead_e = rng.choice(E, size=2, replace=False)
    planted = profile.copy()
    planted[1, hot_e] = 6.0 / E  # 6x uniform, clearly above 4x
    planted[1, dead_e] = 0.0  # never chosen
    planted[1] /= planted[1].sum()
    delta, sizes = replay(rng, planted, 10_000)
    hot, dead = verdicts(share_intervals(delta.counts, delta.sq_counts, delta.calls, T, sizes), T)
    assert [tuple(x) for x in np.argwhere(hot)] == [(1, hot_e)]
    assert [tuple(x) for x in np.argwhere(dead)] == [(1, dead_e)]


@pytest.mark.parametrize("seed", range(10))
def test_planted_experts_are_found_at_one_served_nodes_volume(seed: int) -> None:
    # tests/integration/test_skew_ground_truth.py: per node 8 calls of about 150 routed
    # tokens, top-6 over 64 experts; expert 3 chosen by every token, expert 7 never
    rng = np.random.default_rng(300 + seed)
    planted = healthy()
    planted[0, 3], planted[0, 7] = 0.0, 0.0
    planted[0] *= (5 / 6) / planted[0].sum()
    planted[0, 3] = 1 / 6
    delta, sizes = replay(rng, planted, 8, tokens=(130, 170))
    b = share_intervals(delta.counts, delta.sq_counts, delta.calls, T, sizes)
    hot, dead = verdicts(b, T)
    assert (0, 3) in [tuple(x) for x in np.argwhere(hot)]
    assert [tuple(x) for x in np.argwhere(dead)] == [(0, 7)]


def test_a_rarely_but_really_used_expert_is_not_called_dead() -> None:
    # a third of a fair share is well above dead_factor (0.15); "zero so far" is not the rule
    rng = np.random.default_rng(3)
    profile = healthy()
    profile[0, 5] = 0.33 / E
    profile[0] /= profile[0].sum()
    delta, sizes = replay(rng, profile, 10_000)
    _hot, dead = verdicts(share_intervals(delta.counts, delta.sq_counts, delta.calls, T, sizes), T)
    assert not dead.any()


def test_small_volume_is_never_judged_and_the_report_thresholds_are_stated() -> None:
    rng = np.random.default_rng(4)
    planted = healthy()
    planted[0, 0] = 0.5  # a collapse, but only one call
    planted[0] /= planted[0].sum()
    one, _ = replay(rng, planted, 1)
    b = share_intervals(one.counts, one.sq_counts, one.calls, T)
    assert not b.judgeable.any()  # one call: no design effect can be estimated
    hot, dead = verdicts(b, T)
    assert not hot.any() and not dead.any()
    thin = Thresholds(min_expected=1e6)
    many, _ = replay(rng, planted, 50)
    assert not share_intervals(many.counts, many.sq_counts, many.calls, thin).judgeable.any()
