"""The framework's own Prometheus metrics (``prometheus_client``), in one registry.

The dispatcher and the model gateway report at their seams through :func:`observe_request`
and :func:`observe_model_call`; ``orchestrator serve --metrics-port N`` and
``orchestrator ui --metrics-port N`` expose :data:`REGISTRY` on ``http://host:N/metrics``
(:func:`start_metrics_server`). The metrics live in their own
:class:`~prometheus_client.CollectorRegistry`, so vLLM's or a host application's metrics
never clash with them.

=============================================  =========  ======================================
``orchestrator_requests_total``                counter    requests by ``route`` and ``status``
``orchestrator_classifier_confidence``         histogram  calibrated confidence, by ``route``
``orchestrator_workflow_latency_seconds``      histogram  request wall time, by ``workflow``
``orchestrator_model_call_latency_seconds``    histogram  one model call's HTTP time, by ``node``
``orchestrator_tokens_total``                  counter    tokens by ``node`` and ``kind``
                                                          (``prompt`` / ``completion``)
``orchestrator_expert_load_share``             gauge      share of a layer's expert activations
                                                          per ``layer`` and ``expert`` over the
                                                          last window (default 300 s)
``orchestrator_expert_window_calls``           gauge      model calls in that window
``orchestrator_handoffs_waiting``              gauge      customer-service cases waiting for a
                                                          person (from a registered counter)
``orchestrator_server_exits_total``            counter    co-hosted vLLM server deaths noticed
                                                          by its supervisor, by ``cause``
                                                          (``signal``, ``exit``, ``start_failed``)
``orchestrator_server_restarts_total``         counter    successful restarts of that server
``orchestrator_server_up``                     gauge      1 while the supervised server runs,
                                                          0 after it died (until restarted)
=============================================  =========  ======================================

Labels are bounded: routes, statuses, workflow and node names are the project's own, and the
expert grid is (MoE layers × experts) of the served model.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

#: The registry of every metric below (exposed by :func:`start_metrics_server`).
REGISTRY = CollectorRegistry(auto_describe=True)

#: Latency buckets in seconds: a CPU model call takes 0.1–30 s, a workflow up to minutes.
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300)
CONFIDENCE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)

REQUESTS = Counter(
    "orchestrator_requests",
    "Requests handled, by route and final status.",
    ["route", "status"],
    registry=REGISTRY,
)
CLASSIFIER_CONFIDENCE = Histogram(
    "orchestrator_classifier_confidence",
    "Calibrated classifier confidence of each request, by chosen route.",
    ["route"],
    buckets=CONFIDENCE_BUCKETS,
    registry=REGISTRY,
)
WORKFLOW_LATENCY = Histogram(
    "orchestrator_workflow_latency_seconds",
    "Wall time of a request from classification to outcome, by workflow.",
    ["workflow"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
MODEL_CALL_LATENCY = Histogram(
    "orchestrator_model_call_latency_seconds",
    "HTTP wall time of one model call, by workflow node.",
    ["node"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
TOKENS = Counter(
    "orchestrator_tokens",
    "Tokens of model calls, by workflow node and kind (prompt or completion).",
    ["node", "kind"],
    registry=REGISTRY,
)
HANDOFFS_WAITING = Gauge(
    "orchestrator_handoffs_waiting",
    "Customer-service conversations waiting for a person (handoff cases not resumed).",
    registry=REGISTRY,
)
SERVER_EXITS = Counter(
    "orchestrator_server_exits",
    "Deaths of the co-hosted vLLM server noticed by its supervisor, by cause: signal (killed, "
    "e.g. kill -9 or the OOM killer), exit (it exited by itself) or start_failed (a restart "
    "attempt that did not come up).",
    ["cause"],
    registry=REGISTRY,
)
SERVER_RESTARTS = Counter(
    "orchestrator_server_restarts",
    "Successful restarts of the co-hosted vLLM server by its supervisor (--restart).",
    registry=REGISTRY,
)
SERVER_UP = Gauge(
    "orchestrator_server_up",
    "1 while the supervised co-hosted vLLM server runs, 0 after it died until restarted.",
    registry=REGISTRY,
)


class ExpertLoadWindow:
    """Per-layer expert load over a sliding time window, published as
    ``orchestrator_expert_load_share``.

    Each model call adds its ``(layers, experts)`` activation counts with a timestamp; counts
    older than ``window_s`` drop out. Shares are per layer: a row sums to 1 when the layer
    saw any activation in the window. A call whose grid differs from the window's (another
    model) starts a new window.

    Args:
        window_s: Window length in seconds (``Settings.metrics_expert_window_s``).
        clock: Seconds, monotonic (injected by tests).

    Raises:
        ValueError: ``window_s`` is not positive.
    """

    def __init__(self, window_s: float = 300.0, clock: Callable[[], float] = time.monotonic):
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, got {window_s}")
        self.window_s = window_s
        self._clock = clock
        self._entries: deque[tuple[float, np.ndarray]] = deque()
        self._total: np.ndarray | None = None
        self._layers: tuple[int, ...] = ()
        self._lock = threading.Lock()

    def add(self, layers: Sequence[int], counts: np.ndarray) -> None:
        """Add one call's counts (``counts[i, e]``: activations of expert ``e`` in MoE layer
        ``layers[i]``) and republish the shares.

        Raises:
            ValueError: ``counts`` is not 2-D with one row per layer, or has negative values.
        """
        counts = np.asarray(counts, dtype=np.int64)
        if counts.ndim != 2 or counts.shape[0] != len(layers):
            raise ValueError(
                f"counts must be (layers, experts) with {len(layers)} rows, got {counts.shape}"
            )
        if counts.size and counts.min() < 0:
            raise ValueError("expert counts cannot be negative")
        with self._lock:
            now = self._clock()
            if (
                self._total is None
                or self._total.shape != counts.shape
                or self._layers != tuple(layers)
            ):
                self._entries.clear()
                self._total = np.zeros_like(counts)
                self._layers = tuple(int(layer) for layer in layers)
            self._entries.append((now, counts))
            self._total += counts
            self._expire(now)
        _EXPERT_SHARES.publish(self)

    def refresh(self) -> None:
        """Drop counts older than the window and make it the one a scrape reads."""
        with self._lock:
            self._expire(self._clock())
        _EXPERT_SHARES.publish(self)

    def shares(self) -> dict[int, np.ndarray]:
        """``{layer: load share per expert}`` over the window (empty before the first call)."""
        with self._lock:
            if self._total is None:
                return {}
            return {
                layer: _row_share(row) for layer, row in zip(self._layers, self._total, strict=True)
            }

    def _expire(self, now: float) -> None:
        while self._entries and now - self._entries[0][0] > self.window_s:
            _, old = self._entries.popleft()
            assert self._total is not None
            self._total -= old

    def snapshot(self) -> tuple[int, dict[int, np.ndarray]]:
        """Expire old counts, then ``(calls in the window, {layer: load share per expert})``."""
        with self._lock:
            self._expire(self._clock())
            if self._total is None:
                return len(self._entries), {}
            shares = {
                layer: _row_share(row) for layer, row in zip(self._layers, self._total, strict=True)
            }
            return len(self._entries), shares


class _ExpertShareCollector(Collector):
    """Publishes ``orchestrator_expert_load_share`` and ``orchestrator_expert_window_calls``
    from the last window that took counts, computed when ``/metrics`` is scraped.

    A custom collector (prometheus_client's documented pattern for values computed on
    demand) rather than a labelled ``Gauge`` set on every call: setting all (layers ×
    experts) children, 27 × 64 on the 21B-A3B shape, cost event-loop time on every model call
    (``_publish`` in the H200 client profile, ``benchmarks/results/gpu_2026-12-01.md``), while a
    scrape comes only every few seconds.
    """

    def __init__(self) -> None:
        self._window: ExpertLoadWindow | None = None

    def publish(self, window: ExpertLoadWindow) -> None:
        self._window = window

    def collect(self) -> Iterator[Metric]:
        calls, shares = self._window.snapshot() if self._window else (0, {})
        share = GaugeMetricFamily(
            "orchestrator_expert_load_share",
            "Share of a MoE layer's routed-expert activations that went to one expert, over "
            "the last window (uniform routing gives 1/experts).",
            labels=["layer", "expert"],
        )
        for layer, row in shares.items():
            for expert, value in enumerate(row):
                share.add_metric([str(layer), str(expert)], float(value))
        yield share
        yield GaugeMetricFamily(
            "orchestrator_expert_window_calls",
            "Model calls with expert routing inside the expert-load window.",
            value=calls,
        )


_EXPERT_SHARES = _ExpertShareCollector()
REGISTRY.register(_EXPERT_SHARES)


def _row_share(row: np.ndarray) -> np.ndarray:
    total = row.sum()
    return row / total if total > 0 else np.zeros(row.shape, dtype=float)


#: The process's expert-load window (300 s unless :func:`configure` says otherwise).
EXPERT_WINDOW = ExpertLoadWindow()


def configure(*, expert_window_s: float) -> None:
    """Set the expert-load window length (``Settings.metrics_expert_window_s``).

    Raises:
        ValueError: ``expert_window_s`` is not positive.
    """
    global EXPERT_WINDOW
    EXPERT_WINDOW = ExpertLoadWindow(expert_window_s)


def observe_request(
    *, route: str, status: str, confidence: float, workflow: str | None, seconds: float
) -> None:
    """Count one finished request and observe its confidence and (for a request a workflow
    ran) its latency in seconds."""
    REQUESTS.labels(route=route, status=status).inc()
    CLASSIFIER_CONFIDENCE.labels(route=route).observe(confidence)
    if workflow is not None:
        WORKFLOW_LATENCY.labels(workflow=workflow).observe(max(seconds, 0.0))


def observe_model_call(
    *,
    node: str,
    latency_ms: float,
    prompt_tokens: int,
    completion_tokens: int,
    moe_layers: Sequence[int] = (),
    expert_counts: np.ndarray | None = None,
) -> None:
    """Observe one model call: latency (milliseconds in, seconds recorded), tokens, and its
    ``(layers, experts)`` activation counts into the expert-load window (skipped for a dense
    model, ``moe_layers`` empty)."""
    MODEL_CALL_LATENCY.labels(node=node).observe(max(latency_ms, 0.0) / 1000.0)
    TOKENS.labels(node=node, kind="prompt").inc(max(prompt_tokens, 0))
    TOKENS.labels(node=node, kind="completion").inc(max(completion_tokens, 0))
    if moe_layers and expert_counts is not None and np.asarray(expert_counts).size:
        EXPERT_WINDOW.add(moe_layers, expert_counts)


_OutcomeT = TypeVar("_OutcomeT")
_EventT = TypeVar("_EventT")
#: Set while a request is already being counted (a stream that delegates to ``handle``).
_COUNTING: contextvars.ContextVar[bool] = contextvars.ContextVar("_counting", default=False)


def observed_request(
    handle: Callable[..., Awaitable[_OutcomeT]],
) -> Callable[..., Awaitable[_OutcomeT]]:
    """Decorate ``Orchestrator.handle``: count the outcome it returns (its
    ``classification.route``, ``classification.confidence``, ``status`` and ``workflow``) and
    its wall time. A request that raises is counted ``failed`` (``cancelled`` for
    :class:`asyncio.CancelledError`) with route ``unknown``, then the error propagates."""

    @functools.wraps(handle)
    async def wrapper(*args: Any, **kwargs: Any) -> _OutcomeT:
        if _COUNTING.get():
            return await handle(*args, **kwargs)
        token = _COUNTING.set(True)
        started = time.perf_counter()
        try:
            outcome = await handle(*args, **kwargs)
        except asyncio.CancelledError:
            REQUESTS.labels(route="unknown", status="cancelled").inc()
            raise
        except Exception:
            REQUESTS.labels(route="unknown", status="failed").inc()
            raise
        finally:
            _COUNTING.reset(token)
        classification: Any = getattr(outcome, "classification", None)
        observe_request(
            route=str(getattr(classification, "route", None) or "unknown"),
            status=str(getattr(outcome, "status", "unknown")),
            confidence=float(getattr(classification, "confidence", 0.0)),
            workflow=getattr(outcome, "workflow", None),
            seconds=time.perf_counter() - started,
        )
        return outcome

    return wrapper


def observed_stream(
    stream: Callable[..., AsyncGenerator[_EventT, None]],
) -> Callable[..., AsyncGenerator[_EventT, None]]:
    """Decorate ``Orchestrator.stream``: read the route and confidence from its
    ``classification`` event and the status from its ``done`` event, and count the request
    once (a ``handle`` it delegates to is not counted again). A stream stopped before its
    ``done`` event is counted ``cancelled``; one that raises, ``failed``."""

    @functools.wraps(stream)
    async def wrapper(*args: Any, **kwargs: Any) -> AsyncGenerator[_EventT, None]:
        route, confidence, status, workflow = "unknown", 0.0, "cancelled", None
        started = time.perf_counter()
        # an async generator runs in its consumer's context: set, then clear (never reset a
        # token, which may belong to another context when the generator is finalised late)
        _COUNTING.set(True)
        try:
            # aclosing: a consumer that stops early closes the inner stream now, so the
            # request is counted `cancelled` at once, not when the loop finalises it
            async with contextlib.aclosing(stream(*args, **kwargs)) as events:
                async for event in events:
                    kind = getattr(event, "kind", None)
                    if kind == "classification":
                        route = str(getattr(event, "route", route))
                        confidence = float(getattr(event, "confidence", 0.0))
                    elif kind == "node_started" and workflow is None:
                        workflow = route  # workflows are named after their route
                    elif kind == "done":
                        status = str(getattr(event, "status", "unknown"))
                    yield event
        except Exception:
            status = "failed"
            raise
        finally:
            _COUNTING.set(False)
            observe_request(
                route=route,
                status=status,
                confidence=confidence,
                workflow=workflow,
                seconds=time.perf_counter() - started,
            )

    return wrapper


def observe_server_exit(code: int | None) -> None:
    """Count one death of the co-hosted server: ``code`` is the process's exit status
    (negative: killed by that signal), or None for a restart attempt that never came up."""
    cause = "start_failed" if code is None else "signal" if code < 0 else "exit"
    SERVER_EXITS.labels(cause=cause).inc()
    SERVER_UP.set(0)


def observe_server_restart() -> None:
    """Count one successful restart of the co-hosted server (it is up again)."""
    SERVER_RESTARTS.inc()
    SERVER_UP.set(1)


def observe_server_up() -> None:
    """Mark the supervised server up (when supervision starts)."""
    SERVER_UP.set(1)


def set_handoffs_waiting(count: Callable[[], float] | float) -> None:
    """Feed ``orchestrator_handoffs_waiting``: a number, or a function called at each scrape
    (e.g. one that counts the customer-service cases waiting)."""
    if callable(count):
        HANDOFFS_WAITING.set_function(count)
    else:
        HANDOFFS_WAITING.set(float(count))


def start_metrics_server(port: int, addr: str = "127.0.0.1") -> None:
    """Serve :data:`REGISTRY` at ``http://addr:port/metrics`` from a daemon thread.

    Raises:
        ValueError: ``port`` is outside 1..65535.
        OSError: The port is taken (the message names it).
    """
    if not 1 <= port <= 65535:
        raise ValueError(f"metrics port must be within 1..65535, got {port}")
    start_http_server(port, addr=addr, registry=REGISTRY)
