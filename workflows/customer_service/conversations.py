"""The conversations database (LangGraph's SQLite checkpoints) checked before it is used.

LangGraph's ``AsyncSqliteSaver`` opens any file: a damaged one fails later, inside a turn, with
a driver error. :func:`check_conversations` opens it first and turns each kind of storage
failure into one :class:`~orchestrator.exceptions.StorageError` line that names the file and
the fix: not a SQLite file (an overwritten header), damaged pages (a truncated file), locked by
another process, a full disk, or a file written by a newer release (``PRAGMA user_version``
above :data:`CONVERSATIONS_VERSION`; a new file gets that version).

It also puts the file in WAL mode (:func:`orchestrator.databases.write_ahead_log`), the
journal LangGraph's saver asks for in its own setup, where two processes' switches at once
could fail (seen in CI: two first turns of one thread in two processes); the saver's switch
is then a no-op.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from orchestrator.databases import write_ahead_log
from orchestrator.exceptions import StorageError, storage_error

#: The layout of the conversations file this release writes (``PRAGMA user_version``).
CONVERSATIONS_VERSION = 1
#: PRAGMA takes no bound parameters: the statement is written out once, from the constant.
_SET_VERSION = "PRAGMA user_version = " + str(CONVERSATIONS_VERSION)
#: Seconds to wait for another process's write lock before calling the file locked.
LOCK_WAIT_S = 5.0
_HEADER = b"SQLite format 3\x00"
_WHAT = "conversations database"


def check_conversations(path: Path) -> None:
    """Check (and version a new) conversations file at ``path``; a missing file is fine.

    Raises:
        StorageError: The file is damaged, locked, on a full disk, read-only, or was written
            by a newer release.
    """
    try:
        if path.is_file() and path.stat().st_size > 0:
            with path.open("rb") as handle:
                if handle.read(16) != _HEADER:
                    raise sqlite3.DatabaseError("file is not a database")
        with closing(sqlite3.connect(path, timeout=LOCK_WAIT_S)) as db:
            found = db.execute("PRAGMA quick_check").fetchone()
            if found is None or found[0] != "ok":
                raise sqlite3.DatabaseError(f"database disk image is malformed: {found}")
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version > CONVERSATIONS_VERSION:
                raise StorageError(
                    f"{_WHAT} {path} was written by a newer release (version {version}, this "
                    f"release knows {CONVERSATIONS_VERSION}); upgrade the orchestrator package, "
                    "or set ORCH_CS_CHECKPOINT_URL to another file"
                )
            db.execute("BEGIN IMMEDIATE")  # the write lock: another writer shows up here
            if version == 0:
                db.execute(_SET_VERSION)
            db.commit()
            write_ahead_log(db)
    except (sqlite3.Error, OSError) as exc:
        raise storage_error(exc, str(path), _WHAT) or StorageError(
            f"{_WHAT} {path} cannot be used: {exc}; move it aside or set ORCH_CS_CHECKPOINT_URL "
            "to another file"
        ) from exc
