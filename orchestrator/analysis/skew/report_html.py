"""The skew report as one self-contained HTML file (plotly figures, no external resource).

Plotly was chosen over matplotlib PNGs because a 27 x 64 heatmap needs hover to be read
(layer, expert, share) and the load-share bars need a layer selector; plotly's HTML export does
both without a server. plotly.js is inlined once in ``<head>`` (about 4.6 MB), so the file
opens offline; every figure is a ``<div>`` that uses it. All text taken from the database
(workflow names, request texts) is HTML-escaped.
"""

from __future__ import annotations

import html
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from orchestrator.analysis.skew.models import ScopeProfile, SkewReport, Thresholds
from orchestrator.analysis.skew.phases import flagged, unjudged
from orchestrator.outfiles import atomic_write_text

_CONFIG = {"displaylogo": False, "responsive": True}
#: Whether :func:`share_bars` has plotly validate each property (tests compare both).
VALIDATE = False
_HOT, _DEAD, _OK = "#d62728", "#1f77b4", "#9aa5b1"
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2330}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #dde}
h3{font-size:15px}table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #dde;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f3f5f9}td.l,th.l{text-align:left}.hot{color:#d62728;font-weight:600}
.dead{color:#1f77b4;font-weight:600}.muted{color:#667}.note{color:#445;font-size:13px}
.bad{color:#d62728}.good{color:#2a7d2a}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _figure(fig: go.Figure) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, config=_CONFIG)


def _laid_out(
    fig: go.Figure,
    title: str | dict[str, str],
    height: int,
    *,
    top: int = 50,
    right: int = 20,
    **layout: Any,
) -> go.Figure:
    """``fig`` with the report's layout: ``title``, ``height`` px, the margins every figure
    shares (wider ``top`` for a long title or a menu, ``right`` for a second y axis; px) and
    ``layout``'s other plotly layout properties."""
    margin = {"l": 60, "r": right, "t": top, "b": 40}
    fig.update_layout(title=title, height=height, margin=margin, **layout)
    return fig


def _rows_height(rows: int) -> int:
    """Height in px of a heatmap of ``rows`` rows (one per MoE layer)."""
    return 160 + 22 * rows


def _pairs(pairs: list[tuple[int, int]], css: str) -> str:
    if not pairs:
        return '<span class="muted">none</span>'
    return f'<span class="{css}">' + " ".join(f"L{a}:e{b}" for a, b in pairs) + "</span>"


def heatmap(profile: ScopeProfile, thresholds: Thresholds) -> go.Figure:
    """Layer x expert heatmap of load share relative to uniform (``share * E``), hot and dead
    experts marked."""
    shares = np.array([m.shares for m in profile.layers])
    experts = shares.shape[1]
    ratio = shares * experts
    labels = [f"L{m.layer}" for m in profile.layers]
    fig = go.Figure(
        go.Heatmap(
            z=ratio,
            x=list(range(experts)),
            y=labels,
            zmin=0,
            zmax=max(2 * thresholds.hot_factor, 1.0),
            colorscale="Viridis",
            colorbar={"title": {"text": "× uniform"}},
            customdata=shares * 100,
            hovertemplate="%{y} expert %{x}<br>share %{customdata:.2f}%<br>"
            "%{z:.2f} × uniform<extra></extra>",
        )
    )
    marks = (
        (
            "hot",
            profile.hot(),
            {"symbol": "square-open", "size": 12, "color": _HOT, "line": {"width": 2}},
        ),
        (
            "dead",
            profile.dead(),
            {"symbol": "x", "size": 10, "color": "#ffffff", "line": {"width": 1, "color": _DEAD}},
        ),
    )
    for name, pairs, marker in marks:
        if pairs:
            fig.add_trace(
                go.Scatter(
                    x=[e for _, e in pairs],
                    y=[f"L{layer}" for layer, _ in pairs],
                    mode="markers",
                    name=name,
                    marker=marker,
                    hovertemplate=f"{name}: %{{y}} expert %{{x}}<extra></extra>",
                )
            )
    return _laid_out(
        fig,
        f"{_e(profile.name)}: load share per layer and expert ({profile.calls:,} calls)",
        _rows_height(len(labels)),
        xaxis={"title": "routed expert", "dtick": 4 if experts > 16 else 1},
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": -0.15},
    )


def share_bars(profile: ScopeProfile, thresholds: Thresholds) -> go.Figure:
    """Load-share bars of one layer at a time (a menu picks the layer); hot bars red, dead
    experts marked with a cross, uniform and hot thresholds as lines.

    Built without plotly's per-property validation (``_validate=False``, as plotly's own
    ``plotly.express`` does): two traces per layer took most of the HTML's time, and the
    figure's JSON is the same (``tests/unit/test_skew_html.py``)."""
    fig = go.Figure(_validate=VALIDATE)
    experts = len(profile.layers[0].shares)
    uniform = 1 / experts
    buttons = []
    per_layer = 2
    for i, m in enumerate(profile.layers):
        colours = [_HOT if e in m.hot else _OK for e in range(experts)]
        whiskers = (
            {
                "type": "data",
                "symmetric": False,
                "array": [hi - v for v, hi in zip(m.shares, m.share_high, strict=True)],
                "arrayminus": [v - lo for v, lo in zip(m.shares, m.share_low, strict=True)],
                "color": "#444",
                "thickness": 1,
                "width": 2,
            }
            if m.share_low
            else None
        )
        fig.add_trace(
            go.Bar(
                x=list(range(experts)),
                y=m.shares,
                marker_color=colours,
                error_y=whiskers,
                customdata=list(zip(m.share_low, m.share_high, strict=True)) or None,
                name=f"L{m.layer}",
                visible=i == 0,
                hovertemplate="expert %{x}: %{y:.2%}"
                + (" (%{customdata[0]:.2%} to %{customdata[1]:.2%})" if m.share_low else "")
                + "<extra></extra>",
                _validate=VALIDATE,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=m.dead,
                y=[0] * len(m.dead),
                mode="markers",
                name="dead",
                visible=i == 0,
                marker={"symbol": "x", "size": 11, "color": _DEAD},
                hovertemplate="dead expert %{x}<extra></extra>",
                _validate=VALIDATE,
            )
        )
        visible = [False] * (per_layer * len(profile.layers))
        visible[per_layer * i : per_layer * i + per_layer] = [True] * per_layer
        buttons.append(
            {"label": f"layer {m.layer}", "method": "update", "args": [{"visible": visible}]}
        )
    lines = (
        (uniform, "uniform"),
        (thresholds.hot_factor * uniform, "hot threshold"),
        (thresholds.dead_factor * uniform, "dead threshold"),
    )
    for y, text in lines:
        fig.add_hline(
            y=y,
            line_dash="dash",
            line_color="#555",
            annotation_text=text,
            annotation_position="top left",
        )
    return _laid_out(
        fig,
        {
            "text": f"{_e(profile.name)}: load share per expert, whiskers = "
            f"{thresholds.confidence:.0%} simultaneous interval (red = hot, × = dead)"
        },
        360,
        top=80,
        showlegend=False,
        xaxis={"title": "routed expert"},
        yaxis={"title": "load share", "tickformat": ".1%"},
        updatemenus=[
            {"buttons": buttons, "x": 1.0, "xanchor": "right", "y": 1.18, "direction": "down"}
        ],
    )


#: Balancedness below this fires ExpertLayerImbalanced (deploy/prometheus/alerts.yml).
BALANCEDNESS_ALERT = 0.2


def balancedness_figure(report: SkewReport) -> go.Figure:
    """Balancedness (``mean / max`` expert load, SGLang's EPLB metric) per MoE layer, one line
    per scope, with the alert floor of the example Prometheus rules."""
    profiles = ([report.overall] if report.workflow_filter is None else []) + report.workflows
    fig = go.Figure()
    for p in profiles:
        fig.add_trace(
            go.Scatter(
                x=[m.layer for m in p.layers],
                y=[m.balancedness for m in p.layers],
                mode="lines+markers",
                name=_e(p.name),
                hovertemplate="layer %{x}: %{y:.3f}<extra>" + _e(p.name) + "</extra>",
            )
        )
    fig.add_hline(
        y=BALANCEDNESS_ALERT,
        line_dash="dash",
        line_color=_HOT,
        annotation_text="alert floor (ExpertLayerImbalanced)",
        annotation_position="bottom left",
    )
    return _laid_out(
        fig,
        "Balancedness per MoE layer (mean / max expert load; 1 = balanced)",
        340,
        top=60,
        xaxis={"title": "MoE layer"},
        yaxis={"title": "balancedness", "range": [0, 1.05]},
    )


def confidence_histogram(report: SkewReport) -> go.Figure | None:
    """Per-call mean router confidence, as a fraction of each workflow's calls."""
    scopes = [p for p in [report.overall, *report.workflows] if p.confidence.calls]
    if not scopes:
        return None
    fig = go.Figure()
    for p in scopes:
        edges = p.confidence.bin_edges
        centres = [(a + b) / 2 for a, b in itertools.pairwise(edges)]
        total = sum(p.confidence.histogram)
        fig.add_trace(
            go.Bar(
                x=centres,
                y=[h / total for h in p.confidence.histogram],
                name=_e(p.name),
                opacity=0.6,
                width=edges[1] - edges[0],
                hovertemplate=f"{_e(p.name)}" + ": %{x:.3f} → %{y:.1%}<extra></extra>",
            )
        )
    return _laid_out(
        fig,
        "Router confidence: mean chosen-expert probability mass per call",
        340,
        barmode="overlay",
        xaxis={"title": "mean router confidence of the call", "range": [0, 1]},
        yaxis={"title": "fraction of calls", "tickformat": ".0%"},
    )


def drift_figures(report: SkewReport) -> list[go.Figure]:
    """Per-layer JSD of each tested scope (red = drifted), and the global share change map."""
    drift = report.drift
    if drift is None:
        return []
    figs = []
    tested = [s for s in drift.scopes if s.status == "tested"]
    if tested:
        fig = go.Figure()
        for s in tested:
            fig.add_trace(
                go.Bar(
                    x=[f"L{d.layer}" for d in s.layers],
                    y=[d.jsd for d in s.layers],
                    name=_e(s.name),
                    marker_line={
                        "color": [_HOT if d.drifted else "rgba(0,0,0,0)" for d in s.layers],
                        "width": 2,
                    },
                    customdata=[[d.p_value, d.dispersion] for d in s.layers],
                    hovertemplate=f"{_e(s.name)}" + " %{x}: JSD %{y:.4f} bits<br>"
                    "p %{customdata[0]:.2g}, dispersion %{customdata[1]:.2f}<extra></extra>",
                )
            )
        fig.add_hline(
            y=report.thresholds.drift_min_jsd,
            line_dash="dash",
            annotation_text="JSD floor",
            annotation_position="top left",
        )
        title = "Drift per layer: JSD between baseline and window (red outline = drifted)"
        figs.append(_laid_out(fig, title, 340, barmode="group", yaxis={"title": "JSD (bits)"}))
    if drift.baseline_profile is not None:
        before = np.array([m.shares for m in drift.baseline_profile.layers])
        after = np.array([m.shares for m in report.overall.layers])
        diff = (after - before) * 100
        limit = float(np.abs(diff).max()) or 1.0
        fig = go.Figure(
            go.Heatmap(
                z=diff,
                x=list(range(diff.shape[1])),
                y=[f"L{m.layer}" for m in report.overall.layers],
                zmin=-limit,
                zmax=limit,
                colorscale="RdBu",
                reversescale=True,
                colorbar={"title": {"text": "Δ share (pp)"}},
                hovertemplate="%{y} expert %{x}: %{z:+.2f} pp<extra></extra>",
            )
        )
        title = "Share change, window − baseline (all workflows)"
        height = _rows_height(diff.shape[0])
        x, y = {"title": "routed expert"}, {"autorange": "reversed"}
        figs.append(_laid_out(fig, title, height, xaxis=x, yaxis=y))
    return figs


def timeline(report: SkewReport) -> go.Figure | None:
    """Global JSD of each step to the window, and mean normalised entropy, over time."""
    if len(report.timeline) < 2:
        return None
    x = [p.start for p in report.timeline]
    jsd = [p.jsd_to_window for p in report.timeline]
    entropy = [p.normalised_entropy for p in report.timeline]
    fig = go.Figure(
        [
            go.Scatter(x=x, y=jsd, name="JSD to window (bits)", mode="lines+markers"),
            go.Scatter(x=x, y=entropy, name="normalised entropy", mode="lines", yaxis="y2"),
        ]
    )
    return _laid_out(
        fig,
        "Routing over the window (all workflows)",
        320,
        right=60,
        yaxis={"title": "JSD (bits)"},
        yaxis2={"title": "normalised entropy", "overlaying": "y", "side": "right"},
        legend={"orientation": "h", "y": -0.2},
    )


def _scope_table(report: SkewReport) -> str:
    jsd = {f.name: f.jsd for f in report.fingerprints}
    rows = []
    profiles = ([report.overall] if report.workflow_filter is None else []) + report.workflows
    for p in profiles + report.nodes:
        layers = p.layers
        conf = p.confidence.mean
        rows.append(
            "<tr>"
            f'<td class="l">{_e(p.name)}</td><td>{p.calls:,}</td><td>{p.routed_tokens:,}</td>'
            f"<td>{min(m.balancedness for m in layers):.2f}</td>"
            f"<td>{max(m.max_violation for m in layers):.2f}</td>"
            f"<td>{max(m.cv for m in layers):.2f}</td>"
            f"<td>{np.mean([m.normalised_entropy for m in layers]):.3f}</td>"
            f"<td>{np.mean([m.effective_experts for m in layers]):.1f}</td>"
            f"<td>{max(m.gini for m in layers):.2f}</td>"
            f"<td>{max(m.topk_share for m in layers):.1%}</td>"
            f"<td>{'-' if p.name not in jsd else f'{jsd[p.name]:.4f}'}</td>"
            f'<td class="l">{_pairs(p.hot(), "hot")}</td>'
            f'<td class="l">{_pairs(p.dead(), "dead")}</td>'
            f"<td>{'n/a' if conf is None else f'{conf:.3f}'}</td></tr>"
        )
    head = (
        '<tr><th class="l">scope</th><th>calls</th><th>routed tokens</th>'
        "<th>balancedness<br>min</th><th>MaxVio<br>max</th><th>CV<br>max</th>"
        "<th>norm. entropy<br>mean</th><th>eff. experts<br>mean</th><th>Gini<br>max</th>"
        f"<th>top-{report.shape.top_k} share<br>max</th><th>JSD vs all<br>(bits)</th>"
        '<th class="l">hot</th><th class="l">dead</th><th>router conf<br>mean</th></tr>'
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _phase_table(report: SkewReport) -> str:
    """Hot and dead for prefill and decode apart, each with its interval, or the line saying
    the source has no phase split."""
    view = report.phases
    if view is None or not view.profiles:
        note = view.note if view is not None else "prefill and decode: combined"
        return f"<p class='note'>{_e(note)}</p>"
    rows = "".join(
        f'<tr><td class="l">{_e(p.name)}</td><td>{p.calls:,}</td><td>{p.routed_tokens:,}</td>'
        f'<td class="l hot">{_e(flagged(p, "hot"))}</td>'
        f'<td class="l">{_e(flagged(p, "dead"))}</td><td class="l">{_e(unjudged(p))}</td></tr>'
        for p in view.profiles
    )
    head = (
        '<tr><th class="l">phase</th><th>calls</th><th>routed tokens</th>'
        '<th class="l">hot: share [interval]</th><th class="l">dead: share [interval]</th>'
        '<th class="l">too few samples</th></tr>'
    )
    return f"<p class='note'>{_e(view.note)}</p><table>{head}{rows}</table>"


def _fingerprint_table(report: SkewReport) -> str:
    rows = []
    for f in report.fingerprints:
        experts = ", ".join(
            f"L{d.layer}:e{d.expert} {'▲' if d.direction == 'over' else '▼'} "
            f"{d.share:.1%} vs {d.global_share:.1%}"
            for d in f.distinguishing[:5]
        )
        rows.append(
            f'<tr><td class="l">{_e(f.name)}</td><td>{f.calls:,}</td>'
            f'<td>{f.jsd:.4f}</td><td class="l">{_e(experts) or "-"}</td></tr>'
        )
    return (
        '<table><tr><th class="l">scope</th><th>calls</th><th>JSD vs all (bits)</th>'
        '<th class="l">most distinguishing experts (share here vs all)</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def _drift_table(report: SkewReport) -> str:
    drift = report.drift
    if drift is None:
        return (
            '<p class="muted">No drift test: the window covers all data (--window all) or '
            "--baseline none was given.</p>"
        )
    rows = []
    for s in drift.scopes:
        if s.status != "tested":
            rows.append(
                f'<tr><td class="l">{_e(s.name)}</td><td>{s.baseline_calls:,} → '
                f'{s.current_calls:,}</td><td class="l muted" colspan="4">not tested: '
                f"{_e(s.reason)}</td></tr>"
            )
            continue
        drifted = ", ".join(f"L{x}" for x in s.drifted_layers)
        changes = ", ".join(
            f"L{c.layer}:e{c.expert} {c.baseline_share:.1%}→{c.current_share:.1%}"
            for c in s.largest_changes[:4]
        )
        rows.append(
            f'<tr><td class="l">{_e(s.name)}</td><td>{s.baseline_calls:,} → {s.current_calls:,}'
            f'</td><td class="l {"bad" if drifted else "good"}">{drifted or "none"}</td>'
            f"<td>{max(d.jsd for d in s.layers):.4f}</td>"
            f"<td>{min(d.p_value for d in s.layers):.2g}</td>"
            f'<td class="l">{_e(changes)}</td></tr>'
        )
    return (
        f'<p class="note">Baseline {drift.baseline.start:%Y-%m-%d %H:%M} → '
        f"{drift.baseline.end:%Y-%m-%d %H:%M} UTC against the window. Chi-square on the counts, "
        "divided by the between-call dispersion; drifted = p below "
        f"{report.thresholds.drift_alpha:g}/layers and JSD ≥ {report.thresholds.drift_min_jsd:g} "
        "bits.</p><table><tr><th class='l'>scope</th><th>calls before → now</th>"
        "<th class='l'>drifted layers</th><th>max JSD</th><th>min p</th>"
        "<th class='l'>largest share changes</th></tr>" + "".join(rows) + "</table>"
    )


def _outlier_table(report: SkewReport) -> str:
    o = report.outliers
    rows = "".join(
        f"<tr><td>{r.z:.1f}</td><td>{r.jsd:.3f}</td><td>{r.excess:.3f}</td>"
        f'<td class="l">{_e(r.workflow)}/{_e(r.node)}</td><td>{r.routed_tokens}</td>'
        f'<td class="l">{r.created_at:%Y-%m-%d %H:%M}</td><td class="l">{_e(r.request_id)}</td>'
        f'<td class="l">{_e(r.text or "-")}</td></tr>'
        for r in o.requests
    )
    small = (
        f'<p class="muted">Not scored (fewer than {report.thresholds.outlier_min_calls} '
        f"calls): {_e(', '.join(o.groups_too_small))}</p>"
        if o.groups_too_small
        else ""
    )
    return (
        f'<p class="note">{o.flagged_requests} request(s) flagged among {o.scored_calls:,} calls '
        f"scored (the newest ≤ {o.limit:,} of the window), modified z-score of the JSD excess "
        f"over sampling noise > {report.thresholds.outlier_z:g} within each workflow/node.</p>"
        + small
        + "<table><tr><th>z</th><th>JSD</th><th>excess</th><th class='l'>workflow/node</th>"
        "<th>tokens</th><th class='l'>time</th><th class='l'>request</th>"
        "<th class='l'>text</th></tr>" + rows + "</table>"
    )


def render_html(report: SkewReport) -> str:
    """The whole report as one HTML document (plotly.js inlined, no external resource)."""
    t = report.thresholds
    w = report.window
    sections = [
        f"<h1>Expert skew report</h1><p class='note'>{_e(report.database)} · window "
        f"{_e(w.label)} ({w.start:%Y-%m-%d %H:%M} → {w.end:%Y-%m-%d %H:%M} UTC) · "
        f"{report.overall.calls:,} calls · models {_e(', '.join(report.models))} · "
        f"{len(report.shape.moe_layers)} MoE layers × {report.shape.num_experts} routed experts, "
        f"top-{report.shape.top_k} · {_e(report.capture_sampling)} · generated "
        f"{report.generated_at:%Y-%m-%d %H:%M} UTC</p>",
        "".join(f"<p class='note'>{_e(n)}</p>" for n in report.notes),
        "<h2>Summary</h2>",
        _scope_table(report),
        "<h2>Prefill and decode apart (all workflows)</h2>",
        _phase_table(report),
        "<h2>Which experts does each workflow use</h2>",
    ]
    profiles = ([report.overall] if report.workflow_filter is None else []) + report.workflows
    for p in profiles:
        sections.append(_figure(heatmap(p, t)))
    sections.append("<h2>Balancedness per layer</h2>")
    sections.append(_figure(balancedness_figure(report)))
    sections.append("<h2>Load share per expert with its interval (hot and dead marked)</h2>")
    for p in profiles:
        sections.append(_figure(share_bars(p, t)))
    sections += ["<h2>Workflow and node fingerprints</h2>", _fingerprint_table(report)]
    sections.append("<h2>Router confidence</h2>")
    conf = confidence_histogram(report)
    sections.append(
        _figure(conf)
        if conf is not None
        else "<p class='muted'>No router confidence recorded (engine capture has none).</p>"
    )
    sections += ["<h2>Did routing change? (drift)</h2>", _drift_table(report)]
    sections += [_figure(f) for f in drift_figures(report)]
    line = timeline(report)
    if line is not None:
        sections.append(_figure(line))
    sections += ["<h2>Requests that route unusually</h2>", _outlier_table(report)]
    # every table and figure states the capture sampling rate it was computed at
    rate = f" <span class='muted'>({_e(report.capture_sampling)})</span></h2>"
    sections = [s.replace("</h2>", rate) if s.startswith("<h2>") else s for s in sections]
    title = f"Expert skew · {w.label} · {report.overall.calls:,} calls"
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{_CSS}</style>"
        f"<script type='text/javascript'>{get_plotlyjs()}</script></head><body>"
        + "\n".join(sections)
        + "</body></html>"
    )


def write_html(report: SkewReport, path: Path | str) -> Path:
    """Write the HTML report atomically.

    Raises:
        UserError: ``path`` cannot be written.
    """
    return atomic_write_text(path, render_html(report))
