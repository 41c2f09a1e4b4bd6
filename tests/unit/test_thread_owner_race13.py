"""Two processes starting one conversation at the same moment give it one owner (ui13).

A thread belongs to the customer of its first turn (``Coordination.bind_thread``: a
primary-key insert). Two real processes (forked; a barrier before each thread) bind the same
:data:`RACES` thread ids, each for its own customer, on a SQLite file and on a real PostgreSQL:
for every thread exactly one process wins, the other gets ThreadOwnerError, the stored owner
is the winner's, and the refusal is recorded once."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path
from typing import Any

from orchestrator.exceptions import ThreadOwnerError
from workflows.customer_service.store import OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from handoff_races import run_racers
from postgres_server import PostgresServer

RACES = 20
CUSTOMERS = ("C00001", "C00002")


def _binder(url: str, customer: str, barrier: Any, out: Any) -> None:
    """One process: bind each race's thread to ``customer`` after the barrier."""
    store = OrderStore(url)
    got = []
    for n in range(RACES):
        barrier.wait(timeout=60)
        try:
            store.coordination.bind_thread(f"race-{n}", customer, "test")
            got.append("won")
        except ThreadOwnerError:
            got.append("refused")
    store.close()
    out.put((customer, got))


def _race(url: str) -> None:
    OrderStore(url).close()  # the schema, made before the processes start
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(len(CUSTOMERS)), ctx.Queue()
    procs = [ctx.Process(target=_binder, args=(url, c, barrier, out)) for c in CUSTOMERS]
    results = run_racers(procs, out, timeout=300)
    store = OrderStore(url)
    for n in range(RACES):
        won = [c for c in CUSTOMERS if results[c][n] == "won"]
        assert len(won) == 1, (n, results)
        refusals = store.coordination.refusals(f"race-{n}")
        assert [(r["owner_id"], r["customer_id"]) for r in refusals] == [
            (won[0], next(c for c in CUSTOMERS if c != won[0]))
        ]
    store.close()


def test_one_owner_per_thread_on_sqlite(tmp_path: Path) -> None:
    _race(f"sqlite:///{tmp_path / 'cs.db'}")


def test_one_owner_per_thread_on_postgres(postgres: PostgresServer) -> None:
    _race(postgres.create_database("cs_thread_owners"))
