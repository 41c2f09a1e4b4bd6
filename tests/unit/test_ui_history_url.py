"""The chat history's database is the telemetry database the `ui` command was started with,
whatever folder Chainlit runs in (tester5 finding 4: a relative default URL sent every sign-in
to `ui/runs/telemetry.db`, a folder that does not exist, and the login answered 500)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from orchestrator.cli.ui import history_url
from orchestrator.config import Settings


def test_a_relative_sqlite_path_names_the_same_file_from_chainlits_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "runs").mkdir()
    with sqlite3.connect(tmp_path / "runs" / "telemetry.db") as db:
        db.execute("create table marker (x)")
    monkeypatch.chdir(tmp_path)
    url = history_url(Settings(database_url="sqlite:///runs/telemetry.db"))
    assert url == f"sqlite+aiosqlite:///{tmp_path / 'runs' / 'telemetry.db'}"
    chainlit_cwd = tmp_path / "ui"  # Chainlit's own working folder
    chainlit_cwd.mkdir()
    monkeypatch.chdir(chainlit_cwd)
    engine = create_engine(url.replace("+aiosqlite", ""))
    with engine.connect() as conn:  # the old relative URL fails here: no ui/runs folder
        assert conn.execute(text("select name from sqlite_master")).scalar() == "marker"
    engine.dispose()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:////srv/data/t.db", "sqlite+aiosqlite:////srv/data/t.db"),
        ("sqlite:///:memory:", "sqlite+aiosqlite:///:memory:"),
        ("postgresql://u:p@db:5432/orch", "postgresql+psycopg://u:p@db:5432/orch"),
        ("postgresql+psycopg2://u@db/orch", "postgresql+psycopg://u@db/orch"),
    ],
)
def test_absolute_paths_memory_and_servers_are_kept(given: str, expected: str) -> None:
    assert history_url(Settings(database_url=given)) == expected


def test_ui_database_url_is_resolved_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORCH_UI_DATABASE_URL", "sqlite:///history.db")
    url = history_url(Settings(database_url="sqlite:///runs/telemetry.db"))
    assert url == f"sqlite+aiosqlite:///{tmp_path / 'history.db'}"
