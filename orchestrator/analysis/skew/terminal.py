"""The terminal summary of a skew report (rich tables)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from orchestrator.analysis.skew.models import ScopeProfile, SkewReport
from orchestrator.analysis.skew.phases import flagged, unjudged


def _pairs(pairs: list[tuple[int, int]], show: int = 6) -> str:
    """``"L1:e3 L2:e9"`` (the first ``show``, then a count), or ``"-"``."""
    if not pairs:
        return "-"
    head = " ".join(f"L{layer}:e{expert}" for layer, expert in pairs[:show])
    return head + (f" +{len(pairs) - show}" if len(pairs) > show else "")


def _scope_row(profile: ScopeProfile, jsd: float | None) -> list[str]:
    layers = profile.layers
    conf = profile.confidence.mean
    return [
        escape(profile.name),
        f"{profile.calls:,}",
        f"{profile.routed_tokens:,}",
        f"{min(m.balancedness for m in layers):.2f}",
        f"{max(m.max_violation for m in layers):.2f}",
        f"{sum(m.normalised_entropy for m in layers) / len(layers):.3f}",
        f"{sum(m.effective_experts for m in layers) / len(layers):.1f}",
        f"{max(m.gini for m in layers):.2f}",
        "-" if jsd is None else f"{jsd:.4f}",
        "n/a" if conf is None else f"{conf:.3f}",
    ]


def _alarm_row(profile: ScopeProfile) -> list[str]:
    collapsed = [m.layer for m in profile.layers if m.collapsed]
    unjudged = [m.layer for m in profile.layers if not m.judgeable]
    return [
        escape(profile.name),
        _pairs(profile.hot()),
        _pairs(profile.dead()),
        ", ".join(f"L{layer}" for layer in collapsed) or "-",
        ", ".join(f"L{layer}" for layer in unjudged) or "-",
    ]


def summary(report: SkewReport) -> Group:
    """Rich renderables: scope table, drift table, outlier table and notes."""
    rate = f" · {report.capture_sampling}"  # every table states the capture sampling rate
    parts: list[RenderableType] = [_head(report), *_scope_tables(report, rate)]
    parts.append(_phase_table(report, rate))
    if report.drift is not None:
        parts.append(_drift_table(report, rate))
    o = report.outliers
    parts.append(_outlier_table(report, rate))
    if o.groups_too_small:
        parts.append(
            Text(
                f"not scored (fewer than {report.thresholds.outlier_min_calls} "
                f"calls): {', '.join(o.groups_too_small)}",
                style="dim",
            )
        )
    parts.extend(Text(note, style="dim") for note in report.notes)
    return Group(*parts)


def _head(report: SkewReport) -> Text:
    """The header line: database, window, calls by source, pending routing and the shape."""
    shape = report.shape
    w = report.window
    sources = ", ".join(f"{n} {s}" for s, n in report.overall.sources.items())
    return Text.from_markup(
        f"[bold]Expert skew[/] {escape(report.database)} · window {w.label} "
        f"({w.start:%Y-%m-%d %H:%M} → {w.end:%Y-%m-%d %H:%M} UTC) · "
        f"{report.overall.calls:,} calls ({escape(sources)}) · "
        + (
            f"[yellow]{report.pending_routing_calls:,} calls with expert routing pending, "
            "not counted[/] · "
            if report.pending_routing_calls
            else ""
        )
        + f"{len(shape.moe_layers)} MoE layers × {shape.num_experts} routed experts, "
        f"top-{shape.top_k} · {escape(report.capture_sampling)}"
    )


def _scope_tables(report: SkewReport, rate: str) -> tuple[Table, Table]:
    """The load table and the alarms table, one row per scope (all calls, workflows, nodes)."""
    jsd = {f.name: f.jsd for f in report.fingerprints}
    profiles = ([report.overall] if report.workflow_filter is None else []) + report.workflows
    width = max(len(p.name) for p in profiles + report.nodes)
    scopes = Table(
        title="Load per scope (over layers: min balancedness, max MaxVio, mean normalised "
        "entropy and effective experts, max Gini; JSD to all calls; mean router confidence)" + rate
    )
    # the scope column is never cut: node names must stay tellable apart
    scopes.add_column("scope", no_wrap=True, min_width=width)
    for name in ("calls", "tokens", "bal.", "MaxVio", "H/lnE", "exp H", "Gini", "JSD", "conf"):
        scopes.add_column(name, justify="right")
    alarms = Table(title="Alarms" + rate)
    alarms.add_column("scope", no_wrap=True, min_width=width)
    for name in ("hot 🔥", "dead ✝", "collapsed", "too few samples"):
        alarms.add_column(name)
    for profile in profiles + report.nodes:
        scopes.add_row(*_scope_row(profile, jsd.get(profile.name)))
        alarms.add_row(*_alarm_row(profile))
    return scopes, alarms


def _phase_table(report: SkewReport, rate: str) -> RenderableType:
    """Hot and dead for prefill and decode apart (all workflows), each with its interval; or
    the line saying the source has no phase split."""
    view = report.phases
    if view is None or not view.profiles:
        note = view.note if view is not None else "prefill and decode: combined"
        return Text(note, style="bold")
    table = Table(title=f"Alarms by phase, all workflows: {view.note}" + rate)
    for name in ("phase", "calls", "routed tokens", "hot 🔥 share [interval]"):
        table.add_column(name, no_wrap=name == "phase")
    table.add_column("dead ✝ share [interval]")
    table.add_column("too few samples")
    for p in view.profiles:
        table.add_row(
            p.name,
            f"{p.calls:,}",
            f"{p.routed_tokens:,}",
            flagged(p, "hot"),
            flagged(p, "dead"),
            unjudged(p),
        )
    return table


def _drift_table(report: SkewReport, rate: str) -> Table:
    """Per scope: calls before and now, drifted layers, max JSD, min p, largest changes."""
    d = report.drift
    assert d is not None
    drift = Table(
        title=f"Drift: {d.baseline.start:%Y-%m-%d %H:%M} → {d.baseline.end:%Y-%m-%d %H:%M} "
        f"vs the window (chi-square on counts / between-call dispersion, Bonferroni "
        f"α={report.thresholds.drift_alpha:g}, JSD ≥ {report.thresholds.drift_min_jsd:g})" + rate
    )
    for name in (
        "scope",
        "calls before → now",
        "drifted layers",
        "max JSD",
        "min p",
        "largest share changes",
    ):
        drift.add_column(name)
    for s in d.scopes:
        calls = f"{s.baseline_calls} → {s.current_calls}"
        if s.status != "tested":
            reason = f"[dim]not tested: {escape(s.reason or '')}[/]"
            drift.add_row(escape(s.name), calls, reason, "", "", "")
            continue
        changes = " ".join(
            f"L{c.layer}:e{c.expert} {c.baseline_share:.1%}→{c.current_share:.1%}"
            for c in s.largest_changes[:3]
        )
        drifted = ", ".join(f"L{x}" for x in s.drifted_layers)
        drift.add_row(
            escape(s.name),
            calls,
            f"[red]{drifted}[/]" if drifted else "[green]none[/]",
            f"{max(x.jsd for x in s.layers):.4f}",
            f"{min(x.p_value for x in s.layers):.2g}",
            changes,
        )
    return drift


def _outlier_table(report: SkewReport, rate: str) -> Table:
    """The ten most unusual requests: z, JSD, workflow/node, tokens, request id and text."""
    o = report.outliers
    outliers = Table(
        title=f"Outlier requests: {o.flagged_requests} flagged of {o.scored_calls:,} calls "
        f"scored (newest ≤ {o.limit:,}; modified z > {report.thresholds.outlier_z:g})" + rate
    )
    for name in ("z", "JSD", "workflow/node", "tokens", "request", "text"):
        outliers.add_column(name)
    for r in o.requests[:10]:
        outliers.add_row(
            f"{r.z:.1f}",
            f"{r.jsd:.3f}",
            escape(f"{r.workflow}/{r.node}"),
            str(r.routed_tokens),
            r.request_id[:12],
            escape(r.text or "-"),
        )
    return outliers


def print_summary(console: Console, report: SkewReport) -> None:
    """Print :func:`summary`."""
    console.print(summary(report))
