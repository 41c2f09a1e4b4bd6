"""What every command shares: the consoles, settings from flags, clear errors, a model server.

One of each, so the commands cannot drift apart:

* :func:`settings_from_flags` builds :class:`~orchestrator.config.Settings` from command-line
  flags (flags left at ``None`` fall back to ``ORCH_*`` variables, ``.env`` and the defaults);
* :func:`fail` prints an error's message in red, without a traceback, and gives the
  :class:`typer.Exit` to raise;
* :func:`model_server` yields the URL of a vLLM server that answers: the configured one, or a
  co-hosted one it starts (and stops again) when allowed to, and supervises
  (:func:`supervise`): a co-hosted server that dies is noticed within a second, its log tail
  is printed, and the command stops with exit status 1, or, with ``restart``, the server is
  restarted with backoff.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from orchestrator.config import Settings
from orchestrator.exceptions import (
    ModelCallError,
    OrchestratorError,
    ServerUnavailableError,
    UserError,
)
from orchestrator.textnorm import visible_format

if TYPE_CHECKING:  # the serving package (and what it imports) loads when a server is needed
    from serving.launcher import ServerSupervisor, VLLMServer


#: Terminal escape sequences (CSI: clear screen, colours; OSC: titles, OSC-8 links) whole,
#: then any other C0 or C1 control character but tab and newline (BEL, carriage return).
#: Rich writes its own styling after this is removed.
CONTROL = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|"
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def shown(text: str) -> str:
    """``text`` as a person should read it in a terminal: control characters dropped
    (:data:`CONTROL`), format characters written as ``<U+202E>``
    (:func:`~orchestrator.textnorm.visible_format`), so what a person reads is what was
    written (tester14 G14: a customer's text shown to an operator)."""
    return visible_format(CONTROL.sub("", text))


class OutputConsole(Console):
    """A rich console whose closed pipe (``orchestrator skew | head -1``) is an error the
    console script reports in one line (:func:`uncaught_exit`, exit 2), where rich's own
    :meth:`~rich.console.Console.on_broken_pipe` exits 1 without a word. Emoji codes are not
    replaced (a customer's ``:warning:`` stays those words)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def on_broken_pipe(self) -> None:
        """Raise ``BrokenPipeError`` (nothing more is written to this console)."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE), self._stream_name())

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """:meth:`rich.console.Console.print` of ``objects``, their text :func:`shown` (a
        customer's text could clear the reader's screen, plant a terminal hyperlink or
        reverse what a line says); a failed write (a full disk) names the stream."""
        objects = tuple(shown(o) if isinstance(o, str) else o for o in objects)
        try:
            super().print(*objects, **kwargs)
        except OSError as exc:
            exc.filename = exc.filename or self._stream_name()
            raise

    def _stream_name(self) -> str:
        return "standard error" if self.stderr else "standard output"


#: Standard output of every command (results, tables, progress).
console = OutputConsole()
#: Standard error of every command (errors, warnings, notes about fallbacks).
err = OutputConsole(stderr=True)


class _PlainStatus:
    """What :func:`working` yields off a terminal: ``update`` keeps the first line's word."""

    def update(self, *_args: object, **_kwargs: object) -> None:
        """No line per update (a fill updates per chunk); the first line said what runs."""


def working(message: str) -> contextlib.AbstractContextManager[Any]:
    """A spinner with ``message`` on a terminal; elsewhere (a log, CI, a pipe), where rich
    draws no spinner, the message as one plain line on standard error, so a long step (a
    server start takes minutes on 2 CPU cores) is never silent. Either way the value bound by
    ``as`` has ``update(message)``."""
    if console.is_terminal:
        return console.status(message)
    err.print(f"{message} ...", markup=False, highlight=False, soft_wrap=True)
    return contextlib.nullcontext(_PlainStatus())


def invalid_values(exc: ValidationError, flags: Mapping[str, str] | None = None) -> str:
    """A pydantic error as one line a CLI user can act on, without pydantic's links.

    Example: ``concurrency = 0: Input should be greater than or equal to 1 (its
    command-line option, or ORCH_CONCURRENCY)``; several errors are joined with ``; ``. Errors
    of a model other than :class:`~orchestrator.config.Settings` name the option instead,
    ``(--field-name)``, or the option ``flags`` maps the field to (``{"request_timeout_s":
    "--request-timeout"}``) where the two differ.
    """
    parts = []
    for error in exc.errors(include_url=False):
        field = ".".join(str(part) for part in error["loc"]) or "value"
        if exc.title == "Settings":
            source = f"its command-line option, or ORCH_{field.upper()}"
        else:
            source = (flags or {}).get(field) or "--" + field.replace("_", "-")
        parts.append(f"{field} = {error.get('input')!r}: {error['msg']} ({source})")
    return "; ".join(parts)


def fail(exc: BaseException | str, code: int = 1) -> typer.Exit:
    """Print ``error: <message>`` in red on standard error, on one line; return the exit.

    Meant for :class:`~orchestrator.exceptions.OrchestratorError` and the other errors whose
    message already says what was wrong and how to fix it, so no traceback is shown. The
    message is printed as text, never as rich markup (``[x]`` stays ``[x]``).

    Args:
        exc: The error, or the message itself.
        code: The process exit status: 2 for a usage mistake (bad flag, bad file), 1 for a
            runtime failure (server, model, store), by the convention of these commands.

    Returns:
        ``typer.Exit(code)``; use it as ``raise fail(exc) from exc``.
    """
    # soft_wrap: one line however long, also where rich would wrap at 80 columns (a pipe, a log)
    err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
    return typer.Exit(code)


#: Errors of an output that takes no more: a full disk or quota, a file too large, a read-only
#: file system, an I/O error, a reader that closed the pipe.
OUTPUT_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO, errno.EPIPE}
)


