"""Routing drift between two time windows, with a significance test that respects clustering.

Per MoE layer, the two windows' expert counts form a 2 x E contingency table (experts unused
in both dropped). Pearson's chi-square test of homogeneity
(:func:`scipy.stats.chi2_contingency`, no continuity correction) asks whether both windows
route with the same shares.

Activations are not independent draws, though: the tokens of one call share a prompt, so a
call's counts vary more than a multinomial sample of the same size (overdispersion). Taken at
face value the chi-square would call every difference between two batches of calls
significant. The statistic is therefore divided by the between-call dispersion ``phi``
(a first-order Rao-Scott correction: Rao & Scott 1981, "The Analysis of Categorical Data From
Complex Sample Surveys", JASA 76:221-230; for clustered multinomial counts, Brier 1980,
"Analysis of Contingency Tables under Cluster Sampling", Biometrika 67:591-596).
``phi`` is Pearson's dispersion estimate of the quasi-multinomial model (McCullagh & Nelder
1989, "Generalized Linear Models", 2nd ed., §4.5):

    X2_w = sum_calls sum_e (c_ie - n_i p_e)^2 / (n_i p_e) = sum_e S_e / p_e - N
    phi  = (X2_baseline + X2_current) / (df_baseline + df_current),   df_w = (calls - 1)(E' - 1)

where ``S_e = sum_i c_ie^2 / n_i`` is kept in the rollups (``sq_counts``), so no per-call read
is needed. ``phi`` is clipped at 1 (the correction never makes the test more eager).

A layer is **significant** when ``p < alpha / L`` (Bonferroni over layers) and has **drifted**
when it is significant and its Jensen-Shannon divergence is at least ``drift_min_jsd`` bits
(a practical-size floor: with millions of activations, negligible changes are significant).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import chi2 as chi2_dist
from scipy.stats import chi2_contingency

from orchestrator.analysis.skew.fingerprint import jsd
from orchestrator.analysis.skew.metrics import load_shares
from orchestrator.analysis.skew.models import (
    LayerDrift,
    ScopeDrift,
    ScopeKind,
    ShareChange,
    Thresholds,
)
from orchestrator.telemetry import RollupDelta


def pearson_dispersion(delta: RollupDelta) -> tuple[np.ndarray, np.ndarray]:
    """Per-layer Pearson statistic of the calls around their pooled shares, and its dof.

    Args:
        delta: Sums of one window (``counts`` and ``sq_counts`` of shape ``(L, E)``).

    Returns:
        ``(X2, df)``, each ``(L,)``; ``df`` is 0 when there is a single call.
    """
    counts = np.asarray(delta.counts, dtype=np.float64)
    sq = np.asarray(delta.sq_counts, dtype=np.float64)
    shares = load_shares(counts)
    used = shares > 0
    x2 = (np.divide(sq, shares, out=np.zeros_like(sq), where=used)).sum(axis=1) - counts.sum(1)
    df = max(delta.calls - 1, 0) * np.maximum(used.sum(axis=1) - 1, 0)
    return np.maximum(x2, 0.0), df.astype(np.float64)


def layer_drift(
    baseline: RollupDelta,
    current: RollupDelta,
    moe_layers: list[int],
    thresholds: Thresholds,
) -> list[LayerDrift]:
    """The drift test of every layer (a loop over layers, each test vectorised over experts)."""
    x2_b, df_b = pearson_dispersion(baseline)
    x2_c, df_c = pearson_dispersion(current)
    df = df_b + df_c
    phi = np.maximum(np.divide(x2_b + x2_c, df, out=np.ones_like(df), where=df > 0), 1.0)
    divergence = jsd(baseline.counts, current.counts)
    alpha = thresholds.drift_alpha / len(moe_layers)
    out = []
    for i, layer in enumerate(moe_layers):
        table = np.stack([baseline.counts[i], current.counts[i]]).astype(np.float64)
        table = table[:, table.sum(axis=0) > 0]
        if table.shape[1] < 2:
            stat, dof = 0.0, 0
            p_value = 1.0
        else:
            result = chi2_contingency(table, correction=False)
            stat, dof = float(result.statistic), int(result.dof)
            p_value = float(chi2_dist.sf(stat / phi[i], dof))
        significant = p_value < alpha
        out.append(
            LayerDrift(
                layer=layer,
                jsd=float(divergence[i]),
                chi2=stat,
                dof=dof,
                dispersion=float(phi[i]),
                p_value=p_value,
                significant=significant,
                drifted=significant and float(divergence[i]) >= thresholds.drift_min_jsd,
            )
        )
    return out


def scope_drift(
    kind: ScopeKind,
    name: str,
    baseline: RollupDelta,
    current: RollupDelta,
    moe_layers: list[int],
    thresholds: Thresholds,
    *,
    top: int = 8,
) -> ScopeDrift:
    """Drift of one scope between its baseline and current sums.

    The test needs at least 2 calls in each window (one call gives no dispersion estimate) and
    each window must meet the minimum-sample guard (``N / E >= min_expected`` in every layer);
    otherwise the scope is reported as ``insufficient`` with the reason.
    """
    experts = np.shape(current.counts)[-1] if current.calls else np.shape(baseline.counts)[-1]

    scope = {
        "kind": kind,
        "name": name,
        "baseline_calls": baseline.calls,
        "current_calls": current.calls,
    }

    def insufficient(reason: str) -> ScopeDrift:
        return ScopeDrift(**scope, status="insufficient", reason=reason)

    for label, delta in (("baseline", baseline), ("current", current)):
        if delta.calls < 2:
            return insufficient(
                f"the {label} window has {delta.calls} call(s); at least 2 are needed"
            )
        low = np.asarray(delta.counts).sum(axis=1).min() / experts
        if low < thresholds.min_expected:
            return insufficient(
                f"the {label} window has {low:.1f} activations per expert in its "
                f"sparsest layer; at least {thresholds.min_expected:g} are needed"
            )
    layers = layer_drift(baseline, current, moe_layers, thresholds)
    p, q = load_shares(baseline.counts), load_shares(current.counts)
    change = np.abs(q - p)
    flat = np.argsort(-change, axis=None, kind="stable")[:top]
    rows, cols = np.unravel_index(flat, change.shape)
    return ScopeDrift(
        **scope,
        status="tested",
        layers=layers,
        drifted_layers=[d.layer for d in layers if d.drifted],
        largest_changes=[
            ShareChange(
                layer=moe_layers[r],
                expert=int(c),
                baseline_share=round(float(p[r, c]), 7),
                current_share=round(float(q[r, c]), 7),
            )
            for r, c in zip(rows, cols, strict=True)
        ],
    )
