"""Analysis of recorded expert routing (token -> expert), read through the telemetry read API.

* :mod:`orchestrator.analysis.load`: the per-layer expert load table of ``orchestrator load``
  (load shares, hot and dead experts, balancedness) over stored calls.
* :mod:`orchestrator.analysis.skew`: the expert-skew report of ``orchestrator skew`` (profiles
  per workflow and node, fingerprints, drift, outlier requests; terminal, HTML and JSON).

Both read only the public names of :mod:`orchestrator.telemetry` (its typed read API:
:class:`~orchestrator.telemetry.TelemetryReader`, :class:`~orchestrator.telemetry.RollupRow`,
:class:`~orchestrator.telemetry.CallCounts`, the rollup arithmetic), never ORM sessions, and
never import the runtime (model client, workflows, skills, LangGraph, OpenAI).
"""

from orchestrator.analysis.load import ExpertLoad, LayerLoad, expert_load, layer_load
from orchestrator.analysis.skew import ReportOptions, SkewReport, Thresholds, build_report

__all__ = [
    "ExpertLoad",
    "LayerLoad",
    "ReportOptions",
    "SkewReport",
    "Thresholds",
    "build_report",
    "expert_load",
    "layer_load",
]
