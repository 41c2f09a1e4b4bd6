"""The main job and how a text is routed: ``orchestrator run`` and ``classify``.

Commands:
    run       the main job: N real requests end to end (classifier, workflow, vLLM), each
              printed with its route and top experts, then the expert load table
    classify  show how the classifier routes one text (route, confidence, fired signals)

(``load``, the expert load table of a telemetry database, is :mod:`orchestrator.cli.load`.)
The runtime (client, LangGraph, workflows, store) is imported when ``run`` runs, not when the
module is imported.
"""

from __future__ import annotations

import asyncio
import signal
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from orchestrator.cli.common import (
    DataDirOption,
    NoLaunchOption,
    ServerUrlOption,
    TelemetryDbOption,
    console,
    err,
    fail,
    served_settings,
    settings_from_flags,
    working,
)
from orchestrator.cli.console import print_expert_load, request_lines
from orchestrator.cli.interrupt import CtrlC, ctrl_c, interrupted
from orchestrator.exceptions import OrchestratorError

if TYPE_CHECKING:
    from orchestrator.config import Settings
    from orchestrator.core.dispatcher import RequestOutcome
    from orchestrator.core.workflow import Workflow
    from orchestrator.request import Request
    from orchestrator.telemetry import TelemetryStore


def run(
    limit: Annotated[int, typer.Option("--limit", "-n", help="Requests to run.")] = 24,
    kind: Annotated[str, typer.Option(help="Data folder under the data dir.")] = "customer_service",
    server_url: ServerUrlOption = None,
    no_launch: NoLaunchOption = False,
    database_url: TelemetryDbOption = None,
    data_dir: DataDirOption = None,
    concurrency: Annotated[int | None, typer.Option(help="Requests in flight.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    restart: Annotated[
        bool,
        typer.Option(
            "--restart/--no-restart",
            help="Restart a co-hosted server that dies (with backoff) instead of stopping the "
            "job with exit 1.",
        ),
    ] = False,
) -> None:
    """The main job: real requests → classifier → workflow → vLLM → experts in SQLite.

    A co-hosted server is supervised: if it dies, its log tail is printed within a second and
    the job stops (requests not started are reported, none is left running) with exit 1, or,
    with ``--restart``, the server is restarted with backoff. Ctrl-C prints one line and exits
    130; while the server starts it is killed at once (its process group), within 2 s.
    """
    settings = settings_from_flags(
        server_url=server_url,
        database_url=database_url,
        data_dir=data_dir,
        concurrency=concurrency,
    )
    from orchestrator.core.registry import load_workflows
    from orchestrator.datasets import sample_requests
    from orchestrator.telemetry import TelemetryStore

    try:
        # the start-up check of the installed workflows against the declared routes comes
        # before the server starts (minutes on CPU): a mismatch is one line and exit 2
        workflows = load_workflows()
        requests = sample_requests(settings.data_dir, limit, kind=kind, seed=seed)
        store = TelemetryStore(settings.database_url)
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc

    handler: CtrlC | None = None
    try:
        with (
            ctrl_c("stopping (Ctrl-C): the server is stopped, no request is started") as handler,
            served_settings(
                settings, server_url=server_url, no_launch=no_launch, restart=restart
            ) as served,
        ):
            # The server answers: from here a Ctrl-C cancels the running requests (asyncio's
            # own handler) and the server is stopped politely on the way out.
            handler.starting = False
            signal.signal(signal.SIGINT, signal.default_int_handler)
            code = asyncio.run(_run_requests(served, store, requests, workflows))
    except KeyboardInterrupt:
        if handler is None or not handler.seen:  # asyncio stopped the requests: say so once
            err.print("stopped (Ctrl-C)", markup=False, highlight=False)
        raise interrupted() from None
    finally:
        store.close()
    raise typer.Exit(code)


async def _run_requests(
    settings: Settings,
    store: TelemetryStore,
    requests: list[Request],
    workflows: list[Workflow[Any, Any]],
) -> int:
    """Handle the requests on ``settings.server_url``, printing each outcome, then the load
    table of this run's calls; 1 when a request failed or the batch stopped early, else 0."""
    from orchestrator.core.batch import run_batch
    from orchestrator.core.runtime import configured_orchestrator, make_client

    with working(
        "loading the routing replay model"
        if settings.profile == "cpu"
        else "reading the model config"
    ):
        client = make_client(settings)
    try:
        await client.check()
        # the installed workflows (entry points), checked against the declared routes
        orchestrator = configured_orchestrator(settings, client, store, workflows)
        texts = {r.id: (r.text, r.metadata.get("source")) for r in requests}
        started = datetime.now(UTC)
        console.print(
            f"[bold]{len(requests)} requests[/] from {settings.data_dir} → "
            f"{settings.server_url} (model {settings.served_model_name}); "
            f"telemetry: {settings.database_url}"
        )
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        ) as progress:
            task = progress.add_task("requests", total=len(requests))

            def show(outcome: RequestOutcome) -> None:
                text, source = texts[outcome.request_id]
                progress.console.print(request_lines(outcome, text, source))
                progress.advance(task)

            report = await run_batch(
                orchestrator, requests, concurrency=settings.concurrency, on_outcome=show
            )
    finally:
        await client.aclose()

    counts: dict[str, int] = {}
    for outcome in report.outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    console.print("outcomes: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    try:
        print_expert_load(console, store, settings, since=started)
    except OrchestratorError as exc:
        console.print(f"[yellow]no load table:[/] {escape(str(exc))}")
    for outcome in report.failed:
        err.print(f"[red]request {outcome.request_id} failed:[/] {escape(outcome.error or '')}")
    if report.aborted:
        err.print(
            f"[bold red]stopped early[/] ({len(report.not_started)} requests not started):"
            f" {escape(report.aborted)}"
        )
    return 1 if report.failed or report.aborted else 0


def register(app: typer.Typer) -> None:
    """Add ``run`` and ``classify`` to the root app (``load`` is in
    :mod:`orchestrator.cli.load`)."""
    from orchestrator.cli.classifier import classify_cmd

    app.command("run")(run)
    # One implementation with `orchestrator classifier classify` (TEXT, --file PATH or - for stdin).
    app.command("classify")(classify_cmd)
