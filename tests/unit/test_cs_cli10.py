"""``orchestrator handoff resume`` uses the configured model server and starts none unasked
(cs10 item e).

Without --server-url it started a co-hosted vLLM server (minutes on CPU) whenever none answered
at the configured URL. Now the server is chosen as ``run`` chooses it (--server-url, else
ORCH_SERVER_URL / .env, else the default), and when none answers the command prints one line
(the URL, where it came from, how to fix it) and exits 1 before anything is started; --launch
is the one way to start a co-hosted server for a decision.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app, common
from workflows.customer_service.store import OrderStore


@pytest.mark.parametrize(
    ("flags", "env", "where"),
    [
        ([], {"ORCH_SERVER_URL": "http://127.0.0.1:9/v1"}, "ORCH_SERVER_URL or .env"),
        (["--server-url", "http://127.0.0.1:9/v2"], {}, "--server-url"),
        (["--no-launch"], {"ORCH_SERVER_URL": "http://127.0.0.1:9/v3"}, "ORCH_SERVER_URL"),
    ],
)
def test_resume_without_a_server_says_so_in_one_line_and_starts_none(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    env: dict[str, str],
    where: str,
) -> None:
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    OrderStore(url).record_handoff("t9", 2, "C00001", "refund over the limit", {"message": "x"})
    started: list[object] = []
    monkeypatch.setattr(common, "model_server", lambda *a, **k: started.append(k))
    monkeypatch.delenv("ORCH_SERVER_URL", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, ["handoff", "resume", "t9", "--approve", "--db", url, *flags])
    said = result.output.strip()
    assert result.exit_code == 1, said
    assert len(said.splitlines()) == 1 and said.startswith("error:"), said
    assert "127.0.0.1:9/v" in said and where in said and "--launch" in said, said
    assert "starting" not in said.lower() and not started
    assert OrderStore(url).handoffs("waiting")[0]["thread_id"] == "t9"  # still waiting
