"""The Excel report shows format characters of workbook names as ``<U+202E>`` (tester15 T15-6).

A sheet named ``S\\u202eheet`` and a header ``Reve\\u200bnue`` went into the .md report (tables,
the summary sentence) and the .xlsx report's cells as they were: a right-to-left override
reverses the rest of what a reader sees, a zero-width space hides. G14's fix covered the CLI
and the chat UI only."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from orchestrator.spreadsheet import read_workbook
from workflows.excel_report.offline import figures_only_report

HIDDEN = ["\u202e", "\u200b", "\u2066", "\u200f", "\ufeff"]


@pytest.mark.parametrize("mark", HIDDEN)
def test_format_characters_of_the_workbook_are_shown_in_the_report(
    tmp_path: Path, mark: str
) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = f"S{mark}heet"
    sheet.append(["Region", f"Reve{mark}nue", "收入"])
    for region, amount in (("North", 100), (f"So{mark}uth", 200), ("West", 300)):
        sheet.append([region, amount, amount * 2])
    path = tmp_path / "bidi.xlsx"
    book.save(path)
    _, files = figures_only_report(read_workbook(path), tmp_path / "out")
    markdown = files.markdown.read_text(encoding="utf-8")
    shown = f"<U+{ord(mark):04X}>"
    assert mark not in markdown and f"Reve{shown}nue" in markdown
    assert "收入" in markdown  # other text as it was
    report = openpyxl.load_workbook(files.xlsx)
    texts = [str(c.value) for ws in report.worksheets for row in ws.iter_rows() for c in row]
    assert not any(mark in t for t in texts)
    assert any(f"Reve{shown}nue" in t for t in texts)
