"""A workflow's own commands as plugins (``moe_orchestrator.commands`` entry points): a fake
plugin's command and group are listed without importing them and run once mounted; a plugin
that does not load is one ``error:`` line; two plugins of one name stop start-up in one line.

The fake plugins are modules written into a temporary folder on ``sys.path``; their entry
points are added to the installed ones (``orchestrator.cli.app.entry_points`` is replaced)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli.app import PLUGIN_GROUP, app, eager_app

app_module = importlib.import_module(
    "orchestrator.cli.app"
)  # the module (the package's `app` is the Typer)

WIDE = {"COLUMNS": "200"}

FAKE = '''"""Commands of a fake workflow package."""

import typer


def hello(name: str = typer.Option("world", help="Who to greet.")) -> None:
    """Say hello to NAME (a fake plugin's command).

    A second paragraph that the root listing leaves out.
    """
    print(f"hello {name}")


tools = typer.Typer(no_args_is_help=True, help="Tools of the fake workflow.")


@tools.command("ping")
def ping() -> None:
    """Answer pong."""
    print("pong")


def _built() -> typer.Typer:
    built = typer.Typer(no_args_is_help=True, help="A group built by a function.")
    built.command("echo")(lambda: print("echoed"))
    return built


made = _built()
'''

BROKEN = '''"""A plugin whose package needs something that is not installed."""

raise ImportError("No module named 'frobnicate' (pip install frobnicate)")


def run() -> None:
    """Never reached."""
'''


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``install(name=value, ...)``: these fake entry points join the installed ones."""
    (tmp_path / "fake_cmds.py").write_text(FAKE, encoding="utf-8")
    (tmp_path / "broken_cmds.py").write_text(BROKEN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    extra: list[EntryPoint] = []

    def patched(*, group: str) -> list[EntryPoint]:
        found = list(entry_points(group=group))
        return [*found, *extra] if group == PLUGIN_GROUP else found

    monkeypatch.setattr(app_module, "entry_points", patched)

    def install(*pairs: tuple[str, str]) -> None:
        extra.extend(EntryPoint(name, value, PLUGIN_GROUP) for name, value in pairs)

    yield install
    for module in ("fake_cmds", "broken_cmds"):
        sys.modules.pop(module, None)


def test_a_plugins_command_and_group_are_listed_unimported_then_run(
    plugins: Callable[..., None],
) -> None:
    plugins(("hello", "fake_cmds:hello"), ("tools", "fake_cmds:tools"))
    runner = CliRunner()
    listing = runner.invoke(app, ["--help"], env=WIDE)
    assert listing.exit_code == 0, listing.output
    assert "fake_cmds" not in sys.modules  # listed from the source, not imported
    lines = {line.split()[1]: line for line in listing.output.splitlines() if "│ " in line[:3]}
    assert "Say hello to NAME (a fake plugin's command)." in lines["hello"]
    assert "second paragraph" not in listing.output
    assert "Tools of the fake workflow." in lines["tools"]
    names = [line.split()[1] for line in listing.output.splitlines() if line.startswith("│ ")]
    # a single command after the core's single commands, a group after the core's groups
    assert names.index("hello") < names.index("classifier") < names.index("tools")

    said = runner.invoke(app, ["hello", "--name", "你好"], env=WIDE)
    assert (said.exit_code, said.output) == (0, "hello 你好\n")
    assert "Who to greet." in runner.invoke(app, ["hello", "--help"], env=WIDE).output
    pinged = runner.invoke(app, ["tools", "ping"], env=WIDE)
    assert (pinged.exit_code, pinged.output) == (0, "pong\n")
    assert runner.invoke(app, ["tools", "nosuch"], env=WIDE).exit_code == 2


def test_a_plugin_listed_by_importing_it_when_its_source_does_not_say(
    plugins: Callable[..., None],
) -> None:
    """A group built by a function has no ``help=`` in the source: it is imported for the
    listing, and the listing is still the imported app's."""
    plugins(("made", "fake_cmds:made"))
    runner = CliRunner()
    lazy = runner.invoke(app, ["--help"], env=WIDE)
    assert "A group built by a function." in lazy.output
    assert lazy.output == runner.invoke(eager_app(), ["--help"], env=WIDE).output
    assert runner.invoke(app, ["made", "echo"], env=WIDE).output == "echoed\n"


def test_the_lazy_listing_of_plugins_is_the_imported_apps(plugins: Callable[..., None]) -> None:
    plugins(("hello", "fake_cmds:hello"), ("tools", "fake_cmds:tools"))
    runner = CliRunner()
    lazy = runner.invoke(app, ["--help"], env=WIDE)
    eager = runner.invoke(eager_app(), ["--help"], env=WIDE)
    assert lazy.exit_code == eager.exit_code == 0
    assert lazy.output == eager.output


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "value, reason",
    [
        ("broken_cmds:run", "ImportError: No module named 'frobnicate' (pip install frobnicate)"),
        ("fake_cmds:nosuch", "AttributeError"),
        ("no_such_package.cli:run", "ModuleNotFoundError"),
    ],
    ids=["import-error", "no-attribute", "no-module"],
)
def test_a_broken_plugin_is_one_line_and_the_others_still_run(
    plugins: Callable[..., None], value: str, reason: str
) -> None:
    plugins(("broken", value), ("hello", "fake_cmds:hello"))
    runner = CliRunner()
    result = runner.invoke(app, ["broken", "--help"], env=WIDE)
    assert result.exit_code == 1
    lines = _error_lines(result.output)
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"error: command plugin broken = {value!r} failed to load: ")
    assert reason in lines[0] and "Traceback" not in result.output
    assert runner.invoke(app, ["hello"], env=WIDE).output == "hello world\n"
    assert runner.invoke(app, ["--help"], env=WIDE).exit_code == 0


