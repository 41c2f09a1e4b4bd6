"""``orchestrator skew --batch ID`` for a batch that exists but has made no model call yet
says so (rows recorded by status, rows not run, requests made), not that it does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.analysis.skew.report import ReportOptions, build_report
from orchestrator.classifier import RuleClassifier
from orchestrator.cli.app import app
from orchestrator.exceptions import UserError
from orchestrator.request import Request
from orchestrator.telemetry import BatchLedger, TelemetryStore


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_batch_with_rows_but_no_request_says_it_has_no_calls_yet(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    store = TelemetryStore(f"sqlite:///{db}")
    ledger = BatchLedger(store)
    ledger.open_batch("b-unsent", source="in.csv", mapping={"text": "body"}, total_rows=5)
    for i, status in enumerate(("unreachable", "unreachable", "failed")):
        ledger.record_row(
            "b-unsent", i, row_id=f"r{i}", request_id=None, status=status, attempts=1, output={}
        )
    with pytest.raises(UserError) as info:
        build_report(store, ReportOptions(window="all", batch="b-unsent"))
    said = str(info.value)
    assert "exists but has no model calls yet" in said
    assert "3 of its 5 rows are recorded (1 failed, 2 unreachable), 2 not run yet" in said
    assert "no row has reached the model" in said and "--retry-failed" in said
    store.close()
    result = CliRunner().invoke(
        app, ["skew", "--db", str(db), "--window", "all", "--batch", "b-unsent"]
    )
    assert result.exit_code == 2
    assert "exists but has no model calls yet" in _flat(result.output)
    assert "does not exist" not in result.output and "no batch" not in result.output


def test_a_batch_whose_requests_made_no_call_says_so(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    BatchLedger(store).open_batch("b-human", source="in.csv", mapping={"text": "t"}, total_rows=1)
    request = Request(id="b-human.0.x", text="hello?", metadata={"batch_id": "b-human"})
    store.start_request(request, RuleClassifier().classify(request), None)
    store.finish_request(request.id, "needs_human", error="unsure")
    with pytest.raises(UserError, match="its 1 requests made no model call"):
        build_report(store, ReportOptions(window="all", batch="b-human"))
    with pytest.raises(UserError, match=r"no batch 'b-other'.*batches there: b-human"):
        build_report(store, ReportOptions(window="all", batch="b-other"))
    store.close()
