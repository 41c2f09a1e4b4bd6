"""Batch rows never sent (stopped or cancelled before dispatch, no server answered, refused
before sending) have an explicit route in the results, ``not_classified``, never an empty
cell; rows that ran keep the classifier's route."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.batch import NOT_CLASSIFIED, BatchOptions, ColumnMapping, open_input
from orchestrator.batch.inputs import BatchRow
from orchestrator.batch.results import PENDING_ERROR, merged_rows
from orchestrator.testing import ScriptedModel
from tests.unit.test_batch import (
    TEXTS,
    DownAtCheck,
    ScriptedFactory,
    _run,
    read_results,
    stop_after_two,
    write_csv,
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'telemetry.db'}"


@pytest.fixture
def sheet(tmp_path: Path) -> Path:
    rows = [[f"T{i:03d}", t] for i, t in enumerate(TEXTS)]
    return write_csv(tmp_path / "inbox.csv", ["ticket", "body"], rows)


async def test_rows_stopped_before_dispatch_are_marked_not_classified(tmp_path, db, sheet) -> None:
    factory = ScriptedFactory(db, {"u1": ScriptedModel()})
    source = open_input(sheet, ColumnMapping(text="body", id="ticket"))
    out = tmp_path / "results.xlsx"
    options = BatchOptions(concurrency=1, backoff_initial_s=0, backoff_max_s=0)
    await _run(
        source,
        factory,
        out=out,
        options=options,
        **stop_after_two(),
        formats=["jsonl"],
    )
    rows = read_results(out)
    sent, unsent = rows[:2], rows[2:]
    assert all(r["route"] == "customer_service" for r in sent)
    assert unsent and all(r["status"] == "pending" for r in unsent)
    assert all(r["route"] == NOT_CLASSIFIED and r["error"] == PENDING_ERROR for r in unsent)
    lines = [json.loads(x) for x in out.with_suffix(".jsonl").read_text().splitlines()]
    assert [x["route"] for x in lines] == [r["route"] for r in rows]


async def test_unreachable_and_refused_rows_are_marked_not_classified(tmp_path, db) -> None:
    path = write_csv(
        tmp_path / "in.csv", ["id", "text"], [["A", TEXTS[0]], ["B", ""], ["C", TEXTS[2]]]
    )
    source = open_input(path, ColumnMapping(text="text", id="id"))
    out = tmp_path / "results.xlsx"
    await _run(source, DownAtCheck(db, {}), out=out, formats=["csv"])
    rows = read_results(out)
    assert [r["status"] for r in rows] == ["unreachable", "failed", "unreachable"]
    assert [r["route"] for r in rows] == [NOT_CLASSIFIED] * 3
    assert out.with_suffix(".csv").read_text().count(NOT_CLASSIFIED) == 3


def test_a_row_recorded_without_a_route_by_an_older_version_reads_not_classified() -> None:
    rows = [BatchRow(index=i, line=i + 2, row_id=f"r{i}", text="x") for i in range(3)]
    recorded = [(0, {"row": 1, "route": None, "status": "unreachable"})]
    recorded.append((1, {"row": 2, "route": "moderation", "status": "succeeded"}))
    merged = list(merged_rows(rows, recorded))
    assert [m["route"] for m in merged] == [NOT_CLASSIFIED, "moderation", NOT_CLASSIFIED]
    assert merged[2]["status"] == "pending"
