"""Workflow and node fingerprints: how a scope's expert distribution differs from all calls.

The distance is the Jensen-Shannon divergence (Lin 1991, "Divergence Measures Based on the
Shannon Entropy", IEEE Trans. Inf. Theory 37:145-151), in bits so that it lies in ``[0, 1]``:

    JSD(p, q) = 1/2 KL(p || m) + 1/2 KL(q || m),   m = (p + q) / 2

computed per MoE layer with :func:`scipy.spatial.distance.jensenshannon` (which returns its
square root) and averaged over layers. Unlike KL it is symmetric and finite when one side
has zeros, which dead or rarely used experts produce.

The experts that distinguish a scope are those with the largest pointwise terms
``1/2 p_e log2(p_e / m_e) + 1/2 q_e log2(q_e / m_e)``: each term is non-negative, and the
terms of a layer sum to its JSD.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import jensenshannon

from orchestrator.analysis.skew.metrics import load_shares
from orchestrator.analysis.skew.models import DistinguishingExpert, Fingerprint, ScopeKind


def jsd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen-Shannon divergence in bits along the last axis.

    Args:
        p: ``(..., E)`` distributions (or counts: each row is normalised).
        q: Same shape as ``p``.

    Returns:
        ``(...)`` float64 in ``[0, 1]``; 0 where either row is all zeros.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    empty = (p.sum(axis=-1) == 0) | (q.sum(axis=-1) == 0)
    safe_p = np.where(empty[..., None], 1.0, p)
    safe_q = np.where(empty[..., None], 1.0, q)
    distance = jensenshannon(safe_p, safe_q, base=2, axis=-1)
    return np.where(empty, 0.0, np.nan_to_num(distance) ** 2)


def jsd_terms(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Pointwise JSD terms in bits, ``(..., E)``; they sum to :func:`jsd` along the last axis.

    ``p`` and ``q`` must already be distributions (rows summing to 1, or all zero).
    """
    m = (p + q) / 2

    def half_kl(x: np.ndarray) -> np.ndarray:
        ratio = np.divide(x, m, out=np.ones_like(x), where=m > 0)
        return 0.5 * x * np.log2(ratio, out=np.zeros_like(x), where=x > 0)

    return half_kl(p) + half_kl(q)


def fingerprint(
    kind: ScopeKind,
    name: str,
    calls: int,
    scope_counts: np.ndarray,
    global_counts: np.ndarray,
    moe_layers: list[int],
    *,
    top: int = 8,
) -> Fingerprint:
    """Compare one scope's ``(L, E)`` counts with the global ``(L, E)`` counts.

    Args:
        kind: ``workflow`` or ``node``.
        name: Scope name.
        calls: Calls in the scope.
        scope_counts: The scope's counts.
        global_counts: The counts of all calls (the scope included).
        moe_layers: Model-layer index of each row.
        top: How many distinguishing experts to list.
    """
    p = load_shares(scope_counts)
    q = load_shares(global_counts)
    per_layer = jsd(p, q)
    terms = jsd_terms(p, q) / len(moe_layers)
    flat = np.argsort(-terms, axis=None, kind="stable")[:top]
    rows, cols = np.unravel_index(flat, terms.shape)
    distinguishing = [
        DistinguishingExpert(
            layer=moe_layers[r],
            expert=int(c),
            share=round(float(p[r, c]), 7),
            global_share=round(float(q[r, c]), 7),
            contribution=float(terms[r, c]),
            direction="over" if p[r, c] > q[r, c] else "under",
        )
        for r, c in zip(rows, cols, strict=True)
        if terms[r, c] > 0
    ]
    return Fingerprint(
        kind=kind,
        name=name,
        calls=calls,
        jsd=float(per_layer.mean()),
        jsd_per_layer=[float(v) for v in per_layer],
        distinguishing=distinguishing,
    )
