"""Pivot subtotals, template footers and zip part-name case (tester6 findings 1, 4, 17).

Each workbook is written here with openpyxl from a case of
``tests/data/cases/spreadsheet_subtotal_footer_kinds.json``; the expected data-row count and
column totals are computed by hand from the rows written (the leaves only), never read from
the code.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import openpyxl
import pytest
from case_tables import cases

from orchestrator.spreadsheet import read_workbook

Row = tuple[object, ...]
_FILE = "spreadsheet_subtotal_footer_kinds.json"


def _write(path: Path, header_rows: list[Row], rows: list[Row]) -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    for h in header_rows:
        ws.append(list(h))
    for r in rows:
        ws.append(list(r))
    wb.save(path)
    return path


def _totals(path: Path) -> tuple[int, dict[str, float]]:
    tables = read_workbook(path).tables()
    assert len(tables) == 1, [t.ref for t in tables]
    table = tables[0]
    sums = {
        c.name: float(sum(v for v in c.values if isinstance(v, int | float)))
        for c in table.columns
        if any(isinstance(v, int | float) and not isinstance(v, bool) for v in c.values)
    }
    return len(table.rows), sums


def _check_read(
    path: Path, headers: list[Row], rows: list[Row], n_rows: int, totals: dict[str, float]
) -> None:
    """The workbook of ``headers`` and ``rows`` written at ``path`` reads as one table of
    ``n_rows`` data rows whose columns sum to ``totals``."""
    got_rows, sums = _totals(_write(path, headers, rows))
    assert got_rows == n_rows
    for name, total in totals.items():
        assert sums.get(name) == pytest.approx(total), (name, sums)


# (name, header, rows, expected data rows, {column: expected total}); "not_subtotals": the
# words or the arithmetic say no. Rows are lists in the file; they are written the same.
SUBTOTALS = cases(_FILE, "subtotals") + cases(_FILE, "not_subtotals")


@pytest.mark.parametrize(
    ("header", "rows", "n_rows", "totals"),
    [case[1:] for case in SUBTOTALS],
    ids=[case[0] for case in SUBTOTALS],
)
def test_pivot_subtotal_rows_are_not_data(
    tmp_path: Path, header: Row, rows: list[Row], n_rows: int, totals: dict[str, float]
) -> None:
    _check_read(tmp_path / "p.xlsx", [header], rows, n_rows, totals)


# (name, header rows, rows, expected data rows, {column: expected total})
FOOTERS = cases(_FILE, "footers")


@pytest.mark.parametrize(
    ("headers", "rows", "n_rows", "totals"),
    [case[1:] for case in FOOTERS],
    ids=[case[0] for case in FOOTERS],
)
def test_template_footers_are_not_data(
    tmp_path: Path, headers: list[Row], rows: list[Row], n_rows: int, totals: dict[str, float]
) -> None:
    _check_read(tmp_path / "f.xlsx", headers, rows, n_rows, totals)


def _rename_entries(src: Path, dst: Path, renames: dict[str, str]) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            zout.writestr(renames.get(item.filename, item.filename), zin.read(item.filename))
    return dst


@pytest.mark.parametrize(
    "renames",
    [
        {"xl/worksheets/sheet1.xml": "xl/worksheets/Sheet1.xml"},
        {
            "xl/worksheets/sheet1.xml": "xl/Worksheets/SHEET1.xml",
            "xl/sharedStrings.xml": "xl/SharedStrings.XML",
        },
    ],
    ids=["sheet_upper_first", "folder_and_shared_strings"],
)
def test_zip_part_names_are_case_insensitive(tmp_path: Path, renames: dict[str, str]) -> None:
    src = _write(tmp_path / "src.xlsx", [("Name", "Qty")], [("a", 4), ("b", 5), ("c", 6)])
    got_rows, sums = _totals(_rename_entries(src, tmp_path / "cased.xlsx", renames))
    assert got_rows == 3
    assert sums == {"Qty": 15}
