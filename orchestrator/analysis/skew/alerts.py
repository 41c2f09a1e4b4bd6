"""A skew report's figures as Prometheus gauges (:mod:`orchestrator.observability.skew_metrics`).

Per scope (``all`` and each workflow): each layer's balancedness, the hot, dead and unjudged
counts, and the drift against the baseline window (only where the drift test ran).
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.analysis.skew.models import ScopeDrift, ScopeProfile, SkewReport
from orchestrator.observability.skew_metrics import SkewFigures, publish_skew, skew_textfile
from orchestrator.outfiles import atomic_write_text

__all__ = ["figures", "publish", "write_prom_file"]


def _figures(profile: ScopeProfile, drift: ScopeDrift | None) -> SkewFigures:
    tested = drift if drift is not None and drift.status == "tested" else None
    return SkewFigures(
        balancedness=[(m.layer, m.balancedness) for m in profile.layers],
        hot=len(profile.hot()),
        dead=len(profile.dead()),
        unjudged=sum(not m.judgeable for m in profile.layers),
        drift_jsd=sum(d.jsd for d in tested.layers) / len(tested.layers)
        if tested is not None and tested.layers
        else None,
        drifted_layers=len(tested.drifted_layers) if tested is not None else None,
    )


def figures(report: SkewReport) -> dict[str, SkewFigures]:
    """The gauges' values per scope: ``all`` (unless the report is limited to one workflow),
    then each workflow by name."""
    drifts = {s.name: s for s in report.drift.scopes} if report.drift is not None else {}
    out: dict[str, SkewFigures] = {}
    if report.workflow_filter is None:
        out["all"] = _figures(report.overall, drifts.get("all"))
    for profile in report.workflows:
        out[profile.name] = _figures(profile, drifts.get(profile.name))
    return out


def publish(report: SkewReport) -> None:
    """Set the skew gauges from ``report`` (replacing the previous report's values)."""
    publish_skew(
        figures(report),
        window_end=report.window.end.timestamp(),
        generated=report.generated_at.timestamp(),
    )


def write_prom_file(report: SkewReport, path: Path) -> Path:
    """Publish ``report`` and write the gauges to ``path`` (node_exporter textfile format),
    atomically (a temporary sibling renamed, as the textfile collector needs).

    Raises:
        UserError: ``path`` cannot be written (see ``atomic_write_text``).
    """
    publish(report)
    return atomic_write_text(path, skew_textfile())
