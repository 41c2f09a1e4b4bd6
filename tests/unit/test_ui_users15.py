"""``orchestrator ui-user`` stores only users a request can use (tester15 T15-7).

It stored a customer ``"C00001 "`` (every turn of theirs then a 400), operators named
``policy`` or ``C00001`` (every decision of theirs refused by the audit), and an operator with a
customer id (dropped without a word). Each is one line and exit 2 now, and nothing is stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["cu", "--customer", "C00001 "], "is not a customer id"),
        (["cu", "--customer", "C 1"], "is not a customer id"),
        (["cu", "--customer", "C" * 17], "is not a customer id"),
        (["policy", "--role", "operator"], "'policy' does not name a person"),
        (["System", "--role", "operator"], "does not name a person"),
        (["C00001", "--role", "operator"], "'C00001' does not name a person"),
        (["olga", "--role", "operator", "--customer", "C00001"], "an operator is no customer"),
    ],
)
def test_a_user_nothing_could_use_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], said: str
) -> None:
    users = tmp_path / "users.json"
    monkeypatch.setenv("ORCH_UI_USERS", str(users))
    done = CliRunner().invoke(app, ["ui-user", *args, "--password-stdin"], input="password123\n")
    assert done.exit_code == 2, done.output
    assert said in " ".join(done.output.split()) and done.output.count("error:") == 1
    assert not users.exists()
    kept = CliRunner().invoke(
        app,
        ["ui-user", "olga.k", "--role", "operator", "--password-stdin"],
        input="password123\n",
    )
    assert kept.exit_code == 0 and '"olga.k"' in users.read_text(encoding="utf-8")
