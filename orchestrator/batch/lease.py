"""One live run per batch: a second ``orchestrator batch`` of the same batch id on the same
telemetry database is refused while the first one runs.

Resuming closes the requests a *killed* run left ``running`` (``BatchLedger.close_interrupted``),
which is right only when no run of the batch is alive; without this lock a second run marked
the live run's requests ``interrupted`` and said they were left by a stopped run.

The lock is the database's own where it has one, and the operating system's otherwise; both
are released when the process ends, however it ends (``kill -9`` included), so a killed run
never blocks its resume:

* PostgreSQL: a session advisory lock (``pg_try_advisory_lock``) on one connection held for
  the run.
* A SQLite file: an exclusive ``flock`` (the ``filelock`` package) on a file in the folder
  ``<database>.batch-locks/`` beside it, one per batch id (the files stay; a lock is the
  ``flock``, not the file).
* An in-memory SQLite database is private to its process: nothing to lock.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout
from sqlalchemy import Engine, text

from orchestrator.exceptions import UserError


def _busy(batch_id: str) -> UserError:
    return UserError(
        f"batch {batch_id} is running in another process on this telemetry database; wait for "
        "it to finish (or stop it with Ctrl-C), then run the same command again to resume"
    )


def _key(batch_id: str) -> int:
    """A signed 64-bit advisory-lock key for ``batch_id``."""
    digest = hashlib.sha256(f"orchestrator.batch:{batch_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def batch_run_lock(engine: Engine, batch_id: str) -> Iterator[None]:
    """Hold the batch's run lock on the telemetry database behind ``engine`` for the block.

    Raises:
        UserError: Another process holds it: the batch is running there.
    """
    url = engine.url
    backend = url.get_backend_name()
    if backend == "postgresql":
        with engine.connect() as conn:
            key = _key(batch_id)
            if not conn.execute(text("select pg_try_advisory_lock(:k)"), {"k": key}).scalar():
                raise _busy(batch_id)
            try:
                yield
            finally:
                conn.execute(text("select pg_advisory_unlock(:k)"), {"k": key})
        return
    database = url.database or ""
    if backend != "sqlite" or database in ("", ":memory:") or database.startswith("file:"):
        yield
        return
    folder = Path(f"{database}.batch-locks")
    folder.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(batch_id.encode()).hexdigest()[:32]
    lock = FileLock(folder / f"{name}.lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise _busy(batch_id) from None
    try:
        yield
    finally:
        lock.release()
