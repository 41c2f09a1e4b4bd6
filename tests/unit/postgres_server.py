"""A throwaway PostgreSQL server for the storage conformance tests (Debian's ``postgresql``).

:func:`running_postgres` runs ``initdb`` into a new folder under the system temp dir, starts the
server with ``pg_ctl`` on a free loopback port (unix socket in the same folder, no fsync: the
data is thrown away), yields it, and stops it and deletes the folder at the end. As root (CI),
every server command runs as the ``postgres`` user (``runuser -u postgres --``), because
``initdb`` refuses to run as root. Missing binaries are a test failure, not a skip: CI must run
these tests, and ``scripts/install.sh`` installs the package.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from tests.fixtures.servers import free_port

INSTALL_HINT = (
    "install Debian's PostgreSQL server (apt-get install -y postgresql; scripts/install.sh does "
    "it): the storage conformance tests run on a real PostgreSQL and must not be skipped"
)


@dataclass
class PostgresServer:
    """A running server: ``url(db)`` gives a SQLAlchemy URL of one of its databases."""

    port: int
    folder: Path
    startup_s: float
    databases: list[str] = field(default_factory=list)

    def admin_dsn(self, database: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create an empty database ``name`` and return its SQLAlchemy URL."""
        with psycopg.connect(self.admin_dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.url(name)


def bin_dir() -> Path:
    """The newest ``/usr/lib/postgresql/<version>/bin`` that holds ``pg_ctl``.

    Raises:
        pytest.fail.Exception: No PostgreSQL server binaries are installed.
    """
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if not found:
        pytest.fail(
            f"no PostgreSQL server binaries under /usr/lib/postgresql/*/bin; {INSTALL_HINT}"
        )
    return Path(found[-1]).parent


def _as_server_user(command: list[str]) -> list[str]:
    """``command`` as the ``postgres`` user when running as root (initdb refuses root)."""
    if os.geteuid() != 0:
        return command
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        pytest.fail(
            f"running as root, and there is no 'postgres' user to run the server; {INSTALL_HINT}"
        )
    return ["runuser", "-u", "postgres", "--", *command]


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(
        _as_server_user(command), capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{what} failed (exit {done.returncode}): {done.stderr.strip() or done.stdout}")


@contextmanager
def running_postgres(timezone: str = "Asia/Shanghai") -> Iterator[PostgresServer]:
    """Start a PostgreSQL server for the duration of the block (see the module docstring).

    Args:
        timezone: The server's ``TimeZone``; not UTC on purpose, so that a datetime that loses
            its zone shows up as a wrong hour.
    """
    binaries = bin_dir()
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="telemetry-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, user="postgres", group="postgres")
    data, log = folder / "data", folder / "server.log"
    port = free_port()
    _run(
        [
            str(binaries / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ],
        "initdb",
    )
    # max_connections: one server serves the whole unit session (tests/unit/conftest.py), so
    # the pooled connections of the stores that earlier modules left open share it with the
    # racing processes of later ones; the default 100 leaves little room for that.
    options = (
        f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
        f"-c synchronous_commit=off -c full_page_writes=off -c TimeZone={timezone} "
        "-c max_connections=300"
    )
    _run(
        [
            str(binaries / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(log),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        ],
        f"pg_ctl start (log: {log})",
    )
    try:
        yield PostgresServer(port=port, folder=folder, startup_s=time.perf_counter() - started)
    finally:
        _run([str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], "pg_ctl stop")
        shutil.rmtree(folder, ignore_errors=True)
