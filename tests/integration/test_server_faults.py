"""Faults against real processes: a server killed under its supervisor (noticed within 5 s,
restarted), a server that dies mid-run, a server that is not there. (A server that cannot
start, and the supervisor's give-up path, are tested with stand-in processes in
tests/unit/test_launcher.py and tests/unit/test_server_supervisor.py.) conftest.py runs this
module after every other test on purpose: its tests kill the session's shared server. Requests
are real utterances from ../shared/data/customer_service/bitext_customer_support_sample.csv."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from tenacity import wait_fixed

from orchestrator import Orchestrator, Request, TelemetryStore, run_batch
from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.datasets import read_texts
from orchestrator.observability import REGISTRY
from orchestrator.telemetry import decode_counts
from serving import VLLMServer
from serving.launcher import ServerSupervisor, server_is_healthy
from tests.fixtures.cli import run_orchestrator
from tests.integration.conftest import free_port
from workflows import CustomerServiceWorkflow

pytestmark = pytest.mark.integration


def _chat(base_url: str) -> str:
    """One real completion from the server; its text."""
    response = httpx.post(
        f"{base_url}/chat/completions",
        json={
            "model": "ernie",
            "messages": [{"role": "user", "content": "where is my order?"}],
            "max_tokens": 4,
        },
        timeout=120,
    )
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"])


def test_a_killed_server_is_noticed_within_5_s_and_restarted(vllm_server: VLLMServer) -> None:
    """``kill -9`` of the real vLLM API server: its supervisor reports the death with the log
    tail within 5 s, restarts it on the same port, the restart is counted, and the new server
    answers a completion. (Runs first in this module; the next test kills it again.)"""
    server = vllm_server
    _chat(server.base_url)
    lines: list[tuple[float, str]] = []
    restarts_before = REGISTRY.get_sample_value("orchestrator_server_restarts_total") or 0.0
    supervisor = ServerSupervisor(
        server,
        restart=True,
        wait=wait_fixed(1),
        report=lambda line: lines.append((time.monotonic(), line)),
    ).start()
    try:
        old_pid = server.process.pid if server.process else -1
        killed_at = time.monotonic()
        os.kill(old_pid, signal.SIGKILL)
        while not lines and time.monotonic() - killed_at < 30:
            time.sleep(0.05)
        assert lines, "the death was not reported within 30 s"
        noticed_s = lines[0][0] - killed_at
        assert noticed_s < 5.0, f"noticed after {noticed_s:.1f} s"
        assert "exit code -9 (SIGKILL)" in lines[0][1]
        assert str(server.log_path) in lines[0][1]
        deadline = time.monotonic() + server.startup_timeout_s
        while supervisor.restarts < 1:
            assert supervisor.error is None, supervisor.error
            assert time.monotonic() < deadline
            time.sleep(1)
        restarted_after_s = lines[-1][0] - killed_at
        assert server.process is not None and server.process.pid != old_pid
        assert server_is_healthy(server.base_url)
        _chat(server.base_url)  # the restarted server serves
    finally:
        supervisor.stop()
    assert (REGISTRY.get_sample_value("orchestrator_server_restarts_total") or 0) == (
        restarts_before + 1
    )
    assert "server restarted at" in server.log_path.read_text(errors="replace")
    print(f"death noticed after {noticed_s:.2f} s; serving again after {restarted_after_s:.0f} s")


async def test_server_dying_mid_run_fails_that_request_and_keeps_finished_rows(
    vllm_server: VLLMServer, settings: Settings, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # This module runs last (conftest.py): killing the shared server here costs no other test a
    # server; starting a second one would add minutes to every CI run on 2 cores.
    server = vllm_server
    # the previous test killed this server and its supervisor restarted it (the restart
    # outlives the supervisor: serving.launcher starts servers from one long-lived thread);
    # should it not be serving, start one: this test is about a death *mid-run*
    if not server_is_healthy(server.base_url):
        server.stop()
        server.start()
    _chat(server.base_url)
    settings = settings.model_copy(update={"max_retries": 0})
    store = TelemetryStore(settings.database_url)
    client = make_client(settings)
    orch = Orchestrator(client, store, [CustomerServiceWorkflow()], max_tokens=16)
    texts = read_texts(data_dir / "customer_service" / "bitext_customer_support_sample.csv")
    requests = [
        r
        for r in (Request(text=t) for _, t in texts[:20])
        if orch.classifier.classify(r).route == "customer_service"
    ][:4]
    assert len(requests) == 4

    killed: list[int] = []

    def crash_after_first(outcome) -> None:  # type: ignore[no-untyped-def]
        if server.process is not None and not killed:  # once: later outcomes find it dead
            killed.append(server.process.pid)
            os.killpg(server.process.pid, signal.SIGKILL)  # a crash, not a clean stop
            server.process.wait()

    try:
        report = await run_batch(orch, requests, concurrency=1, on_outcome=crash_after_first)
    finally:
        await client.aclose()
        server.stop()

    first, second = report.outcomes[0], report.outcomes[1]
    assert first.status == "succeeded" and second.status == "failed"
    assert report.aborted and server.base_url in report.aborted
    assert "orchestrator serve" in report.aborted
    assert len(report.not_started) == 2
    # the failed request is logged with its id, and recorded as failed
    assert second.request_id in caplog.text
    assert [r.id for r in store.requests(status="failed")] == [second.request_id]
    # the finished request's rows stay, complete; the failed one has none half-written
    rows = store.calls()
    assert {r.request_id for r in rows} == {first.request_id}
    for row in rows:
        assert (decode_counts(row).sum(axis=1) == row.routed_tokens * row.top_k).all()


def test_unreachable_server_exits_non_zero_naming_url_and_command(
    data_dir: Path, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    database = f"sqlite:///{tmp_path / 't.db'}"
    result = run_orchestrator(
        *("run", "--limit", "2", "--no-launch", "--server-url", url, "--database-url", database),
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert result.returncode == 1
    assert url in result.stderr and "orchestrator serve" in result.stderr
