"""``orchestrator ui`` stopped with SIGTERM (``kill``, systemd, ``docker stop``) stops its
Chainlit child too (tester4 finding 13: the default action ended the parent only and left
Chainlit listening on the UI port).

The UI runs for real in a subprocess (its event service, the real Chainlit of ``.venv-ui``) on
free ports, against a stand-in model server that answers ``/health`` and ``/v1/models`` (the
UI sends no request to the model here).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest

from orchestrator.config import Settings
from tests.fixtures.cli import stores_env
from tests.fixtures.servers import free_port

REPO = Path(__file__).resolve().parents[2]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def model_stub() -> Iterator[str]:
    """A server that says it is healthy and serves the configured model name."""
    name = Settings().served_model_name

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"data": [{"id": name}]}).encode() if "models" in self.path else b""
            self.send_response(200 if self.path in ("/health", "/v1/models") else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 300  # the service and Chainlit take a while on 2 cores
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"orchestrator ui exited: {log.read_text()[-2000:]}")
        if _listening(port):
            return
        time.sleep(0.5)
    pytest.fail(f"the UI did not listen on {port}: {log.read_text()[-2000:]}")


@pytest.mark.skipif(not Settings().ui_chainlit.is_file(), reason="no .venv-ui (scripts/install.sh)")
def test_sigterm_stops_chainlit_and_frees_the_ports(tmp_path: Path, model_stub: str) -> None:
    port, service = free_port(), free_port()
    users = {"ann": {"role": "operator", "customer_id": None, "password_hash": "x"}}
    (tmp_path / "users.json").write_text(json.dumps({"users": users}), encoding="utf-8")
    env = {**os.environ, **stores_env(tmp_path)}
    command = [sys.executable, "-m", "orchestrator.cli", "ui", "--server-url", model_stub]
    command += ["--no-launch", "--port", str(port), "--service-port", str(service)]
    log = tmp_path / "ui.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    children: list[psutil.Process] = []
    try:
        _wait_listening(port, proc, log)
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children, "no Chainlit child found"
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        _, alive = psutil.wait_procs(children, timeout=15)
        assert not alive, f"left running after SIGTERM: {[p.pid for p in alive]}"
        assert code == 0, log.read_text()[-2000:]
        assert not _listening(port) and not _listening(service)
    finally:  # whatever the test found, nothing of it stays running
        for process in [*children, psutil.Process(proc.pid)] if proc.poll() is None else children:
            if process.is_running():
                process.kill()
