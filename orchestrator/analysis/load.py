"""Per-layer expert load over stored calls: load share, hot and dead experts.

Definitions (over routed experts only; shared experts are always on and never counted). ``E``,
``top_k`` and the MoE layers are those the calls were recorded with (the served model's shape
description, :class:`serving.architecture.MoEArchitecture`), whatever the family; calls of two
model families are never pooled (:class:`~orchestrator.telemetry.read.MixedFamiliesError`):

* **Load share** of expert *e* in layer *l*: ``counts[l, e] / counts[l].sum()``, the fraction of
  that layer's routed (token, slot) activations it received. Uniform routing gives ``1/E``.
* **Hot** and **dead**: the verdicts of ``orchestrator skew``
  (:func:`orchestrator.analysis.skew.intervals.verdicts`, thresholds
  :class:`~orchestrator.analysis.skew.models.Thresholds`): hot when the *lower* bound of the
  share's simultaneous confidence interval (calls as clusters) exceeds ``hot_factor / E``
  (4 times uniform by default), dead when the *upper* bound is below ``dead_factor / E``. A
  layer with too little volume (fewer than ``min_expected`` activations per expert under
  uniform routing, or fewer than ``min_calls`` calls) is not judged: it gets no verdict, and
  the table says so.
* **Balancedness**: ``mean / max`` of the layer's counts, in (0, 1]; 1 is perfectly balanced.
  (Its inverse, ``max / mean``, is the MaxVio baseline of Wang et al. 2024,
  "Auxiliary-Loss-Free Load Balancing Strategy for Mixture-of-Experts", arXiv:2408.15664.)

The definitions are those of :mod:`orchestrator.analysis.skew.metrics` and
:mod:`~orchestrator.analysis.skew.intervals` (one implementation for this table and
``orchestrator skew``, which agree on the same calls). This table reads the calls themselves
(exact ``since``), in bounded chunks; ``orchestrator skew`` reads the hourly rollups and adds
drift, fingerprints and outliers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

import numpy as np
from pydantic import BaseModel, ConfigDict

from orchestrator.analysis.sampling import sampling_label
from orchestrator.analysis.skew import metrics
from orchestrator.analysis.skew.intervals import share_intervals, size_ratio_of_sums, verdicts
from orchestrator.analysis.skew.models import Thresholds
from orchestrator.exceptions import UserError
from orchestrator.telemetry import TelemetryReader
from orchestrator.telemetry.fill import pending_note, pending_routing_count
from orchestrator.telemetry.read import MixedFamiliesError


class LayerLoad(BaseModel):
    """Load of one MoE layer.

    Attributes:
        layer: Model-layer index.
        activations: Routed (token, slot) activations counted: ``tokens * top_k``.
        shares: Load share per expert, ``(num_experts,)``, sums to 1.
        hot: Hot experts (see the module docstring), highest share first.
        dead: Dead experts.
        judged: The layer had the volume to judge; when False, ``hot`` and ``dead`` are
            empty because nothing can be said yet, not because nothing is wrong.
        balancedness: ``mean / max`` of the counts.
    """

    model_config = ConfigDict(frozen=True)

    layer: int
    activations: int
    shares: list[float]
    hot: list[int]
    dead: list[int]
    balancedness: float
    judged: bool = True

    def top(self, n: int = 5) -> list[tuple[int, float]]:
        """The ``n`` experts with the largest share, as ``(expert, share)``."""
        order = np.argsort(self.shares)[::-1][:n]
        return [(int(e), self.shares[int(e)]) for e in order]


class ExpertLoad(BaseModel):
    """Expert load over a set of calls.

    Attributes:
        calls: Calls aggregated (those with routing).
        family: Their model family (``ernie45``, ``qwen3_moe``...; ``''``: not recorded).
        routed_tokens: Tokens that passed the router, summed over calls.
        num_experts: Routed experts per layer.
        top_k: Experts per token.
        sources: Calls per expert-routing source (``replay`` means estimated, ``engine`` recorded).
        skipped: Calls without routing (dense, unavailable, pending), not aggregated.
        pending: Of ``skipped``, calls whose expert routing is still ``pending`` (a batch
            deferred the replay): left out, never read as zero experts, until
            ``orchestrator telemetry fill-routing`` fills them.
        layers: One :class:`LayerLoad` per MoE layer.
        sampling_rates: Captured calls per capture sampling rate. Shares and activations
            weight each call by ``1 / rate`` (estimates of all calls when a rate is below 1);
            ``calls`` and ``routed_tokens`` are of the captured calls; the hot/dead intervals
            use the captured calls as their sample size, as ``orchestrator skew`` does.
        capture_sampling: The same as one line of text; print it with the table.
        thresholds: The hot and dead rule the layers were judged with.
    """

    model_config = ConfigDict(frozen=True)

    calls: int
    routed_tokens: int
    num_experts: int
    top_k: int
    sources: dict[str, int]
    skipped: int
    layers: list[LayerLoad]
    pending: int = 0
    sampling_rates: dict[float, int] = {}
    capture_sampling: str = "capture sampling rate 1 (every call captured)"
    family: str = ""
    thresholds: Thresholds = Thresholds()


def layer_loads(
    moe_layers: tuple[int, ...] | list[int],
    counts: np.ndarray,
    sq_counts: np.ndarray,
    calls: int,
    thresholds: Thresholds,
    sizes: float = 1.0,
) -> list[LayerLoad]:
    """Load statistics of every MoE layer, with the hot and dead verdicts of
    ``orchestrator skew``.

    Args:
        moe_layers: The model-layer index of each row.
        counts: ``(L, E)`` activations (weighted by ``1 / rate`` under sampled capture).
        sq_counts: ``(L, E)`` sum over calls of ``c_ie^2 / n_i`` (same weights).
        calls: Captured calls summed (the intervals' clusters).
        thresholds: The verdicts' thresholds.
        sizes: :func:`~orchestrator.analysis.skew.intervals.size_ratio` of the calls.
    """
    c = np.asarray(counts, dtype=np.float64)
    bounds = share_intervals(c, sq_counts, calls, thresholds, sizes)
    hot, dead = verdicts(bounds, thresholds)
    out = []
    for i, layer in enumerate(moe_layers):
        hot_ids = np.flatnonzero(hot[i])
        out.append(
            LayerLoad(
                layer=layer,
                activations=round(float(c[i].sum())),
                shares=[float(v) for v in bounds.shares[i]],
                hot=[
                    int(e) for e in hot_ids[np.argsort(-bounds.shares[i][hot_ids], kind="stable")]
                ],
                dead=[int(e) for e in np.flatnonzero(dead[i])],
                balancedness=round(float(metrics.balancedness(c[i])), 4),
                judged=bool(bounds.judgeable[i]),
            )
        )
    return out


def layer_load(
    layer: int,
    counts: np.ndarray,
    sq_counts: np.ndarray,
    calls: int,
    thresholds: Thresholds | None = None,
    sizes: float = 1.0,
) -> LayerLoad:
    """:func:`layer_loads` of one layer: ``counts`` and ``sq_counts`` of shape ``(E,)``;
    ``thresholds`` default to :class:`Thresholds`' defaults."""
    rows = layer_loads(
        (layer,),
        np.asarray(counts)[None],
        np.asarray(sq_counts)[None],
        calls,
        thresholds or Thresholds(),
        sizes,
    )
    return rows[0]


@contextmanager
def _one_shape() -> Iterator[None]:
    """Turn the reader's refusals to mix model shapes or model families into the load
    table's own one-line errors (each with its fix once: ``--model``, or one database per
    model)."""
    try:
        yield
    except MixedFamiliesError as exc:
        # the reader's message names the families and the fix (--model, or one database per
        # model when two families share a served name); `load` has --model as `skew` has
        raise UserError(str(exc)) from exc
    except UserError as exc:
        if "MoE layers" in str(exc):
            detail = str(exc).split("; use one database per model")[0]
            raise UserError(
                f"calls of different model shapes are stored ({detail}); select one served "
                "model with --model NAME, or use one database per model"
            ) from exc
        raise


def _no_routing(
    store: TelemetryReader,
    workflow: str | None,
    since: datetime | None,
    pending: int,
    model: str | None = None,
) -> UserError:
    """Why no call with expert routing was found, and what to do about it."""
    if model is not None:
        scope = f" for workflow {workflow!r}" if workflow else ""
        return UserError(
            f"no model call with routing of served model {model!r} is stored in "
            f"{store.url}{scope}; drop --model, or give a model name the calls were served as"
        )
    scope = f" for workflow {workflow!r}" if workflow else ""
    if workflow:
        known = store.rollup_workflows()
        if workflow not in known:
            return UserError(
                f"no model call with routing is stored in {store.url}{scope}; the workflows "
                f"with such calls there: {', '.join(known) or 'none'}; give one of them to "
                "--workflow, or drop it"
            )
    unsupported = store.count_calls(workflow=workflow, since=since, source="unsupported")
    if unsupported:
        return UserError(
            f"no model call with expert routing is stored in {store.url}{scope}: "
            f"{unsupported} call(s) of an MoE family with no description were recorded "
            "'unsupported', without experts; docs/moe_families.md says how to add a family"
        )
    if pending:
        return UserError(
            f"no model call with routing is stored in {store.url}{scope} yet: "
            + pending_note(pending)
        )
    return UserError(
        f"no model call with routing is stored in {store.url}{scope}; run `orchestrator run` first"
    )


def expert_load(
    store: TelemetryReader,
    *,
    workflow: str | None = None,
    since: datetime | None = None,
    thresholds: Thresholds | None = None,
    family: str | None = None,
    model: str | None = None,
) -> ExpertLoad:
    """Aggregate stored per-call counts into per-layer load.

    Calls are read in chunks of a few thousand
    (:meth:`~orchestrator.telemetry.TelemetryReader.iter_call_counts`) and summed with numpy,
    so memory stays bounded however many calls are stored.

    ``thresholds``: the hot and dead rule (default :class:`Thresholds`, as ``orchestrator
    skew``). ``family``: only the calls of this model family; ``model``: only those of this
    served model name (``orchestrator load --model``, as ``orchestrator skew --model``). The
    ``skipped`` and ``pending`` counts are of every model (the reader counts them unfiltered).

    Raises:
        UserError: No call with routing is stored (for the workflow), or calls of different
            model shapes or model families are mixed (the message names them).
    """
    total: np.ndarray | None = None
    sq: np.ndarray | None = None
    rates: dict[float, int] = {}
    top_k: int | None = None
    moe_layers: tuple[int, ...] = ()
    sources: dict[str, int] = {}
    calls = tokens = 0
    sizes = np.zeros(2)  # sum n_i and sum n_i^2 of the calls' activations (size_ratio)
    found_family = ""
    with _one_shape():
        for batch in store.iter_call_counts(
            start=since, workflow=workflow, family=family, model=model
        ):
            found_family = batch.model_family or found_family
            if total is None or sq is None:
                total = np.zeros(batch.counts.shape[1:], dtype=np.float64)
                sq = np.zeros(batch.counts.shape[1:], dtype=np.float64)
                top_k = int(batch.top_k[0])
                moe_layers = batch.moe_layers
            if (batch.top_k != top_k).any():
                raise UserError(
                    f"calls of different model shapes are stored (top-{top_k} and top-"
                    f"{int(batch.top_k[batch.top_k != top_k][0])}); use one database per model"
                )
            # each captured call stands for 1 / rate calls (sampled capture)
            weights = batch.weights()
            counts = batch.counts.astype(np.float64)
            active = np.maximum(batch.routed_tokens.astype(np.float64) * batch.top_k, 1.0)
            total += np.einsum("n,nle->le", weights, counts)
            sq += np.einsum("n,nle->le", weights / active, counts * counts)  # rollups' sq_counts
            sizes += (active.sum(), (active * active).sum())
            _count_rates(rates, batch.sampling_rates, len(batch.ids))
            for source in batch.sources:
                sources[source] = sources.get(source, 0) + 1
            calls += len(batch.ids)
            tokens += int(batch.routed_tokens.sum())
    pending = pending_routing_count(store, workflow=workflow, since=since)
    if total is None or sq is None or top_k is None:
        raise _no_routing(store, workflow, since, pending, model)
    rule = thresholds or Thresholds()
    return ExpertLoad(
        calls=calls,
        routed_tokens=tokens,
        num_experts=int(total.shape[1]),
        top_k=top_k,
        sources=dict(sorted(sources.items())),
        skipped=store.count_calls(workflow=workflow, since=since, with_routing=False),
        pending=pending,
        layers=layer_loads(
            moe_layers, total, sq, calls, rule, size_ratio_of_sums(calls, *sizes.tolist())
        ),
        sampling_rates=dict(sorted(rates.items())),
        capture_sampling=sampling_label(rates),
        family=found_family,
        thresholds=rule,
    )


def _count_rates(rates: dict[float, int], found: np.ndarray | None, calls: int) -> None:
    """Add a chunk's calls per capture sampling rate to ``rates`` (None: all at rate 1)."""
    if found is None:
        rates[1.0] = rates.get(1.0, 0) + calls
        return
    values, per = np.unique(found, return_counts=True)
    for rate, n in zip(values.tolist(), per.tolist(), strict=True):
        rates[rate] = rates.get(rate, 0) + n
