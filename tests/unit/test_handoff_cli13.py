"""The order-store commands that read (``store info``, ``handoff list``, ``handoff resume``)
refuse a SQLite ``--db`` that does not exist, in one line (ui13). They opened it, which made an
empty store at the mistyped path, and ``handoff list`` answered "no conversation waits for a
person": an operator with a typo was told nothing waits."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app


@pytest.mark.parametrize(
    "command",
    [["handoff", "list"], ["store", "info"], ["handoff", "resume", "t-1", "--approve"]],
)
def test_a_missing_order_store_is_named_not_made(tmp_path: Path, command: list[str]) -> None:
    typo = tmp_path / "custmer_service.db"
    done = CliRunner().invoke(app, [*command, "--db", f"sqlite:///{typo}"])
    assert done.exit_code == 2, done.output
    assert f"order store {typo} does not exist" in done.output
    assert len(done.output.strip().splitlines()) == 1 and "Traceback" not in done.output
    assert not typo.exists()