def uncaught_exit(exc: BaseException) -> BaseException:
    """The exit of the console script for an error that no command turned into a line.

    An :data:`OUTPUT_ERRNOS` error (``orchestrator classify ... > full-disk-file``, standard
    output closed early) prints ``error: cannot write standard output: No space left on
    device`` and exits 2; anything still buffered for standard output is dropped, so the
    interpreter's last flush cannot fail again. An
    :class:`~orchestrator.exceptions.OrchestratorError` prints its message and exits 1.

    Returns:
        The :class:`SystemExit` to raise, or ``exc`` itself (re-raise it: a bug keeps its
        traceback).
    """
    if isinstance(exc, OSError) and exc.errno in OUTPUT_ERRNOS:
        with contextlib.suppress(OSError, ValueError):  # the output may be gone for good
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, sys.stdout.fileno())
        where = exc.filename or "an output (standard output or a file)"
        why = exc.strerror or str(exc)
        if exc.errno == errno.EPIPE:
            why += " (its reader closed it early)"
        with contextlib.suppress(OSError):
            fail(f"cannot write {where}: {why}")
        return SystemExit(2)
    if isinstance(exc, OrchestratorError):
        with contextlib.suppress(OSError):
            fail(exc)
        return SystemExit(1)
    return exc


def settings_from_flags(**flags: object) -> Settings:
    """:class:`~orchestrator.config.Settings` with the flags that were given (not ``None``).

    Flags left at ``None`` fall back to the ``ORCH_*`` environment variables, a ``.env`` file,
    then the defaults. ``database_url`` and ``cs_database_url`` take the ``--database-url``
    flag's value, a file path or a URL (:func:`database_url`). Example:
    ``settings_from_flags(server_url=None, concurrency=8, database_url="runs/t.db")``.

    Raises:
        typer.Exit: Exit status 2, after printing ``error: invalid setting: <field> = <value>:
            <rule> (its command-line option, or ORCH_<FIELD>)`` on one line, when a flag or an
            ``ORCH_*`` variable breaks a rule of :class:`~orchestrator.config.Settings`, or
            :func:`database_url`'s message when a database flag is neither a path nor a URL.
    """
    given: dict[str, Any] = {name: value for name, value in flags.items() if value is not None}
    try:
        for name in ("database_url", "cs_database_url"):
            if name in given:
                given[name] = database_url(given[name], flag="--database-url")
    except UserError as exc:
        raise fail(exc, 2) from exc
    try:
        return Settings(**given)
    except ValidationError as exc:
        raise fail(f"invalid setting: {invalid_values(exc)}", 2) from exc


