"""Duration columns (Excel's ``[h]:mm``) get a total, exact, in the sheet's own format (app15,
brief 2c). A column of ``[h]:mm`` cells had no figure at all in the report: not its total, not
its mean; and a duration figure would have read ``2 days, 19:10:00``."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import openpyxl
import pytest

from orchestrator.spreadsheet import read_workbook
from workflows.excel_report.analysis import analyse

SPANS = [
    timedelta(hours=26, minutes=15),
    timedelta(hours=9, minutes=5, seconds=30),
    timedelta(hours=31, minutes=50, seconds=45),
    timedelta(minutes=59, seconds=59),
]


@pytest.mark.parametrize(
    ("number_format", "total", "longest"),
    [
        ("[h]:mm", "68:11", "31:50"),  # 68:11:14, past a day, the seconds cut as Excel cuts them
        ("[h]:mm:ss", "68:11:14", "31:50:45"),
        ("[hh]:mm", "68:11", "31:50"),
        ("[mm]:ss", "4091:14", "1910:45"),
        ("[m]", "4091", "1910"),
    ],
)
def test_a_duration_column_is_totalled_in_its_own_format(
    tmp_path: Path, number_format: str, total: str, longest: str
) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Agent", "Calls", "Talk time"])
    for k, span in enumerate(SPANS):
        sheet.append([f"agent {k}", k + 3, span])
        sheet.cell(k + 2, 3).number_format = number_format
    path = tmp_path / "calls.xlsx"
    book.save(path)
    figures = {f.label: f for f in analyse(read_workbook(path)).figures}
    assert figures["total `Talk time`"].display == total
    assert figures["longest `Talk time`"].display == longest
    assert figures["total `Talk time`"].provenance.cells.endswith("C2:C5")
    assert figures["shortest `Talk time`"].provenance.cells.endswith("C5")
    assert figures["total `Calls`"].value == 18  # the other columns as before
