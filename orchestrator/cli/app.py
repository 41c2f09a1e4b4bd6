"""The ``orchestrator`` Typer root: each feature module adds its own commands through its
``register(app)`` (the list is in :mod:`orchestrator.cli`), and each installed workflow
package may add its own through the ``moe_orchestrator.commands`` entry points (see
:data:`PLUGIN_GROUP`); a module is **imported only when one of its commands runs**.

Importing every feature module (LangGraph, SQLAlchemy and Alembic, scipy, the workflows, the
serving package...) took 6-7 s of CPU before ``orchestrator --help`` could print anything.
The root group is a :class:`LazyGroup`: ``orchestrator --help`` lists the commands from
:data:`COMMANDS` (name, module, first paragraph of the help) without importing any module, and
``orchestrator NAME ...`` imports the one module that registers ``NAME``.
``tests/unit/test_cli_app.py`` checks that the lazy help is the same as the help of the app
with every module imported (:func:`eager_app`), so :data:`COMMANDS` cannot drift.

The order of :data:`COMMANDS` is the order ``orchestrator --help`` lists the commands in
(single commands first, then the groups); the plugins' commands follow the core's of their kind
(single or group), by name.
"""

from __future__ import annotations

import ast
import errno
import importlib
import importlib.machinery
import importlib.util
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, NamedTuple

import typer
import typer.core
from typer import _click as click  # Typer 0.29 vendors its own click: its classes, not click's

from orchestrator.exceptions import UserError

_typer_option_type = typer.core.TyperOption.display_type_rich


def _option_type(self: typer.core.TyperOption, ctx: click.Context) -> str | None:
    """The type ``--help`` shows after an option: none for an on/off flag, which takes no value.

    Typer 0.29 shows every option's type, so ``<bool>`` followed each flag (``--help``
    included). It has no setting for that and builds the options itself (there is no option
    class to pass), so this one display method is replaced for every command here, where the
    ``orchestrator`` app is configured."""
    return None if self.is_bool_flag else _typer_option_type(self, ctx)


# Assigning to a method of a library class is what mypy's method-assign check refuses on
# purpose: the replacement is deliberate (see _option_type).
typer.core.TyperOption.display_type_rich = _option_type  # type: ignore[method-assign]  # deliberate patch (see above)


class CommandEntry(NamedTuple):
    """One command of the root: its name, the ``orchestrator.cli`` module whose ``register``
    adds it (empty for a plugin's), the first paragraph of its help (what ``orchestrator
    --help`` shows), and whether it is a group (Typer lists single commands first)."""

    name: str
    module: str
    summary: str
    group: bool = False


#: The root's commands, in ``--help`` order.
COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry(
        "build-checkpoint",
        "serve",
        "Build an offline MoE checkpoint (real architecture, random weights); ERNIE-4.5 unless "
        "--family names another.",
    ),
    CommandEntry(
        "serve",
        "serve",
        "Start the co-hosted vLLM server and keep it up until Ctrl-C (a STATS line a minute).",
    ),
    CommandEntry(
        "run",
        "run",
        "The main job: real requests → classifier → workflow → vLLM → experts in SQLite.",
    ),
    CommandEntry(
        "classify",
        "run",
        "Route one request: the route, confidence, each tier's contribution and fired signals.",
    ),
    CommandEntry("load", "load", "Print the per-layer expert load table of a telemetry database."),
    CommandEntry(
        "batch",
        "batch",
        "Run a sheet of requests through the classifier and workflows; resumable, exactly once.",
    ),
    CommandEntry(
        "chat",
        "chat",
        "Chat with the customer-service workflow; replies stream as they are written.",
    ),
    CommandEntry(
        "status",
        "status",
        "Health of the vLLM server: requests running and waiting, KV-cache use, throughput.",
    ),
    CommandEntry(
        "ui",
        "ui",
        "The Chainlit chat UI: streamed replies through the framework, expert trace, presets,\n"
        "spreadsheet reports, a moderation panel and handoff approval.",
    ),
    CommandEntry("ui-user", "ui", "Add, change or remove a chat UI user (bcrypt-hashed password)."),
    CommandEntry("ui-feedback", "ui", "Export the chat UI's thumbs feedback as JSON lines."),
    CommandEntry("classifier", "classifier", "Evaluate and tune the request classifier.", True),
    CommandEntry("new", "new", "Write a new workflow package to start from.", True),
    CommandEntry(
        "skew",
        "skew",
        "Expert skew: load per workflow and node, hot and dead experts, drift, outlier requests.",
        True,
    ),
    CommandEntry("telemetry", "telemetry", "Deferred expert routing in the telemetry store.", True),
)

