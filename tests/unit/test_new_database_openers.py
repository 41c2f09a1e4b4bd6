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


def race(open_one: Callable[[str], None], targets: list[str]) -> list[str]:
    """``open_one(target)`` in :data:`OPENERS` threads released together, for each new
    database of ``targets`` in turn; the errors, as text."""
    errors: list[str] = []

    def opener(target: str, start: threading.Barrier) -> None:
        start.wait(timeout=60)
        try:
            open_one(target)
        except Exception as exc:  # collected: the test asserts there are none
            errors.append(repr(exc)[:300])

    for target in targets:
        start = threading.Barrier(OPENERS)
        threads = [threading.Thread(target=opener, args=(target, start)) for _ in range(OPENERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    return errors


def open_telemetry(url: str) -> None:
    store = TelemetryStore(url)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM requests")).scalar() == 0
    store.engine.dispose()


def open_orders(url: str) -> None:
    store = OrderStore(url)
    try:
        assert store.counts()["orders"] == 0
    finally:
        store.close()


def open_conversations(path: str) -> None:
    async def open_saver() -> None:
        check_conversations(Path(path))
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            await saver.setup()

    asyncio.run(open_saver())


@pytest.mark.parametrize("opener", [open_telemetry, open_orders], ids=["telemetry", "orders"])
def test_new_sqlite_file(opener: Callable[[str], None], tmp_path: Path) -> None:
    assert race(opener, [f"sqlite:///{tmp_path / f'new{n}.db'}" for n in range(10)]) == []


@pytest.mark.parametrize("opener", [open_telemetry, open_orders], ids=["telemetry", "orders"])
def test_new_postgresql_database(
    opener: Callable[[str], None], postgres: PostgresServer, request: pytest.FixtureRequest
) -> None:
    name = request.node.callspec.id
    urls = [postgres.create_database(f"openers_{name}_{n}") for n in range(5)]
    assert race(opener, urls) == []


def test_new_conversations_file(tmp_path: Path) -> None:
    assert race(open_conversations, [str(tmp_path / f"conv{n}.db") for n in range(30)]) == []
