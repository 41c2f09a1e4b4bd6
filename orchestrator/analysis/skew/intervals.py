"""Confidence intervals of expert load shares, and the hot and dead verdicts built on them.

**Interval.** Per MoE layer, every expert's share ``p_e = C_e / N`` gets Goodman's
simultaneous interval for multinomial proportions (Goodman 1965, "On Simultaneous Confidence
Intervals for Multinomial Proportions", Technometrics 7:247-254): the Wilson score interval
(Wilson 1927, JASA 22:209-212) with ``z^2 = chi2_1(1 - alpha / E)``, so that all ``E``
intervals of a layer hold together with probability at least ``1 - alpha`` (Bonferroni).

**Correlated picks.** The ``N`` activations of a layer are not ``N`` independent draws:

* the ``k`` picks of one token are ``k`` *different* experts (top-k without replacement), so
  per token an expert is picked at most once: its count varies as ``Bernoulli(k p)``, whose
  variance ``k p (1 - k p)`` is *below* the multinomial ``k p (1 - p)`` (negative correlation);
* the tokens of one call share a prompt and so route alike (positive correlation, usually by
  far the larger effect).

The interval is therefore taken over **calls** as clusters, with a design effect (Kish 1965,
"Survey Sampling", §8.2): each expert's counts follow the quasi-multinomial model
``Var(c_ie) = d_e n_i p_e (1 - p_e)`` (``n_i`` activations of call ``i``; McCullagh & Nelder
1989, "Generalized Linear Models", §4.5), with ``d_e`` estimated by Pearson's statistic over
calls from the rollups' ``sq_counts`` (``S_e = sum_i c_ie^2 / n_i``):

    d_e = sum_i (c_ie - n_i p_e)^2 / n_i / ((m - 1) p_e (1 - p_e)) = (S_e - p_e^2 N) / (...)

and the Wilson interval uses the effective sample size ``N / d_e`` (Korn & Graubard 1998,
"Confidence Intervals for Proportions with Small Expected Number of Positive Counts Estimated
from Survey Data", Survey Methodology 24:193-201). As the NCHS data presentation standards do
(Parker et al. 2017, "National Center for Health Statistics Data Presentation Standards for
Proportions", Vital Health Stat 2(175), p. 3), ``d_e`` is set to 1 when it is below 1 or
undefined (``p_e`` 0 or 1): the negative within-token correlation never narrows an interval.
Both correlations are counted at once because the cluster is the call, which contains the token.

With capture sampling (weights ``1 / r``, :mod:`orchestrator.analysis.sampling`) counts and
``S_e`` are weighted while ``m`` is the number of captured calls, so for one rate ``N / d_e``
is the captured calls' effective size, as it should be.

**Verdicts.** Only in a layer with enough volume (``N / E >= min_expected`` activations per
expert under uniform routing, and at least ``min_calls`` calls, so that ``d_e`` can be
estimated) is an expert

* **hot** when its interval's *lower* bound exceeds ``hot_factor / E``, and
* **dead** when its interval's *upper* bound is below ``dead_factor / E``.

The defaults (:class:`~orchestrator.analysis.skew.models.Thresholds`) are 4 and 0.15: a
trained, healthy router's busiest expert on this project's traffic takes about 2.4 times a
uniform share and its least used about a quarter of one, so a verdict needs a statistically
clear gap from both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from orchestrator.analysis.skew.metrics import load_shares
from orchestrator.analysis.skew.models import Thresholds

__all__ = [
    "ShareIntervals",
    "design_effects",
    "goodman_z2",
    "share_intervals",
    "size_ratio",
    "size_ratio_of_sums",
    "verdicts",
    "wilson",
]


@dataclass(frozen=True, slots=True)
class ShareIntervals:
    """Intervals of one scope's shares.

    Attributes:
        shares: ``(L, E)`` point estimates ``C_e / N``.
        low: ``(L, E)`` lower bounds, in ``[0, 1]``.
        high: ``(L, E)`` upper bounds, in ``[0, 1]``.
        design_effect: ``(L, E)`` the ``d_e >= 1`` each interval used.
        judgeable: ``(L,)`` the layer has the volume to judge (see the module docstring).
    """

    shares: np.ndarray
    low: np.ndarray
    high: np.ndarray
    design_effect: np.ndarray
    judgeable: np.ndarray


def goodman_z2(experts: int, confidence: float) -> float:
    """``z^2`` of Goodman's simultaneous intervals: ``chi2_1`` at ``1 - (1 - confidence) / E``."""
    return float(chi2.ppf(1.0 - (1.0 - confidence) / experts, 1))


