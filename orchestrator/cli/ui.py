"""``orchestrator ui``: the Chainlit chat front end, on the co-hosted model server.

It uses the configured vLLM server, or starts a co-hosted one; serves the framework's event
stream (:mod:`orchestrator.ui.service`) on ``127.0.0.1:<ui-service-port>``; logs the STATS line
every minute (and serves the framework's Prometheus metrics with ``--metrics-port``); then runs
``chainlit run ui/app.py`` from its own environment (``Settings.ui_chainlit``, installed by
``bash scripts/install.sh`` into ``.venv-ui``) until Ctrl-C or SIGTERM, which stop Chainlit's
whole process group and a co-hosted model server before it exits.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Annotated

import bcrypt
import httpx
import typer
import uvicorn
from pydantic import ValidationError
from sqlalchemy.engine import make_url

from orchestrator.cli.chat import start_tracing
from orchestrator.cli.common import (
    MetricsPortOption,
    NoLaunchOption,
    ServerUrlOption,
    TraceOption,
    console,
    fail,
    missing_sqlite_file,
    served_settings,
    settings_from_flags,
)
from orchestrator.cli.status import observe_server
from orchestrator.cli.storage import check_storage
from orchestrator.config import Settings
from orchestrator.core.registry import load_workflows
from orchestrator.exceptions import OrchestratorError, UserError, storage_error
from orchestrator.observability import shutdown_tracing
from orchestrator.outfiles import atomic_write_text, output_files
from orchestrator.request import Request, decider_name
from orchestrator.ui import build_app

_APP = Path(__file__).resolve().parents[2] / "ui" / "app.py"


#: Seconds the event service may take to open (imports, stores, workflows): minutes on a
#: loaded 2-core machine.
SERVICE_START_TIMEOUT_S = 300.0
#: Seconds the event service keeps the chat app's idle connection open between turns.
UI_KEEPALIVE_S = 600.0


def _serve_api(settings: Settings, *, secret: str, trace_from_env: bool = True) -> uvicorn.Server:
    """Start the event-stream service in a daemon thread; wait until it answers.

    ``trace_from_env``: the service traces its turns as ``OTEL_TRACES_EXPORTER`` says when
    tracing is not on already (False for ``--trace off``).

    Raises:
        OrchestratorError: It stopped while starting (its port may be taken, or opening a
            store failed: see the log above), or did not start within
            :data:`SERVICE_START_TIMEOUT_S`.
    """
    config = uvicorn.Config(
        build_app(settings, trace_from_env=trace_from_env, secret=secret),
        host="127.0.0.1",
        port=settings.ui_service_port,
        log_level="warning",
        lifespan="on",
        # the app's one client keeps its connection between turns (ui/app.py KEEPALIVE_S);
        # uvicorn's default closes it after 5 s idle, so most turns would connect again
        timeout_keep_alive=int(UI_KEEPALIVE_S),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="orchestrator-ui-service", daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVICE_START_TIMEOUT_S
    while time.monotonic() < deadline and thread.is_alive():
        if server.started:
            return server
        time.sleep(0.2)
    why = "stopped while starting" if not thread.is_alive() else "did not start in time"
    raise OrchestratorError(
        f"the UI service {why} on 127.0.0.1:{settings.ui_service_port} (see the log above); "
        "if the port is taken, pick another with --service-port or ORCH_UI_SERVICE_PORT"
    )


def history_url(settings: Settings) -> str:
    """The SQLAlchemy URL of the chat history (Chainlit's data layer, async drivers):
    ``ORCH_UI_DATABASE_URL`` when set, else the project's database URL (``ORCH_DATABASE_URL``)
    with its async driver: ``sqlite+aiosqlite`` or ``postgresql+psycopg`` (psycopg 3 is async
    too).

    A relative SQLite path is made absolute against this process's working folder, where the
    telemetry store opens it: Chainlit runs in ``ui/``, where the same relative path names
    another file (in a folder that does not exist, so every sign-in failed)."""
    url = _absolute_sqlite(os.environ.get("ORCH_UI_DATABASE_URL") or settings.database_url)
    for plain, driver in (
        ("sqlite:", "sqlite+aiosqlite:"),
        ("postgresql+psycopg2:", "postgresql+psycopg:"),
        ("postgresql:", "postgresql+psycopg:"),
        ("postgres:", "postgresql+psycopg:"),
    ):
        if url.startswith(plain):
            return driver + url.removeprefix(plain)
    return url


def _absolute_sqlite(url: str) -> str:
    """``url`` with a relative SQLite file path resolved against the working folder."""
    parsed = make_url(url)
    path = parsed.database
    if not parsed.drivername.startswith("sqlite") or not path or path == ":memory:":
        return url
    if path.startswith("file:") or Path(path).is_absolute():
        return url
    return parsed.set(database=str(Path(path).resolve())).render_as_string(hide_password=False)


def ui_env(settings: Settings, forwarded_allow_ips: str = "") -> dict[str, str]:
    """The environment of the Chainlit app: the service's URL, the secret its caller tokens
    are signed with (``ORCH_UI_SECRET``, a random one per run when unset), Chainlit's own
    session secret (``CHAINLIT_AUTH_SECRET``, likewise), the user file, the history URL and
    uvicorn's ``FORWARDED_ALLOW_IPS``: the proxies whose ``X-Forwarded-For`` is believed
    (comma-separated addresses or networks; "" none, the default; ui/throttle.py)."""
    env = {**os.environ}
    env["FORWARDED_ALLOW_IPS"] = forwarded_allow_ips
    env["ORCH_UI_SERVICE_URL"] = f"http://127.0.0.1:{settings.ui_service_port}"
    env.setdefault("ORCH_UI_SECRET", secrets.token_urlsafe(32))
    env.setdefault("CHAINLIT_AUTH_SECRET", secrets.token_urlsafe(48))
    env["ORCH_UI_USERS"] = str(users_file())
    env["ORCH_UI_DATABASE_URL"] = history_url(settings)
    return env


def proxies(value: str) -> str:
    """``--forwarded-allow-ips`` checked: comma-separated IP addresses or networks (as uvicorn
    reads them: ``10.0.0.0/24``, not ``10.0.0.5/24``), ``*`` for any, or "" for none; returns
    it without blanks.

    Raises:
        typer.Exit: (2, one line) an entry that is none of these: uvicorn would take it as a
            name no client ever has, and trust no proxy without a word.
    """
    items = [item.strip() for item in value.split(",") if item.strip()]
    for item in items:
        try:
            if item != "*":
                (ipaddress.ip_network if "/" in item else ipaddress.ip_address)(item)
        except ValueError:
            raise fail(
                f"--forwarded-allow-ips: {item!r} is not an IP address or network (e.g. "
                "10.0.0.5, 10.0.0.0/24, ::1, or * for any proxy)",
                2,
            ) from None
    return ",".join(items)


def users_file() -> Path:
    """The UI's user file: ``ORCH_UI_USERS``, else ``runs/ui_users.json`` in the project."""
    return Path(os.environ.get("ORCH_UI_USERS") or _APP.parents[1] / "runs" / "ui_users.json")


def ui(
    port: Annotated[int | None, typer.Option(help="Port of the chat UI.")] = None,
    service_port: Annotated[int | None, typer.Option(help="Port of the event service.")] = None,
    metrics_port: MetricsPortOption = None,
    server_url: ServerUrlOption = None,
    no_launch: NoLaunchOption = False,
    trace: TraceOption = None,
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(
            envvar="FORWARDED_ALLOW_IPS",
            help="Addresses or networks of reverse proxies whose X-Forwarded-For is believed "
            "(comma-separated, as uvicorn's option; default: none, the connection's address).",
        ),
    ] = "",
) -> None:
    """The Chainlit chat UI: streamed replies through the framework, expert trace, presets,
    spreadsheet reports, a moderation panel and handoff approval."""
    forwarded_allow_ips = proxies(forwarded_allow_ips)
    settings = settings_from_flags(
        ui_port=port,
        ui_service_port=service_port,
        metrics_port=metrics_port,
        server_url=server_url,
    )
    start_tracing(trace)  # a bad flag is named before anything is opened
    try:  # the start-up check (a plugin that does not load, a route and its workflows) as
        load_workflows()  # run and batch make it: one line, not the service's traceback
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    check_storage(settings, conversations=True)  # one line per storage failure, up front
    if not settings.ui_chainlit.is_file():
        raise fail(
            f"no chainlit at {settings.ui_chainlit}: install the UI environment with "
            "`bash scripts/install.sh` (it builds .venv-ui), or set ORCH_UI_CHAINLIT",
            2,
        )
    if not read_users(users_file()):
        raise fail(
            f"no chat UI users in {users_file()}: add one with `orchestrator ui-user NAME --role "
            "customer --customer C00001` (or --role operator); see docs/ui.md",
            2,
        )
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        with served_settings(
            settings, server_url=server_url, no_launch=no_launch, runtime=(httpx.HTTPError,)
        ) as settings:
            url = settings.server_url
            env = ui_env(settings, forwarded_allow_ips)
            api = _serve_api(settings, secret=env["ORCH_UI_SECRET"], trace_from_env=trace != "off")
            service = env["ORCH_UI_SERVICE_URL"]
            command = [
                str(settings.ui_chainlit),
                "run",
                str(_APP),
                "--headless",
                "--host",
                "127.0.0.1",
                "--port",
                str(settings.ui_port),
            ]
            with observe_server(settings, url):
                # its own process group, which the stop signals as a whole (Chainlit's workers)
                chainlit = subprocess.Popen(
                    command, cwd=_APP.parent, env=env, start_new_session=True
                )
                console.print(
                    f"chat UI on http://127.0.0.1:{settings.ui_port} (service {service}, "
                    f"model server {url}); Ctrl-C stops"
                )
                try:
                    with contextlib.suppress(KeyboardInterrupt):
                        chainlit.wait()
                finally:
                    stop_group(chainlit)
                    api.should_exit = True
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutdown_tracing()