def ensure_checkpoint(settings: Settings) -> Path:
    """Build the offline checkpoint in ``settings.checkpoint_dir`` unless an identical one is
    already there (same spec, same tokenizer corpus from ``settings.data_dir``). A folder that
    ``orchestrator build-checkpoint`` wrote keeps its own spec (its family, shape and planted
    experts); a model folder it did not write (a ``config.json`` without its manifest) is served
    as it is; an empty or missing folder gets the default ERNIE spec.

    Returns:
        The checkpoint folder.

    Raises:
        typer.Exit: Exit 2 after one line when the folder holds files but no checkpoint (they
            are never deleted), or cannot be written.
    """
    from serving.checkpoint import (
        CheckpointSpec,
        build_checkpoint,
        check_target,
        corpus_from_data_dir,
        recorded_spec,
    )
    from serving.errors import CheckpointError
    from serving.training import is_trained

    if is_trained(settings.checkpoint_dir):  # a trained checkpoint is served as it is
        return settings.checkpoint_dir
    recorded = recorded_spec(settings.checkpoint_dir)
    if recorded is None and (settings.checkpoint_dir / "config.json").is_file():
        return settings.checkpoint_dir  # a model folder not built here: never replaced
    corpus = corpus_from_data_dir(settings.data_dir)
    spec = recorded or CheckpointSpec()
    try:
        if not check_target(settings.checkpoint_dir, spec, corpus, overwrite=True):
            with working(f"building offline checkpoint in {settings.checkpoint_dir}"):
                build_checkpoint(settings.checkpoint_dir, spec, corpus, overwrite=True)
    except CheckpointError as exc:
        raise fail(exc, 2) from exc
    return settings.checkpoint_dir


def co_hosted_server(settings: Settings) -> VLLMServer:
    """The co-hosted vLLM server the settings describe (profile, port, log, start timeout);
    not started yet."""
    from orchestrator.core.runtime import serving_profile
    from serving.launcher import VLLMServer

    return VLLMServer(
        serving_profile(settings),
        port=settings.server_port,
        log_path=settings.server_log,
        startup_timeout_s=settings.server_start_timeout_s,
    )


def report_server_event(line: str) -> None:
    """Print a supervisor event (a death with its log tail, a restart) on standard error, as
    text (a log line may hold ``[...]``)."""
    err.print(f"[bold yellow]server:[/] {escape(line)}", highlight=False)


def _interrupt_main_thread(_error: Exception) -> None:
    """Stop the command's main thread as Ctrl-C would (``SIGINT`` to that thread), so its
    cleanup runs: asyncio cancels the running requests, context managers close. The
    command then exits through :func:`supervise`, which turns it into the server's error."""
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


@contextmanager
def supervise(
    server: VLLMServer, *, restart: bool = False, max_restarts: int = 5
) -> Iterator[ServerSupervisor]:
    """Supervise a started co-hosted server while the block runs (then stop supervising; the
    caller stops the server).

    A server that dies is reported at once (exit code and log tail, on standard error). Without
    ``restart`` (or when restarts are used up) the main thread is interrupted and this block
    raises the :class:`~serving.errors.ServerStartError` that says why, which the commands
    print with :func:`fail` and exit 1. With ``restart`` the server is restarted with backoff
    (:class:`~serving.launcher.ServerSupervisor`); each restart is printed and counted.

    Raises:
        serving.errors.ServerStartError: The server died and was not (or could not be)
            restarted.
    """
    from serving.errors import ServerStartError
    from serving.launcher import ServerSupervisor

    supervisor = ServerSupervisor(
        server,
        restart=restart,
        max_restarts=max_restarts,
        report=report_server_event,
        on_give_up=_interrupt_main_thread
        if threading.current_thread() is threading.main_thread()
        else None,
    ).start()
    try:
        try:
            yield supervisor
        finally:
            supervisor.stop()
    except (KeyboardInterrupt, Exception) as exc:
        if supervisor.error is not None and not isinstance(exc, ServerStartError):
            raise supervisor.error from None
        raise
    if supervisor.error is not None:  # gave up while the block was finishing anyway
        raise supervisor.error


