"""One live run per batch (tester5 finding 5): a second run of a batch that another process is
running is refused in one line, and does not mark the live run's requests ``interrupted``; a
run killed with SIGKILL never blocks its resume. Real processes, on a SQLite file and on a
real PostgreSQL server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from postgres_server import PostgresServer
from sqlalchemy import create_engine

from orchestrator.batch import BatchOptions, ColumnMapping, batch_id_for, open_input, run_batch_job
from orchestrator.batch.lease import batch_run_lock
from orchestrator.exceptions import UserError
from tests.unit.test_batch import TEXTS, ScriptedFactory, ScriptedModel, write_csv

_HOLDER = """
import sys, time
from sqlalchemy import create_engine
from orchestrator.batch.lease import batch_run_lock
with batch_run_lock(create_engine(sys.argv[1]), sys.argv[2]):
    print("held", flush=True)
    time.sleep(120)
"""


def _hold(url: str, batch_id: str) -> subprocess.Popen[str]:
    """A second process that takes the batch's lock and keeps it until killed."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, url, batch_id],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def _refused_while_held_then_free_after_kill(url: str) -> None:
    engine = create_engine(url)
    holder = _hold(url, "batch-a")
    try:
        busy = "batch batch-a is running in another process"
        with pytest.raises(UserError, match=busy), batch_run_lock(engine, "batch-a"):
            pass
        with batch_run_lock(engine, "batch-b"):  # another batch on the same database runs
            pass
    finally:
        _kill(holder)  # SIGKILL: no clean release, the OS (or the server) drops the lock
    with batch_run_lock(engine, "batch-a"):  # the killed run's resume is not blocked
        pass
    engine.dispose()


def test_sqlite_file(tmp_path: Path) -> None:
    _refused_while_held_then_free_after_kill(f"sqlite:///{tmp_path / 'telemetry.db'}")


def test_postgres(postgres: PostgresServer) -> None:
    _refused_while_held_then_free_after_kill(postgres.create_database("batch_lease"))


def test_in_memory_sqlite_needs_no_lock() -> None:
    engine = create_engine("sqlite://")
    with batch_run_lock(engine, "x"), batch_run_lock(engine, "x"):  # private to the process
        pass


async def test_a_second_run_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "in.csv", ["id", "text"], [[f"R{i}", t] for i, t in enumerate(TEXTS)]
    )
    url = f"sqlite:///{tmp_path / 'telemetry.db'}"
    factory = ScriptedFactory(url, {"u1": ScriptedModel()})
    source = open_input(path, ColumnMapping(text="text", id="id"))
    options = BatchOptions(concurrency=2, backoff_initial_s=0, backoff_max_s=0)
    holder = _hold(url, batch_id_for(source))
    try:
        with pytest.raises(UserError, match="running in another process"):
            await run_batch_job(source, factory, ["u1"], options, out=tmp_path / "a.xlsx")
        assert not (tmp_path / "a.xlsx").exists()
        assert not factory.store().requests()  # nothing started, nothing closed
    finally:
        _kill(holder)
    job = await run_batch_job(source, factory, ["u1"], options, out=tmp_path / "b.xlsx")
    assert job.summary.ran == len(TEXTS) and (tmp_path / "b.xlsx").exists()
