"""Every command's ``--help`` reads as plain help: no Sphinx roles left from the docstrings
(``:func:``, ``:class:``...) and no ``<bool>`` type after on/off flags.

The commands are found by walking the app (every group's subcommands), so a command added
later is checked too."""

from __future__ import annotations

import re
from collections.abc import Iterator

import typer
from typer import _click as click
from typer.testing import CliRunner

from orchestrator.cli.app import COMMANDS, app

# Sphinx cross-reference roles as they leak into help text: `:func:`, `:class:`, `:mod:`...
_SPHINX_ROLE = re.compile(r":(func|class|meth|mod|attr|data|exc|obj|ref|py:\w+):")


def _command_paths(command: click.Command, path: list[str]) -> Iterator[list[str]]:
    yield path
    if isinstance(command, typer.core.TyperGroup):
        for name in list(command.commands):
            yield from _command_paths(command.commands[name], [*path, name])


def _every_help() -> dict[str, str]:
    runner = CliRunner()
    helps = {}
    for path in _command_paths(typer.main.get_command(app), []):
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
        assert result.exit_code == 0, (path, result.output)
        helps[" ".join(path) or "orchestrator"] = result.output
    return helps


def test_every_help_is_free_of_markup_and_bool_noise() -> None:
    helps = _every_help()
    # the root, each top-level command and the subcommands of the groups
    assert len(helps) > len(COMMANDS) + 10, sorted(helps)
    assert {"orchestrator", "run", "moderate", "classifier eval", "telemetry pending"} <= set(helps)
    for name, text in helps.items():
        assert "<bool>" not in text, name
        assert not _SPHINX_ROLE.search(text), (name, _SPHINX_ROLE.search(text))
        assert "--help" in text and "Show this message and exit." in text, name


def test_value_options_keep_their_type() -> None:
    """Only flags lose the type column: an option that takes a value still shows it."""
    text = CliRunner().invoke(app, ["skew", "--help"], env={"COLUMNS": "120"}).output
    assert re.search(r"--window\s+<str>", text), text
    assert re.search(r"--rebuild\s+--no-rebuild\s+Open", text), text
