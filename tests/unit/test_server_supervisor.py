"""The co-hosted server's supervisor (issue 18, part 1) with stand-in server processes.

A stand-in is a short Python child process in place of vLLM: it answers ``/health`` on its
port, prints a line to its log, and exits (or is killed with ``kill -9``) the way a server can,
in milliseconds instead of the minutes vLLM takes to start on 2 cores. The real server is
killed in tests/integration/test_server_faults.py.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from tenacity import wait_exponential, wait_fixed
from typer.testing import CliRunner

from orchestrator.cli import app, common
from orchestrator.cli import serve as serve_cli
from orchestrator.observability import REGISTRY
from serving.errors import ServerStartError
from serving.launcher import (
    DEFAULT_RESTART_WAIT,
    ServerSupervisor,
    VLLMServer,
    backoff_s,
    server_is_healthy,
)
from tests.fixtures.servers import HEALTH_HANDLER, StandInProfile, free_port

#: Answers 200 on /health; prints ``started <pid>``; exits with status 3 after ``DIE_AFTER``
#: seconds when that is set in its source (the stand-in of a server that crashes by itself).
STAND_IN = (
    """
import http.server, os, sys, threading, time
DIE_AFTER = {die_after!r}
"""
    + HEALTH_HANDLER
    + """
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[2])), Health)
print(f"started {{os.getpid()}}", flush=True)
if DIE_AFTER is not None:
    def die():
        time.sleep(DIE_AFTER)
        print("stand-in: engine core died (simulated)", flush=True)
        os._exit(3)
    threading.Thread(target=die, daemon=True).start()
server.serve_forever()
"""
)


def stand_in(tmp_path: Path, die_after: float | None = None) -> VLLMServer:
    profile = StandInProfile(
        name="cpu", model="stand-in", routing="replay", source=STAND_IN.format(die_after=die_after)
    )
    return VLLMServer(
        profile, port=free_port(), log_path=tmp_path / "server.log", startup_timeout_s=60
    )


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def wait_until(predicate, timeout_s: float) -> float:  # type: ignore[no-untyped-def]
    """Seconds until ``predicate()`` held; fails the test after ``timeout_s``."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout_s, f"not within {timeout_s} s"
        time.sleep(0.05)
    return time.monotonic() - started


def test_backoff_comes_from_the_tenacity_strategy() -> None:
    assert [backoff_s(wait_exponential(multiplier=1, min=2, max=60), n) for n in range(1, 8)] == [
        2,
        2,
        4,
        8,
        16,
        32,
        60,
    ]
    assert backoff_s(wait_fixed(7), 3) == 7
    delays = [backoff_s(DEFAULT_RESTART_WAIT, n) for n in (1, 3, 10)]
    assert 2 <= delays[0] <= 3 and 4 <= delays[1] <= 5 and 60 <= delays[2] <= 61


def test_a_killed_server_is_noticed_within_5_s_with_its_log_tail(tmp_path: Path) -> None:
    server = stand_in(tmp_path).start()
    lines: list[str] = []
    given_up: list[ServerStartError] = []
    before = metric("orchestrator_server_exits_total", cause="signal")
    supervisor = ServerSupervisor(server, report=lines.append, on_give_up=given_up.append)
    supervisor.start()
    try:
        assert metric("orchestrator_server_up") == 1
        pid = server.process.pid if server.process else -1
        os.kill(pid, signal.SIGKILL)
        noticed_s = wait_until(lambda: given_up, 5.0)
        assert supervisor.wait(1) is given_up[0]
    finally:
        supervisor.stop()
        server.stop()
    assert noticed_s < 5.0
    assert len(lines) == 1
    assert "died with exit code -9 (SIGKILL)" in lines[0]
    assert f"started {pid}" in lines[0]  # the log tail is in the report
    error = given_up[0]
    assert f"started {pid}" in error.log_tail and "--restart" in str(error)
    assert metric("orchestrator_server_exits_total", cause="signal") == before + 1
    assert metric("orchestrator_server_up") == 0
    assert supervisor.deaths == 1 and supervisor.restarts == 0
    assert not server.running


def test_with_restart_a_killed_server_comes_back_and_the_restart_is_counted(
    tmp_path: Path,
) -> None:
    server = stand_in(tmp_path).start()
    lines: list[str] = []
    restarts_before = metric("orchestrator_server_restarts_total")
    supervisor = ServerSupervisor(server, restart=True, wait=wait_fixed(0.2), report=lines.append)
    supervisor.start()
    try:
        first = server.process.pid if server.process else -1
        os.kill(first, signal.SIGKILL)
        wait_until(lambda: supervisor.restarts == 1, 30.0)
        second = server.process.pid if server.process else -1
        assert second != first and server.running
        assert server_is_healthy(server.base_url)
        os.kill(second, signal.SIGKILL)  # and again: a second restart
        wait_until(lambda: supervisor.restarts == 2, 30.0)
        assert supervisor.error is None
    finally:
        supervisor.stop()
        server.stop()
    assert metric("orchestrator_server_restarts_total") == restarts_before + 2
    assert sum("restarted on" in line for line in lines) == 2
    assert any("restart 2 of this run" in line for line in lines)
    log = server.log_path.read_text()
    # the dead server's log is kept: appended to, with a marker, not replaced
    assert f"started {first}" in log and f"started {second}" in log
    assert log.count("--- server restarted at") == 2


