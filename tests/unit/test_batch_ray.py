"""The Ray Data engine on a local Ray instance (``ray.init(num_cpus=2)``), with ScriptedModel
workers and a real SQLite store: the same results file as the local engine."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from openpyxl import load_workbook

from orchestrator.batch import BatchOptions, ColumnMapping, open_input, run_batch_job
from orchestrator.telemetry import BatchLedger
from orchestrator.testing import ScriptedModel
from tests.unit.test_batch import TEXTS, ScriptedFactory, write_csv

ray = pytest.importorskip("ray")

#: Columns that differ between two runs of the same rows (timings, ids of the attempts).
RUN_SPECIFIC = {"latency_ms", "request_id", "top_experts", "router_confidence"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    root = str(Path(__file__).resolve().parents[2])
    # a loaded 2-core machine (a vLLM server beside) starts the raylet slowly
    os.environ.setdefault("RAY_raylet_start_wait_time_s", "300")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": root}},
    )
    yield
    ray.shutdown()


def _cells(path: Path) -> list[tuple[object, ...]]:
    workbook = load_workbook(path, read_only=True)
    rows = [tuple(r) for r in workbook.worksheets[0].iter_rows(values_only=True)]
    workbook.close()
    header = rows[0]
    keep = [i for i, name in enumerate(header) if name not in RUN_SPECIFIC]
    return [tuple(r[i] if i < len(r) else None for i in keep) for r in rows]


async def test_the_ray_engine_writes_the_same_results_as_the_local_engine(
    tmp_path: Path, local_ray: None
) -> None:
    rows = [[f"R{i}", t] for i, t in enumerate(TEXTS * 2)] + [["R99", " "]]
    path = write_csv(tmp_path / "in.csv", ["id", "text"], rows)
    source = open_input(path, ColumnMapping(text="text", id="id"))
    options = BatchOptions(concurrency=2, backoff_initial_s=0, backoff_max_s=0)
    outs = {}
    for engine in ("local", "ray"):
        db = f"sqlite:///{tmp_path / f'{engine}.db'}"
        factory = ScriptedFactory(db, {"u1": ScriptedModel(), "u2": ScriptedModel()})
        outs[engine] = tmp_path / f"{engine}.xlsx"
        job = await run_batch_job(
            source,
            factory,
            ["u1", "u2"],
            options,
            out=outs[engine],
            engine=engine,
            ray_workers=2,
        )
        assert job.summary.ran == len(rows) and job.summary.stopped is None
        ledger = BatchLedger(factory.store())
        assert [r.row_index for r in ledger.iter_rows(job.summary.batch_id)] == list(
            range(len(rows))
        )
        # the workers wrote the telemetry: every request carries the batch id, none running
        requests = factory.store().requests()
        assert {r.batch_id for r in requests} == {job.summary.batch_id}
        assert len(requests) == len(rows) - 1 and not factory.store().requests(status="running")
    assert _cells(outs["ray"]) == _cells(outs["local"])
    assert _cells(outs["ray"])[-1][5] == "failed"  # the empty-text row, in its place
