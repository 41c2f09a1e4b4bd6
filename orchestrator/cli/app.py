"""The ``orchestrator`` command line (typer + rich).

Commands:
    run               the main job: N real requests end to end, then the expert load table
    serve             start the co-hosted vLLM server in the foreground
    build-checkpoint  build the offline ERNIE-4.5 MoE checkpoint (random weights)
    load              print the expert load table of a telemetry database
    skew              expert-skew report: hot/dead experts, fingerprints, drift, outliers
    classify          show how the classifier routes one text
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from orchestrator.analysis.load import expert_load
from orchestrator.classifier import RuleClassifier
from orchestrator.cli.classifier import app as classifier_app
from orchestrator.cli.console import invalid_values, print_load, request_lines
from orchestrator.cli.moderation import register as register_moderation
from orchestrator.cli.report import report as report_cmd
from orchestrator.cli.skew import skew as skew_cmd
from orchestrator.config import Settings
from orchestrator.core.batch import run_batch
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.runtime import make_client, serving_profile
from orchestrator.datasets import sample_requests
from orchestrator.exceptions import OrchestratorError, ServerUnavailableError
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from serving.checkpoint import (
    CheckpointSpec,
    PlantedExpert,
    build_checkpoint,
    corpus_from_data_dir,
    is_current,
)
from serving.errors import ServingError
from serving.launcher import VLLMServer, server_is_healthy

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Route requests into LangGraph workflows on a self-hosted ERNIE-4.5 MoE "
    "and record which experts the router used.",
)
console = Console()
err = Console(stderr=True)
app.add_typer(classifier_app, name="classifier")
register_moderation(app)
app.command("report")(report_cmd)
app.command("skew")(skew_cmd)


def _settings(**overrides: object) -> Settings:
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        err.print(f"[bold red]error:[/] invalid setting: {escape(invalid_values(exc))}")
        raise typer.Exit(2) from exc


def _fail(exc: BaseException, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {escape(str(exc))}")
    return typer.Exit(code)


def ensure_checkpoint(settings: Settings) -> Path:
    """Build the offline checkpoint unless an identical one is already there."""
    corpus = corpus_from_data_dir(settings.data_dir)
    spec = CheckpointSpec()
    if not is_current(settings.checkpoint_dir, spec, corpus):
        with console.status(f"building offline checkpoint in {settings.checkpoint_dir}"):
            build_checkpoint(settings.checkpoint_dir, spec, corpus, overwrite=True)
    return settings.checkpoint_dir


@app.command("build-checkpoint")
def build_checkpoint_cmd(
    out: Annotated[Path | None, typer.Option(help="Folder to write.")] = None,
    seed: Annotated[int, typer.Option(help="Weight seed.")] = 0,
    layers: Annotated[int, typer.Option(help="Decoder layers (layer 0 is dense).")] = 4,
    overwrite: Annotated[bool, typer.Option(help="Replace a different checkpoint.")] = False,
    plant: Annotated[
        list[str] | None,
        typer.Option(
            help="Plant known routing through the gate bias, LAYER:EXPERT:hot|dead|BIAS "
            "(repeatable), e.g. --plant 1:3:hot --plant 1:7:dead."
        ),
    ] = None,
) -> None:
    """Build the offline ERNIE-4.5 MoE checkpoint (real architecture, random weights)."""
    settings = _settings(checkpoint_dir=out)
    try:
        planted = tuple(PlantedExpert.parse(p) for p in plant or ())
        spec = CheckpointSpec(seed=seed, num_hidden_layers=layers, planted=planted)
        with console.status("training tokenizer and writing weights"):
            path = build_checkpoint(
                settings.checkpoint_dir,
                spec,
                corpus_from_data_dir(settings.data_dir),
                overwrite=overwrite,
            )
    except (ServingError, ValueError) as exc:  # ValueError: a bad --plant or spec field
        raise _fail(exc, 2) from exc
    console.print(f"checkpoint ready: {path}")


@app.command()
def serve(
    profile: Annotated[str | None, typer.Option(help="cpu or gpu.")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port.")] = None,
) -> None:
    """Start the co-hosted vLLM server and keep it up until Ctrl-C."""
    settings = _settings(profile=profile, server_port=port)
    if settings.profile == "cpu":
        ensure_checkpoint(settings)
    server = VLLMServer(
        serving_profile(settings),
        port=settings.server_port,
        log_path=settings.server_log,
        startup_timeout_s=settings.server_start_timeout_s,
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        with console.status(f"starting vLLM ({settings.profile}); log: {settings.server_log}"):
            server.start()
        console.print(f"serving on {server.base_url} (log {settings.server_log}); Ctrl-C stops")
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    except ServingError as exc:
        raise _fail(exc) from exc
    finally:
        server.stop()


@app.command()
def run(
    limit: Annotated[int, typer.Option("--limit", "-n", help="Requests to run.")] = 24,
    kind: Annotated[str, typer.Option(help="Data folder under the data dir.")] = "customer_service",
    server_url: Annotated[str | None, typer.Option(help="Use this running server.")] = None,
    no_launch: Annotated[
        bool,
        typer.Option("--no-launch", help="Never start a co-hosted server; fail if none answers."),
    ] = False,
    database_url: Annotated[str | None, typer.Option(help="SQLAlchemy URL.")] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Real input data folder.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Requests in flight.")] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
) -> None:
    """The main job: real requests → classifier → workflow → vLLM → experts in SQLite."""
    settings = _settings(
        server_url=server_url, database_url=database_url, data_dir=data_dir, concurrency=concurrency
    )
    try:
        requests = sample_requests(settings.data_dir, limit, kind=kind, seed=seed)
        store = TelemetryStore(settings.database_url)
    except OrchestratorError as exc:
        raise _fail(exc, 2) from exc

    server: VLLMServer | None = None
    try:
        if not server_is_healthy(settings.server_url):
            if no_launch or server_url is not None:
                raise ServerUnavailableError(settings.server_url, "no answer on /health")
            ensure_checkpoint(settings)
            server = VLLMServer(
                serving_profile(settings),
                port=settings.server_port,
                log_path=settings.server_log,
                startup_timeout_s=settings.server_start_timeout_s,
            )
            with console.status(
                f"starting co-hosted vLLM ({settings.profile}, a few minutes "
                f"on 2 CPU cores); log: {settings.server_log}"
            ):
                server.start()
            settings = settings.model_copy(update={"server_url": server.base_url})
        code = asyncio.run(_run_requests(settings, store, requests))
    except (OrchestratorError, ServingError) as exc:
        raise _fail(exc) from exc
    finally:
        if server is not None:
            server.stop()
        store.close()
    raise typer.Exit(code)


async def _run_requests(settings: Settings, store: TelemetryStore, requests: list[Request]) -> int:
    with console.status(
        "loading the routing replay model"
        if settings.profile == "cpu"
        else "reading the model config"
    ):
        client = make_client(settings)
    try:
        await client.check()
        orchestrator = Orchestrator(
            client, store, _workflows(), max_tokens=settings.max_completion_tokens
        )
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

            def show(outcome) -> None:  # type: ignore[no-untyped-def]
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
        print_load(
            console,
            expert_load(
                store,
                since=started,
                hot_factor=settings.hot_share_factor,
                dead_min_expected=settings.dead_min_expected,
            ),
            settings.hot_share_factor,
        )
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


def _workflows():  # type: ignore[no-untyped-def]
    from workflows import default_workflows

    return default_workflows()


@app.command()
def load(
    database_url: Annotated[str | None, typer.Option(help="SQLAlchemy URL.")] = None,
    workflow: Annotated[str | None, typer.Option(help="Only this workflow.")] = None,
) -> None:
    """Print the per-layer expert load table of a telemetry database."""
    settings = _settings(database_url=database_url)
    try:
        store = TelemetryStore.open_existing(settings.database_url)
        print_load(
            console,
            expert_load(
                store,
                workflow=workflow,
                hot_factor=settings.hot_share_factor,
                dead_min_expected=settings.dead_min_expected,
            ),
            settings.hot_share_factor,
        )
    except OrchestratorError as exc:
        raise _fail(exc, 2) from exc


@app.command()
def classify(
    text: Annotated[str, typer.Argument(help="Request text.")],
    attachment: Annotated[
        list[str] | None, typer.Option(help="Attachment file name (repeatable).")
    ] = None,
    channel: Annotated[str | None, typer.Option(help="Channel of the request.")] = None,
) -> None:
    """Show the route, confidence and fired signals for one text (bad text gets a fallback)."""
    result = RuleClassifier().classify_text(text, attachments=attachment or (), channel=channel)
    console.print_json(result.model_dump_json())


def main() -> None:  # pragma: no cover
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
