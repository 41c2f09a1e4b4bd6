"""Build the expert-skew report from a telemetry store (the one entry point the CLI calls).

Steps: check that the rollups cover every call (rebuild them for a database written before
they existed), resolve the windows, stream the rollups of the report and baseline windows,
then compute profiles, fingerprints, drift, the timeline and the outliers.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.engine import make_url

from orchestrator.analysis.sampling import sampling_label
from orchestrator.analysis.skew.aggregate import WindowData, read_windows, step_start
from orchestrator.analysis.skew.drift import scope_drift
from orchestrator.analysis.skew.fingerprint import fingerprint, jsd
from orchestrator.analysis.skew.intervals import size_ratio_of_sums
from orchestrator.analysis.skew.metrics import balancedness, normalised_entropy
from orchestrator.analysis.skew.models import (
    DriftReport,
    ModelShape,
    PhaseView,
    ScopeProfile,
    SkewReport,
    Thresholds,
    TimelinePoint,
    TimeWindow,
)
from orchestrator.analysis.skew.outliers import CallSizes, find_outliers
from orchestrator.analysis.skew.phases import phase_view
from orchestrator.analysis.skew.profile import scope_profile
from orchestrator.analysis.skew.window import parse_duration, resolve
from orchestrator.exceptions import UserError
from orchestrator.telemetry import BatchTelemetryView, RollupDelta, TelemetryReader
from orchestrator.telemetry.fill import pending_note, pending_routing_count


class ReportOptions(BaseModel):
    """What to analyse.

    Attributes:
        window: ``24h``, ``7d``, ``2w``... or ``all``.
        baseline: Length of the drift baseline just before the window; None = same as
            ``window``; ``none`` = no drift.
        until: End of the window (UTC); None = the end of the newest data.
        workflow: Limit the report to one workflow (the global profile still covers all).
        model: Only calls of this served model.
        thresholds: Alarm thresholds.
        outlier_limit: Newest calls of the window scored for outliers.
        outliers_listed: Outlier requests listed.
        rebuild: Rebuild stale rollups (a database written before they existed).
        batch: Only the calls of this batch job's requests (``orchestrator batch``).
    """

    model_config = ConfigDict(frozen=True)

    window: str = "7d"
    baseline: str | None = None
    until: datetime | None = None
    workflow: str | None = None
    model: str | None = None
    thresholds: Thresholds = Thresholds()
    outlier_limit: int = Field(50_000, ge=1)
    outliers_listed: int = Field(25, ge=1)
    rebuild: bool = True
    batch: str | None = Field(None, min_length=1, max_length=64)


def _safe_url(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # pragma: no cover - the store already parsed it
        return "<database>"


def _timeline(data: WindowData) -> list[TimelinePoint]:
    if not data.steps:
        return []
    indexes = sorted(data.steps)
    counts = np.stack([np.asarray(data.steps[i].counts) for i in indexes])
    window_counts = np.asarray(data.overall().counts)
    divergence = jsd(counts, np.broadcast_to(window_counts, counts.shape)).mean(axis=-1)
    entropy = normalised_entropy(counts).mean(axis=-1)
    balance = balancedness(counts).min(axis=-1)
    return [
        TimelinePoint(
            start=step_start(data, i),
            calls=data.steps[i].calls,
            jsd_to_window=round(float(divergence[j]), 6),
            normalised_entropy=round(float(entropy[j]), 6),
            balancedness=round(float(balance[j]), 6),
        )
        for j, i in enumerate(indexes)
    ]


def _node_profiles(
    now: WindowData,
    nodes: dict[tuple[str, str], RollupDelta],
    shape: ModelShape,
    t: Thresholds,
    sizes: CallSizes,
) -> list[ScopeProfile]:
    return [
        scope_profile(
            "node",
            f"{w}/{n}",
            d,
            shape,
            t,
            now.sources(workflow=w, node=n),
            _sizes(sizes, workflow=w, node=n),
        )
        for (w, n), d in nodes.items()
    ]


def _sizes(sizes: CallSizes, workflow: str | None = None, node: str | None = None) -> float:
    """The :func:`~orchestrator.analysis.skew.intervals.size_ratio` of a scope's calls, from
    the length sums of the calls read for outliers (1 when none was read)."""
    rows = [v for (w, n), v in sizes.items() if workflow in (None, w) and node in (None, n)]
    if not rows:
        return 1.0
    return size_ratio_of_sums(*np.sum(rows, axis=0))


def _notes(
    data: WindowData,
    options: ReportOptions,
    shape: ModelShape,
    pending: int = 0,
    phases: PhaseView | None = None,
) -> list[str]:
    notes = [pending_note(pending, options.batch)] if pending else []
    sources = data.sources()
    if "replay" in sources:
        notes.append(
            "replay = routing recomputed by replaying the served token ids through the same "
            "checkpoint in transformers: an estimate of the engine's routing, not its record"
        )
    if "scripted" in sources:
        notes.append("scripted = routing made up by a test double, not a model")
    if "engine" in sources:
        notes.append("engine = vLLM's own routed_experts record; it carries no router confidence")
    if options.batch is not None:
        notes.append(f"only the calls of batch {options.batch} (orchestrator batch)")
    notes.append(
        f"shares are over the {shape.num_experts} routed experts only (shared experts are "
        f"always on and excluded); top-{shape.top_k}, so an expert chosen by every token has "
        f"share 1/{shape.top_k}"
    )
    t = options.thresholds
    notes.append(
        f"hot = the share's {t.confidence:.0%} simultaneous interval (Goodman-Wilson over calls, "
        f"with each expert's design effect) lies above {t.hot_factor:g}/E = "
        f"{t.hot_factor / shape.num_experts:.2%}; dead = it lies below {t.dead_factor:g}/E = "
        f"{t.dead_factor / shape.num_experts:.3%}; both judged only in layers with at least "
        f"{t.min_expected:g} activations per expert (N/E) and {t.min_calls} calls"
    )
    return notes + ([phases.note] if phases is not None else [])


def build_report(
    store: TelemetryReader,
    options: ReportOptions | None = None,
    *,
    on_rebuild: Callable[[int, int], None] | None = None,
) -> SkewReport:
    """Compute the expert-skew report of a telemetry store.

    Args:
        store: The telemetry store to read.
        options: What to analyse (defaults: last 7 days against the 7 days before).
        on_rebuild: Called with ``(calls, calls in rollups)`` before stale rollups are rebuilt.

    Returns:
        The :class:`SkewReport`.

    Raises:
        UserError: No call with routing is stored; the window spec is malformed; the
            workflow is unknown; calls of several MoE shapes are mixed; the rollups are
            stale and ``options.rebuild`` is False; or ``options.batch`` names no batch.

    Example:
        >>> from orchestrator.telemetry import TelemetryStore
        >>> report = build_report(TelemetryStore("sqlite:///runs/telemetry.db"))  # doctest: +SKIP
        >>> [(m.layer, m.hot, m.dead) for m in report.overall.layers]  # doctest: +SKIP
    """
    options = options or ReportOptions()
    parse_duration(options.window)  # validate before touching the database
    if options.baseline is not None and options.baseline.strip().lower() != "none":
        parse_duration(options.baseline, "--baseline")
    if options.batch is not None:  # one batch: its own calls, summed on the fly
        store = BatchTelemetryView(store, options.batch)
    pending = _check_rollups(store, options, on_rebuild)
    current, baseline, now, base = _read(store, options)
    assert now.shape is not None  # _read raises when the window holds no call
    shape, t = now.shape, options.thresholds
    overall = now.overall()
    wanted = options.workflow
    workflows = {k: v for k, v in now.workflows().items() if wanted in (None, k)}
    nodes = {k: v for k, v in now.nodes().items() if wanted in (None, k[0])}
    if wanted is not None and wanted not in workflows:
        raise UserError(
            f"workflow {wanted!r} has no call with routing in the window "
            f"{current.start:%Y-%m-%d %H:%M} to {current.end:%Y-%m-%d %H:%M} UTC; widen --window"
        )
    fingerprints = [
        fingerprint("workflow", w, d.calls, d.counts, overall.counts, shape.moe_layers)
        for w, d in workflows.items()
    ] + [
        fingerprint("node", f"{w}/{n}", d.calls, d.counts, overall.counts, shape.moe_layers)
        for (w, n), d in nodes.items()
    ]
    drift = None
    if baseline is not None and base is not None:
        drift = _drift(baseline, current, base, overall, workflows, shape, options)
    outliers, sizes = find_outliers(
        store,
        current,
        {k: np.asarray(v.counts) for k, v in nodes.items()},
        t,
        top_k=shape.top_k,
        moe_layers=shape.moe_layers,
        workflow=wanted,
        model=options.model,
        limit=options.outlier_limit,
        listed=options.outliers_listed,
    )
    phases = phase_view(store, current, shape, t, calls=overall.calls, model=options.model)
    return SkewReport(
        generated_at=datetime.now(UTC),
        database=_safe_url(store.url),
        window=current,
        shape=shape,
        models=sorted(now.models),
        thresholds=t,
        workflow_filter=wanted,
        overall=scope_profile("global", "all", overall, shape, t, now.sources(), _sizes(sizes)),
        workflows=[
            scope_profile(
                "workflow", w, d, shape, t, now.sources(workflow=w), _sizes(sizes, workflow=w)
            )
            for w, d in workflows.items()
        ],
        nodes=_node_profiles(now, nodes, shape, t, sizes),
        fingerprints=fingerprints,
        drift=drift,
        outliers=outliers,
        timeline=_timeline(now),
        notes=[sampling_label(now.sampling_rates), *_notes(now, options, shape, pending, phases)],
        pending_routing_calls=pending,
        capture_sampling_rates=dict(sorted(now.sampling_rates.items())),
        capture_sampling=sampling_label(now.sampling_rates),
        phases=phases,
    )


def _check_rollups(
    store: TelemetryReader,
    options: ReportOptions,
    on_rebuild: Callable[[int, int], None] | None,
) -> int:
    """Check that calls with routing are stored and the rollups cover them (rebuilding
    stale ones when ``options.rebuild``), and that ``options.workflow`` is known. Returns
    the number of calls whose expert routing is still pending.

    Raises:
        UserError: No call with routing; stale rollups without ``rebuild``; an unknown
            workflow.
    """
    calls, summed = store.rollup_status()
    pending = pending_routing_count(store, batch_id=options.batch, workflow=options.workflow)
    if calls == 0:
        if pending:
            raise UserError(
                f"no model call with routing is stored in {_safe_url(store.url)} yet: "
                + pending_note(pending, options.batch)
            )
        raise UserError(
            f"no model call with routing is stored in {_safe_url(store.url)}; run "
            "`orchestrator run` first"
        )
    if calls != summed:
        if not options.rebuild:
            raise UserError(
                f"the expert rollups cover {summed} of {calls} calls; run with --rebuild "
                "to rebuild them"
            )
        if on_rebuild is not None:
            on_rebuild(calls, summed)
        store.rebuild_rollups()
    known = store.rollup_workflows()
    if options.workflow is not None and options.workflow not in known:
        raise UserError(
            f"workflow {options.workflow!r} has no call with routing in this database; "
            f"known workflows: {', '.join(known) or 'none'}"
        )
    return pending


def _read(
    store: TelemetryReader, options: ReportOptions
) -> tuple[TimeWindow, TimeWindow | None, WindowData, WindowData | None]:
    """``(window, baseline window, its data, the baseline's data)``.

    Raises:
        UserError: The window holds no call with routing.
    """
    span = store.rollup_span()
    assert span is not None  # calls > 0 and rollups are current
    current, baseline = resolve(options.window, options.baseline, until=options.until, span=span)
    windows = [current] + ([baseline] if baseline is not None else [])
    data = read_windows(store, windows, model=options.model)
    now, base = data[0], (data[1] if baseline is not None else None)
    if now.shape is None:
        raise UserError(
            f"no call with routing between {current.start:%Y-%m-%d %H:%M} and "
            f"{current.end:%Y-%m-%d %H:%M} UTC"
            + (f" for model {options.model!r}" if options.model else "")
            + "; widen --window (e.g. --window all) or move --until"
        )
    return current, baseline, now, base


def _drift(
    baseline: TimeWindow,
    current: TimeWindow,
    base: WindowData,
    overall: RollupDelta,
    workflows: dict[str, RollupDelta],
    shape: ModelShape,
    options: ReportOptions,
) -> DriftReport:
    """Drift of the window against the baseline: all calls (without a workflow filter) and
    each workflow.

    Raises:
        UserError: The baseline holds calls of another MoE shape.
    """
    if base.shape is not None and base.shape != shape:
        raise UserError(
            "the baseline window holds calls of another MoE shape; pass --model or --baseline none"
        )
    t = options.thresholds
    base_workflows = base.workflows() if base.shape is not None else {}
    empty = RollupDelta.zeros(len(shape.moe_layers), shape.num_experts)
    base_overall = base.overall() if base.shape is not None else empty
    scopes = (
        []
        if options.workflow
        else [scope_drift("global", "all", base_overall, overall, shape.moe_layers, t)]
    )
    scopes += [
        scope_drift("workflow", w, base_workflows.get(w, empty), d, shape.moe_layers, t)
        for w, d in workflows.items()
    ]
    return DriftReport(
        baseline=baseline,
        current=current,
        baseline_profile=scope_profile("global", "all", base_overall, shape, t, base.sources())
        if base.shape is not None
        else None,
        scopes=scopes,
    )
