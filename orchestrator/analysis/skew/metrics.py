"""Expert-load metrics over routed experts, vectorised over any leading axes.

Every function takes activation counts of shape ``(..., E)`` (``E`` routed experts; shared
experts are always on and never counted) and reduces the last axis, so one call covers every
MoE layer, workflow or time window at once. A row whose counts are all zero yields 0 (or an
empty mask): there is nothing to measure.

Notation: ``c_e`` the activations of expert ``e`` (one per routed token and top-k slot),
``N = sum(c)``, ``p_e = c_e / N`` the load share, ``mean = N / E``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "balancedness",
    "coefficient_of_variation",
    "dead_mask",
    "effective_experts",
    "entropy",
    "gini",
    "hot_mask",
    "judgeable",
    "load_shares",
    "max_violation",
    "normalised_entropy",
    "topk_share",
]


def _float(counts: np.ndarray) -> np.ndarray:
    return np.asarray(counts, dtype=np.float64)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0 (an empty row)."""
    return np.divide(num, den, out=np.zeros_like(den), where=den > 0)


def load_shares(counts: np.ndarray) -> np.ndarray:
    """Load share ``p_e = c_e / N``: the fraction of routed activations each expert received.

    Source: the per-expert "fraction of tokens dispatched" ``f_i`` of the Switch Transformer's
    load-balancing loss (Fedus, Zoph & Shazeer 2022, "Switch Transformers", JMLR 23, eq. 4).

    Args:
        counts: ``(..., E)`` non-negative activation counts.

    Returns:
        ``(..., E)`` float64 shares summing to 1 per row (all zeros for an empty row).
    """
    c = _float(counts)
    total = c.sum(axis=-1, keepdims=True)
    return np.divide(c, total, out=np.zeros_like(c), where=total > 0)


def balancedness(counts: np.ndarray) -> np.ndarray:
    """Balancedness ``mean / max`` of the counts, in ``(0, 1]``; 1 is perfectly balanced.

    Equal to ``1 / (1 + MaxVio)`` (see :func:`max_violation`), so it carries the same
    information on a bounded scale: the fraction of capacity used when every expert is given
    the busiest expert's load (the capacity-factor view of Fedus et al. 2022, JMLR 23).

    Returns:
        ``(...)`` float64; 0 for an empty row.
    """
    c = _float(counts)
    return _ratio(c.mean(axis=-1), c.max(axis=-1))


def max_violation(counts: np.ndarray) -> np.ndarray:
    """MaxVio ``(max - mean) / mean``: how far the busiest expert exceeds a balanced load.

    Source: Wang et al. 2024, "Auxiliary-Loss-Free Load Balancing Strategy for
    Mixture-of-Experts", arXiv:2408.15664, §4.1 (``MaxVio = (max_i Load_i - mean Load) /
    mean Load``). 0 is balanced; ``E - 1`` means one expert took everything.

    Returns:
        ``(...)`` float64; 0 for an empty row.
    """
    c = _float(counts)
    mean = c.mean(axis=-1)
    return _ratio(c.max(axis=-1) - mean, mean)


def coefficient_of_variation(counts: np.ndarray) -> np.ndarray:
    """Coefficient of variation ``std / mean`` of the counts (population std).

    Source: Shazeer et al. 2017, "Outrageously Large Neural Networks: The Sparsely-Gated
    Mixture-of-Experts Layer", arXiv:1701.06538, §4 (the importance loss is ``CV(importance)^2``).
    0 is balanced; ``sqrt(E - 1)`` means one expert took everything.

    Returns:
        ``(...)`` float64; 0 for an empty row.
    """
    c = _float(counts)
    return _ratio(c.std(axis=-1), c.mean(axis=-1))


def entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy ``H = -sum p_e ln p_e`` of the load shares, in nats (``0 ln 0 = 0``).

    Source: Shannon 1948, "A Mathematical Theory of Communication", Bell Syst. Tech. J. 27.
    """
    p = load_shares(counts)
    logs = np.log(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logs).sum(axis=-1)


def normalised_entropy(counts: np.ndarray) -> np.ndarray:
    """Normalised entropy ``H / ln E`` in ``[0, 1]``: 1 is uniform, 0 is one expert only.

    Source: Shannon 1948 (entropy); normalising by the maximum ``ln E`` is Pielou's evenness
    (Pielou 1966, J. Theoret. Biol. 13:131-144).
    """
    experts = np.shape(counts)[-1]
    return entropy(counts) / np.log(experts) if experts > 1 else np.zeros(np.shape(counts)[:-1])


def effective_experts(counts: np.ndarray) -> np.ndarray:
    """Effective number of experts ``exp(H)``, in ``[1, E]`` (0 for an empty row).

    The number of equally loaded experts that would give the same entropy: Hill's diversity
    number of order 1 (Hill 1973, "Diversity and Evenness: A Unifying Notation and Its
    Consequences", Ecology 54:427-432).
    """
    c = _float(counts)
    return np.where(c.sum(axis=-1) > 0, np.exp(entropy(c)), 0.0)


def gini(counts: np.ndarray) -> np.ndarray:
    """Gini coefficient of the counts, in ``[0, 1 - 1/E]``: 0 is balanced.

    ``G = sum_i (2i - E - 1) x_(i) / (E sum x)`` over the counts sorted ascending
    (``i = 1..E``), the mean-difference form of Gini 1912 ("Variabilità e mutabilità"), as
    written by Damgaard & Weiner 2000 (Ecology 81:1139-1142, eq. 1).

    Returns:
        ``(...)`` float64; 0 for an empty row.
    """
    x = np.sort(_float(counts), axis=-1)
    experts = x.shape[-1]
    ranks = 2.0 * np.arange(1, experts + 1) - experts - 1
    total = x.sum(axis=-1)
    return np.divide(
        (x * ranks).sum(axis=-1), experts * total, out=np.zeros_like(total), where=total > 0
    )


def topk_share(counts: np.ndarray, k: int) -> np.ndarray:
    """Combined load share of the ``k`` busiest experts.

    With top-``k`` routing this is 1 when the router has collapsed onto ``k`` experts. The
    classic warning sign for top-2 models, "one pair of experts takes more than 80% of the
    requests", is ``topk_share(counts, 2) > 0.8``;
    :class:`~orchestrator.analysis.skew.models.Thresholds` applies it with the model's own ``k``.
    """
    p = np.sort(load_shares(counts), axis=-1)
    return p[..., -k:].sum(axis=-1)


def judgeable(counts: np.ndarray, min_expected: float) -> np.ndarray:
    """Whether a row has enough activations to call any expert hot or dead.

    The guard is on the count each expert would get under uniform routing,
    ``N / E >= min_expected``. Under uniform routing a count is roughly Poisson with mean
    ``mu = N / E``, so a zero has probability ``exp(-mu)`` and a share above ``f / E`` needs a
    deviation of ``(f - 1) * sqrt(mu)`` standard deviations: a large enough ``mu`` makes both
    false alarms negligible (see :class:`~orchestrator.analysis.skew.models.Thresholds`).
    """
    c = _float(counts)
    return c.sum(axis=-1) / c.shape[-1] >= min_expected


def hot_mask(counts: np.ndarray, hot_factor: float, min_expected: float) -> np.ndarray:
    """Hot experts: load share above ``hot_factor / E`` (``hot_factor`` times uniform).

    Only rows that pass :func:`judgeable` can have hot experts. Source of the threshold form:
    the same ``share * E`` ratio that the Switch Transformer's balancing loss drives to 1
    (Fedus et al. 2022, eq. 4); the factor is a documented choice, not a universal constant.

    Returns:
        ``(..., E)`` bool.
    """
    experts = np.shape(counts)[-1]
    ok = judgeable(counts, min_expected)[..., None]
    return (load_shares(counts) > hot_factor / experts) & ok


def dead_mask(counts: np.ndarray, min_expected: float) -> np.ndarray:
    """Dead experts: no activation at all, in rows with enough samples (:func:`judgeable`).

    A small sample is never called dead: with ``N / E`` below ``min_expected`` a zero may be
    chance (probability ``exp(-N / E)`` under uniform routing).

    Returns:
        ``(..., E)`` bool.
    """
    ok = judgeable(counts, min_expected)[..., None]
    return (np.asarray(counts) == 0) & ok