@contextmanager
def model_server(
    settings: Settings,
    *,
    launch: bool,
    starting: str | None = None,
    restart: bool = False,
    max_restarts: int = 5,
) -> Iterator[str]:
    """Yield the base URL (``http://host:port/v1``) of a vLLM server that answers ``/health``.

    ``settings.server_url`` when a server answers there; it is left running on exit.
    Otherwise, when ``launch`` is True: build the offline checkpoint if it is missing or
    stale, start a co-hosted server with ``settings.profile`` on ``settings.server_port``
    (its output goes to ``settings.server_log``, which the spinner names), wait until it is
    ready, supervise it (:func:`supervise`: a death is noticed within a second and printed
    with the log tail; the block then stops with the server's error, or the server is
    restarted when ``restart``), and stop it when the block exits, by an error or Ctrl-C too.

    Args:
        settings: Where to look for a server, and how to start one.
        launch: Whether starting a co-hosted server is allowed (False for ``--no-launch``, or
            when the user named a server with ``--server-url``).
        starting: Spinner text while the server starts; by default it names the profile, the
            expected wait and the log file.
        restart: Restart a co-hosted server that dies (``--restart``), with backoff.
        max_restarts: Consecutive restart attempts before giving up.

    Raises:
        ServerUnavailableError: No server answers and ``launch`` is False; the message names
            the URL and ``orchestrator serve``.
        serving.errors.CheckpointError: The checkpoint cannot be built.
        serving.errors.ServerStartError: The co-hosted server exited or never became healthy
            within ``settings.server_start_timeout_s`` seconds, or died while the block ran
            and was not restarted (the error holds the log tail).
    """
    from serving.launcher import server_is_healthy

    if server_is_healthy(settings.server_url):
        found = served_models(settings.server_url)
        if settings.served_model_name in found.models:
            err.print(
                f"using the server already at {escape(settings.server_url)} "
                f"(it serves {escape(settings.served_model_name)})",
                highlight=False,
            )
            yield settings.server_url
            return
        what = found.describe()
        if not launch:
            raise ModelCallError(
                f"the server at {settings.server_url} answers, but {what}, not "
                f"{settings.served_model_name!r}; point --server-url at a server that serves it, "
                "or set ORCH_SERVED_MODEL_NAME to the name it serves"
            )
        port = free_port()
        err.print(
            f"[bold yellow]note:[/] {escape(settings.server_url)} is taken by a server that "
            f"{escape(what)}, not {escape(settings.served_model_name)}; starting the co-hosted "
            f"server on port {port} instead",
            highlight=False,
        )
        settings = settings.model_copy(update={"server_port": port})
    elif not launch:
        raise ServerUnavailableError(settings.server_url, "no answer on /health")
    elif not port_is_free(settings.server_port):
        port = free_port()
        err.print(
            f"[bold yellow]note:[/] port {settings.server_port} is taken by a program that does "
            f"not answer /health; starting the co-hosted server on port {port} instead",
            highlight=False,
        )
        settings = settings.model_copy(update={"server_port": port})
    ensure_checkpoint(settings)
    server = co_hosted_server(settings)
    try:
        with working(
            starting
            or f"starting co-hosted vLLM ({settings.profile}, a few minutes on 2 CPU cores); "
            f"log: {settings.server_log}"
        ):
            server.start()
        with supervise(server, restart=restart, max_restarts=max_restarts):
            yield server.base_url
    finally:
        server.stop()


