"""The model server's commands: ``orchestrator build-checkpoint`` and ``orchestrator serve``.

Commands:
    build-checkpoint  build the offline ERNIE-4.5 MoE checkpoint (real architecture, random
                      weights), optionally with planted hot or dead experts
    serve             start the co-hosted vLLM server in the foreground, until Ctrl-C; it is
                      supervised: a server that dies is noticed within a second and its log
                      tail printed, then serve exits 1, or, with --restart, restarts it with
                      backoff (restarts are printed and counted in the framework metrics)
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.markup import escape

from orchestrator.cli.common import (
    MetricsPortOption,
    co_hosted_server,
    console,
    ensure_checkpoint,
    fail,
    report_server_event,
    settings_from_flags,
    working,
)
from orchestrator.cli.interrupt import CtrlC, ctrl_c, interrupted
from orchestrator.cli.status import observe_server
from orchestrator.config import RANDOM_CHECKPOINT_DIR, Settings
from serving.checkpoint import (
    FAMILY_NAMES,
    CheckpointSpec,
    PlantedExpert,
    build_checkpoint,
    check_target,
    corpus_from_data_dir,
)
from serving.errors import ServingError
from serving.launcher import ServerSupervisor, VLLMServer


def build_checkpoint_cmd(
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder to write (default .cache/ernie45-moe-offline, or "
            ".cache/FAMILY-moe-offline for another --family, e.g. .cache/mixtral-moe-offline)."
        ),
    ] = None,
    family: Annotated[
        str,
        typer.Option(
            help=f"MoE family to build: {', '.join(FAMILY_NAMES)} (docs/moe_families.md)."
        ),
    ] = "ernie45",
    seed: Annotated[int, typer.Option(help="Weight seed.")] = 0,
    layers: Annotated[
        int | None,
        typer.Option(help="Decoder layers (default: the family's CPU shape, 4 for ernie45)."),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a different checkpoint.")] = False,
    plant: Annotated[
        list[str] | None,
        typer.Option(
            help="Plant known routing through the router, LAYER:EXPERT:hot|dead|BIAS "
            "(repeatable), e.g. --plant 1:3:hot --plant 1:7:dead."
        ),
    ] = None,
) -> None:
    """Build an offline MoE checkpoint (real architecture, random weights); ERNIE-4.5 unless
    --family names another."""
    default_out = RANDOM_CHECKPOINT_DIR.with_name(f"{family}-moe-offline")
    settings = settings_from_flags(checkpoint_dir=out or default_out)
    try:
        planted = tuple(PlantedExpert.parse(p) for p in plant or ())
        shape = {"num_hidden_layers": layers} if layers is not None else {}
        spec = CheckpointSpec.for_family(family, seed=seed, planted=planted, **shape)
        corpus = corpus_from_data_dir(settings.data_dir)
        # the folder is checked before the 20-70 s of tokenizer training
        if check_target(settings.checkpoint_dir, spec, corpus, overwrite=overwrite):
            console.print(
                f"checkpoint ready: {settings.checkpoint_dir} (already built with this spec)"
            )
            return
        with working("training tokenizer and writing weights"):
            path = build_checkpoint(settings.checkpoint_dir, spec, corpus, overwrite=overwrite)
    except ValidationError as exc:  # --layers or --plant that does not fit the family
        raise fail(_spec_problem(exc), 2) from exc
    except (ServingError, ValueError) as exc:  # ValueError: a bad --plant or --family
        raise fail(exc, 2) from exc
    except OSError as exc:  # the disk filled up or the folder vanished while writing
        raise fail(f"checkpoint {settings.checkpoint_dir}: {exc.strerror or exc}", 2) from exc
    console.print(f"checkpoint ready: {path}")


def _spec_problem(exc: ValidationError) -> str:
    """A checkpoint spec's validation errors as one line naming the flag (``--layers``) or the
    rule that failed (a planted layer that is not an MoE layer)."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        flag = "--layers" if where == "num_hidden_layers" else where
        parts.append(f"{flag} = {error.get('input')!r}: {message}" if where else message)
    return "; ".join(parts)


def serve(
    profile: Annotated[str | None, typer.Option(help="cpu or gpu.")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port.")] = None,
    metrics_port: MetricsPortOption = None,
    restart: Annotated[
        bool,
        typer.Option(
            "--restart/--no-restart",
            help="Restart the server when it dies (with backoff) instead of exiting 1.",
        ),
    ] = False,
    max_restarts: Annotated[
        int,
        typer.Option(min=0, help="With --restart: consecutive restart attempts before giving up."),
    ] = 5,
) -> None:
    """Start the co-hosted vLLM server and keep it up until Ctrl-C (a STATS line a minute).

    Ctrl-C prints one line and exits 130 (128 + SIGINT): a starting server is killed at once
    (its process group), a serving one is stopped politely. SIGTERM exits 0.

    The server is supervised: when it dies (``kill -9`` included) its exit code and log tail
    are printed within a second; then the command exits 1, or restarts it with ``--restart``.
    """
    settings = settings_from_flags(profile=profile, server_port=port, metrics_port=metrics_port)
    if settings.profile == "cpu":
        ensure_checkpoint(settings)
    server = co_hosted_server(settings)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        with ctrl_c("stopping the server (Ctrl-C)") as handler:
            _serve_until_stopped(server, settings, handler, restart, max_restarts)
    except KeyboardInterrupt:
        raise interrupted() from None
    finally:
        server.stop()


def _serve_until_stopped(
    server: VLLMServer, settings: Settings, handler: CtrlC, restart: bool, max_restarts: int
) -> None:
    """Start ``server``, then supervise it until it gives up, SIGTERM or Ctrl-C.

    Raises:
        typer.Exit: Exit 1 when the server cannot start or dies (and is not restarted).
        KeyboardInterrupt: Ctrl-C (the handler has printed why; the caller stops the server).
    """
    supervisor: ServerSupervisor | None = None
    try:
        with working(f"starting vLLM ({settings.profile}); log: {settings.server_log}"):
            server.start()
        handler.starting = False  # from now on the server stops politely (SIGTERM)
        console.print(
            f"serving on {server.base_url} (log {server.log_path}); supervised"
            + (f", restarted up to {max_restarts} times in a row" if restart else "")
            + "; Ctrl-C stops"
        )
        if server.engine_core_placement is not None:
            console.print(escape(server.engine_core_placement.describe()), highlight=False)
        supervisor = ServerSupervisor(
            server, restart=restart, max_restarts=max_restarts, report=report_server_event
        )
        with observe_server(settings, server.base_url):
            supervisor.start()
            error = supervisor.wait()  # until it gives up; Ctrl-C and SIGTERM end it too
        if error is not None:  # its log tail was printed when it died
            raise fail(f"{str(error).splitlines()[0]} (log: {error.log_path})")
    except ServingError as exc:
        raise fail(exc) from exc
    finally:
        if supervisor is not None:
            supervisor.stop()


def register(app: typer.Typer) -> None:
    """Add ``build-checkpoint`` and ``serve`` to the root app."""
    app.command("build-checkpoint")(build_checkpoint_cmd)
    app.command("serve")(serve)
