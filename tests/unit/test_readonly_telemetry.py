"""Read-only analysis (issue 18, part 3): ``skew`` and ``load`` never write.

The database folder is made read-only with ``chmod``. This box runs the tests as root, whom
``chmod`` does not stop, so the commands then run as the unprivileged ``nobody`` user (a
control asserts that this user really cannot write there, and that the writer's way of
opening fails as the issue describes). Each case checks that the database's bytes and
modification times are unchanged afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import delete

from orchestrator.analysis.skew.report import ReportOptions, build_report
from orchestrator.exceptions import UserError
from orchestrator.telemetry import ExpertRollupRecord, TelemetryStore
from orchestrator.telemetry.readonly import open_readonly, sqlite_readonly_uri
from tests.unit.pending_data import CHECKPOINT, pending_trace, record_calls
from tests.unit.postgres_server import PostgresServer
from tests.unit.skew_data import EXPERTS, T0, add_request, trace, uniform

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534
IS_ROOT = os.geteuid() == 0


def fill(store: TelemetryStore, calls: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    shares = uniform()
    shares[0] = np.r_[np.full(4, 0.2), np.full(EXPERTS - 4, 0.2 / (EXPERTS - 4))]
    for i in range(calls):
        store.clock = lambda i=i: T0 + timedelta(minutes=7 * i)  # type: ignore[method-assign]
        add_request(
            store, f"refund order {i}", "customer_service", [("reply", trace(rng, shares, 40))]
        )


@contextmanager
def _open_folder(prefix: str, mode: int) -> Iterator[Path]:
    """A new folder with permissions ``mode`` outside pytest's tmp_path (private to root);
    removed after, its permissions put back first (a test may make it read-only)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(mode)
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(folder)


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder the ``nobody`` user can reach (pytest's tmp_path is private to root)."""
    with _open_folder("ro-telemetry-", 0o755) as folder:
        yield folder


@pytest.fixture
def out_dir() -> Iterator[Path]:
    """A folder the reader may write its JSON report to (not the database's folder)."""
    with _open_folder("ro-out-", 0o777) as folder:
        yield folder


def fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mtime (ns) of the database and its WAL (not the -shm index, which is
    shared memory that readers map, never data)."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if not p.name.endswith("-shm")
    }


def make_read_only(folder: Path) -> None:
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)


def unprivileged(command: list[str]) -> list[str]:
    """``command`` run as ``nobody`` when this is root (``setpriv``, no capabilities)."""
    if not IS_ROOT:
        return command
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: chmod cannot make a folder read-only")
    return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]


