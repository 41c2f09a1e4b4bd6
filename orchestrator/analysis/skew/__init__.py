"""Expert-skew analysis over the telemetry store.

Answers "which experts does workflow X use", "is any expert hot or dead", "did routing change
since last week" and "which requests route unusually", from the per-call routing aggregates
the store keeps (:mod:`orchestrator.telemetry`).

Modules (in :mod:`orchestrator.analysis.skew`): ``metrics`` (load metrics), ``profile``
(per-scope profiles), ``fingerprint`` (JSD to the global profile), ``drift`` (chi-square drift
test), ``outliers``, ``report`` (builds a :class:`~.models.SkewReport`), ``report_html``,
``report_json``, ``terminal``; the command is :mod:`orchestrator.cli.skew` (``orchestrator skew``).
"""

from orchestrator.analysis.skew.models import SkewReport, Thresholds
from orchestrator.analysis.skew.report import ReportOptions, build_report

__all__ = ["ReportOptions", "SkewReport", "Thresholds", "build_report"]
