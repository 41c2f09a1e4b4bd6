"""The rollup arithmetic: what calls add to an hourly ``expert_rollups`` row, and how sums merge.

Pure numpy, no database: the writer (:mod:`orchestrator.telemetry.store`) adds one call's
:class:`RollupDelta` to its row in the call's transaction, the rebuild sums many calls at once
(:meth:`RollupDelta.of_calls`), and the analysis (:mod:`orchestrator.analysis.skew`) merges the
rows it reads (:meth:`RollupDelta.merge`). Gather (per call), accumulate (per group) and dump
(to the table) stay apart.

A row sums the calls of one :class:`RollupKey`: UTC hour (:data:`ROLLUP_BUCKET`), workflow,
node, expert-routing source, served model, model shape, capture sampling rate (the sums are
of the captured calls as they are; readers weight them by ``1 / rate``, see
:func:`weighted`), model family (two families are never summed together) and phase (``''``
for every call; ``prefill`` / ``decode`` for the calls whose source kept them apart, so the
two are never summed where a report shows them apart).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

#: Time bucket of an ``expert_rollups`` row: one hour, aligned to UTC hours.
ROLLUP_BUCKET = timedelta(hours=1)
#: The phases a call's counts split into where its source kept them apart (migration 0008):
#: the prompt's tokens, then the completion's routed tokens.
PHASES = ("prefill", "decode")
#: Bins of the per-call mean router confidence histogram kept in rollups (``[0, 1]``, width 0.05).
CONFIDENCE_BINS = 20


def as_utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (SQLite returns naive datetimes, stored as UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def bucket_start(moment: datetime) -> datetime:
    """The start of the rollup bucket (UTC hour) that holds ``moment`` (naive = UTC)."""
    return as_utc(moment).replace(minute=0, second=0, microsecond=0)


def shape_key(moe_layers: Sequence[int], num_experts: int, top_k: int) -> str:
    """A model shape as text, e.g. ``"layers=1,2,3;experts=64;top_k=6"``."""
    return f"layers={','.join(map(str, moe_layers))};experts={num_experts};top_k={top_k}"


@dataclass(frozen=True)
class RollupKey:
    """The group an ``expert_rollups`` row sums (``bucket_start`` is an aware UTC hour)."""

    bucket_start: datetime
    workflow: str
    node: str
    expert_routing_source: str
    model: str
    moe_layers: tuple[int, ...]
    num_experts: int
    top_k: int
    #: Fraction of calls whose experts were captured (1.0: all), see migration 0005.
    capture_sampling_rate: float = 1.0
    #: The calls' model family (``''``: not known), see migration 0007.
    model_family: str = ""
    #: ``''``: every call, prefill and decode together (``expert_rollups``); ``prefill`` or
    #: ``decode``: that phase of the calls whose source kept them apart
    #: (``expert_phase_rollups``, migration 0008).
    phase: str = ""

    @property
    def shape_key(self) -> str:
        """The model shape as stored in ``expert_rollups.shape_key`` (see :func:`shape_key`)."""
        return shape_key(self.moe_layers, self.num_experts, self.top_k)

    def fields(self) -> dict[str, Any]:
        """The key as the group columns of its ``expert_rollups`` row (with ``shape_key``)."""
        return {
            "bucket_start": self.bucket_start,
            "workflow": self.workflow,
            "node": self.node,
            "expert_routing_source": self.expert_routing_source,
            "model": self.model,
            "shape_key": self.shape_key,
            "moe_layers": tuple(self.moe_layers),
            "num_experts": self.num_experts,
            "top_k": self.top_k,
            "capture_sampling_rate": self.capture_sampling_rate,
            "model_family": self.model_family,
            "phase": self.phase,
        }


@dataclass
class RollupDelta:
    """What one or more calls add to a rollup row (``L`` layers, ``E`` experts).

    Attributes:
        calls: Calls summed.
        routed_tokens: Tokens that passed the router, summed.
        counts: int64 ``(L, E)`` summed expert counts.
        sq_counts: float64 ``(L, E)``, sum over calls of ``count**2 / (routed_tokens * top_k)``.
        conf_calls: Calls that carry a router confidence.
        conf_tokens: Routed tokens of those calls.
        conf_sum: Sum of ``mean_router_confidence * routed_tokens``.
        conf_hist: int64 ``(CONFIDENCE_BINS,)``, calls per bin of mean router confidence.
        layer_conf_sum: float64 ``(L,)``, sum of ``layer_confidence * routed_tokens``.
    """

    calls: int
    routed_tokens: int
    counts: np.ndarray
    sq_counts: np.ndarray
    conf_calls: int
    conf_tokens: int
    conf_sum: float
    conf_hist: np.ndarray
    layer_conf_sum: np.ndarray

    @classmethod
    def of_calls(
        cls,
        counts: np.ndarray,
        routed_tokens: np.ndarray,
        top_k: int,
        mean_conf: np.ndarray,
        layer_conf: np.ndarray,
    ) -> RollupDelta:
        """Sum a batch of calls of one group, vectorised.

        Args:
            counts: ``(calls, L, E)`` expert counts.
            routed_tokens: ``(calls,)``.
            top_k: Experts per token.
            mean_conf: ``(calls,)`` mean router confidence, NaN where none was measured.
            layer_conf: ``(calls, L)`` per-layer mean router confidence, NaN where none.
        """
        counts64 = counts.astype(np.int64, copy=False)
        activations = np.maximum(routed_tokens.astype(np.float64) * top_k, 1.0)
        has_conf = ~np.isnan(mean_conf)
        tokens_conf = np.where(has_conf, routed_tokens, 0)
        bins = np.clip(
            (mean_conf[has_conf] * CONFIDENCE_BINS).astype(np.int64), 0, CONFIDENCE_BINS - 1
        )
        layer_ok = ~np.isnan(layer_conf)
        return cls(
            calls=int(counts.shape[0]),
            routed_tokens=int(routed_tokens.sum()),
            counts=counts64.sum(axis=0),
            sq_counts=(counts64.astype(np.float64) ** 2 / activations[:, None, None]).sum(axis=0),
            conf_calls=int(has_conf.sum()),
            conf_tokens=int(tokens_conf.sum()),
            conf_sum=float(np.nansum(mean_conf * routed_tokens)),
            conf_hist=np.bincount(bins, minlength=CONFIDENCE_BINS).astype(np.int64),
            layer_conf_sum=np.where(layer_ok, layer_conf, 0.0).T @ routed_tokens.astype(np.float64),
        )

    @classmethod
    def zeros(cls, layers: int, experts: int) -> RollupDelta:
        """An empty delta of the given shape."""
        return cls(
            calls=0,
            routed_tokens=0,
            counts=np.zeros((layers, experts), dtype=np.int64),
            sq_counts=np.zeros((layers, experts)),
            conf_calls=0,
            conf_tokens=0,
            conf_sum=0.0,
            conf_hist=np.zeros(CONFIDENCE_BINS, dtype=np.int64),
            layer_conf_sum=np.zeros(layers),
        )

    def merge(self, other: RollupDelta) -> None:
        """Add another delta of the same group in place."""
        self.calls += other.calls
        self.routed_tokens += other.routed_tokens
        self.counts = self.counts + other.counts
        self.sq_counts = self.sq_counts + other.sq_counts
        self.conf_calls += other.conf_calls
        self.conf_tokens += other.conf_tokens
        self.conf_sum += other.conf_sum
        self.conf_hist = self.conf_hist + other.conf_hist
        self.layer_conf_sum = self.layer_conf_sum + other.layer_conf_sum


def call_deltas(
    key: RollupKey,
    counts: np.ndarray,
    routed_tokens: int,
    mean_conf: float | None,
    layer_conf: np.ndarray | None,
    phases: tuple[np.ndarray, np.ndarray] | None = None,
    prompt_tokens: int = 0,
) -> list[tuple[RollupKey, RollupDelta]]:
    """What one call adds to the rollups: its group ``key`` (phase ``''``), and where its
    source kept them apart, the ``prefill`` and ``decode`` groups.

    Args:
        key: The call's group, phase ``''``.
        counts: ``(L, E)`` the call's expert counts.
        routed_tokens: The call's routed tokens (``prompt + completion - 1``).
        mean_conf: Mean router confidence, or None.
        layer_conf: ``(L,)`` per-layer mean router confidence, or None.
        phases: ``(prefill, decode)`` counts, each ``(L, E)``, summing to ``counts``; None
            where the source summed them (then no phase row is written).
        prompt_tokens: The prefill's routed tokens (the decode's are the rest).

    Returns:
        ``[(key, delta)]``, plus ``(prefill key, delta)`` and ``(decode key, delta)`` with a
        split. The phase deltas carry no router confidence (it is measured per call).
    """
    layers = counts.shape[0]
    no_layer_conf = np.full((1, layers), np.nan)
    out = [
        (
            key,
            RollupDelta.of_calls(
                counts[None],
                np.array([routed_tokens]),
                key.top_k,
                np.array([np.nan if mean_conf is None else mean_conf]),
                no_layer_conf if layer_conf is None else layer_conf[None],
            ),
        )
    ]
    if phases is not None:
        tokens = (prompt_tokens, routed_tokens - prompt_tokens)
        for phase, part, n in zip(PHASES, phases, tokens, strict=True):
            delta = RollupDelta.of_calls(
                part[None], np.array([n]), key.top_k, np.array([np.nan]), no_layer_conf
            )
            out.append((replace(key, phase=phase), delta))
    return out


def check_sampling_rate(rate: float) -> float:
    """``rate`` as a float in ``(0, 1]``.

    Raises:
        ValueError: ``rate`` is not a number in ``(0, 1]`` (NaN, 0, negative, above 1).
    """
    value = float(rate)
    if not 0.0 < value <= 1.0:  # NaN fails both comparisons
        raise ValueError(
            f"capture sampling rate must be in (0, 1] (the fraction of calls whose experts "
            f"were captured, 1.0 for all), got {rate!r}"
        )
    return value


def weighted(delta: RollupDelta, rate: float) -> RollupDelta:
    """``delta`` as an estimate of the calls it was sampled from (Horvitz-Thompson: a call
    captured with probability ``rate`` stands for ``1 / rate`` calls).

    Scaled by ``1 / rate``: ``counts``, ``sq_counts``, ``routed_tokens``, ``conf_tokens``,
    ``conf_sum``, ``conf_hist`` and ``layer_conf_sum`` (estimates of the totals; load shares,
    balancedness and mean confidences are unchanged by one common weight and are unbiased
    where rows of different rates are merged). Kept as captured: ``calls`` and ``conf_calls``,
    the sample sizes, which the drift test's degrees of freedom need (with ``calls`` kept, its
    dispersion estimate scales with the weight and the weight cancels out of the test, so a
    sample is not made more significant by weighting). ``delta`` itself is returned for
    rate 1.

    Raises:
        ValueError: ``rate`` is not in ``(0, 1]``.
    """
    rate = check_sampling_rate(rate)
    if rate == 1.0:
        return delta
    w = 1.0 / rate
    return RollupDelta(
        calls=delta.calls,
        routed_tokens=round(delta.routed_tokens * w),
        counts=delta.counts * w,
        sq_counts=delta.sq_counts * w,
        conf_calls=delta.conf_calls,
        conf_tokens=round(delta.conf_tokens * w),
        conf_sum=delta.conf_sum * w,
        conf_hist=delta.conf_hist * w,
        layer_conf_sum=delta.layer_conf_sum * w,
    )