def test_a_server_that_keeps_dying_is_given_up_after_max_restarts_with_growing_backoff(
    tmp_path: Path,
) -> None:
    server = stand_in(tmp_path, die_after=2.5).start()
    lines: list[str] = []
    exits_before = metric("orchestrator_server_exits_total", cause="exit")
    supervisor = ServerSupervisor(
        server,
        restart=True,
        max_restarts=2,
        poll_s=0.1,
        wait=wait_exponential(multiplier=0.2, max=5),
        report=lines.append,
    ).start()
    try:
        error = supervisor.wait(60)
    finally:
        supervisor.stop()
        server.stop()
    assert error is not None and "exit code 3" in str(error)
    assert "engine core died (simulated)" in error.log_tail
    assert supervisor.restarts == 2 and supervisor.deaths == 3
    waits = [line for line in lines if "restarting" in line]
    delays = [float(line.split(" in ")[1].split(" s ")[0]) for line in waits]
    assert delays == [0.2, 0.4]  # tenacity's exponential wait, attempt 1 then 2
    assert metric("orchestrator_server_exits_total", cause="exit") == exits_before + 3


def test_a_server_stopped_by_its_owner_is_not_reported_as_dead(tmp_path: Path) -> None:
    server = stand_in(tmp_path).start()
    lines: list[str] = []
    supervisor = ServerSupervisor(server, poll_s=0.1, report=lines.append).start()
    supervisor.stop()
    server.stop()
    time.sleep(0.3)
    assert lines == [] and supervisor.error is None and supervisor.deaths == 0


def test_a_restarted_server_outlives_its_supervisor(tmp_path: Path) -> None:
    """Linux sends the parent-death signal when the *thread* that started a child ends: a
    server restarted from the supervisor's thread was killed when the supervisor stopped."""
    server = stand_in(tmp_path).start()
    supervisor = ServerSupervisor(server, restart=True, wait=wait_fixed(0.2), report=print)
    supervisor.start()
    try:
        os.kill(server.process.pid if server.process else -1, signal.SIGKILL)
        wait_until(lambda: supervisor.restarts == 1, 30.0)
        supervisor.stop()  # its thread ends here
        time.sleep(0.5)
        assert server.running and server_is_healthy(server.base_url)
    finally:
        supervisor.stop()
        server.stop()


def test_bad_supervisor_settings_are_refused(tmp_path: Path) -> None:
    server = stand_in(tmp_path)
    with pytest.raises(ValueError, match="poll_s"):
        ServerSupervisor(server, poll_s=6)
    with pytest.raises(ValueError, match="max_restarts"):
        ServerSupervisor(server, max_restarts=-1)
    with pytest.raises(RuntimeError, match="start the server"):
        ServerSupervisor(server).start()


def test_model_server_stops_the_command_with_the_servers_error_when_it_dies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The main job's block (``orchestrator run`` and the other co-hosting commands) is
    interrupted like Ctrl-C and ends with the server's error, not a hang."""
    server = stand_in(tmp_path, die_after=1.0)
    monkeypatch.setattr(common, "ensure_checkpoint", lambda s: tmp_path)
    monkeypatch.setattr(common, "co_hosted_server", lambda s: server)
    settings = common.Settings(server_url=f"http://127.0.0.1:{free_port()}/v1")
    started = time.monotonic()
    with (
        pytest.raises(ServerStartError, match="exit code 3") as info,
        common.model_server(settings, launch=True),
    ):
        time.sleep(30)  # a long job; the server's death ends it
    assert time.monotonic() - started < 20
    assert "engine core died (simulated)" in info.value.log_tail
    assert not server.running


def test_serve_exits_1_printing_the_log_tail_when_its_server_dies(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server = stand_in(tmp_path, die_after=1.0)
    monkeypatch.setattr(serve_cli, "ensure_checkpoint", lambda s: tmp_path)
    monkeypatch.setattr(serve_cli, "co_hosted_server", lambda s: server)
    monkeypatch.setenv("ORCH_STATS_INTERVAL_S", "3600")
    result = CliRunner().invoke(app, ["serve", "--port", str(server.port)])
    assert result.exit_code == 1, result.output
    output = " ".join(result.output.split())  # rich wraps lines at the console width
    assert "engine core died (simulated)" in output
    assert "died with exit code 3" in output
    assert not server.running


def test_serve_with_restart_restarts_a_killed_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    server = stand_in(tmp_path)
    monkeypatch.setattr(serve_cli, "ensure_checkpoint", lambda s: tmp_path)
    monkeypatch.setattr(serve_cli, "co_hosted_server", lambda s: server)
    monkeypatch.setenv("ORCH_STATS_INTERVAL_S", "3600")
    pids: list[int] = []

    real_start = ServerSupervisor.start

    def start_then_kill_twice(self: ServerSupervisor) -> ServerSupervisor:
        self.wait_strategy = wait_fixed(0.1)
        real_start(self)

        def chaos() -> None:
            for n in (1, 2):
                pids.append(server.process.pid if server.process else -1)
                os.kill(pids[-1], signal.SIGKILL)
                wait_until(lambda n=n: self.restarts == n, 30)
            os.kill(os.getpid(), signal.SIGTERM)  # then stop serve as a service manager would

        threading.Thread(target=chaos, daemon=True).start()
        return self

    monkeypatch.setattr(ServerSupervisor, "start", start_then_kill_twice)
    result = CliRunner().invoke(app, ["serve", "--restart", "--port", str(server.port)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())  # rich wraps lines at the console width
    assert output.count("died with exit code -9") == 2
    assert "restart 2 of this run" in output
    assert len(set(pids)) == 2 and not server.running