def _sigterm(_signum: int, _frame: FrameType | None) -> None:
    """SIGTERM (``kill``, systemd, ``docker stop``) stops the UI as Ctrl-C does: the
    ``finally`` blocks stop Chainlit and a co-hosted model server (the default action
    ended this process at once and left Chainlit listening: tester4 finding 13)."""
    raise KeyboardInterrupt


def stop_group(child: subprocess.Popen[bytes], grace_s: float = 10.0) -> int:
    """SIGTERM the process group that ``child`` leads and wait for it; SIGKILL the group
    when it is still there after ``grace_s`` seconds, or when the leader left members behind.

    Returns:
        The child's exit status.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError, PermissionError):  # none left: the usual case
        os.killpg(child.pid, signal.SIGKILL)
    return child.wait()


#: Roles a UI user may have (orchestrator/ui/auth.py).
ROLES = ("customer", "operator")


def ui_user(
    name: Annotated[str, typer.Argument(help="The user name they sign in with.")],
    role: Annotated[str, typer.Option(help="customer or operator.")] = "customer",
    customer: Annotated[
        str | None, typer.Option(help="The customer id a customer is (e.g. C00001).")
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Remove the user.")] = False,
) -> None:
    """Add, change or remove a chat UI user (bcrypt-hashed password).

    The user file is ORCH_UI_USERS (default runs/ui_users.json); the password is kept as a
    bcrypt hash, never as typed."""
    path = users_file()
    users = read_users(path)
    if remove:
        if users.pop(name, None) is None:
            raise fail(f"no user {name!r} in {path}", 2)
        write_users(path, users)
        console.print(f"removed {name} from {path}")
        return
    _check_user(name, role, customer)
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
    if len(password) < 8:
        raise fail("a password has 8 characters or more", 2)
    users[name] = {
        "role": role,
        "customer_id": customer if role == "customer" else None,
        "password_hash": bcrypt.hashpw(password.encode(), bcrypt.gensalt()).decode(),
    }
    write_users(path, users)
    console.print(
        f"{name} ({role}{' ' + customer if customer and role == 'customer' else ''}) in {path}"
    )


def _check_user(name: str, role: str, customer: str | None) -> None:
    """Refuse, in one line and exit 2, a user no request could use (tester15 T15-7): a
    customer id a turn refuses (``"C00001 "``), an operator whose decisions the audit refuses
    (``policy``, an id: :func:`~orchestrator.request.decider_name`), an operator given a
    customer id, a role that is neither, a name that is no user name."""
    if role not in ROLES:
        raise fail(f"--role must be customer or operator, not {role!r}", 2)
    if role == "customer" and not customer:
        raise fail("a customer needs --customer ID (their customer id, e.g. C00001)", 2)
    if role == "operator" and customer is not None:
        raise fail("an operator is no customer: drop --customer (or use --role customer)", 2)
    if not re.fullmatch(r"[A-Za-z0-9_.@-]{1,64}", name):
        raise fail("a user name is 1-64 letters, digits or _ . @ -", 2)
    try:
        if role == "operator":
            decider_name(name)  # the name their decisions are recorded under
        else:
            Request(text="probe", customer_id=customer)
    except UserError as exc:
        raise fail(str(exc).replace("--by", "an operator's user name"), 2) from exc
    except ValidationError as exc:
        raise fail(
            f"--customer {customer!r} is not a customer id: use 1 to 16 letters, digits, '_' "
            "or '-'",
            2,
        ) from exc


def read_users(path: Path) -> dict[str, dict[str, str | None]]:
    """The users of a user file (``{"users": {name: {role, customer_id, password_hash}}}``);
    ``{}`` when the file does not exist. Raises typer.Exit (via fail) on a broken file."""
    if not path.is_file():
        return {}
    try:
        users = json.loads(path.read_text(encoding="utf-8")).get("users", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise fail(f"{path} is not a user file ({exc}); fix or remove it", 2) from exc
    if not isinstance(users, dict) or not all(isinstance(u, dict) for u in users.values()):
        raise fail(
            f'{path} is not a user file ("users" must map each name to its role, customer and '
            "password hash); fix or remove it",
            2,
        )
    return dict(users)


def write_users(path: Path, users: dict[str, dict[str, str | None]]) -> None:
    """Write the user file whole or not at all, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with output_files(path, mode=0o600) as (tmp,):
        tmp.write_text(json.dumps({"users": users}, indent=2, sort_keys=True), encoding="utf-8")


