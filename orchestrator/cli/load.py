"""``orchestrator load``: the per-layer expert load table of a telemetry database.

Its own module (it was registered with ``run`` and ``classify``), so that the command imports
only the read-only reader and the load table: not the model client, LangGraph, the workflows or
the classifier, which ``run`` and ``classify`` need.
"""

from __future__ import annotations

from typing import Annotated

import typer

from orchestrator.cli.common import (
    TelemetryDbOption,
    console,
    fail,
    settings_from_flags,
)
from orchestrator.cli.console import print_expert_load
from orchestrator.exceptions import OrchestratorError


def load(
    database_url: TelemetryDbOption = None,
    workflow: Annotated[str | None, typer.Option(help="Only this workflow.")] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Only calls of this served model (as `orchestrator skew --model`)."),
    ] = None,
) -> None:
    """Print the per-layer expert load table of a telemetry database.

    The database is opened read-only: nothing is written, and a database in a read-only
    folder, or one a writer is still adding to, can be read.
    """
    from orchestrator.telemetry.readonly import open_readonly

    settings = settings_from_flags(database_url=database_url)
    try:
        store = open_readonly(settings.database_url)
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    try:
        print_expert_load(console, store, settings, workflow=workflow, model=model)
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    finally:
        store.close()


def register(app: typer.Typer) -> None:
    """Add ``load`` to the root app."""
    app.command("load")(load)