#: Every feature module, in the order :func:`eager_app` registers them (which gives the
#: ``--help`` order of :data:`COMMANDS`: Typer lists single commands first, then groups).
MODULES: tuple[str, ...] = (
    "classifier",
    "new",
    "skew",
    "serve",
    "run",
    "load",
    "batch",
    "chat",
    "status",
    "ui",
    "telemetry",
)

_HELP = (
    "Route requests into LangGraph workflows on a self-hosted ERNIE-4.5 MoE "
    "and record which experts the router used."
)


def _noop() -> None:
    """(Makes Typer build a group for a single module's commands.)"""


def _commands(register: Callable[[typer.Typer], object]) -> dict[str, click.Command]:
    """The click commands that ``register(holder)`` adds to a fresh holder app, by name."""
    # Markdown: a docstring's paragraphs reflow to the terminal and ``code`` shows as code (the
    # default "rich" mode kept every line break of the source and printed the backticks)
    holder = typer.Typer(add_completion=False, rich_markup_mode="markdown")
    holder.callback()(_noop)
    register(holder)
    group = typer.main.get_command(holder)
    assert isinstance(group, typer.core.TyperGroup)
    return dict(group.commands)


def module_commands(module: str) -> dict[str, click.Command]:
    """The click commands that ``orchestrator.cli.<module>``'s ``register`` adds, by name
    (the module is imported here)."""
    return _commands(importlib.import_module(f"orchestrator.cli.{module}").register)


#: The entry-point group of a workflow package's own commands. Each entry's name is the
#: command, ``orchestrator NAME``; its value names a function (one command: its docstring is
#: its help, as for any Typer command) or a ``typer.Typer`` (a group: its ``help=`` is the
#: group's help). ``docs/plugins.md`` ("A workflow's own commands") shows one.
PLUGIN_GROUP = "moe_orchestrator.commands"


class PluginError(UserError):
    """A command plugin does not load, or two claim one command name (one-line message)."""


def _mount(app: typer.Typer, ep: EntryPoint) -> None:
    """Add what plugin ``ep`` names to ``app`` as the command ``ep.name`` (imports it).

    Raises:
        TypeError: It names neither a function nor a ``typer.Typer``.
        Exception: Whatever importing the plugin raises.
    """
    target = ep.load()
    if isinstance(target, typer.Typer):  # a group (checked first: a Typer is callable too)
        app.add_typer(target, name=ep.name)
    elif callable(target):
        app.command(ep.name)(target)
    else:
        raise TypeError(f"it names a {type(target).__name__}, not a function or a typer.Typer")


def plugin_command(ep: EntryPoint) -> click.Command:
    """The click command that plugin ``ep`` adds as ``orchestrator <ep.name>``.

    Raises:
        PluginError: It does not import or does not build (one line naming the entry point).
    """
    try:
        return _commands(lambda holder: _mount(holder, ep))[ep.name]
    except Exception as exc:  # any error of a plugin's import or build, named in one line
        raise PluginError(
            f"command plugin {ep.name} = {ep.value!r} failed to load: "
            f"{type(exc).__name__}: {exc}; reinstall or uninstall the package that provides it"
        ) from exc


