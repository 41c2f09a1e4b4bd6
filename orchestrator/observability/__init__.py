"""Observability: the model server's health (vLLM ``/metrics``, the STATS line) and the
framework's own Prometheus metrics.

* :mod:`orchestrator.observability.health`: :class:`HealthMonitor` polls vLLM's ``/metrics``
  and parses it with ``prometheus_client``'s text parser; :class:`StatsReporter` logs the
  STATS line every ``Settings.stats_interval_s`` seconds and warns above
  ``Settings.kv_cache_warn_fraction``; ``orchestrator status`` shows one reading.
* :mod:`orchestrator.observability.metrics`: requests, confidence, latencies, tokens, expert
  load share and handoffs waiting, in :data:`~orchestrator.observability.metrics.REGISTRY`,
  fed by the dispatcher and the model gateway and exposed by ``--metrics-port``.
* :mod:`orchestrator.observability.skew_metrics`: the expert-skew report's gauges
  (balancedness, hot and dead experts, drift per workflow), written by ``orchestrator skew
  --prom-file``; example alert rules in ``deploy/prometheus/alerts.yml``.
* :mod:`orchestrator.observability.tracing`: optional OpenTelemetry traces of each request
  (request → workflow → LangGraph node → model call, with expert-routing attributes); off
  until :func:`configure_tracing` (``--trace console|otlp`` or ``OTEL_TRACES_EXPORTER``).

This package imports only the configuration and the error tree of the project, so every layer
above may report into it.
"""

from __future__ import annotations

from orchestrator.observability.health import (
    HealthMonitor,
    MetricsSample,
    ServerHealth,
    StatsReporter,
    health_between,
    log_health,
    metrics_url,
    parse_vllm_metrics,
)
from orchestrator.observability.metrics import (
    REGISTRY,
    ExpertLoadWindow,
    observe_model_call,
    observe_request,
    set_handoffs_waiting,
    start_metrics_server,
)
from orchestrator.observability.tracing import (
    RequestTrace,
    configure_tracing,
    shutdown_tracing,
    tracing_enabled,
    tracing_from_env,
)

__all__ = [
    "REGISTRY",
    "ExpertLoadWindow",
    "HealthMonitor",
    "MetricsSample",
    "RequestTrace",
    "ServerHealth",
    "StatsReporter",
    "configure_tracing",
    "health_between",
    "log_health",
    "metrics_url",
    "observe_model_call",
    "observe_request",
    "parse_vllm_metrics",
    "set_handoffs_waiting",
    "shutdown_tracing",
    "start_metrics_server",
    "tracing_enabled",
    "tracing_from_env",
]