class ServedModels:
    """What ``GET /v1/models`` of a server said: the model ids, or why none could be read.

    Attributes:
        models: The ``id`` of each entry of ``data`` (empty when unreadable).
        problem: Why the list could not be read (an HTTP status, not JSON...), or None.
    """

    def __init__(self, models: tuple[str, ...], problem: str | None = None) -> None:
        self.models = models
        self.problem = problem

    def describe(self) -> str:
        """``serves 'a', 'b'``, ``serves no model`` or ``does not list its models (why)``."""
        if self.problem is not None:
            return f"does not list its models on /v1/models ({self.problem})"
        if not self.models:
            return "serves no model"
        return "serves " + ", ".join(repr(m) for m in self.models)


def served_models(base_url: str, *, timeout_s: float = 5.0) -> ServedModels:
    """The models the OpenAI-compatible server at ``base_url`` (``http://host:port/v1``)
    lists on ``GET {base_url}/models``; never raises (the problem is in the result)."""
    import httpx

    try:
        response = httpx.get(f"{base_url.rstrip('/')}/models", timeout=timeout_s)
    except httpx.HTTPError as exc:
        return ServedModels((), f"{type(exc).__name__}: {exc}")
    if response.status_code != 200:
        return ServedModels((), f"HTTP {response.status_code}")
    try:
        data = response.json().get("data", [])
        models = tuple(str(entry["id"]) for entry in data if isinstance(entry, dict))
    except (ValueError, AttributeError, KeyError, TypeError) as exc:
        return ServedModels((), f"not an OpenAI model list: {type(exc).__name__}")
    return ServedModels(models)


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on ``host:port`` now."""
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the system picks it)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


#: The help of every ``--db``/``--database-url`` option (:func:`database_url_option`).
DB_HELP = (
    "Telemetry database: a file path (runs/telemetry.db) or a SQLAlchemy URL "
    "(sqlite:///runs/telemetry.db, postgresql+psycopg://...). Default: ORCH_DATABASE_URL."
)

#: The help of the customer-service order store's ``--db``/``--database-url`` options.
CS_DB_HELP = (
    "Order store: a file path (runs/customer_service.db) or a SQLAlchemy URL (sqlite:///..., "
    "postgresql+psycopg://...). Default: ORCH_CS_DATABASE_URL."
)

# The options several commands take, declared once (typer reads ``Annotated`` aliases), so a
# flag's name and help cannot drift between commands.
#: ``--server-url``: a running vLLM server to use (no co-hosted one is started then).
ServerUrlOption = Annotated[str | None, typer.Option(help="Use this running server.")]
#: ``--no-launch``: never start a co-hosted server.
NoLaunchOption = Annotated[
    bool, typer.Option("--no-launch", help="Never start a co-hosted server; fail if none answers.")
]


def _codec(value: str | None) -> str | None:
    """``--encoding`` as Python's codec registry names it; one line and exit 2 when unknown."""
    from orchestrator.spreadsheet.encodings import codec_name

    try:
        return None if value is None else codec_name(value)
    except ValueError as exc:
        raise fail(f"--encoding: {exc}", 2) from None


