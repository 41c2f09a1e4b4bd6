"""Commands that only read a database refuse a SQLite file that does not exist, in one line,
and make nothing there (ui13; tester13 K). ``store info``, ``handoff list``, ``handoff resume``
and ``ui-feedback`` opened it, which made an empty database at the mistyped path, and
``handoff list`` answered "no conversation waits for a person": an operator with a typo was
told nothing waits. (The telemetry commands, ``load`` and ``skew``, already refused it.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["handoff", "list"], "order store {} does not exist"),
        (["store", "info"], "order store {} does not exist"),
        (["handoff", "resume", "t-1", "--approve"], "order store {} does not exist"),
        (["ui-feedback"], "chat history database {} does not exist"),
    ],
)
def test_a_missing_database_is_named_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], said: str
) -> None:
    typo = tmp_path / "custmer_service.db"
    monkeypatch.setenv("ORCH_UI_DATABASE_URL", f"sqlite:///{typo}")
    db = [] if command == ["ui-feedback"] else ["--db", f"sqlite:///{typo}"]
    done = CliRunner().invoke(app, [*command, *db])
    assert done.exit_code == 2, done.output
    assert said.format(typo) in " ".join(done.output.split())
    assert len(done.output.strip().splitlines()) == 1 and "Traceback" not in done.output
    assert not typo.exists()
