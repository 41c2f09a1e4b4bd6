"""``orchestrator ui``: the Chainlit chat front end, on the co-hosted model server.

It uses the configured vLLM server, or starts a co-hosted one; serves the framework's event
stream (:mod:`orchestrator.ui.service`) on ``127.0.0.1:<ui-service-port>``; logs the STATS line
every minute (and serves the framework's Prometheus metrics with ``--metrics-port``); then runs
``chainlit run ui/app.py`` from its own environment (``Settings.ui_chainlit``, installed by
``bash scripts/install.sh`` into ``.venv-ui``) until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Annotated

import httpx
import typer
import uvicorn

from orchestrator.cli.chat import start_tracing
from orchestrator.cli.common import console, fail, model_server, settings_from_flags
from orchestrator.cli.status import observe_server
from orchestrator.config import Settings
from orchestrator.exceptions import OrchestratorError
from orchestrator.observability import shutdown_tracing
from orchestrator.ui import build_app
from serving.errors import ServingError

_APP = Path(__file__).resolve().parents[2] / "ui" / "app.py"


#: Seconds the event service may take to open (imports, stores, workflows): minutes on a
#: loaded 2-core machine.
SERVICE_START_TIMEOUT_S = 300.0
#: Seconds the event service keeps the chat app's idle connection open between turns.
UI_KEEPALIVE_S = 600.0


def _serve_api(settings: Settings, *, trace_from_env: bool = True) -> uvicorn.Server:
    """Start the event-stream service in a daemon thread; wait until it answers.

    ``trace_from_env``: the service traces its turns as ``OTEL_TRACES_EXPORTER`` says when
    tracing is not on already (False for ``--trace off``).

    Raises:
        OrchestratorError: It stopped while starting (its port may be taken, or opening a
            store failed: see the log above), or did not start within
            :data:`SERVICE_START_TIMEOUT_S`.
    """
    config = uvicorn.Config(
        build_app(settings, trace_from_env=trace_from_env),
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


def ui(
    port: Annotated[int | None, typer.Option(help="Port of the chat UI.")] = None,
    service_port: Annotated[int | None, typer.Option(help="Port of the event service.")] = None,
    metrics_port: Annotated[
        int | None, typer.Option(help="Serve the framework's Prometheus metrics here.")
    ] = None,
    server_url: Annotated[str | None, typer.Option(help="Use this running server.")] = None,
    no_launch: Annotated[bool, typer.Option("--no-launch", help="Never start a server.")] = False,
    trace: Annotated[
        str | None,
        typer.Option(
            help="OpenTelemetry traces of each turn: console (stderr) or otlp "
            "(OTEL_EXPORTER_OTLP_ENDPOINT); default OTEL_TRACES_EXPORTER, else off."
        ),
    ] = None,
) -> None:
    """The Chainlit chat UI: streamed replies through the framework, expert trace, presets,
    spreadsheet reports, a moderation panel and handoff approval."""
    settings = settings_from_flags(
        ui_port=port,
        ui_service_port=service_port,
        metrics_port=metrics_port,
        server_url=server_url,
    )
    if not settings.ui_chainlit.is_file():
        raise fail(
            f"no chainlit at {settings.ui_chainlit}: install the UI environment with "
            "`bash scripts/install.sh` (it builds .venv-ui), or set ORCH_UI_CHAINLIT",
            2,
        )
    start_tracing(trace)
    try:
        with model_server(settings, launch=not no_launch and server_url is None) as url:
            settings = settings.model_copy(update={"server_url": url})
            api = _serve_api(settings, trace_from_env=trace != "off")
            service = f"http://127.0.0.1:{settings.ui_service_port}"
            env = {**os.environ, "ORCH_UI_SERVICE_URL": service}
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
                chainlit = subprocess.Popen(command, cwd=_APP.parent, env=env)
                console.print(
                    f"chat UI on http://127.0.0.1:{settings.ui_port} (service {service}, "
                    f"model server {url}); Ctrl-C stops"
                )
                try:
                    with contextlib.suppress(KeyboardInterrupt):
                        chainlit.wait()
                finally:
                    chainlit.terminate()
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        chainlit.wait(timeout=10)
                    api.should_exit = True
    except (OrchestratorError, ServingError, httpx.HTTPError) as exc:
        raise fail(exc) from exc
    finally:
        shutdown_tracing()


def register(app: typer.Typer) -> None:
    """Add ``ui`` to the root app."""
    app.command("ui")(ui)
