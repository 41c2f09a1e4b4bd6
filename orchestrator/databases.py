"""Setting up a database that several processes may open, new, at the same moment.

Two processes starting on one new SQLite file (a chat and a batch, two batch workers, the UI
and a command) both found no tables and both created them: SQLite's Python driver runs
``CREATE TABLE`` outside any transaction, so the second failed with "table ... already
exists" (the telemetry store and the order store, in nearly every trial of four openers at
once).
:func:`hold_setup_lock` makes the setup transaction take the database's write lock first, so
the openers take turns and the later ones find the tables made. On PostgreSQL, where two
``CREATE TABLE`` of one name also collide, it takes a transaction-scoped advisory lock.

:func:`write_ahead_log` switches a SQLite connection to WAL. Two connections switching one new
file at once can get "database is locked" at once, without SQLite's busy wait (LangGraph's
checkpointer setup, in about one trial in ten); the switch is retried for a few seconds.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import Connection, text
from tenacity import retry, retry_if_exception, stop_after_delay, wait_random

#: Seconds a switch to WAL is tried again while another connection makes the same switch.
WAL_RETRY_S = 5.0
#: The PostgreSQL advisory-lock key of table setup: any constant signed 64-bit number; this
#: one is the first eight bytes of SHA-256 of "moe-orchestrator setup", unlikely to be another
#: program's.
_SETUP_LOCK_KEY = 0x7189_15AA_F29F_78F6


def hold_setup_lock(connection: Connection) -> None:
    """Take the lock that serialises table setup, for the rest of ``connection``'s transaction.

    Call it first in the transaction that creates or upgrades the tables. SQLite: ``BEGIN
    IMMEDIATE`` (the write lock; another opener waits up to the driver's timeout, 5 s by
    default). PostgreSQL: ``pg_advisory_xact_lock``. Other databases: nothing.
    """
    dialect = connection.dialect.name
    if dialect == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
    elif dialect == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SETUP_LOCK_KEY})


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


@retry(
    retry=retry_if_exception(_locked),
    stop=stop_after_delay(WAL_RETRY_S),
    wait=wait_random(0.01, 0.2),
    reraise=True,
)
def write_ahead_log(connection: Any) -> None:
    """Switch a DB-API SQLite ``connection`` (or cursor) to WAL, trying again while a
    concurrent switch holds the file.

    Raises:
        sqlite3.OperationalError: The file stayed locked for :data:`WAL_RETRY_S` seconds.
    """
    connection.execute("PRAGMA journal_mode=WAL").fetchone()
