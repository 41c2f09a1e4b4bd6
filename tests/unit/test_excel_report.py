"""The excel_report workflow with ScriptedModel (a test double of the model) and a real SQLite
file: figures computed from cells, findings validated against figure ids, model numbers
stripped, prompt budget kept, formula injection defused, bad files rejected with no output."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator import Attachment, Orchestrator, Request, TelemetryStore
from orchestrator.exceptions import UserError
from orchestrator.spreadsheet import read_workbook
from orchestrator.testing import ScriptedModel
from skills.interpret_data import interpretation_schema, parse_interpretation
from tests.fixtures import spreadsheets as fx
from workflows.excel_report import ExcelReportWorkflow, ReportConfig
from workflows.excel_report.analysis import analyse
from workflows.excel_report.encoding import ByteCounter, encode_workbook
from workflows.excel_report.narrative import REMOVED, sanitise
from workflows.excel_report.render import cell_text

INJECTION = '=HYPERLINK("http://evil.example","click")'


def model_answer(findings: list[dict], title: str = INJECTION) -> str:
    """One JSON answer that satisfies both skills' parsers (ScriptedModel repeats it)."""
    return json.dumps(
        {
            "findings": findings,
            "title": title,
            "summary": "Revenue was {F2} and grew 45% in 2024, see F999",
            "sections": [{"heading": "@cmd|' /C calc'!A0", "body": "-2+3 is {F1} rows"}],
        }
    )


@pytest.fixture
def store(tmp_path: Path) -> TelemetryStore:
    return TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")


def request_for(path: Path) -> Request:
    return Request(
        text="Summarise the attached spreadsheet",
        attachments=(Attachment(filename=path.name, path=str(path)),),
    )