def wilson(successes: np.ndarray, trials: np.ndarray, z2: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of ``successes / trials`` (arrays of any one shape, float).

    Returns:
        ``(low, high)``, each of the inputs' shape; ``(0, 1)`` where ``trials`` is 0.
    """
    n = np.asarray(trials, dtype=np.float64)
    safe = np.where(n > 0, n, 1.0)
    p = np.clip(np.asarray(successes, dtype=np.float64) / safe, 0.0, 1.0)
    denom = 1.0 + z2 / safe
    centre = (p + z2 / (2 * safe)) / denom
    half = np.sqrt(z2 * (p * (1 - p) / safe + z2 / (4 * safe * safe))) / denom
    low = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), 0.0)
    high = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), 1.0)
    return low, high


def size_ratio(activations: np.ndarray) -> float:
    """``(sum n_i^2 / sum n_i) / mean(n)`` of a sample of calls' activations ``n_i``: 1 when
    every call has the same length, ``1 + CV^2`` in general (see :func:`design_effects`)."""
    n = np.asarray(activations, dtype=np.float64)
    return size_ratio_of_sums(n.size, n.sum(), (n * n).sum())


def size_ratio_of_sums(calls: float, total: float, squares: float) -> float:
    """:func:`size_ratio` from the sums ``m``, ``sum n_i`` and ``sum n_i^2`` (1 when empty)."""
    return float(squares * calls / (total * total)) if total > 0 else 1.0


def design_effects(
    counts: np.ndarray, sq_counts: np.ndarray, calls: int, sizes: float = 1.0
) -> np.ndarray:
    """Per-expert design effect ``d_e`` (see the module docstring), floored at 1.

    Pearson's statistic estimates the *mean* over calls of each call's design effect
    ``1 + (n_i - 1) rho`` (intra-call correlation ``rho``: Kish 1965, §5.4), whereas the
    variance of the share weighs each call by its length: ``1 + (sum n_i^2 / N - 1) rho``.
    The two agree when calls have one length; otherwise ``sizes`` (:func:`size_ratio` of a
    sample of the calls) converts one into the other,
    ``d = 1 + (d_mean - 1) (sizes * N / m - 1) / (N / m - 1)``. The rollups keep no
    ``sum n_i^2``, so the report measures ``sizes`` on the calls it reads for outliers.

    Args:
        counts: ``(L, E)`` summed activations.
        sq_counts: ``(L, E)`` sums over calls of ``c_ie^2 / n_i``.
        calls: Calls summed (``m``).
        sizes: :func:`size_ratio` of the calls' activations (1 = equal lengths).

    Returns:
        ``(L, E)`` float64 ``>= 1``; 1 where ``p_e`` is 0 or 1, or with fewer than 2 calls.
    """
    c = np.asarray(counts, dtype=np.float64)
    n = c.sum(axis=-1, keepdims=True)
    p = load_shares(c)
    var = p * (1.0 - p)
    if calls < 2:
        return np.ones_like(c)
    pearson = np.asarray(sq_counts, dtype=np.float64) - p * p * n
    d = np.divide(pearson, (calls - 1) * var, out=np.ones_like(c), where=var > 0)
    mean_n = n / calls
    stretch = np.divide(sizes * mean_n - 1, mean_n - 1, out=np.ones_like(n), where=mean_n > 1)
    return np.maximum(1.0 + (d - 1.0) * stretch, 1.0)


def share_intervals(
    counts: np.ndarray,
    sq_counts: np.ndarray,
    calls: int,
    thresholds: Thresholds,
    sizes: float = 1.0,
) -> ShareIntervals:
    """Goodman-Wilson intervals of every layer's shares over calls as clusters.

    Args:
        counts: ``(L, E)`` summed activations of the scope.
        sq_counts: ``(L, E)`` the rollups' ``sq_counts`` of the same calls.
        calls: Calls summed.
        thresholds: ``confidence``, ``min_expected`` and ``min_calls``.
        sizes: :func:`size_ratio` of the calls' lengths (see :func:`design_effects`).

    Returns:
        The :class:`ShareIntervals`.
    """
    c = np.asarray(counts, dtype=np.float64)
    experts = c.shape[-1]
    n = c.sum(axis=-1, keepdims=True)
    d = design_effects(c, sq_counts, calls, sizes)
    z2 = goodman_z2(experts, thresholds.confidence)
    low, high = wilson(c / d, np.broadcast_to(n, c.shape) / d, z2)
    judge = (n[..., 0] / experts >= thresholds.min_expected) & (calls >= thresholds.min_calls)
    return ShareIntervals(
        shares=load_shares(c), low=low, high=high, design_effect=d, judgeable=judge
    )


def verdicts(intervals: ShareIntervals, thresholds: Thresholds) -> tuple[np.ndarray, np.ndarray]:
    """``(hot, dead)`` masks, each ``(L, E)`` bool (all False in a layer not judgeable)."""
    experts = intervals.low.shape[-1]
    ok = intervals.judgeable[..., None]
    hot = ok & (intervals.low > thresholds.hot_factor / experts)
    dead = ok & (intervals.high < thresholds.dead_factor / experts)
    return hot, dead
