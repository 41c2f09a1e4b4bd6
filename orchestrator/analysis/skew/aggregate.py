"""Read rollup aggregates of a time window into per-group sums (streamed, bounded memory).

The report never reads one blob per call for its metrics: it streams the ``expert_rollups``
rows of the window (one per hour, workflow, node, expert-routing source, model and shape) as
typed :class:`~orchestrator.telemetry.RollupRow` values, and sums them per ``(workflow, node,
expert-routing source)``. Memory is bounded by the number of such groups and timeline steps
times ``L * E``, not by the number of calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from orchestrator.analysis.skew.models import ModelShape, TimeWindow
from orchestrator.exceptions import UserError
from orchestrator.telemetry import MixedFamiliesError, RollupDelta, TelemetryReader
from orchestrator.telemetry.rollups import weighted

#: (workflow, node, expert-routing source)
GroupKey = tuple[str, str, str]


def total(deltas: Iterable[RollupDelta], layers: int, experts: int) -> RollupDelta:
    """The sum of several deltas (an empty one when there are none)."""
    out = RollupDelta.zeros(layers, experts)
    for delta in deltas:
        out.merge(delta)
    return out


@dataclass
class WindowData:
    """Sums of one window.

    Attributes:
        window: The window.
        shape: The MoE shape of its calls (None when it has none).
        models: Served model names seen.
        groups: Sums per ``(workflow, node, expert-routing source)``.
        steps: Global sums per timeline step index (``(bucket - start) // step``).
        step: Timeline step length.
        sampling_rates: Captured calls per capture sampling rate. Every sum above is
            weighted: a rollup row of rate ``r`` enters with its counts and token sums times
            ``1 / r`` (:func:`~orchestrator.telemetry.rollups.weighted`), estimates of all
            calls when ``r < 1``; ``calls`` stays the number of captured calls.
    """

    window: TimeWindow
    shape: ModelShape | None = None
    models: set[str] = field(default_factory=set)
    groups: dict[GroupKey, RollupDelta] = field(default_factory=dict)
    steps: dict[int, RollupDelta] = field(default_factory=dict)
    step: timedelta = timedelta(hours=1)
    sampling_rates: dict[float, int] = field(default_factory=dict)

    @property
    def calls(self) -> int:
        return sum(d.calls for d in self.groups.values())

    def _dims(self) -> tuple[int, int]:
        if self.shape is None:
            raise UserError("the window holds no call with routing")
        return len(self.shape.moe_layers), self.shape.num_experts

    def overall(self) -> RollupDelta:
        """Sum over every group."""
        return total(self.groups.values(), *self._dims())

    def workflows(self) -> dict[str, RollupDelta]:
        """Sums per workflow, sorted by name."""
        out: dict[str, RollupDelta] = {}
        for (workflow, _node, _source), delta in sorted(self.groups.items()):
            out.setdefault(workflow, RollupDelta.zeros(*self._dims())).merge(delta)
        return out

    def nodes(self) -> dict[tuple[str, str], RollupDelta]:
        """Sums per ``(workflow, node)``, sorted."""
        out: dict[tuple[str, str], RollupDelta] = {}
        for (workflow, node, _source), delta in sorted(self.groups.items()):
            out.setdefault((workflow, node), RollupDelta.zeros(*self._dims())).merge(delta)
        return out

    def sources(self, workflow: str | None = None, node: str | None = None) -> dict[str, int]:
        """Calls per expert-routing source, optionally of one workflow or node."""
        out: dict[str, int] = {}
        for (wf, nd, source), delta in self.groups.items():
            if (workflow is None or wf == workflow) and (node is None or nd == node):
                out[source] = out.get(source, 0) + delta.calls
        return dict(sorted(out.items()))


def read_windows(
    store: TelemetryReader,
    windows: list[TimeWindow],
    *,
    model: str | None = None,
    steps: int = 48,
    phase: str = "",
) -> list[WindowData]:
    """Stream the rollups of ``windows`` (adjacent or not) and sum them per group.

    Args:
        store: The telemetry store.
        windows: Windows to fill; the first gets timeline steps.
        model: Only this served model.
        steps: At most this many timeline steps over the first window (whole hours each).
        phase: ``''`` for every call (prefill and decode together); ``prefill`` or
            ``decode`` for that phase of the calls whose source kept them apart.

    Returns:
        One :class:`WindowData` per window, in order.

    Raises:
        UserError: Calls of different MoE shapes are in the windows (use one database per
            model, or ``model`` to pick one); :class:`~orchestrator.telemetry.MixedFamiliesError`
            when they are of two model families.
    """
    start = min(w.start for w in windows)
    end = max(w.end for w in windows)
    first = windows[0]
    hours = max(1, int((first.end - first.start) / timedelta(hours=1)))
    step = timedelta(hours=-(-hours // steps))
    data = [WindowData(window=w, step=step) for w in windows]
    shape: tuple[str, ModelShape] | None = None
    families: dict[str, set[str]] = {}  # two model families are never pooled (issue 50)
    for record in store.iter_rollups(start=start, end=end, model=model, phase=phase):
        bucket = record.bucket_start
        if record.model_family:
            families.setdefault(record.model_family, set()).add(record.model)
            if len(families) > 1:
                raise MixedFamiliesError(families)
        if shape is None:
            shape = (
                record.shape_key,
                ModelShape(
                    moe_layers=list(record.moe_layers),
                    num_experts=record.num_experts,
                    top_k=record.top_k,
                ),
            )
        elif record.shape_key != shape[0]:
            raise UserError(
                f"calls of different MoE shapes are stored ({shape[0]} and {record.shape_key}, "
                f"model {record.model!r}); pass --model to analyse one model, or use one "
                "database per model"
            )
        rate = record.capture_sampling_rate
        delta = weighted(record.sums, rate)
        layers, experts = len(record.moe_layers), record.num_experts
        for item in data:
            if not item.window.start <= bucket < item.window.end:
                continue
            item.sampling_rates[rate] = item.sampling_rates.get(rate, 0) + record.sums.calls
            item.shape = shape[1]
            item.models.add(record.model)
            key = (record.workflow, record.node, record.expert_routing_source)
            item.groups.setdefault(key, RollupDelta.zeros(layers, experts)).merge(delta)
            if item is data[0]:
                index = int((bucket - item.window.start) / step)
                item.steps.setdefault(index, RollupDelta.zeros(layers, experts)).merge(delta)
    return data


def step_start(data: WindowData, index: int) -> datetime:
    """Start of timeline step ``index``."""
    return data.window.start + index * data.step