def traced_numbers_problem(markdown: str, displays: set[str]) -> list[str]:
    """Numbers in ``markdown`` that are not a figure's display value (test's own parser)."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)  # reader log block
    text = re.sub(r"`[^`]*`(![A-Z]{1,3}\d+(:[A-Z]{1,3}\d+)?)?", " ", text)  # names, sheet refs
    text = re.sub(r"'[^']*'![A-Z]{1,3}\d+(:[A-Z]{1,3}\d+)?", " ", text)  # quoted sheet refs
    text = re.sub(r"\bF\d+\b|\bT\d+\b", " ", text)  # figure and table ids
    for display in sorted(displays, key=len, reverse=True):
        text = text.replace(display, " ")
    return re.findall(r"\d+", text)


async def test_report_end_to_end_every_number_traced(tmp_path: Path, store) -> None:
    path = fx.sales_workbook(tmp_path / "sales.xlsx", rows=48)
    model = ScriptedModel(
        json_reply=model_answer(
            [
                {"statement": "Revenue totals {F2}.", "figure_ids": ["F2"]},
                {"statement": "Revenue totals {F2}, a record 99%", "figure_ids": ["F2"]},
                {"statement": "Made up", "figure_ids": ["F999"]},
            ]
        )
    )
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=tmp_path / "out"), ByteCounter())
    outcome = await Orchestrator(model, store, [workflow]).handle(request_for(path))

    assert outcome.status == "succeeded" and outcome.workflow == "excel_report"
    result = outcome.result
    assert result["status"] == "succeeded"
    # figures are computed from the cells: the revenue total equals numpy's sum of column D
    ws = openpyxl.load_workbook(path).active
    revenue = np.sum([ws.cell(r, 4).value for r in range(4, 52)])
    analysis = analyse(read_workbook(path))
    f2 = analysis.by_id()["F2"]
    assert f2.provenance.cells == "'Sales'!D4:D51" and f2.provenance.operation == "sum"
    assert f2.value == pytest.approx(revenue)
    # the finding citing F999 is dropped; so is the sentence with the model's own 99% (a
    # sentence is dropped whole, never shown with a hole); the true one is kept
    assert len(result["findings"]) == 1
    assert result["dropped_findings"] == ["cites unknown figure ids ['F999']"]
    assert "99%" in result["numbers_removed"]
    assert any("no figure" in d["reason"] for d in result["dropped_sentences"])
    markdown = Path(result["markdown"]).read_text(encoding="utf-8")
    assert f"{f2.display} (F2)" in markdown
    assert REMOVED not in markdown and "99%" not in markdown
    displays = {f.display for f in analysis.figures}
    assert traced_numbers_problem(markdown, displays) == []
    # one telemetry row per model call, with experts and prompt tokens
    rows = store.calls(request_id=outcome.request_id)
    assert [r.node for r in rows] == ["interpret", "write_report"]
    assert all(r.expert_counts is not None and r.prompt_tokens > 0 for r in rows)
    assert result["prompt_tokens"] == {r.node: r.prompt_tokens for r in rows}
    # the encoding in the prompt is the budgeted one, delimited as data
    prompt = model.calls[0][1].content
    assert prompt.startswith("<data>") and "F2 total `Revenue`" in prompt


async def test_model_text_never_becomes_a_formula_in_the_xlsx(tmp_path: Path, store) -> None:
    path = fx.sales_workbook(tmp_path / "sales.xlsx", rows=30)
    # a title the claim checker lets through (no name outside the workbook, no number)
    title = INJECTION.lower()
    model = ScriptedModel(
        json_reply=model_answer([{"statement": "+1", "figure_ids": ["F1"]}], title=title)
    )
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=tmp_path / "out"), ByteCounter())
    outcome = await Orchestrator(model, store, [workflow]).handle(request_for(path))
    book = openpyxl.load_workbook(outcome.result["xlsx"])
    assert {"Summary", "Figures", "Chart data", "Charts"} <= set(book.sheetnames)
    texts = []
    for ws in book.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                assert cell.data_type != "f", (ws.title, cell.coordinate, cell.value)
                if isinstance(cell.value, str):
                    texts.append(cell.value)
    assert any(t.startswith("'=hyperlink") for t in texts)  # the title, defused
    assert book["Charts"]._charts, "the report has charts"
    figures = {r[0].value: r[2].value for r in book["Figures"].iter_rows(min_row=2)}
    assert isinstance(figures["F2"], float)  # numbers stay numbers


@pytest.mark.parametrize("text", ["=1+1", "+SUM(A1)", "-2", "@cmd", "\t=x", "\r=x"])
def test_cell_text_defuses_formula_triggers(text: str) -> None:
    assert cell_text(text) == "'" + text


def test_sanitise_resolves_citations_and_strips_numbers() -> None:
    analysis = analyse(read_workbook(fx.sales_workbook(Path("/tmp") / "s_sanitise.xlsx")))
    figures = analysis.by_id()
    safe = sanitise("Total {F2}; Q3 rose 7.5% `rm -rf` <b>[x](y)</b> F4000", figures)
    assert safe.markdown.startswith(f"Total {figures['F2'].display} (F2)")
    assert safe.removed_numbers == ["3", "7.5%"]
    assert safe.unknown_citations == ["F4000"]
    assert "`" not in safe.markdown and "\\<b\\>" in safe.markdown and "\\[x\\]" in safe.markdown
    # a number the model copied exactly from a figure is kept and tagged
    copied = sanitise(f"about {figures['F2'].display}", figures)
    assert copied.removed_numbers == [] and copied.cited == ["F2"]


_SANITISE_FIGURES = analyse(
    read_workbook(fx.sales_workbook(Path("/tmp") / "s_sanitise_property.xlsx"))
).by_id()
#: Pieces model prose is made of, weighted toward the ones near numbers: digits in several
#: scripts, separators, signs, currency, citations (real and unknown) and other numerals.
_PROSE_PIECES = st.one_of(
    st.text(alphabet="0123456789.,%$-+ F{}Qxv", max_size=8),
    st.sampled_from(["{F2}", "F2", "{F999}", "F3", ".5", ",5", "５", "٥", "½", "⁵", "①", "Ⅻ"]),
    st.sampled_from([f.display for f in _SANITISE_FIGURES.values()]),
    st.text(max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PROSE_PIECES, max_size=12).map("".join))
def test_sanitise_lets_no_model_number_through(text: str) -> None:
    """Whatever the model writes, every numeral left in the output belongs to a figure's value
    rendered by code with its id (the CI flake: ``,5`` and ``.5`` slipped past)."""
    safe = sanitise(text, _SANITISE_FIGURES)
    for out in (safe.markdown, safe.plain):
        for fid in sorted(set(safe.cited), key=lambda f: -len(_SANITISE_FIGURES[f].display)):
            out = out.replace(f"{_SANITISE_FIGURES[fid].display} ({fid})", " ")
        assert not [ch for ch in out if unicodedata.category(ch)[0] == "N"], (text, out)


def test_interpretation_schema_and_validation() -> None:
    schema = interpretation_schema(["F1", "F2"])
    item = schema["properties"]["findings"]["items"]
    assert item["properties"]["figure_ids"]["items"]["enum"] == ["F1", "F2"]
    assert item["properties"]["statement"]["maxLength"] == 100
    parsed = parse_interpretation(
        json.dumps(
            {
                "findings": [
                    {"statement": "ok", "figure_ids": ["F1"]},
                    {"statement": "none", "figure_ids": []},
                ]
            }
        ),
        ["F1", "F2"],
    )
    assert [f.figure_ids for f in parsed.findings] == [["F1"]]
    assert parsed.dropped[0].reason == "cites no figure"
    # model output is data: code is kept as text, never run
    bad = parse_interpretation("__import__('os').system('touch /tmp/pwned')", ["F1"])
    assert bad.parsed is False and bad.raw.startswith("__import__")


def test_encoding_stays_within_the_token_budget_on_a_large_sheet(tmp_path: Path) -> None:
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Log")
    ws.append(["When", "Shop", "Amount"])
    for i in range(30_000):
        ws.append([f"2024-{1 + i % 12:02d}-01", f"shop {i % 40}", i % 997])
    wb.save(tmp_path / "log.xlsx")
    workbook = read_workbook(tmp_path / "log.xlsx")
    assert workbook.tables()[0].n_rows == 30_000
    analysis = analyse(workbook)
    counter = ByteCounter()
    for budget in (120, 400, 1500):
        enc = encode_workbook(workbook, analysis, budget, counter)
        assert enc.tokens == counter.count(enc.text) <= budget
        assert all(fid in enc.text for fid in enc.figure_ids)
    assert enc.text.count("\n") < 200  # a summary, not 30,000 pasted rows


async def test_bad_file_is_rejected_with_no_output_and_no_model_call(tmp_path: Path, store) -> None:
    path = fx.encrypted_workbook(tmp_path / "locked.xlsx")
    out = tmp_path / "out"
    model = ScriptedModel()
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=out), ByteCounter())
    outcome = await Orchestrator(model, store, [workflow]).handle(request_for(path))
    assert outcome.result["status"] == "rejected"
    assert "locked.xlsx: the workbook is password-protected" in outcome.result["error"]
    assert outcome.headline.startswith("rejected: locked.xlsx")
    assert model.calls == [] and not out.exists()


async def test_render_failure_leaves_no_partial_file(tmp_path: Path, store, monkeypatch) -> None:
    from workflows.excel_report import render

    def broken(content):  # type: ignore[no-untyped-def]
        raise OSError("disk full")

    monkeypatch.setattr(render, "build_xlsx", broken)
    path = fx.sales_workbook(tmp_path / "sales.xlsx", rows=10)
    out = tmp_path / "out"
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=out), ByteCounter())
    model = ScriptedModel(json_reply=model_answer([{"statement": "x", "figure_ids": ["F1"]}]))
    with pytest.raises(UserError, match=r"^cannot write .*\.report\.md, .*: disk full"):
        await Orchestrator(model, store, [workflow]).handle(request_for(path))
    assert list(out.iterdir()) == []


def test_cli_inspect_and_bad_file_exit_code(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from orchestrator.cli import app

    runner = CliRunner()
    good = fx.sales_workbook(tmp_path / "sales.xlsx", rows=12)
    ok = runner.invoke(app, ["report", str(good), "--inspect"])
    assert ok.exit_code == 0, ok.output
    assert "T1" in ok.output and "A3:E15" in ok.output
    bad = tmp_path / "fake.xlsx"
    bad.write_bytes(b"hello, not a workbook")
    failed = runner.invoke(app, ["report", str(bad), "--out", str(tmp_path / "out")])
    assert failed.exit_code == 2
    assert "fake.xlsx" in failed.output and not (tmp_path / "out").exists()


def _real_workbooks() -> list[Path]:
    from orchestrator.config import DEFAULT_DATA_DIR

    folder = Path(DEFAULT_DATA_DIR) / "spreadsheets"
    suffixes = {".xlsx", ".xlsm", ".xls", ".csv", ".tsv"}
    return sorted(p for p in folder.glob("*") if p.suffix.lower() in suffixes)


@pytest.mark.parametrize("path", _real_workbooks(), ids=lambda p: p.name)
async def test_every_real_workbook_gets_a_report_or_a_clear_rejection(
    path: Path, tmp_path: Path, store
) -> None:
    """Each workbook of ../shared/data/spreadsheets (sources in ../shared/data/SOURCES.md) goes
    through the whole workflow with ScriptedModel: a report with its figures, or a rejection
    that names the file; never a crash (calamine_date_1904.xlsx once crashed on a duration)."""
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=tmp_path / "out"), ByteCounter())
    model = ScriptedModel(json_reply=model_answer([], title="Report"))
    outcome = await Orchestrator(model, store, [workflow]).handle(request_for(path))
    result = outcome.result
    assert outcome.status == result["status"], outcome.error  # a rejection is recorded so
    if result["status"] == "rejected":
        assert result["error"].startswith(path.name) and not (tmp_path / "out").exists()
    else:
        assert result["status"] == "succeeded"
        assert Path(result["markdown"]).is_file() and Path(result["xlsx"]).is_file()


async def test_headers_without_data_are_rejected(tmp_path: Path, store) -> None:
    path = tmp_path / "only_header.csv"
    path.write_text("region,sales\n", encoding="utf-8")
    out = tmp_path / "out"
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=out), ByteCounter())
    model = ScriptedModel()
    outcome = await Orchestrator(model, store, [workflow]).handle(request_for(path))
    assert outcome.result["status"] == "rejected"
    assert outcome.result["error"].startswith("only_header.csv: no table with data rows")
    assert model.calls == [] and not out.exists()
