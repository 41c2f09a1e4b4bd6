"""Open every database a command writes before anything else starts (a model server takes
minutes on 2 CPU cores), so a damaged, locked, full or newer-release database is one line
naming the file and the fix, exit 1, and no request row is ever started, let alone left
``running``."""

from __future__ import annotations

import asyncio

from orchestrator.cli.common import fail
from orchestrator.config import Settings
from orchestrator.exceptions import OrchestratorError
from orchestrator.telemetry import TelemetryStore


def check_storage(settings: Settings, *, conversations: bool = False) -> None:
    """Open (and close) the telemetry database, and with ``conversations`` the order store and
    the conversations checkpoints (the installed conversation workflow's ``opened``, which checks
    each: damaged, locked, full, newer release).

    Raises:
        typer.Exit: Code 1 after ``error: <database> <file> <problem>; <fix>`` on one line.
    """
    try:
        TelemetryStore(settings.database_url).close()
        if conversations:
            asyncio.run(_open_conversations(settings))
    except OrchestratorError as exc:
        raise fail(exc, 1) from exc


async def _open_conversations(settings: Settings) -> None:
    from orchestrator.core.registry import opened_thread_workflow

    async with opened_thread_workflow(settings):
        pass
