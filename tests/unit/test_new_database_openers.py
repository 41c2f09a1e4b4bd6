"""Processes opening one new database at the same moment all get a working store.

A chat, a batch and the UI started together on a new ``runs/`` folder, or two batch workers,
each open the telemetry store, the order store and the conversations file. Before
:mod:`orchestrator.databases`, the second opener of a new SQLite file failed: "table requests
already exists" (telemetry) and "table cs_orders already exists" (order store) in nearly every
trial of four openers, and LangGraph's checkpointer setup "database is locked" in about one in
ten (a CI failure of test_thread_turns). Openers here are threads, each with its own
connections, which is what separate processes are to SQLite; PostgreSQL gets the same race.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from sqlalchemy import text

from orchestrator import TelemetryStore
from workflows.customer_service.conversations import check_conversations
from workflows.customer_service.store import OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from postgres_server import PostgresServer

OPENERS = 4


def race(open_one: Callable[[], None], trials: int, fresh: Callable[[int], None]) -> list[str]:
    """Run ``open_one`` in :data:`OPENERS` threads released together, ``trials`` times
    (``fresh(trial)`` first points it at a new database); the errors, as text."""
    errors: list[str] = []

    def opener(start: threading.Barrier) -> None:
        start.wait(timeout=60)
        try:
            open_one()
        except Exception as exc:  # collected: the test asserts there are none
            errors.append(repr(exc)[:300])

    for trial in range(trials):
        fresh(trial)
        start = threading.Barrier(OPENERS)
        threads = [threading.Thread(target=opener, args=(start,)) for _ in range(OPENERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    return errors


class Target:
    """The database URL the current trial's openers use."""

    url = ""


def open_telemetry(target: Target) -> None:
    store = TelemetryStore(target.url)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM requests")).scalar() == 0
    store.engine.dispose()


def open_orders(target: Target) -> None:
    store = OrderStore(target.url)
    try:
        assert store.counts()["orders"] == 0
    finally:
        store.close()


@pytest.mark.parametrize("opener", [open_telemetry, open_orders], ids=["telemetry", "orders"])
def test_new_sqlite_file(opener: Callable[[Target], None], tmp_path: Path) -> None:
    target = Target()

    def fresh(trial: int) -> None:
        target.url = f"sqlite:///{tmp_path / f'new{trial}.db'}"

    assert race(lambda: opener(target), 10, fresh) == []


@pytest.mark.parametrize("opener", [open_telemetry, open_orders], ids=["telemetry", "orders"])
def test_new_postgresql_database(
    opener: Callable[[Target], None], postgres: PostgresServer, request: pytest.FixtureRequest
) -> None:
    target = Target()
    name = request.node.callspec.id

    def fresh(trial: int) -> None:
        target.url = postgres.create_database(f"openers_{name}_{trial}")

    assert race(lambda: opener(target), 5, fresh) == []


def test_new_conversations_file(tmp_path: Path) -> None:
    path = tmp_path / "conversations.db"

    async def open_saver() -> None:
        check_conversations(path)
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            await saver.setup()

    def fresh(trial: int) -> None:
        nonlocal path
        path = tmp_path / f"conversations{trial}.db"

    assert race(lambda: asyncio.run(open_saver()), 30, fresh) == []
