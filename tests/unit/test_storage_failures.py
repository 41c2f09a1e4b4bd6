"""Every storage failure is one clear line, and nothing is left ``running`` (issue 43, item 6).

Each kind runs the real CLI in a subprocess (``python -m orchestrator.cli``) against real
SQLite files broken the way users break them: a truncated file, an overwritten header, a file
locked by another process, a full disk (a 64 KiB tmpfs), and a database written by a newer
release (order store, conversations, telemetry). Each must exit non-zero with exactly one
``error:`` line on stderr that names the file and what to do, and no traceback. A failure in
the middle of a turn closes the turn's telemetry row as ``failed``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sqlalchemy import text

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.exceptions import StorageError
from tests.fixtures.cli import run_orchestrator
from workflows.customer_service import open_workflow
from workflows.customer_service.store import OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel

DEAD_SERVER = "http://127.0.0.1:9/v1"  # nothing answers: storage must fail first


@pytest.fixture(scope="module")
def made_stores(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of :func:`stores`' files, made once per module (six turns of a workflow)."""
    tmp_path = tmp_path_factory.mktemp("stores")
    cs = tmp_path / "cs.db"
    OrderStore(f"sqlite:///{cs}").seed(5, seed=1)
    tel = tmp_path / "tel.db"
    settings = Settings(cs_database_url=f"sqlite:///{cs}", database_url=f"sqlite:///{tel}")

    async def converse() -> None:
        telemetry = TelemetryStore(settings.database_url)
        async with open_workflow(settings) as workflow:
            orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
            for i in range(6):
                await orch.handle(Request(text=f"where is my order {i}? " * 40, thread_id="t"))
        telemetry.close()

    asyncio.run(converse())
    return tmp_path


@pytest.fixture
def stores(made_stores: Path, tmp_path: Path) -> dict[str, Path]:
    """This test's own copy (every file, ``-wal`` included) of a seeded order store, a
    conversations file with one conversation and a telemetry file: a test breaks its copy."""
    for made in made_stores.iterdir():
        shutil.copy2(made, tmp_path / made.name)
    names = {"cs": "cs.db", "conversations": "conversations.db", "telemetry": "tel.db"}
    return {key: tmp_path / name for key, name in names.items()}


def run_cli(*args: str, telemetry: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ORCH_DATABASE_URL": f"sqlite:///{telemetry}", "COLUMNS": "400"}
    return run_orchestrator(*args, timeout=120, env=env)


def chat(stores: dict[str, Path]) -> subprocess.CompletedProcess[str]:
    return run_cli(
        "chat",
        "--thread",
        "t",
        "--message",
        "where is my parcel?",
        "--no-launch",
        "--server-url",
        DEAD_SERVER,
        "--db",
        str(stores["cs"]),
        telemetry=stores["telemetry"],
    )


def one_error_line(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The single ``error:`` line of stderr, its last line (progress lines such as
    ``reading FILE ...`` may come before it); asserts the exit, no traceback, the needles."""
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    lines = [line for line in done.stderr.splitlines() if line.startswith("error")]
    assert len(lines) == 1 and done.stderr.rstrip().endswith(lines[0]), done.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def test_a_truncated_conversations_file(stores: dict[str, Path]) -> None:
    path = stores["conversations"]
    data = path.read_bytes()
    assert len(data) > 8192
    path.write_bytes(data[: len(data) // 3])
    one_error_line(chat(stores), str(path), "damaged", "mv ")


@pytest.mark.parametrize("name", ["conversations", "cs", "telemetry"])
def test_an_overwritten_header(stores: dict[str, Path], name: str) -> None:
    path = stores[name]
    with path.open("r+b") as handle:
        handle.write(b"this is not sqlite at all, sorry" * 4)
    one_error_line(chat(stores), str(path), "damaged", "move it aside")


def test_a_locked_conversations_file(stores: dict[str, Path]) -> None:
    holder = sqlite3.connect(stores["conversations"])
    holder.execute("BEGIN EXCLUSIVE")  # another process is writing it
    try:
        one_error_line(chat(stores), str(stores["conversations"]), "locked", "wait")
    finally:
        holder.rollback()
        holder.close()


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, filled to the last byte (a real full disk, not a patched write)."""
    mount = tmp_path / "full"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)])
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root); the mapping is tested below")
    try:
        with (mount / "filler").open("wb", buffering=0) as handle, pytest.raises(OSError):
            while True:
                handle.write(b"\0" * 4096)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)])


def test_a_full_disk(stores: dict[str, Path], full_disk: Path) -> None:
    done = run_cli(
        "chat",
        "--message",
        "hi",
        "--no-launch",
        "--server-url",
        DEAD_SERVER,
        "--db",
        str(stores["cs"]),
        telemetry=full_disk / "tel.db",
    )
    one_error_line(done, str(full_disk / "tel.db"), "disk is full", "free disk space")


def test_enospc_from_a_write_is_the_full_disk_line() -> None:
    from orchestrator.exceptions import storage_error

    error = storage_error(OSError(28, "No space left on device"), "/x/conversations.db", "db")
    assert (
        error is not None and "disk is full" in str(error) and "/x/conversations.db" in str(error)
    )