def as_reader(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m orchestrator.cli ARGS`` as a user without write access."""
    return subprocess.run(
        unprivileged([sys.executable, "-B", "-m", "orchestrator.cli", *args]),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={
            **os.environ,
            "COLUMNS": "200",
            "HOME": tempfile.gettempdir(),
            "PYTHONDONTWRITEBYTECODE": "1",
        },
    )


def writer_can_write(folder: Path) -> bool:
    """Whether the reader's user can create a file in ``folder`` (the control)."""
    result = subprocess.run(
        unprivileged([sys.executable, "-c", f"open({str(folder / 'probe')!r}, 'w')"]),
        capture_output=True,
    )
    return result.returncode == 0


def test_skew_and_load_read_a_wal_database_in_a_read_only_folder_and_change_nothing(
    shared_dir: Path, out_dir: Path
) -> None:
    """A writer is still open (its WAL holds commits not yet in the main file): both commands
    read every call, and nothing of the database changes."""
    db = shared_dir / "telemetry.db"
    writer = TelemetryStore(f"sqlite:///{db}")
    fill(writer, 30)
    wal = shared_dir / "telemetry.db-wal"
    assert wal.stat().st_size > 0  # the commits sit in the WAL
    try:
        make_read_only(shared_dir)
        assert not writer_can_write(shared_dir)
        before = fingerprint(shared_dir)
        assert "immutable" not in sqlite_readonly_uri(db)  # would skip the WAL's commits
        out = out_dir / "skew.json"
        skew = as_reader("skew", "--db", str(db), "--window", "all", "--json", str(out))
        load = as_reader("load", "--db", f"sqlite:///{db}")
        assert fingerprint(shared_dir) == before
    finally:
        writer.close()
    assert skew.returncode == 0, skew.stderr
    assert json.loads(out.read_text())["overall"]["calls"] == 30  # every commit, WAL's too
    assert load.returncode == 0, load.stderr
    assert "customer_service" in load.stdout or "layer" in load.stdout.lower()
    assert "Traceback" not in skew.stderr + load.stderr


def test_a_checkpointed_database_in_a_read_only_folder_is_opened_immutable(
    shared_dir: Path, out_dir: Path
) -> None:
    """No WAL left (the writer closed): ``mode=ro`` alone fails for a user who cannot create
    the -shm file, as in the issue; the reader adds ``immutable=1`` and reads it."""
    db = shared_dir / "telemetry.db"
    writer = TelemetryStore(f"sqlite:///{db}")
    fill(writer, 12)
    writer.close()
    assert not (shared_dir / "telemetry.db-wal").exists()
    make_read_only(shared_dir)
    before = fingerprint(shared_dir)
    if IS_ROOT:  # as root the folder is still writable, so this holds only for `nobody`
        probe = subprocess.run(
            unprivileged(
                [
                    sys.executable,
                    "-c",
                    "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
                    "c.execute('select count(*) from model_calls').fetchone()",
                    str(db),
                ]
            ),
            capture_output=True,
            text=True,
        )
        assert probe.returncode != 0 and "readonly database" in probe.stderr  # the old failure
    else:
        assert sqlite_readonly_uri(db).endswith("mode=ro&immutable=1")
    load = as_reader("load", "--db", f"sqlite:///{db}")
    out = out_dir / "skew.json"
    skew = as_reader("skew", "--db", str(db), "--window", "all", "--json", str(out))
    assert load.returncode == 0, load.stderr
    assert skew.returncode == 0, skew.stderr
    assert json.loads(out.read_text())["overall"]["calls"] == 12
    assert fingerprint(shared_dir) == before
    assert sorted(p.name for p in shared_dir.iterdir()) == ["telemetry.db"]  # no -shm made


def test_a_missing_database_is_a_clear_error_and_nothing_is_created(
    tmp_path: Path, shared_dir: Path
) -> None:
    missing = shared_dir / "nowhere" / "telemetry.db"
    for args in (
        ["skew", "--db", str(missing)],
        ["load", "--db", f"sqlite:///{missing}"],
    ):
        result = as_reader(*args)
        assert result.returncode == 2, result.stderr
        shown = " ".join(result.stderr.split())
        assert "does not exist" in shown and "orchestrator run" in shown
        assert "Traceback" not in result.stderr
    assert not missing.parent.exists()
    with pytest.raises(UserError, match="does not exist"):
        open_readonly(f"sqlite:///{missing}")
    if IS_ROOT:  # a folder the reader may not enter: a clear error too, not a traceback
        hidden = tmp_path / "telemetry.db"  # pytest's tmp_path is private to root
        TelemetryStore(f"sqlite:///{hidden}").close()
        result = as_reader("load", "--db", f"sqlite:///{hidden}")
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert "Permission denied" in " ".join(result.stderr.split())
    not_sqlite = tmp_path / "notes.db"
    not_sqlite.write_text("hello")
    with pytest.raises(UserError, match="not a SQLite database"):
        open_readonly(f"sqlite:///{not_sqlite}")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(UserError, match="no telemetry tables"):
        open_readonly(f"sqlite:///{other}")
    with pytest.raises(UserError, match="in-memory"):
        open_readonly("sqlite://")
    with pytest.raises(UserError, match="not a SQLAlchemy URL"):
        open_readonly("not a url")


def test_stale_rollups_are_summed_from_the_calls_without_writing(tmp_path: Path) -> None:
    """Rollups cover none of the calls (an older database): the read-only report equals the
    report from rebuilt rollups, and the rollup table stays empty."""
    url = f"sqlite:///{tmp_path / 't.db'}"
    store = TelemetryStore(url)
    fill(store, 20)
    options = ReportOptions(window="all", baseline="none")
    with_rollups = build_report(store, options)
    with store.engine.begin() as connection:
        connection.execute(delete(ExpertRollupRecord))
    assert store.rollup_status() == (20, 0)
    reader = open_readonly(url)
    assert reader.rollups_stale == (20, 0)
    summed = build_report(reader, options)  # type: ignore[arg-type]
    assert store.rollup_status() == (20, 0)  # nothing written
    a = with_rollups.model_dump(exclude={"generated_at"})
    b = summed.model_dump(exclude={"generated_at"})
    assert a == b
    with pytest.raises(UserError, match="read-only"):
        reader.rebuild_rollups()
    reader.close()
    store.close()


def test_skew_reads_while_a_writer_adds_calls_and_rebuilds_rollups(tmp_path: Path) -> None:
    """WAL: the reader sees a consistent snapshot while another thread writes calls and
    rebuilds the rollups in one transaction (no 'database is locked', no half-rebuilt sums)."""
    url = f"sqlite:///{tmp_path / 't.db'}"
    writer = TelemetryStore(url)
    fill(writer, 10)
    stop = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        rng = np.random.default_rng(1)
        i = 0
        try:
            while not stop.is_set():
                add_request(
                    writer, f"more {i}", "moderation", [("judge", trace(rng, uniform(), 8))]
                )
                if i % 5 == 0:
                    writer.rebuild_rollups()
                i += 1
        except BaseException as exc:  # reported to the test
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    reports = 0
    try:
        for _ in range(8):
            reader = open_readonly(url)
            calls, summed = reader.rollup_status()
            assert calls == summed  # a rebuild is never seen half done
            report = build_report(reader, ReportOptions(window="all", baseline="none"))  # type: ignore[arg-type]
            assert report.overall.calls >= 10
            reader.close()
            reports += 1
    finally:
        stop.set()
        thread.join()
        writer.close()
    assert not errors, errors
    assert reports == 8


def test_the_sqlite_uri_follows_the_folder_and_the_wal(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    TelemetryStore(f"sqlite:///{db}").close()
    assert sqlite_readonly_uri(db) == f"{db.resolve().as_uri()}?mode=ro"
    assert stat.S_IMODE(tmp_path.stat().st_mode) & 0o200
    with pytest.raises(UserError, match="does not exist"):
        sqlite_readonly_uri(tmp_path / "none.db")


def test_postgresql_is_read_in_read_only_transactions(postgres: PostgresServer) -> None:
    """The same reader on PostgreSQL: the report equals the writer's, and a write through the
    reader's engine is refused by the server (``postgres``: the session's server, conftest)."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    url = postgres.create_database("readonly")
    store = TelemetryStore(url)
    fill(store, 10)
    options = ReportOptions(window="all", baseline="none")
    expected = build_report(store, options).model_dump(exclude={"generated_at"})
    store.close()
    reader = open_readonly(url)
    try:
        assert reader.opened_with == "postgresql" and reader.rollups_stale is None
        got = build_report(reader, options).model_dump(exclude={"generated_at"})  # type: ignore[arg-type]
        assert got == expected
        with (
            pytest.raises(DBAPIError, match="read-only transaction"),
            reader.engine.begin() as c,
        ):
            c.execute(text("DELETE FROM expert_rollups"))
    finally:
        reader.close()


def _pending_calls(store: TelemetryStore, batch: str, calls: int) -> None:
    """``calls`` model calls of batch ``batch`` with expert routing deferred (``pending``)."""
    from serving.architecture import MoEArchitecture

    arch = MoEArchitecture.from_checkpoint(CHECKPOINT)
    record_calls(store, [pending_trace(arch, (11, 12, 13), (14, 15))] * calls, batch=batch)


@pytest.mark.parametrize("writer_open", [True, False], ids=["live-writer", "checkpointed"])
def test_telemetry_pending_reads_a_database_in_a_read_only_folder(
    shared_dir: Path, writer_open: bool
) -> None:
    """``telemetry pending`` opens the database read-only like skew and load: it counts the
    pending calls (with --db as a path and as a URL) and changes nothing."""
    db = shared_dir / "telemetry.db"
    writer = TelemetryStore(f"sqlite:///{db}")
    _pending_calls(writer, "b1", 3)
    if not writer_open:
        writer.close()
    try:
        make_read_only(shared_dir)
        assert not writer_can_write(shared_dir)
        before = fingerprint(shared_dir)
        results = [
            as_reader("telemetry", "pending", "--db", str(db)),
            as_reader("telemetry", "pending", "--database-url", f"sqlite:///{db}", "--batch", "b1"),
        ]
        assert fingerprint(shared_dir) == before
    finally:
        if writer_open:
            writer.close()
    for result in results:
        assert result.returncode == 0, result.stderr
        assert "3 model calls" in result.stdout and "with expert routing pending" in result.stdout
        assert "Traceback" not in result.stderr
    assert "of batch b1" in results[1].stdout