def installed_plugins() -> dict[str, EntryPoint]:
    """The installed command plugins (:data:`PLUGIN_GROUP`) by command name; nothing is
    imported.

    Raises:
        PluginError: Two plugins claim one name, or one claims a built-in command's.
    """
    found: dict[str, EntryPoint] = {}
    core = {entry.name for entry in COMMANDS}
    for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda ep: ep.name):
        if ep.name in core:
            raise PluginError(
                f"command plugin {ep.name} = {ep.value!r} claims `orchestrator {ep.name}`, a "
                "built-in command; give its entry point another name"
            )
        other = found.setdefault(ep.name, ep)
        if other.value != ep.value:  # the same value twice is one plugin seen twice
            raise PluginError(
                f"command plugins {other.value!r} and {ep.value!r} both claim `orchestrator "
                f"{ep.name}`; uninstall one of their packages or rename one entry point"
            )
    return found


def _module_source(module: str) -> Path | None:
    """The ``.py`` file of ``module``, found by the import system's finders without importing
    it or its parent packages; None when there is none."""
    names = module.split(".")
    try:
        spec = importlib.util.find_spec(names[0])  # a top-level name: nothing is imported
        for depth in range(2, len(names) + 1):
            if spec is None or not spec.submodule_search_locations:
                return None
            where = list(spec.submodule_search_locations)
            spec = importlib.machinery.PathFinder.find_spec(".".join(names[:depth]), where)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    return Path(origin) if origin and origin.endswith(".py") else None


def _declared_entry(ep: EntryPoint) -> CommandEntry | None:
    """How ``--help`` lists plugin ``ep``, read from its module's source without importing it
    (importing the built-in workflows costs over 3 s of CPU): the docstring of the function it
    names, or the ``help=`` of its module-level ``NAME = typer.Typer(...)``. None when the
    source says neither; :meth:`_LazyCommands.entry` then imports the plugin."""
    path = _module_source(ep.module)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8")) if path else None
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body if tree else ():
        if isinstance(node, ast.FunctionDef) and node.name == ep.attr:
            return CommandEntry(ep.name, "", ast.get_docstring(node) or "")
        group_help = _typer_help(node, ep.attr)
        if group_help is not None:
            return CommandEntry(ep.name, "", group_help, group=True)
    return None


def _typer_help(node: ast.stmt, name: str) -> str | None:
    """The ``help=`` text when ``node`` is ``name = typer.Typer(..., help="...")``."""
    if not isinstance(node, ast.Assign) or [ast.unparse(t) for t in node.targets] != [name]:
        return None
    call = node.value
    if not isinstance(call, ast.Call) or ast.unparse(call.func) not in ("typer.Typer", "Typer"):
        return None
    helps = [k.value for k in call.keywords if k.arg == "help"]
    if helps and isinstance(helps[0], ast.Constant) and isinstance(helps[0].value, str):
        return helps[0].value
    return None


def _loaded_entry(ep: EntryPoint) -> CommandEntry:
    """How ``--help`` lists plugin ``ep``, from the imported command; a plugin that does not
    load is listed with the reason."""
    try:
        command = plugin_command(ep)
    except PluginError as exc:
        return CommandEntry(ep.name, "", str(exc))
    return CommandEntry(ep.name, "", command.help or "", isinstance(command, typer.core.TyperGroup))


class _Placeholder(typer.core.TyperCommand):
    """A command listed by ``--help`` before its module is imported."""