@pytest.mark.parametrize("table", ["cs_refunds", "cs_orders", "cs_address_changes"])
def test_a_store_missing_a_data_table_is_damaged_not_recreated(
    stores: dict[str, Path], table: str
) -> None:
    with sqlite3.connect(stores["cs"]) as db:
        db.execute(f"DROP TABLE {table}")  # a half-restored store: cs_meta still has its version
    one_error_line(chat(stores), str(stores["cs"]), "damaged", table, "backup")
    with sqlite3.connect(stores["cs"]) as db:  # nothing was re-created empty in its place
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert table not in names


def test_a_store_missing_a_coordination_table_gets_it(stores: dict[str, Path]) -> None:
    with sqlite3.connect(stores["cs"]) as db:
        db.execute("DROP TABLE cs_turn_leases")  # added after the first release: made again
    done = chat(stores)
    assert "damaged" not in done.stderr, done.stderr
    with sqlite3.connect(stores["cs"]) as db:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "cs_turn_leases" in names


def test_newer_release_databases(stores: dict[str, Path]) -> None:
    with sqlite3.connect(stores["cs"]) as db:
        db.execute("UPDATE cs_meta SET value = '99' WHERE key = 'schema_version'")
    one_error_line(chat(stores), str(stores["cs"]), "newer release", "upgrade")
    with sqlite3.connect(stores["cs"]) as db:
        db.execute("UPDATE cs_meta SET value = '2' WHERE key = 'schema_version'")
    with sqlite3.connect(stores["conversations"]) as db:
        db.execute("PRAGMA user_version = 7")
    one_error_line(chat(stores), str(stores["conversations"]), "newer release", "upgrade")
    with sqlite3.connect(stores["conversations"]) as db:
        db.execute("PRAGMA user_version = 1")
    with sqlite3.connect(stores["telemetry"]) as db:
        db.execute("UPDATE alembic_version SET version_num = 'f00dfacecafe'")
    one_error_line(chat(stores), str(stores["telemetry"]), "newer release", "upgrade")


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{sheet}", "--no-launch", "--server-url", DEAD_SERVER],
        ["batch", "{sheet}", "--text-column", "text", "--no-launch", "--server-url", DEAD_SERVER],
        ["ui", "--no-launch", "--server-url", DEAD_SERVER],
    ],
    ids=["report", "batch", "ui"],
)
def test_other_commands_say_it_in_one_line(
    stores: dict[str, Path], tmp_path: Path, command: list[str]
) -> None:
    sheet = tmp_path / "in.csv"
    sheet.write_text("text\nwhere is my order?\n")
    path = stores["telemetry"]
    path.write_bytes(path.read_bytes()[:3000])  # truncated
    args = [a.format(sheet=sheet) for a in command]
    one_error_line(run_cli(*args, telemetry=path), str(path))


@pytest.fixture
def healthy_server() -> Iterator[str]:
    """A server whose /health answers 200 (moderate sends a post only to a healthy one)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": []}')

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


def test_moderate_says_it_in_one_line(stores: dict[str, Path], healthy_server: str) -> None:
    path = stores["telemetry"]
    with path.open("r+b") as handle:
        handle.write(b"\xff" * 100)
    url = healthy_server
    done = run_cli("moderate", "hello there", "--server-url", url, telemetry=path)
    one_error_line(done, str(path), "damaged")


@pytest.mark.parametrize(
    "error, needle",
    [
        (sqlite3.OperationalError("database or disk is full"), "disk is full"),
        (sqlite3.OperationalError("database is locked"), "locked"),
        (sqlite3.DatabaseError("database disk image is malformed"), "damaged"),
        (OSError(28, "No space left on device"), "disk is full"),
    ],
    ids=["full", "locked", "malformed", "enospc"],
)
def test_a_failure_mid_turn_closes_the_row_as_failed(
    stores: dict[str, Path], error: Exception, needle: str
) -> None:
    """The checkpointer's write fails in the middle of a turn (the file broke after the
    command opened it): the turn raises the one-line StorageError and its row is failed."""
    settings = Settings(
        cs_database_url=f"sqlite:///{stores['cs']}", database_url=f"sqlite:///{stores['telemetry']}"
    )

    async def turn() -> None:
        telemetry = TelemetryStore(settings.database_url)
        async with open_workflow(settings) as workflow:

            async def broken_write(*args: object, **kwargs: object) -> None:
                raise error

            workflow.checkpointer.aput = broken_write  # type: ignore[method-assign]
            orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
            for call in ("handle", "stream"):
                request = Request(
                    text="where is my order?", thread_id=f"t-{call}", customer_id="C00001"
                )
                with pytest.raises(StorageError, match=needle) as failed:
                    if call == "handle":
                        await orch.handle(request)
                    else:
                        _ = [event async for event in orch.stream(request)]
                assert str(stores["conversations"]) in str(failed.value)
                assert "\n" not in str(failed.value)
                with telemetry.engine.connect() as conn:
                    rows = conn.execute(text("SELECT id, status, error FROM requests")).all()
                assert not [r for r in rows if r[1] == "running"], rows
                mine = next(r for r in rows if r[0] == request.id)
                assert mine[1] == "failed" and mine[2] == str(failed.value)
        telemetry.close()

    asyncio.run(turn())