def test_two_plugins_of_one_name_stop_start_up_in_one_line(plugins: Callable[..., None]) -> None:
    plugins(("hello", "fake_cmds:hello"), ("hello", "other_pkg.cli:hello"))
    for argv in (["--help"], ["load", "--help"], ["hello"]):
        result = CliRunner().invoke(app, argv, env=WIDE)
        assert result.exit_code == 1, (argv, result.output)
        lines = _error_lines(result.output)
        assert len(lines) == 1, result.output
        assert (
            "'fake_cmds:hello' and 'other_pkg.cli:hello' both claim `orchestrator hello`"
            in (lines[0])
        )


def test_a_plugin_may_not_take_a_built_in_commands_name(plugins: Callable[..., None]) -> None:
    plugins(("run", "fake_cmds:hello"))
    result = CliRunner().invoke(app, ["run", "--help"], env=WIDE)
    assert result.exit_code == 1
    assert _error_lines(result.output) == [
        "error: command plugin run = 'fake_cmds:hello' claims `orchestrator run`, a built-in "
        "command; give its entry point another name"
    ]


def test_the_same_plugin_seen_twice_is_one_plugin(plugins: Callable[..., None]) -> None:
    """Two copies of one package's metadata (an old build folder on sys.path) are no clash."""
    plugins(("hello", "fake_cmds:hello"), ("hello", "fake_cmds:hello"))
    assert CliRunner().invoke(app, ["hello"], env=WIDE).output == "hello world\n"


def test_the_built_ins_own_commands_come_from_their_packages() -> None:
    """report, store and handoff are entry points of the built-in workflows' packages."""
    ours = {ep.name: ep.value for ep in entry_points(group=PLUGIN_GROUP)}
    assert ours["report"] == "workflows.excel_report.cli:report"
    assert ours["store"] == "workflows.customer_service.cli:store_app"
    assert ours["handoff"] == "workflows.customer_service.cli:handoff_app"
