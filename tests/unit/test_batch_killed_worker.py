"""Issue 46 item 13: a worker that dies mid-request leaves no telemetry request ``running``.

A Ray actor is killed (SIGKILL) while it sends a row, on a real local Ray instance (as in
test_batch_ray.py): Ray Data sends the row again, the ledger keeps each row once, and the
request the dead actor started is closed as ``interrupted`` when the engine ends. The local
engine is stopped by a BaseException raised inside a request that nothing handles: the
request it started is closed too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.batch import BatchOptions, ColumnMapping, open_input, run_batch_job
from orchestrator.telemetry import BatchLedger
from tests.unit.test_batch import (
    MARKER,
    TEXTS,
    DyingModel,
    ScriptedFactory,
    write_csv,
)
from tests.unit.test_batch_ray import local_ray  # noqa: F401 (the fixture)


def _input(tmp_path: Path) -> tuple[Path, int]:
    texts = [*TEXTS, f"Where is my {MARKER}? It has not arrived", *TEXTS[:3]]
    rows = [[f"R{i}", t] for i, t in enumerate(texts)]
    return write_csv(tmp_path / "in.csv", ["id", "text"], rows), len(rows)


@pytest.mark.usefixtures("local_ray")
async def test_a_killed_ray_worker_leaves_no_request_running(tmp_path: Path) -> None:
    path, n = _input(tmp_path)
    db = f"sqlite:///{tmp_path / 'ray.db'}"
    flag = tmp_path / "killed"
    factory = ScriptedFactory(db, {"u1": DyingModel(flag, "kill")})
    source = open_input(path, ColumnMapping(text="text", id="id"))
    options = BatchOptions(concurrency=2, backoff_initial_s=0, backoff_max_s=0)
    job = await run_batch_job(
        source, factory, ["u1"], options, out=tmp_path / "out.xlsx", engine="ray", ray_workers=1
    )
    assert flag.exists(), "the worker was killed"
    store = factory.store()
    assert not store.requests(status="running")
    interrupted = store.requests(status="interrupted")
    assert len(interrupted) >= 1 and any(MARKER in r.text for r in interrupted)
    assert job.summary.interrupted_requests == len(interrupted)
    rows = [r.row_index for r in BatchLedger(store).iter_rows(job.summary.batch_id)]
    assert rows == list(range(n))  # every row recorded, and once
    assert job.summary.ran == n and job.summary.stopped is None


async def test_a_crashed_local_run_leaves_no_request_running(tmp_path: Path) -> None:
    path, n = _input(tmp_path)
    db = f"sqlite:///{tmp_path / 'local.db'}"
    factory = ScriptedFactory(db, {"u1": DyingModel(tmp_path / "flag", "crash")})
    source = open_input(path, ColumnMapping(text="text", id="id"))
    options = BatchOptions(concurrency=2, backoff_initial_s=0, backoff_max_s=0)
    job = await run_batch_job(source, factory, ["u1"], options, out=tmp_path / "out.xlsx")
    store = factory.store()
    assert not store.requests(status="running")
    (interrupted,) = store.requests(status="interrupted")
    assert MARKER in interrupted.text and job.summary.interrupted_requests == 1
    # the crashed row is not recorded (the next run sends it) and the summary says why
    assert job.summary.ran == n - 1
    assert "1 rows ended in an error of the batch runner (Crash" in str(job.summary.stopped)