#: ``--encoding``: the code page of a delimited text file, when the guess is unsure or wrong.
EncodingOption = Annotated[
    str | None,
    typer.Option(
        callback=_codec,
        help="Code page of a .csv file (cp949, shift_jis, big5, cp1252...); guessed when omitted.",
    ),
]
#: ``--database-url``/``--db`` of the telemetry database.
TelemetryDbOption = Annotated[str | None, typer.Option("--database-url", "--db", help=DB_HELP)]
#: ``--database-url``/``--db`` of the customer-service order store.
OrderDbOption = Annotated[str | None, typer.Option("--database-url", "--db", help=CS_DB_HELP)]
#: The telemetry database as two flags, ``db`` and ``database_url`` (the reading commands:
#: :func:`database_url_from_flags` refuses both at once).
DbFlagOption = Annotated[str | None, typer.Option(help=DB_HELP)]
#: ``--until``: the end of a telemetry window.
UntilOption = Annotated[
    str | None, typer.Option(help="Window end, ISO 8601 UTC (default: newest data).")
]
#: ``--model``: only the calls of one served model.
ModelFilterOption = Annotated[str | None, typer.Option(help="Only calls of this served model.")]
#: ``--data-dir``: the real input data folder.
DataDirOption = Annotated[Path | None, typer.Option(help="Real input data folder.")]
#: ``--metrics-port``: where the framework's Prometheus metrics are served.
MetricsPortOption = Annotated[
    int | None, typer.Option(help="Serve the framework's Prometheus metrics here.")
]
#: ``--trace``: the OpenTelemetry exporter of a command that runs turns.
TraceOption = Annotated[
    str | None,
    typer.Option(
        help="OpenTelemetry traces of each turn: console (stderr) or otlp "
        "(OTEL_EXPORTER_OTLP_ENDPOINT); default OTEL_TRACES_EXPORTER, else off."
    ),
]


def add_group(
    app: typer.Typer, name: str, help: str, commands: Mapping[str, Callable[..., Any]]
) -> None:
    """Add the command group ``orchestrator NAME ...`` to ``app``: ``commands`` maps each
    subcommand's name to its function; ``help`` is the group's one-line help."""
    group = typer.Typer(no_args_is_help=True, help=help)
    for command, function in commands.items():
        group.command(command)(function)
    app.add_typer(group, name=name)


@contextmanager
def command_errors(
    usage: tuple[type[BaseException], ...] = (),
    runtime: tuple[type[BaseException], ...] = (),
) -> Iterator[None]:
    """Turn the errors a command expects into ``error: <message>`` and an exit, no traceback.

    Errors of the ``usage`` kinds (the user's mistake) exit 2; an
    :class:`~orchestrator.exceptions.OrchestratorError`, a ``serving.errors.ServingError`` or
    an error of the ``runtime`` kinds exits 1. ``usage`` is tried first, so a subclass of
    ``OrchestratorError`` named there exits 2. Example: ``with
    command_errors(usage=(HandoffError,)): ...``.

    Raises:
        typer.Exit: Status 2 or 1, after :func:`fail` printed the message.
    """
    from serving.errors import ServingError

    failures: tuple[type[BaseException], ...] = (OrchestratorError, ServingError, *runtime)
    try:
        yield
    except usage as exc:
        raise fail(exc, 2) from exc
    except failures as exc:
        raise fail(exc) from exc


@contextmanager
def served_settings(
    settings: Settings,
    *,
    server_url: str | None,
    no_launch: bool,
    usage: tuple[type[BaseException], ...] = (),
    runtime: tuple[type[BaseException], ...] = (),
    **server: Any,
) -> Iterator[Settings]:
    """``settings`` with ``server_url`` set to a vLLM server that answers, for the block,
    whose errors (the server's start and the block's own) end the command as
    :func:`command_errors` ends it (``usage``, ``runtime``: its arguments).

    :func:`model_server` with a co-hosted start allowed unless ``--no-launch`` was given or
    the user named a server (``server_url``, the flag's value); ``server`` holds its other
    keywords (``restart``, ``starting``). Example: ``with served_settings(settings,
    server_url=server_url, no_launch=no_launch, usage=(HandoffError,)) as served: ...``.

    Raises:
        typer.Exit: As :func:`command_errors` raises it.
    """
    with (
        command_errors(usage=usage, runtime=runtime),
        model_server(settings, launch=not no_launch and server_url is None, **server) as url,
    ):
        yield settings.model_copy(update={"server_url": url})


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
#: Dialect names of SQLAlchemy URLs: ``sqlite:x.db`` (no ``//``) is a broken URL, not a path.
_DIALECT = re.compile(
    r"^(sqlite|postgres|postgresql|mysql|mariadb|oracle|mssql|duckdb)(\+[A-Za-z0-9_]+)?:",
    re.IGNORECASE,
)


