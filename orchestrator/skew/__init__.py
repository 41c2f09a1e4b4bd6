"""Expert-skew analysis over the telemetry store.

Answers "which experts does workflow X use", "is any expert hot or dead", "did routing change
since last week" and "which requests route unusually", from the per-call routing aggregates
the store keeps (:mod:`orchestrator.telemetry`).

Modules: :mod:`~orchestrator.skew.metrics` (load metrics), :mod:`~orchestrator.skew.profile`
(per-scope profiles), :mod:`~orchestrator.skew.fingerprint` (JSD to the global profile),
:mod:`~orchestrator.skew.drift` (chi-square drift test), :mod:`~orchestrator.skew.outliers`,
:mod:`~orchestrator.skew.report` (builds a :class:`~orchestrator.skew.models.SkewReport`),
:mod:`~orchestrator.skew.report_html`, :mod:`~orchestrator.skew.report_json`,
:mod:`~orchestrator.skew.terminal` and :mod:`~orchestrator.skew.cli` (``orchestrator skew``).
"""

from orchestrator.skew.models import SkewReport, Thresholds
from orchestrator.skew.report import ReportOptions, build_report

__all__ = ["ReportOptions", "SkewReport", "Thresholds", "build_report"]
