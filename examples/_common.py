"""What the examples share: a model client (the served model, or ``--scripted``), a telemetry
store, and how an outcome is printed. Not an example itself."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from orchestrator import OrchestratorError, Settings, TelemetryStore
from orchestrator.core.dispatcher import RequestOutcome
from orchestrator.core.runtime import make_client
from orchestrator.testing import ScriptedModel


def arguments(description: str) -> argparse.Namespace:
    """``--scripted`` (no server: the library's ScriptedModel) and ``--db`` (a SQLite file;
    default: a new one in a temporary folder)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--scripted", action="store_true", help="no server: scripted replies (a test double)"
    )
    parser.add_argument("--db", type=Path, help="telemetry SQLite file (default: a temporary one)")
    return parser.parse_args()


def open_run(args: argparse.Namespace) -> tuple[Any, TelemetryStore, Settings]:
    """The model client (the server of ``Settings()``, or a ScriptedModel with ``--scripted``),
    a telemetry store and the settings."""
    settings = Settings()
    db = args.db or Path(tempfile.mkdtemp(prefix="orchestrator-example-")) / "telemetry.db"
    client = ScriptedModel() if args.scripted else make_client(settings)
    return client, TelemetryStore(f"sqlite:///{db}"), settings


@asynccontextmanager
async def session(description: str) -> AsyncIterator[tuple[Any, TelemetryStore, Settings]]:
    """:func:`open_run` of the command line's arguments; the client and store closed after."""
    client, store, settings = open_run(arguments(description))
    try:
        yield client, store, settings
    finally:
        await client.aclose()
        store.close()


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``main``; no server or a failed call prints one line and exits 1, not a traceback."""
    try:
        asyncio.run(main())
    except OrchestratorError as exc:
        sys.exit(f"error: {exc}")


def show(outcome: RequestOutcome) -> None:
    """One line for the decision, one per model call with its busiest experts."""
    c = outcome.classification
    print(f"{c.route} ({c.confidence:.2f}) -> {outcome.workflow} {outcome.status}")
    print(f"  {outcome.headline[:300]}")
    for call in outcome.calls:
        experts = ", ".join(f"L{layer}/e{e} {s:.0%}" for layer, e, s in call.top_experts[:3])
        source = call.expert_routing_source.value
        tokens = f"{call.prompt_tokens}+{call.completion_tokens} tokens"
        print(f"  {call.node}: {tokens}; {experts} [{source}]")
