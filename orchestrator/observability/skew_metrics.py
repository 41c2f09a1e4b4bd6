"""Prometheus gauges of the expert-skew report: balancedness, hot and dead experts, drift.

The skew report (``orchestrator skew``) is a periodic batch computation over the telemetry
store, not a per-request event, so its figures are gauges set once per report:

==========================================  ==============================================
``orchestrator_expert_balancedness``        ``mean / max`` of the expert loads of one MoE
                                            layer (1 = balanced; SGLang's EPLB metric, per
                                            expert here), by ``workflow`` (``all`` = every
                                            workflow) and ``layer``
``orchestrator_expert_balancedness_min``    the least balanced layer's value, by ``workflow``
``orchestrator_expert_hot_experts``         hot (layer, expert) pairs, by ``workflow``
``orchestrator_expert_dead_experts``        dead (layer, expert) pairs, by ``workflow``
``orchestrator_expert_unjudged_layers``     layers below the minimum volume, by ``workflow``
``orchestrator_expert_drift_jsd``           Jensen-Shannon divergence to the baseline window,
                                            bits, mean over layers, by ``workflow``
``orchestrator_expert_drifted_layers``      layers whose drift is significant and large
                                            enough, by ``workflow``
``orchestrator_skew_report_window_end``     end of the report's window, Unix seconds
``orchestrator_skew_report_generated``      when the report was built, Unix seconds
==========================================  ==============================================

They live in :data:`SKEW_REGISTRY` (and in the framework's
:data:`~orchestrator.observability.metrics.REGISTRY`, so ``--metrics-port`` shows them in a
process that published a report); ``orchestrator skew --prom-file F`` writes them in the text
format for node_exporter's textfile collector (:func:`skew_textfile`). Alert rules over
them: ``deploy/prometheus/alerts.yml``. Labels are bounded: workflow names are the registry's,
layers the model's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from orchestrator.observability.metrics import REGISTRY

__all__ = ["SKEW_REGISTRY", "SkewFigures", "publish_skew", "skew_textfile"]

#: The skew gauges only (what ``--prom-file`` writes).
SKEW_REGISTRY = CollectorRegistry(auto_describe=True)


def _gauge(name: str, help_text: str, labels: Sequence[str] = ()) -> Gauge:
    gauge = Gauge(name, help_text, list(labels), registry=SKEW_REGISTRY)
    REGISTRY.register(gauge)
    return gauge


BALANCEDNESS = _gauge(
    "orchestrator_expert_balancedness",
    "mean / max expert load of one MoE layer in the last skew report (1 = balanced).",
    ["workflow", "layer"],
)
BALANCEDNESS_MIN = _gauge(
    "orchestrator_expert_balancedness_min",
    "The least balanced MoE layer's mean / max expert load in the last skew report.",
    ["workflow"],
)
HOT = _gauge(
    "orchestrator_expert_hot_experts",
    "Hot (layer, expert) pairs in the last skew report: share interval above the hot threshold.",
    ["workflow"],
)
DEAD = _gauge(
    "orchestrator_expert_dead_experts",
    "Dead (layer, expert) pairs in the last skew report: share interval below the dead threshold.",
    ["workflow"],
)
UNJUDGED = _gauge(
    "orchestrator_expert_unjudged_layers",
    "MoE layers with too few activations or calls to judge hot and dead experts.",
    ["workflow"],
)
DRIFT_JSD = _gauge(
    "orchestrator_expert_drift_jsd",
    "Jensen-Shannon divergence (bits, mean over layers) of routing to the baseline window.",
    ["workflow"],
)
DRIFTED = _gauge(
    "orchestrator_expert_drifted_layers",
    "MoE layers whose routing drifted from the baseline window (significant and large enough).",
    ["workflow"],
)
WINDOW_END = _gauge(
    "orchestrator_skew_report_window_end", "End of the last skew report's window, Unix seconds."
)
GENERATED = _gauge(
    "orchestrator_skew_report_generated", "When the last skew report was built, Unix seconds."
)

_PER_WORKFLOW = (BALANCEDNESS, BALANCEDNESS_MIN, HOT, DEAD, UNJUDGED, DRIFT_JSD, DRIFTED)


@dataclass(frozen=True, slots=True)
class SkewFigures:
    """One scope's figures (``workflow`` ``all`` for every workflow together).

    Attributes:
        balancedness: ``(layer, mean / max)`` per MoE layer.
        hot: Hot (layer, expert) pairs.
        dead: Dead pairs.
        unjudged: Layers below the minimum volume.
        drift_jsd: Divergence to the baseline (bits), None when not tested.
        drifted_layers: Drifted layers, None when not tested.
    """

    balancedness: Sequence[tuple[int, float]]
    hot: int
    dead: int
    unjudged: int
    drift_jsd: float | None
    drifted_layers: int | None


def publish_skew(scopes: Mapping[str, SkewFigures], *, window_end: float, generated: float) -> None:
    """Replace every skew gauge's values with one report's.

    Args:
        scopes: Figures per workflow name (``all`` = every workflow).
        window_end: End of the report window, Unix seconds.
        generated: When the report was built, Unix seconds.
    """
    for gauge in _PER_WORKFLOW:
        gauge.clear()  # a workflow gone from the window leaves no stale series
    for workflow, f in scopes.items():
        for layer, value in f.balancedness:
            BALANCEDNESS.labels(workflow=workflow, layer=str(layer)).set(value)
        if f.balancedness:
            BALANCEDNESS_MIN.labels(workflow=workflow).set(min(v for _, v in f.balancedness))
        HOT.labels(workflow=workflow).set(f.hot)
        DEAD.labels(workflow=workflow).set(f.dead)
        UNJUDGED.labels(workflow=workflow).set(f.unjudged)
        if f.drift_jsd is not None:
            DRIFT_JSD.labels(workflow=workflow).set(f.drift_jsd)
        if f.drifted_layers is not None:
            DRIFTED.labels(workflow=workflow).set(f.drifted_layers)
    WINDOW_END.set(window_end)
    GENERATED.set(generated)


def skew_textfile() -> str:
    """:data:`SKEW_REGISTRY` in Prometheus' text format (node_exporter's textfile collector);
    the caller writes it atomically (``orchestrator.analysis.skew.alerts.write_prom_file``)."""
    return generate_latest(SKEW_REGISTRY).decode("utf-8")
