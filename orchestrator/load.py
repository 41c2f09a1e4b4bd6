"""Per-layer expert load over stored calls: load share, hot and dead experts.

Definitions (over routed experts only; shared experts are always on and never counted):

* **Load share** of expert *e* in layer *l*: ``counts[l, e] / counts[l].sum()``, the fraction of
  that layer's routed (token, slot) activations it received. Uniform routing gives ``1/E``.
* **Hot**: share above ``hot_factor / E`` (twice uniform by default).
* **Dead**: zero activations, reported only when uniform routing would have given the expert
  at least ``dead_min_expected`` activations (``tokens * top_k / E``), so that a small sample is
  not called dead.
* **Balancedness**: ``mean / max`` of the layer's counts, in (0, 1]; 1 is perfectly balanced.
  (Its inverse, ``max / mean``, is the MaxVio baseline of Wang et al. 2024,
  "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts", arXiv:2408.15664.)
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

import numpy as np
from pydantic import BaseModel, ConfigDict

from orchestrator.exceptions import UserError
from orchestrator.telemetry import TelemetryStore, decode_counts


class LayerLoad(BaseModel):
    """Load of one MoE layer.

    Attributes:
        layer: Model-layer index.
        activations: Routed (token, slot) activations counted: ``tokens * top_k``.
        shares: Load share per expert, ``(num_experts,)``, sums to 1.
        hot: Experts above the hot threshold, highest share first.
        dead: Experts with no activation (empty when the sample is too small to say).
        balancedness: ``mean / max`` of the counts.
    """

    model_config = ConfigDict(frozen=True)

    layer: int
    activations: int
    shares: list[float]
    hot: list[int]
    dead: list[int]
    balancedness: float

    def top(self, n: int = 5) -> list[tuple[int, float]]:
        """The ``n`` experts with the largest share, as ``(expert, share)``."""
        order = np.argsort(self.shares)[::-1][:n]
        return [(int(e), self.shares[int(e)]) for e in order]


class ExpertLoad(BaseModel):
    """Expert load over a set of calls.

    Attributes:
        calls: Calls aggregated (those with routing).
        routed_tokens: Tokens that passed the router, summed over calls.
        num_experts: Routed experts per layer.
        top_k: Experts per token.
        sources: Calls per routing source (``replay`` means estimated, ``engine`` recorded).
        skipped: Calls without routing (dense, unavailable), not aggregated.
        layers: One :class:`LayerLoad` per MoE layer.
    """

    model_config = ConfigDict(frozen=True)

    calls: int
    routed_tokens: int
    num_experts: int
    top_k: int
    sources: dict[str, int]
    skipped: int
    layers: list[LayerLoad]


def layer_load(
    layer: int, counts: np.ndarray, *, hot_factor: float, dead_min_expected: float, top_k: int
) -> LayerLoad:
    """Load statistics of one layer from its ``(num_experts,)`` activation counts."""
    experts = counts.shape[0]
    total = int(counts.sum())
    shares = counts / total if total else np.zeros(experts)
    hot_idx = np.flatnonzero(shares > hot_factor / experts)
    hot = [int(e) for e in hot_idx[np.argsort(shares[hot_idx])[::-1]]]
    expected = total / experts
    dead = [int(e) for e in np.flatnonzero(counts == 0)] if expected >= dead_min_expected else []
    balancedness = float(counts.mean() / counts.max()) if total else 0.0
    return LayerLoad(
        layer=layer,
        activations=total,
        shares=[float(s) for s in shares],
        hot=hot,
        dead=dead,
        balancedness=round(balancedness, 4),
    )


def expert_load(
    store: TelemetryStore,
    *,
    workflow: str | None = None,
    since: datetime | None = None,
    hot_factor: float = 2.0,
    dead_min_expected: float = 5.0,
) -> ExpertLoad:
    """Aggregate stored per-call counts into per-layer load (vectorised over layers).

    Raises:
        UserError: No call with routing is stored (for the workflow), or calls of different
            model shapes are mixed.
    """
    total: np.ndarray | None = None
    shape: tuple[tuple[int, ...], int, int] | None = None
    sources: Counter[str] = Counter()
    calls = skipped = tokens = 0
    for record in store.calls(workflow=workflow, since=since):
        counts = decode_counts(record)
        if counts is None:
            skipped += 1
            continue
        this_shape = (tuple(record.moe_layers), record.num_experts, record.top_k)
        if shape is None:
            shape, total = this_shape, np.zeros(counts.shape, dtype=np.int64)
        elif this_shape != shape:
            raise UserError(
                f"calls of different model shapes are stored ({shape} vs "
                f"{this_shape}); use one database per model"
            )
        total += counts
        sources[record.routing_source] += 1
        calls += 1
        tokens += record.routed_tokens
    if shape is None or total is None:
        scope = f" for workflow {workflow!r}" if workflow else ""
        raise UserError(
            f"no model call with routing is stored in {store.url}{scope}; "
            "run `orchestrator run` first"
        )
    layers, experts, top_k = shape
    return ExpertLoad(
        calls=calls,
        routed_tokens=tokens,
        num_experts=experts,
        top_k=top_k,
        sources=dict(sources),
        skipped=skipped,
        layers=[
            layer_load(
                layer,
                total[i],
                hot_factor=hot_factor,
                dead_min_expected=dead_min_expected,
                top_k=top_k,
            )
            for i, layer in enumerate(layers)
        ],
    )
