"""Expert-skew analysis over the telemetry store.

Answers "which experts does workflow X use", "is any expert hot or dead", "did routing change
since last week" and "which requests route unusually", from the per-call routing aggregates
the store keeps (:mod:`orchestrator.telemetry`).

Modules (in :mod:`orchestrator.analysis.skew`): ``metrics`` (load metrics), ``profile``
(per-scope profiles), ``fingerprint`` (JSD to the global profile), ``drift`` (chi-square drift
test), ``outliers``, ``phases`` (hot and dead for prefill and decode apart), ``report``
(builds a :class:`~.models.SkewReport`), ``report_html``, ``report_json``, ``terminal``; the
command is :mod:`orchestrator.cli.skew` (``orchestrator skew``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from orchestrator._lazy import lazy_getattr as _lazy_getattr

if _TYPE_CHECKING:
    from orchestrator.analysis.skew.models import SkewReport, Thresholds
    from orchestrator.analysis.skew.report import ReportOptions, build_report

__all__ = ["ReportOptions", "SkewReport", "Thresholds", "build_report"]

#: Where each public name lives; imported on first use (PEP 562), so that importing one
#: module of the package (``metrics`` for ``orchestrator load``) does not load the report and
#: scipy's statistics (about 2 s of CPU on a cold start here).
_HOMES = {
    "ReportOptions": "orchestrator.analysis.skew.report",
    "build_report": "orchestrator.analysis.skew.report",
    "SkewReport": "orchestrator.analysis.skew.models",
    "Thresholds": "orchestrator.analysis.skew.models",
}


__getattr__ = _lazy_getattr(__name__, _HOMES, globals())