def missing_sqlite_file(url: str) -> str | None:
    """The file a SQLite ``url`` names when it does not exist, else None (another backend, in
    memory, a ``file:`` URI, or a malformed URL, which its opener names). A command that only
    reads checks it first: opening such a URL makes an empty database there, and a mistyped
    path then reads as "nothing there" (tester13 K)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    path = parsed.database or ""
    a_file = path not in ("", ":memory:") and not path.startswith("file:")
    if parsed.get_backend_name() == "sqlite" and a_file and not Path(path).is_file():
        return path
    return None


def require_order_store(url: str) -> None:
    """Refuse an order store ``url`` whose SQLite file does not exist (:func:`missing_sqlite_file`):
    opening it would make an empty store there, and a mistyped ``--db`` would then read as "no
    conversation waits" or chat as a customer the store lacks.

    Raises:
        typer.Exit: Code 2, after one line naming the file and the fix.
    """
    if (missing := missing_sqlite_file(url)) is not None:
        raise fail(
            f"order store {missing} does not exist; check --db (or ORCH_CS_DATABASE_URL), "
            "or make one with `orchestrator store seed`",
            2,
        )


def database_url(value: str | Path | None, *, flag: str = "--db") -> str | None:
    """The SQLAlchemy URL of a ``--db``/``--database-url`` value, which is either a URL
    (``dialect[+driver]://...``, returned as given once it parses) or a file path (an SQLite
    file: ``sqlite:///`` + the path, ``~`` expanded). None stays None (the settings' default).

    Every command reads its database flags through this one function (and
    :func:`database_url_from_flags`), so a value means the same thing everywhere.

    Raises:
        UserError: The value is empty, holds a NUL byte, looks like a URL but does not parse
            (``sqlite:runs/t.db``: a URL needs ``//``), or names a folder.
    """
    if value is None:
        return None
    text = str(value)
    example = "give a file path (runs/telemetry.db) or a SQLAlchemy URL (sqlite:///runs/t.db)"
    if not text.strip():
        raise UserError(f"{flag} is empty; {example}")
    if "\x00" in text:
        raise UserError(f"{flag} {text!r} holds a NUL byte; {example}")
    if _URL.match(text):
        from sqlalchemy.engine import make_url

        try:
            make_url(text).get_dialect()  # parses, and names a dialect SQLAlchemy has
        except Exception as exc:  # ArgumentError, NoSuchModuleError, ValueError: no common base
            raise UserError(
                f"{flag} {text!r} is neither a SQLAlchemy URL ({exc}) nor a file path; {example}"
            ) from exc
        return text
    if _DIALECT.match(text):
        raise UserError(
            f"{flag} {text!r} is neither a SQLAlchemy URL (a URL needs '//' after the "
            f"dialect, e.g. sqlite:///runs/t.db) nor a file path; {example}"
        )
    path = Path(text).expanduser()
    if path.is_dir():
        raise UserError(
            f"{flag} {text!r} is a folder, not a database file; give the file inside it, "
            f"e.g. {path / 'telemetry.db'}"
        )
    return f"sqlite:///{path}"


def database_url_from_flags(
    db: str | Path | None, database_url_flag: str | None, *, code: int = 2
) -> str | None:
    """The URL of a command's ``--db`` and ``--database-url`` flags (either may be a path or
    a URL, see :func:`database_url`); None when neither is given.

    Raises:
        typer.Exit: Exit status ``code`` after printing why, when both are given or the value
            is neither a path nor a URL.
    """
    if db is not None and database_url_flag is not None:
        raise fail("give --db or --database-url, not both (each takes a path or a URL)", code)
    try:
        if db is not None:
            return database_url(db, flag="--db")
        return database_url(database_url_flag, flag="--database-url")
    except UserError as exc:
        raise fail(exc, code) from exc