class _LazyCommands(Mapping[str, click.Command]):
    """The root's ``commands``: every name of :data:`COMMANDS` and of the installed plugins,
    in ``--help`` order; looking one up imports its module (once) and gives the real command.
    ``conflict`` is the one-line refusal when two plugins claim one name (else None)."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}
        self.conflict: str | None = None
        try:
            self._plugins = installed_plugins()
        except PluginError as exc:
            self._plugins, self.conflict = {}, str(exc)
        listed = [*COMMANDS, *map(self.entry, self._plugins.values())]
        ordered = [e for e in listed if not e.group] + [e for e in listed if e.group]
        self._by_name = {entry.name: entry for entry in ordered}

    @staticmethod
    def entry(ep: EntryPoint) -> CommandEntry:
        """How ``--help`` lists plugin ``ep``: from its source, else by importing it."""
        return _declared_entry(ep) or _loaded_entry(ep)

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __getitem__(self, name: str) -> click.Command:
        """The command ``name``, imported on first use.

        Raises:
            KeyError: No such command.
            PluginError: Its plugin does not load.
        """
        if name not in self._loaded:
            entry = self._by_name[name]  # KeyError: no such command
            if entry.module:
                self._loaded.update(module_commands(entry.module))
            else:
                self._loaded[name] = plugin_command(self._plugins[name])
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:  # click's add_command
        self._loaded[name] = command
        self._by_name.setdefault(name, CommandEntry(name, "", command.help or ""))

    def placeholder(self, name: str) -> click.Command | None:
        """The real command when already imported, else a stand-in with its summary."""
        if name in self._loaded:
            return self._loaded[name]
        entry = self._by_name.get(name)
        return None if entry is None else _Placeholder(name=name, help=entry.summary)


def _refusal(message: str) -> typer.Exit:
    """Print ``error: <message>`` on standard error (no traceback); the exit (1) to raise."""
    typer.secho("error:", fg="red", bold=True, err=True, nl=False)
    typer.echo(f" {message}", err=True)
    return typer.Exit(1)


class LazyGroup(typer.core.TyperGroup):
    """The root group: lists :data:`COMMANDS` and the plugins' commands without importing
    them; imports the module of the command that runs (see the module doc). Two plugins of
    one name stop every command with one line; a plugin that does not load stops its own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: _LazyCommands = _LazyCommands()  # type: ignore[assignment]  # a lazy Mapping, not click's dict

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        if self.commands.conflict is not None:
            raise _refusal(self.commands.conflict)
        return super().make_context(info_name, args, parent, **extra)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # names only: nothing imported

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands.placeholder(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None and isinstance(command, _Placeholder):
            try:
                command = self.commands[name]
            except PluginError as exc:
                raise _refusal(str(exc)) from exc
        return name, command, rest


app = typer.Typer(
    cls=LazyGroup,
    add_completion=False,
    no_args_is_help=True,
    help=_HELP,
    rich_markup_mode="markdown",
)
app.callback()(_noop)


def eager_app() -> typer.Typer:
    """The same app with every feature module and plugin imported and registered up front
    (what ``app`` was before it was lazy); for tests that compare the two.

    Raises:
        PluginError: Two plugins claim one name.
    """
    eager = typer.Typer(
        add_completion=False, no_args_is_help=True, help=_HELP, rich_markup_mode="markdown"
    )
    for module in MODULES:
        importlib.import_module(f"orchestrator.cli.{module}").register(eager)
    for ep in installed_plugins().values():
        _mount(eager, ep)
    return eager


def main() -> None:  # pragma: no cover
    """The ``orchestrator`` console script and ``python -m orchestrator.cli``: warnings and
    errors of the libraries' loggers go to standard error, then the app runs."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        try:
            app()
        finally:
            _flush_stdout()  # a full or closed standard output fails here, not at exit
    except SystemExit:
        if not isinstance(sys.stdout, click.utils.PacifyFlushWrapper):
            raise
        exit_ = _uncaught(BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE), "standard output"))
        raise exit_ from None  # Typer's silent exit for a closed pipe: say so in one line
    except Exception as exc:  # an output error, or an expected error no command caught
        exit_ = _uncaught(exc)
        if exit_ is exc:
            raise
        raise exit_ from None


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except OSError as exc:
        exc.filename = exc.filename or "standard output"
        raise


def _uncaught(exc: BaseException) -> BaseException:
    """:func:`orchestrator.cli.common.uncaught_exit`, imported only on this path (``--help``
    does not load the shared helpers)."""
    from orchestrator.cli.common import uncaught_exit

    return uncaught_exit(exc)