FEEDBACK_QUERY = """
SELECT f."threadId" AS thread_id, t."userIdentifier" AS user_name, f."forId" AS step_id,
       f."value" AS value, f."comment" AS comment, s."createdAt" AS created_at
FROM feedbacks f
LEFT JOIN threads t ON t."id" = f."threadId"
LEFT JOIN steps s ON s."id" = f."forId"
ORDER BY s."createdAt"
"""


def ui_feedback(
    out: Annotated[
        Path | None, typer.Option(help="Write JSON lines here (default stdout).")
    ] = None,
) -> None:
    """Export the chat UI's thumbs feedback as JSON lines.

    One line per rating: thread, user, the rated run's step id, value (1 up, 0 down), comment,
    time; read from the chat history (ORCH_UI_DATABASE_URL, default the project's database)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import SQLAlchemyError

    settings = settings_from_flags()
    url = os.environ.get("ORCH_UI_DATABASE_URL") or settings.database_url
    url = url.replace("+aiosqlite", "")
    if (missing := missing_sqlite_file(url)) is not None:
        raise fail(
            f"chat history database {missing} does not exist: the chat UI has not run on it "
            "yet (start it with `orchestrator ui`, or point ORCH_UI_DATABASE_URL at the "
            "database it used)",
            2,
        )
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(text(FEEDBACK_QUERY))]
    except SQLAlchemyError as exc:
        sqlite_file = engine.url.get_backend_name() == "sqlite" and engine.url.database
        shown = sqlite_file or engine.url.render_as_string(hide_password=True)
        damaged = storage_error(exc, shown, "chat history database")
        if damaged is not None:  # damaged, locked, unreadable: not "the UI never ran"
            raise fail(str(damaged), 2) from exc
        raise fail(
            f"no chat feedback in {shown}: the chat UI has not run on it yet (start it with "
            "`orchestrator ui`, or point ORCH_UI_DATABASE_URL at the database it used)",
            2,
        ) from exc
    finally:
        engine.dispose()
    lines = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows)
    if out is None:
        sys.stdout.write(lines)
    else:
        atomic_write_text(out, lines)
        console.print(f"{len(rows)} feedback row(s) to {out}")


def register(app: typer.Typer) -> None:
    """Add ``ui``, ``ui-user`` and ``ui-feedback`` to the root app."""
    app.command("ui")(ui)
    app.command("ui-user")(ui_user)
    app.command("ui-feedback")(ui_feedback)
