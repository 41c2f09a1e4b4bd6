"""The reader on every real workbook in ../shared/data/spreadsheets (sources and what makes each
hard: ../shared/data/SOURCES.md). Values are cross-checked against openpyxl's own full
(non-streaming, ``data_only=True``) load, which the reader does not use."""

from __future__ import annotations

import warnings
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path

import openpyxl
import pytest

from orchestrator.spreadsheet import (
    CellKind,
    ColumnType,
    EmptyWorkbookError,
    PasswordProtectedError,
    Workbook,
    read_workbook,
)
from tests.conftest import DATA_DIR

SHEETS = DATA_DIR / "spreadsheets"
SMALL = sorted(
    p.name
    for p in SHEETS.glob("*.xlsx")
    if p.stat().st_size < 100_000
    and p.name not in {"calamine_pass_protected.xlsx", "calamine_pivots.xlsx"}
)


@cache
def read(name: str) -> Workbook:
    return read_workbook(SHEETS / name)


def openpyxl_values(name: str) -> dict[str, dict[tuple[int, int], object]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wb = openpyxl.load_workbook(SHEETS / name, data_only=True)
    out: dict[str, dict[tuple[int, int], object]] = {}
    for ws in wb.worksheets:
        cells = {}
        for (r, c), cell in ws._cells.items():  # only the cells present in the file
            if r <= 1000 and c <= 100 and cell.value is not None:
                cells[(r, c)] = cell.value
        out[ws.title] = cells
    return out


@pytest.mark.parametrize("name", [n for n in SMALL if "bigfoot" not in n])
def test_every_table_value_matches_openpyxl_full_load(name: str) -> None:
    wb = read(name)
    reference = openpyxl_values(name)
    checked = 0
    for sheet in wb.sheets:
        merged = [openpyxl.worksheet.cell_range.CellRange(m) for m in sheet.merged_ranges]
        for table in sheet.tables:
            for col in table.columns:
                for row, value in zip(table.rows, col.values, strict=True):
                    if value is None:
                        continue
                    expected = reference[sheet.name].get((row, col.index))
                    if expected is None:  # a merged copy: openpyxl keeps the top-left only
                        rng = next(m for m in merged if (row, col.index) in m.cells)
                        expected = reference[sheet.name][(rng.min_row, rng.min_col)]
                    if isinstance(expected, str):
                        expected = expected if expected.strip() else None
                    assert value == expected, (sheet.name, col.letter, row)
                    checked += 1
    assert checked > 0 or not wb.tables()


def test_superstore(data_dir: Path) -> None:
    wb = read("sample_superstore.xlsx")
    assert [s.name for s in wb.sheets] == ["Orders", "Returns", "People"]
    orders = wb.sheets[0].tables[0]
    assert orders.source == "excel_table" and orders.header_rows == [1]
    assert orders.n_rows == 9994 and len(orders.columns) == 21  # SOURCES.md: 9,994 × 21
    assert orders.column("Order Date").type is ColumnType.DATE
    assert orders.column("Sales").type is ColumnType.NUMBER
    ws = openpyxl.load_workbook(SHEETS / "sample_superstore.xlsx", read_only=True)["Orders"]
    head = [
        row[0]
        for row in ws.iter_rows(min_row=2, max_row=501, min_col=18, max_col=18, values_only=True)
    ]
    assert orders.column("Sales").values[:500] == head
    assert wb.sheets[1].tables[0].n_rows == 296
    assert wb.sheets[2].tables[0].n_rows == 4


def test_bitext_requests_sheet_and_free_text_sheets() -> None:
    wb = read("bitext_customer_service_requests_8k.xlsx")
    variations = wb.sheets[0].tables[0]
    assert variations.source == "excel_table"
    assert [c.name for c in variations.columns] == ["flags", "utterance", "category", "intent"]
    assert variations.n_rows == 8175
    for sheet in wb.sheets[1:]:  # README and LICENSE: text, not tables
        assert not sheet.tables and sheet.text_blocks


def test_header_on_row_nine_with_a_stray_note() -> None:
    sheet = read("calamine_header-row.xlsx").sheets[0]
    (table,) = sheet.tables
    assert table.header_rows == [9] and table.rows == [10]
    assert [b.lines for b in sheet.text_blocks] == [["Note 1"]]


def test_table_in_the_middle_of_the_sheet() -> None:
    (table,) = read("calamine_temperature-in-middle.xlsx").tables()
    assert table.ref == "B4:C6" and table.header_rows == [4]
    assert table.column("label").values == ["celsius", "fahrenheit"]


def test_merged_rows_are_spread_down() -> None:
    (table,) = read("magicodes_合并行.xlsx").tables()
    names = table.column("姓名").values
    assert names[:3] == ["张三"] * 3  # B2:B4
    assert None not in table.column("性别").values  # C2:C9 and the others cover every row


def test_instructions_row_above_the_header() -> None:
    sheet = read("magicodes_管轴导入数据带有空行.xlsx").sheets[0]
    (table,) = sheet.tables
    assert table.header_rows == [2]
    assert table.columns[0].name == "管轴编号"
    assert sheet.text_blocks[0].lines[0].startswith("导入说明")


def test_question_bank() -> None:
    (table,) = read("magicodes_题库导入模板.xlsx").tables()
    assert table.header_rows == [1] and table.n_rows == 404 and len(table.columns) == 17
    assert table.columns[0].name == "干扰列"


def test_commissioning_log_with_seventy_merged_ranges() -> None:
    sheet = read("easyexcel_compatibility_t04.xlsx").sheets[0]
    assert len(sheet.merged_ranges) == 70
    assert sheet.declared_dimension == "A1:A1" and sheet.used_range != "A1"
    assert sheet.tables[0].header_rows == [1]


def test_data_formats_and_empty_sheets() -> None:
    wb = read("easyexcel_dataformat.xlsx")
    assert [s.cells for s in wb.sheets[1:]] == [0, 0]
    table = wb.sheets[0].tables[0]
    assert table.column("number").is_numeric
    assert any(isinstance(v, datetime) for v in table.column("date").values)


def test_two_merged_range_sheets() -> None:
    wb = read("calamine_merged_range.xlsx")
    assert [len(s.merged_ranges) for s in wb.sheets] == [9, 6]
    assert wb.sheets[0].tables[0].header_rows == [1, 2]


def test_four_excel_tables_two_on_one_sheet() -> None:
    wb = read("calamine_table-multiple.xlsx")
    assert [len(s.tables) for s in wb.sheets] == [1, 1, 2]
    assert all(t.source == "excel_table" for t in wb.tables())
    assert [t.name for t in wb.sheets[2].tables] == ["Sales_Alice", "Sales_Bob"]


def test_1904_date_system_and_duration() -> None:
    wb = read("calamine_date_1904.xlsx")
    assert wb.date_system == "1904"
    values = wb.tables()[0].columns[0].values
    assert values[0] == datetime(2021, 1, 1)
    assert isinstance(values[2], timedelta)


def test_password_protected() -> None:
    with pytest.raises(PasswordProtectedError):
        read_workbook(SHEETS / "calamine_pass_protected.xlsx")


def test_pivot_workbook_that_openpyxl_cannot_load_is_read() -> None:
    with pytest.raises(TypeError):  # SOURCES.md: openpyxl's full load raises
        openpyxl.load_workbook(SHEETS / "calamine_pivots.xlsx")
    wb = read("calamine_pivots.xlsx")
    assert len(wb.sheets) == wb.sheets_total == 6
    data = next(s for s in wb.sheets if s.name == "DataSheet").tables[0]
    assert {i.detail for i in data.issues} == {"#DIV/0!"}
    # pivot layouts: the "Grand Total" line is kept out of the data
    assert all(t.totals_rows for t in wb.tables() if t.sheet.startswith("PivotSheet"))


def test_full_sheet_dimension_is_capped() -> None:
    wb = read("calamine_issue_174_full_sheet_dimension.xlsx")
    sheet = wb.sheets[0]
    assert sheet.declared_dimension == "A1:XFD1048576"
    (table,) = sheet.tables
    assert table.header_rows == [1] and table.rows == [2]
    assert table.columns[0].name == "Your Ref #"


def test_1024_empty_sheets_is_an_empty_workbook() -> None:
    with pytest.raises(EmptyWorkbookError) as info:
        read_workbook(SHEETS / "openpyxl_bigfoot_1024_sheets.xlsx")
    assert "1,024 sheets" in str(info.value)


def test_cross_sheet_formula_keeps_its_cached_value() -> None:
    wb = read("openpyxl_genuine_empty.xlsx")
    assert len(wb.sheets) == 4
    formulas = wb.sheets[2]
    assert formulas.kinds == {CellKind.NUMBER: 1}
    assert formulas.text_blocks[0].lines == ["5"]  # ='Sheet2 - Numbers'!D5, cached


def test_formula_workbook_keeps_formula_text_and_cached_values() -> None:
    wb = read("epplus_FormulaTest.xlsx")
    examples = dict(ex for t in wb.tables() for ex in t.formula_examples)
    assert examples["'Sheet1'!B1"] == "=A1"
    sheet1 = wb.sheets[0].tables[0]
    assert sheet1.columns[1].values[0] == 1  # cached value of =A1
    assert any(i.detail == "#DIV/0!" for t in wb.tables() for i in t.issues)


def test_complex_styles_merges() -> None:
    assert len(read("openpyxl_complex-styles.xlsx").sheets[0].merged_ranges) == 8
