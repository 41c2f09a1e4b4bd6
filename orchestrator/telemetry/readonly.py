"""Open a telemetry database for reading only: ``orchestrator skew`` and ``orchestrator load``.

:func:`open_readonly` never creates, upgrades or writes anything, so the analysis works on a
database in a read-only folder, on a copy handed over for inspection, and beside a writer that
is still adding calls (or rebuilding the rollups).

SQLite is opened through a URI (``file:/path?mode=ro``) with ``PRAGMA query_only``, and none
of the writer's pragmas (:class:`~orchestrator.telemetry.store.TelemetryStore` sets
``journal_mode=WAL``, which is a write). How it is opened depends on the folder:

==========================  ============================  =====================================
folder                      WAL file (``DB-wal``)          opened with
==========================  ============================  =====================================
writable                    any                           ``mode=ro``: a WAL reader, which sees
                                                          each writer's commits, consistently
read-only                   absent or empty               ``mode=ro&immutable=1``: no lock, no
                                                          ``-shm`` file; safe because every
                                                          commit is in the main file
read-only                   holds frames                  ``mode=ro``, which works while the
                                                          ``-shm`` file is there (a writer is
                                                          running, or died); ``immutable=1``
                                                          would silently skip those commits
==========================  ============================  =====================================

Measured with SQLite 3.40 (a user without write access, the folder ``chmod 555``): plain and
``mode=ro`` opens of a WAL database with no ``-wal``/``-shm`` files fail ("attempt to write a
readonly database"; the issue's "unable to open database file" when the files cannot be
created), ``immutable=1`` reads it; with a live writer's ``-wal`` and ``-shm`` present,
``mode=ro`` reads every commit and ``immutable=1`` sees none of those still in the WAL.

**Stale rollups.** The skew report reads the hourly ``expert_rollups``; when they cover fewer
calls than ``model_calls`` holds (a database written by an older version, or bulk inserts),
the writer's path rebuilds them, which is a write. Here nothing is rebuilt: the reader computes
the same sums from the call rows themselves (:attr:`ReadOnlyTelemetry.rollups_stale` says so,
and the CLI prints it), at the cost of reading every call's counts once.

PostgreSQL and other servers are opened with ``default_transaction_read_only`` (PostgreSQL)
where the backend has it, else as they are: a server's permissions are the server's business.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, true
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import NoSuchModuleError, SQLAlchemyError
from sqlalchemy.pool import QueuePool

from orchestrator.exceptions import UserError
from orchestrator.telemetry import migrate
from orchestrator.telemetry.read import RollupStatus, TelemetryReader

#: What to do when there is no telemetry database yet (shared by every read-only message).
FIX = (
    "run `orchestrator run` first, or pass --database-url (or --db) pointing at the telemetry "
    "database it wrote (runs/telemetry.db by default)"
)


def sqlite_readonly_uri(path: Path | str) -> str:
    """The ``file:`` URI that opens the SQLite file ``path`` read-only (see the module table).

    Raises:
        UserError: The file does not exist.
    """
    path = Path(path).resolve()
    try:
        exists = path.is_file()
    except OSError as exc:
        raise UserError(f"cannot read telemetry database {path}: {exc.strerror or exc}") from exc
    if not exists:
        raise UserError(f"telemetry database {path} does not exist; {FIX}")
    wal = path.with_name(path.name + "-wal")
    try:
        wal_frames = wal.stat().st_size > 0
    except OSError:
        wal_frames = False
    immutable = not os.access(path.parent, os.W_OK) and not wal_frames
    return f"{path.as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")


def _sqlite_engine(path: Path) -> tuple[Engine, str]:
    uri = sqlite_readonly_uri(path)

    def connect() -> sqlite3.Connection:
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
        # reads only; a write through this connection fails instead of happening
        connection.execute("PRAGMA query_only=ON")
        connection.execute("PRAGMA busy_timeout=5000")
        return connection

    return create_engine("sqlite://", creator=connect, poolclass=QueuePool), uri


def _postgres_read_only(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    cursor.close()
    dbapi_connection.commit()


class ReadOnlyTelemetry(TelemetryReader):
    """The read API (:class:`~orchestrator.telemetry.read.TelemetryReader`) over a database
    opened read-only; it has no write method, and :meth:`rebuild_rollups` refuses.

    When :attr:`rollups_stale` is True, the rollup queries (:meth:`rollup_status`,
    :meth:`iter_rollups`, :meth:`rollup_workflows`, :meth:`rollup_span`) are answered from
    the call rows instead of the ``expert_rollups`` table.

    Attributes:
        opened_with: How the database was opened: the SQLite URI (``file:...?mode=ro...``),
            or the backend name.
        rollups_stale: ``(calls, summed)`` when the rollups did not cover every call at open
            time (the sums are then computed from the calls), else None.

    Create it with :func:`open_readonly`.
    """

    def __init__(self, engine: Engine, url: str, *, opened_with: str) -> None:
        super().__init__(engine, url)
        self.opened_with = opened_with
        status = self.rollup_status()
        self.rollups_stale: RollupStatus | None = status if status.calls != status.summed else None
        if self.rollups_stale is not None:  # the rollup queries sum every call instead
            self.summed_calls = true()

    def rebuild_rollups(self, **_: Any) -> int:
        """Refuse: a read-only reader never writes.

        Raises:
            UserError: Always; the rollups went stale while the report was being read (a
                writer without rollups is at work): run the report again.
        """
        raise UserError(
            f"the expert rollups of {self.url} changed while the report was read, and this "
            "reader opened it read-only; run the command again"
        )

    def close(self) -> None:
        """Dispose of the connection pool."""
        self.engine.dispose()


def open_readonly(url: str) -> ReadOnlyTelemetry:
    """Open an existing telemetry database at the newest schema revision, read-only.

    Args:
        url: A SQLAlchemy URL (``sqlite:///runs/telemetry.db``, ``postgresql+psycopg://...``).

    Returns:
        A :class:`ReadOnlyTelemetry`; close it when done.

    Raises:
        UserError: The URL is malformed or has no driver here; the SQLite file does not exist,
            is in memory, is not a SQLite database, cannot be opened read-only (the message
            says why and what to do), or holds no telemetry tables; the database is at another
            schema revision (the message gives the upgrade command).

    Example:
        >>> reader = open_readonly("sqlite:///runs/telemetry.db")  # doctest: +SKIP
        >>> reader.count_calls()  # doctest: +SKIP
    """
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with no common base
        raise UserError(f"telemetry database URL {url!r} is not a SQLAlchemy URL: {exc}") from exc
    shown = parsed.render_as_string(hide_password=True)
    backend = parsed.get_backend_name()
    try:
        if backend == "sqlite":
            if parsed.database in (None, "", ":memory:"):
                raise UserError("an in-memory SQLite database holds no telemetry; give a file URL")
            path = Path(parsed.database)
            try:
                if not path.is_file():
                    raise UserError(f"telemetry database {path} does not exist; {FIX}")
                with path.open("rb") as handle:
                    head = handle.read(16)
            except OSError as exc:  # e.g. no permission to enter its folder or read it
                raise UserError(
                    f"cannot read telemetry database {path}: {exc.strerror or exc}; give this "
                    "user read access to the file (and search access to its folders)"
                ) from exc
            if head != b"SQLite format 3\x00":
                raise UserError(f"{path} is not a SQLite database; {FIX}")
            engine, opened_with = _sqlite_engine(path)
        else:
            engine, opened_with = create_engine(parsed), backend
            if backend == "postgresql":
                event.listen(engine, "connect", _postgres_read_only)
        with engine.connect() as connection:
            migrate.require_head(connection, shown)
        return ReadOnlyTelemetry(engine, url, opened_with=opened_with)
    except (ImportError, NoSuchModuleError) as exc:
        raise UserError(
            f"telemetry database {shown}: SQLAlchemy has no driver for it here ({exc}); "
            "install the driver or use a sqlite:/// URL"
        ) from exc
    except SQLAlchemyError as exc:
        # one line: psycopg's message goes on over a second, tab-indented line
        reason = " ".join(str(getattr(exc, "orig", None) or exc).split())
        hint = (
            "; its folder is read-only and its WAL file holds commits that SQLite can read "
            "only with the -shm file beside it: give this user write access to the folder, "
            "or have the writer checkpoint it (sqlite3 DB 'PRAGMA wal_checkpoint(TRUNCATE)')"
            if backend == "sqlite" and "unable to open" in str(reason)
            else ""
        )
        raise UserError(f"cannot read telemetry database {shown}: {reason}{hint}") from exc
