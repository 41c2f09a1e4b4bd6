"""The ``orchestrator`` Typer root: each feature module adds its own commands through its
``register(app)`` (the list is in :mod:`orchestrator.cli`), **imported only when one of its
commands runs**.

Importing every feature module (LangGraph, SQLAlchemy and Alembic, scipy, the workflows, the
serving package...) took 6-7 s of CPU before ``orchestrator --help`` could print anything.
The root group is a :class:`LazyGroup`: ``orchestrator --help`` lists the commands from
:data:`COMMANDS` (name, module, first paragraph of the help) without importing any module, and
``orchestrator NAME ...`` imports the one module that registers ``NAME``.
``tests/unit/test_cli_app.py`` checks that the lazy help is the same as the help of the app
with every module imported (:func:`eager_app`), so :data:`COMMANDS` cannot drift.

The order of :data:`COMMANDS` is the order ``orchestrator --help`` lists the commands in
(single commands first, then the groups).
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import typer
import typer.core
from typer import _click as click  # Typer 0.29 vendors its own click: its classes, not click's

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
    adds it, and the first paragraph of its help (what ``orchestrator --help`` shows)."""

    name: str
    module: str
    summary: str


#: The root's commands, in ``--help`` order.
COMMANDS: tuple[CommandEntry, ...] = (
    CommandEntry(
        "moderate",
        "moderation",
        "Moderate one post: the verdict (decision, severity, categories, spans, rationale).",
    ),
    CommandEntry(
        "report",
        "report",
        "Turn a spreadsheet into a narrative report (Markdown + .xlsx with charts).",
    ),
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
    CommandEntry("classifier", "classifier", "Evaluate and tune the request classifier."),
    CommandEntry("new", "new", "Write a new workflow package to start from."),
    CommandEntry("moderation", "moderation", "Content moderation: evaluate, check the data."),
    CommandEntry(
        "skew",
        "skew",
        "Expert skew: load per workflow and node, hot and dead experts, drift, outlier requests.",
    ),
    CommandEntry("store", "store", "The customer-service order store."),
    CommandEntry("handoff", "handoff", "Conversations handed to a person."),
    CommandEntry("train", "train", "Train the offline ERNIE-MoE on the project's labelled sets."),
    CommandEntry("telemetry", "telemetry", "Deferred expert routing in the telemetry store."),
)

#: Every feature module, in the order :func:`eager_app` registers them (which gives the
#: ``--help`` order of :data:`COMMANDS`: Typer lists single commands first, then groups).
MODULES: tuple[str, ...] = (
    "classifier",
    "new",
    "moderation",
    "report",
    "skew",
    "serve",
    "run",
    "load",
    "batch",
    "store",
    "handoff",
    "chat",
    "status",
    "ui",
    "train",
    "telemetry",
)

_HELP = (
    "Route requests into LangGraph workflows on a self-hosted ERNIE-4.5 MoE "
    "and record which experts the router used."
)


def _noop() -> None:
    """(Makes Typer build a group for a single module's commands.)"""


def module_commands(module: str) -> dict[str, click.Command]:
    """The click commands that ``orchestrator.cli.<module>``'s ``register`` adds, by name
    (the module is imported here)."""
    feature = importlib.import_module(f"orchestrator.cli.{module}")
    # Markdown: a docstring's paragraphs reflow to the terminal and ``code`` shows as code (the
    # default "rich" mode kept every line break of the source and printed the backticks)
    holder = typer.Typer(add_completion=False, rich_markup_mode="markdown")
    holder.callback()(_noop)
    feature.register(holder)
    group = typer.main.get_command(holder)
    assert isinstance(group, typer.core.TyperGroup)
    return dict(group.commands)


class _Placeholder(typer.core.TyperCommand):
    """A command listed by ``--help`` before its module is imported."""


class _LazyCommands(Mapping[str, click.Command]):
    """The root's ``commands``: every name of :data:`COMMANDS`, in order; looking one up
    imports its module (once) and gives the real command."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}
        self._by_name = {entry.name: entry for entry in COMMANDS}

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            entry = self._by_name[name]  # KeyError: no such command
            self._loaded.update(module_commands(entry.module))
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


class LazyGroup(typer.core.TyperGroup):
    """The root group: lists :data:`COMMANDS` without importing them; imports the module of
    the command that runs (see the module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: _LazyCommands = _LazyCommands()  # type: ignore[assignment]  # a lazy Mapping, not click's dict

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # names only: nothing imported

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self.commands.placeholder(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None and isinstance(command, _Placeholder):
            command = self.commands[name]
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
    """The same app with every feature module imported and registered up front (what
    ``app`` was before it was lazy); for tests that compare the two."""
    eager = typer.Typer(
        add_completion=False, no_args_is_help=True, help=_HELP, rich_markup_mode="markdown"
    )
    for module in MODULES:
        importlib.import_module(f"orchestrator.cli.{module}").register(eager)
    return eager


def main() -> None:  # pragma: no cover
    """The ``orchestrator`` console script and ``python -m orchestrator.cli``: warnings and
    errors of the libraries' loggers go to standard error, then the app runs."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()
