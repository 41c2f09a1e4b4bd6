"""Ctrl-C on ``orchestrator serve`` and ``orchestrator run`` (issue 46 items 14 and 15).

Each test starts the real command in a subprocess and sends it a real SIGINT. The vLLM server is
a stand-in child process (a few lines of Python, as in ``test_server_supervisor.py``) so the
test takes seconds, not the minutes vLLM needs on 2 cores: one that answers ``/health``, and
one that never does and ignores SIGTERM, as vLLM does while it imports and loads.

The chosen contract: one line on standard error, no traceback, exit status 130 (128 + SIGINT).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from serving.launcher import server_is_healthy
from tests.fixtures.servers import free_port

#: Runs the orchestrator CLI with ``co_hosted_server`` and ``ensure_checkpoint`` replaced by a
#: stand-in server (argv[1]: "healthy" or "stuck"; argv[2]: its log; the rest: the command).
DRIVER = r"""
import sys
from orchestrator.cli import common, serve as serve_cli
from orchestrator.cli.app import main
from serving.launcher import VLLMServer
from serving.profiles import ServingProfile

HEALTHY = '''
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404); self.end_headers()
    def log_message(self, *a): pass
print(f"started {os.getpid()}", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[2])), H).serve_forever()
'''
STUCK = '''
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # vLLM while it imports: deaf to SIGTERM
print(f"started {os.getpid()}", flush=True)
while True: time.sleep(1)
'''

class StandIn(ServingProfile):
    source: str
    def command(self, python, host, port):
        return [python, "-c", self.source, "--port", str(port)]

kind, log = sys.argv[1], sys.argv[2]
def server(settings):
    profile = StandIn(name="cpu", model="stand-in", routing="replay",
                      source=HEALTHY if kind == "healthy" else STUCK)
    return VLLMServer(profile, port=settings.server_port, log_path=log, startup_timeout_s=120)
for module in (common, serve_cli):
    module.co_hosted_server = server
    module.ensure_checkpoint = lambda settings: None
sys.argv = ["orchestrator", *sys.argv[3:]]
main()
"""


def _start(
    tmp_path: Path, kind: str, *command: str, **env_extra: str
) -> tuple[subprocess.Popen[str], Path]:
    log = tmp_path / "server.log"
    env = {**os.environ, "ORCH_STATS_INTERVAL_S": "3600", "NO_COLOR": "1", "COLUMNS": "200"}
    env.update(env_extra)
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, kind, str(log), *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    return proc, log


def _wait_for_server(proc: subprocess.Popen[str], log: Path, timeout_s: float = 60) -> int:
    """The stand-in server's pid, once it has written its first line."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        text = log.read_text() if log.exists() else ""
        if text.startswith("started "):
            return int(text.split()[1])
        time.sleep(0.1)
    raise AssertionError("the stand-in server never started")


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, str, float]:
    """SIGINT the command; (exit status, stderr, seconds until it exited)."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    return proc.returncode, stderr, time.monotonic() - sent


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _assert_one_clean_line(stderr: str, *words: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    interrupt_lines = [line for line in lines if "Ctrl-C" in line]
    assert len(interrupt_lines) == 1, stderr
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    for word in words:
        assert word in interrupt_lines[0], stderr


@pytest.mark.parametrize("kind", ["healthy", "stuck"])
def test_ctrl_c_on_serve_exits_130_with_one_line_and_stops_the_server(
    tmp_path: Path, kind: str
) -> None:
    port = free_port()
    proc, log = _start(tmp_path, kind, "serve", "--port", str(port))
    pid = _wait_for_server(proc, log)
    if kind == "healthy":  # Ctrl-C once it serves: the supervised phase, where it used to crash
        deadline = time.monotonic() + 30
        while not server_is_healthy(f"http://127.0.0.1:{port}") and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.5)
    code, stderr, took_s = _interrupt(proc)
    assert code == 130, stderr
    _assert_one_clean_line(stderr, "stopping")
    assert took_s < 5, took_s
    assert _gone(pid)


def test_ctrl_c_on_run_while_the_server_starts_stops_within_2_s(tmp_path: Path) -> None:
    port = free_port()
    proc, log = _start(
        tmp_path,
        "stuck",
        "run",
        "-n",
        "1",
        "--db",
        f"sqlite:///{tmp_path / 't.db'}",
        ORCH_SERVER_URL=f"http://127.0.0.1:{port}/v1",
        ORCH_SERVER_PORT=str(port),
    )
    pid = _wait_for_server(proc, log)
    time.sleep(0.5)
    code, stderr, took_s = _interrupt(proc)
    assert code == 130, stderr
    _assert_one_clean_line(stderr, "stopping")
    assert took_s < 2.0, (took_s, stderr)
    assert _gone(pid)
