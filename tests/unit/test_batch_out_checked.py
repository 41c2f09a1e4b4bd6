"""`orchestrator batch` checks that its results can be written before any row runs (tester5:
a read-only folder ran every row, spent the model time, then failed with a second traceback
from the unsaved workbook). /proc stands for a folder where no file can be created."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.fixtures.cli import run_orchestrator


def test_an_unwritable_out_is_one_line_and_runs_no_row(tmp_path: Path) -> None:
    requests = tmp_path / "in.csv"
    requests.write_text("id,text\n1,where is ORD-100076\n2,refund ORD-100077\n", encoding="utf-8")
    db = tmp_path / "telemetry.db"
    done = run_orchestrator(
        "batch", str(requests), "--text-column", "text", "--id-column", "id",
        "--out", "/proc/results.xlsx", "--csv", "--jsonl",
        "--server-url", "http://127.0.0.1:9/v1", "--no-launch", "--database-url", str(db),
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot write /proc/results.xlsx")
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    if db.exists():  # no row was run: no request was recorded
        with sqlite3.connect(db) as conn:
            tables = {r[0] for r in conn.execute("select name from sqlite_master")}
            if "requests" in tables:
                assert conn.execute("select count(*) from requests").fetchone()[0] == 0
