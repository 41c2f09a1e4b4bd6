"""The README's main job, run as a user runs it, against the module's real server.

Reads real requests from ../shared/data/customer_service/ (every CSV there)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from serving import VLLMServer
from tests.fixtures.cli import run_orchestrator

pytestmark = pytest.mark.integration


def test_main_job_prints_routes_experts_and_load_table(
    vllm_server: VLLMServer, offline_checkpoint: Path, tmp_path: Path
) -> None:
    db = tmp_path / "telemetry.db"
    env = {
        **os.environ,
        "ORCH_CHECKPOINT_DIR": str(offline_checkpoint),
        "COLUMNS": "200",
        "ORCH_DATABASE_URL": f"sqlite:///{db}",
        "ORCH_MAX_COMPLETION_TOKENS": "16",
    }
    result = run_orchestrator(
        "run", "--limit", "5", "--server-url", vllm_server.base_url, timeout=900, env=env
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "customer_service" in out and "top experts" in out
    assert "Expert load per MoE layer" in out and "balancedness" in out
    with sqlite3.connect(db) as conn:
        calls = conn.execute(
            "select count(*), min(expert_routing_source), max(expert_routing_source) "
            "from model_calls"
        ).fetchone()
        requests = conn.execute("select count(*) from requests").fetchone()[0]
    assert requests == 5
    assert calls[0] >= 2 and calls[1] == calls[2] == "replay"
