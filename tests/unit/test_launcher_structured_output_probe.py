"""The GPU profile logs failed requests (``--enable-log-requests``) and the launcher probes
structured output once ``/health`` answers: a server that answers every schema request with an
empty HTTP 500 does not count as started. A mock transport plays the server (as in
tests/unit/test_probe.py)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from serving import launcher
from serving.errors import ServerStartError
from serving.launcher import VLLMServer
from serving.probe import LOG_REQUESTS_FLAG, StructuredOutputProbe
from serving.profiles import gpu_profile

CAUSE = "ERROR 11-30 [serving.py:200] ModuleNotFoundError: No module named 'lmformatenforcer'"


def _server(tmp_path: Path) -> tuple[VLLMServer, list[str]]:
    server = VLLMServer(gpu_profile(), log_path=tmp_path / "server.log")
    server.log_path.write_text("INFO started\n")
    stopped: list[str] = []
    server.stop = lambda grace_s=20.0: stopped.append("stop")  # type: ignore[method-assign]
    return server, stopped


def test_the_gpu_profile_logs_failed_requests() -> None:
    assert LOG_REQUESTS_FLAG in gpu_profile().command("python", "0.0.0.0", 8000)


def test_an_empty_500_to_a_schema_request_stops_the_server_with_the_cause(
    tmp_path: Path,
) -> None:
    server, stopped = _server(tmp_path)

    def handler(request: httpx.Request) -> httpx.Response:
        with server.log_path.open("a") as fh:  # the server logs the cause while it answers
            fh.write(CAUSE + "\n")
        return httpx.Response(500, json={"message": "", "type": "InternalServerError"})

    with pytest.raises(ServerStartError) as err:
        server.check_structured_output(httpx.Client(transport=httpx.MockTransport(handler)))
    assert stopped == ["stop"]
    assert "HTTP 500" in str(err.value) and "lmformatenforcer" in str(err.value)
    assert err.value.command == server.command


def test_a_schema_valid_answer_passes(tmp_path: Path) -> None:
    server, stopped = _server(tmp_path)
    body = {"choices": [{"message": {"role": "assistant", "content": '{"label": "yes"}'}}]}
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json=body)))
    server.check_structured_output(client)
    assert stopped == []


@pytest.mark.parametrize(("profile_name", "probed"), [("gpu", True), ("cpu", False)])
def test_wait_ready_probes_only_the_gpu_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile_name: str, probed: bool
) -> None:
    server, stopped = _server(tmp_path)
    server.profile = server.profile.model_copy(update={"name": profile_name})

    class Running:
        def poll(self) -> None:
            return None

    server.process = Running()  # type: ignore[assignment]
    monkeypatch.setattr(launcher, "server_is_healthy", lambda url, client=None: True)
    failed = StructuredOutputProbe(ok=False, status=500, body="", seconds=0.1)
    monkeypatch.setattr(launcher, "probe_structured_output", lambda *a, **k: failed)
    if probed:
        with pytest.raises(ServerStartError, match="HTTP 500"):
            server.wait_ready()
        assert stopped == ["stop"]
    else:
        assert server.wait_ready() is server and stopped == []


def test_the_gpu_profile_asks_the_plugin_for_per_call_counts() -> None:
    from serving.vllm_plugin import ENV_DEFAULT, MODES

    value = gpu_profile().env[ENV_DEFAULT]
    assert value == "counts" and value in MODES
