"""The lazy root of ``orchestrator``: ``--help`` lists every command without importing the
feature modules, lists them exactly as the app with every module imported does, and a command
imports only the module that registers it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from typer.testing import CliRunner

from orchestrator.cli.app import COMMANDS, MODULES, app, eager_app

WIDE = {"COLUMNS": "200"}


def test_lazy_help_is_the_eager_apps_help() -> None:
    """COMMANDS (names, order, summaries) matches what the modules register; when a module's
    help changes, update its CommandEntry in orchestrator/cli/app.py."""
    runner = CliRunner()
    lazy = runner.invoke(app, ["--help"], env=WIDE)
    eager = runner.invoke(eager_app(), ["--help"], env=WIDE)
    assert lazy.exit_code == eager.exit_code == 0
    assert lazy.output == eager.output
    assert {entry.module for entry in COMMANDS} == set(MODULES)


def _imported_after(argv: list[str]) -> dict[str, object]:
    code = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from orchestrator.cli import app\n"
        f"result = CliRunner().invoke(app, {argv!r})\n"
        "print(json.dumps({'code': result.exit_code, 'out': result.output, "
        "'modules': sorted(m for m in sys.modules if m.startswith(('orchestrator.cli.', "
        "'langgraph', 'sqlalchemy', 'scipy', 'workflows', 'torch', 'serving'))) }))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **WIDE},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_imports_no_feature_module() -> None:
    seen = _imported_after(["--help"])
    assert seen["code"] == 0
    assert "telemetry" in str(seen["out"]) and "build-checkpoint" in str(seen["out"])
    assert seen["modules"] == ["orchestrator.cli.app"], seen["modules"]


def test_a_command_imports_only_its_own_module() -> None:
    seen = _imported_after(["telemetry", "--help"])
    assert seen["code"] == 0 and "fill-routing" in str(seen["out"])
    cli_modules = {m for m in seen["modules"] if m.startswith("orchestrator.cli.")}  # type: ignore[union-attr]
    assert "orchestrator.cli.telemetry" in cli_modules
    assert not cli_modules & {
        "orchestrator.cli.run",
        "orchestrator.cli.skew",
        "orchestrator.cli.batch",
        "orchestrator.cli.ui",
    }


def test_an_unknown_command_is_still_refused_with_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["skwe"], env=WIDE)
    assert result.exit_code == 2
    assert "No such command 'skwe'" in result.output and "skew" in result.output


def test_every_listed_command_loads() -> None:
    """Each COMMANDS entry names the module that really registers it."""
    from orchestrator.cli.app import module_commands

    for module in MODULES:
        registered = set(module_commands(module))
        assert registered == {e.name for e in COMMANDS if e.module == module}, module
