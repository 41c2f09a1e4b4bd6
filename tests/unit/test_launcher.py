"""The launcher's failure paths, with stand-in server processes (not vLLM).

A stand-in is a short Python command in place of ``python -m vllm.entrypoints...``: it fails
or hangs the way a server can, in milliseconds instead of the minutes that importing vLLM takes
on 2 cores. The real server's start, crash and stop are covered by tests/integration.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from serving import ServerStartError, VLLMServer
from tests.fixtures.servers import StandInProfile, free_port


def stand_in(source: str, tmp_path: Path, timeout_s: float = 60) -> VLLMServer:
    profile = StandInProfile(name="cpu", model="stand-in", routing="replay", source=source)
    return VLLMServer(
        profile, port=free_port(), log_path=tmp_path / "server.log", startup_timeout_s=timeout_s
    )


def test_a_server_that_exits_at_startup_fails_with_its_exit_code_and_log_tail(
    tmp_path: Path,
) -> None:
    server = stand_in(
        "import sys; print('api_server: error: unrecognized arguments: --no-such-flag');"
        "sys.exit(2)",
        tmp_path,
    )
    with pytest.raises(ServerStartError) as info:
        server.start()
    assert "exited with code 2" in str(info.value)
    assert "unrecognized arguments: --no-such-flag" in info.value.log_tail
    assert info.value.log_path == tmp_path / "server.log"
    assert not server.running


def test_a_server_that_never_answers_times_out_and_is_killed(tmp_path: Path) -> None:
    server = stand_in(
        "import time; print('loading', flush=True); time.sleep(600)", tmp_path, timeout_s=2
    )
    server.launch()
    pid = server.process.pid if server.process else -1
    with pytest.raises(ServerStartError) as info:
        server.wait_ready()
    assert "did not answer" in str(info.value) and "within 2 s" in str(info.value)
    assert "loading" in info.value.log_tail
    assert not server.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the process is gone, not left behind


def test_wait_ready_without_launch_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="launch"):
        stand_in("pass", tmp_path).wait_ready()
