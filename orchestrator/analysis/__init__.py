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

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from orchestrator._lazy import lazy_getattr as _lazy_getattr

if _TYPE_CHECKING:
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

#: Where each public name lives; imported on first use (PEP 562), so ``orchestrator load``
#: does not load the skew report (scipy) and ``skew`` does not load what only ``load`` needs.
_HOMES = {
    **dict.fromkeys(
        ("ExpertLoad", "LayerLoad", "expert_load", "layer_load"), "orchestrator.analysis.load"
    ),
    **dict.fromkeys(
        ("ReportOptions", "SkewReport", "Thresholds", "build_report"), "orchestrator.analysis.skew"
    ),
}


__getattr__ = _lazy_getattr(__name__, _HOMES, globals())
