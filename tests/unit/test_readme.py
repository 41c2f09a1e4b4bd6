"""The README is a user's page: at most 250 lines, the two fresh-machine commands as CI and
users run them, and a command table that names every command of the app (walked, so a
command added later must get its row)."""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer.core import TyperGroup

from orchestrator.cli.app import app

README = Path(__file__).resolve().parents[2] / "README.md"


def _table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| `orchestrator ")]


def _command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    paths = []
    for name in list(root.commands):
        command = root.commands[name]
        if isinstance(command, TyperGroup):
            paths += [[name, sub] for sub in command.commands]
        else:
            paths.append([name])
    return paths


def test_readme_is_short_and_keeps_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "bash scripts/install.sh && .venv/bin/orchestrator run --limit 24" in text
    assert "bash scripts/install.sh && .venv/bin/python -m pytest" in text
    assert "examples/quickstart.py" in text


def test_command_table_names_every_command() -> None:
    rows = _table_rows(README.read_text(encoding="utf-8"))
    paths = _command_paths()
    assert len(paths) > 25, paths
    missing = []
    for path in paths:
        head = re.compile(rf"`orchestrator {re.escape(path[0])}[` ]")
        owner = [row for row in rows if head.search(row.split("|")[1])]
        ok = any(len(path) == 1 or re.search(rf"\b{re.escape(path[1])}\b", row) for row in owner)
        if not ok:
            missing.append(" ".join(path))
    assert not missing, f"README command table lacks: {missing}"


def test_command_table_names_no_command_that_is_gone() -> None:
    """Each `orchestrator NAME [SUB|SUB...]` of the table's first column is a command."""
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    stale = []
    for row in _table_rows(README.read_text(encoding="utf-8")):
        cell = row.split(" | ")[0].replace("\\|", "|")
        for name, rest in re.findall(r"`orchestrator ([\w-]+) ?([\w|-]*)", cell):
            if name not in root.commands:
                stale.append(name)
                continue
            group = root.commands[name]
            if isinstance(group, TyperGroup):
                subs = [sub for sub in rest.split("|") if sub]
                if not subs and not group.invoke_without_command:  # `skew` runs on its own
                    stale.append(f"{name} (a group: name its subcommand)")
                stale += [f"{name} {sub}" for sub in subs if sub not in group.commands]
    assert not stale, f"README command table names commands that do not exist: {stale}"
