"""The spreadsheet reader on generated workbooks (tests/fixtures/spreadsheets.py): headers not
on row 1, two tables on a sheet, merged cells, formulas with and without cached values, dates,
units, .xls and .csv."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import openpyxl
import pytest

from orchestrator.spreadsheet import (
    CellKind,
    ColumnType,
    ReadLimits,
    read_workbook,
)
from orchestrator.spreadsheet.csvfile import parse_text_cell
from tests.fixtures import spreadsheets as fx


def test_header_below_a_merged_title_and_second_table_after_a_blank_row(tmp_path: Path) -> None:
    rows = 48
    wb = read_workbook(fx.sales_workbook(tmp_path / "sales.xlsx", rows))
    sheet = wb.sheets[0]
    main, target = sheet.tables
    assert main.header_rows == [3]
    assert [c.name for c in main.columns] == ["Date", "Region", "Product", "Revenue", "Margin"]
    assert main.n_rows == rows and main.rows[0] == 4 and main.rows[-1] == 3 + rows
    assert main.ref == f"A3:E{3 + rows}"
    # the merged title is text above the table, not a header and not data
    assert any("Quarterly sales export" in line for b in sheet.text_blocks for line in b.lines)
    assert "A1:E1" in sheet.merged_ranges
    # types and units from number formats
    types = {c.name: (c.type, c.unit) for c in main.columns}
    assert types["Date"][0] is ColumnType.DATE
    assert types["Revenue"] == (ColumnType.NUMBER, "$")
    assert types["Margin"][1] == "%"
    assert main.column("Revenue").range == f"'Sales'!D4:D{3 + rows}"
    # the second table starts after the blank row with its own header
    assert target.header_rows == [3 + rows + 2]
    assert [c.name for c in target.columns] == ["Target", "Value"]
    assert target.n_rows == 2


def test_merged_values_spread_over_their_range_and_two_row_header(tmp_path: Path) -> None:
    wb = read_workbook(fx.merged_workbook(tmp_path / "merged.xlsx"))
    table = wb.tables()[0]
    assert table.header_rows == [1, 2]
    assert [c.name for c in table.columns] == ["Team", "Scores / Q1", "Scores / Q2"]
    team = table.column("Team")
    assert team.values == ["Red", "Red", "Red", "Blue", "Blue"]
    assert team.merged_values == 3  # 5 rows, 2 of them hold their own value


def test_excel_tables_are_taken_as_declared(tmp_path: Path) -> None:
    wb = read_workbook(fx.excel_tables_workbook(tmp_path / "tables.xlsx"))
    tables = wb.tables()
    assert [(t.name, t.source, t.ref) for t in tables] == [
        ("First", "excel_table", "A1:B4"),
        ("Second", "excel_table", "A6:B9"),
    ]
    assert tables[1].column("Units").values == [7, 14, 21]


def test_uncached_formulas_are_unknown_not_empty_and_errors_are_listed(tmp_path: Path) -> None:
    wb = read_workbook(fx.formula_workbook(tmp_path / "formulas.xlsx"))
    table = wb.tables()[0]
    double = table.column("Double")
    assert double.uncached_formulas == 4 and double.non_empty == 0
    assert double.values == [None] * 4
    ratio = table.column("Ratio")
    assert ratio.errors == 2
    kinds = {(i.ref, i.kind, i.detail) for i in table.issues}
    assert ("'Sheet'!C3", "error", "#DIV/0!") in kinds
    assert ("'Sheet'!C5", "error", "#REF!") in kinds
    # openpyxl writes <calcPr fullCalcOnLoad="1">: formula results are placeholders (unknown)
    assert ("'Sheet'!B2", "placeholder_value", "=A2*2") in kinds
    assert table.issue_count == 6
    assert wb.sheets[0].kinds[CellKind.UNCACHED] == 4


def test_cached_formula_values_come_from_the_data_only_pass(tmp_path: Path) -> None:
    path = fx.formula_workbook(tmp_path / "cached.xlsx")
    # simulate a workbook saved by Excel: inject <v> cached values next to the formulas
    import zipfile

    raw = zipfile.ZipFile(path).read("xl/worksheets/sheet1.xml").decode()
    for r in range(2, 6):
        raw = raw.replace(f"<f>A{r}*2</f><v></v>", f"<f>A{r}*2</f><v>{(r - 1) * 20}</v>")
        raw = raw.replace(f"<f>A{r}*2</f>", f"<f>A{r}*2</f><v>{(r - 1) * 20}</v>", 1)
    out = tmp_path / "cached2.xlsx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename == "xl/workbook.xml":  # as Excel saves it: no recalc-on-open
                data = data.replace(b'fullCalcOnLoad="1"', b"")
            dst.writestr(item, raw if item.filename == "xl/worksheets/sheet1.xml" else data)
    table = read_workbook(out).tables()[0]
    double = table.column("Double")
    assert double.values == [20, 40, 60, 80]
    assert double.formulas == 4 and double.uncached_formulas == 0
    assert table.formula_examples[0] == ("'Sheet'!B2", "=A2*2")


def test_xls_is_read_with_merges_dates_and_header(tmp_path: Path) -> None:
    wb = read_workbook(fx.xls_workbook(tmp_path / "legacy.xls"))
    assert wb.format == "xls"
    table = wb.tables()[0]
    assert table.header_rows == [2]
    assert [c.name for c in table.columns] == ["Day", "City", "Sales"]
    assert table.column("Day").values[0] == datetime(2024, 1, 1)
    assert table.column("Sales").values == [1.5, 3.0, 4.5, 6.0]
    assert "A1:C1" in wb.sheets[0].merged_ranges


@pytest.mark.parametrize("encoding", ["utf-8-sig", "gb18030"])
def test_csv_encodings_delimiters_and_typed_cells(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "销售.csv"
    text = "日期;城市;金额;占比\n2024-01-02;北京;¥1,200.50;12.5%\n2024-01-03;上海;¥800;7.5%\n"
    path.write_bytes(text.encode(encoding))
    wb = read_workbook(path)
    table = wb.tables()[0]
    assert [c.name for c in table.columns] == ["日期", "城市", "金额", "占比"]
    assert table.column("日期").values == [datetime(2024, 1, 2), datetime(2024, 1, 3)]
    assert table.column("金额").values == [1200.5, 800]
    assert table.column("金额").unit == "¥"
    assert table.column("占比").values == pytest.approx([0.125, 0.075])
    assert table.column("占比").unit == "%"
    assert any(encoding in note for note in wb.warnings)


def test_text_cell_typing_is_conservative() -> None:
    assert parse_text_cell("007").kind is CellKind.TEXT  # a code keeps its leading zeros
    assert parse_text_cell("-3.5e2").value == -350.0
    assert parse_text_cell("12 apples").kind is CellKind.TEXT
    assert parse_text_cell("#N/A").kind is CellKind.ERROR
    assert parse_text_cell("2024-02-30").kind is CellKind.TEXT  # not a real date
    assert parse_text_cell("   ") is None


def test_columns_right_of_the_limit_are_dropped_with_a_warning(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.active.append([f"c{i}" for i in range(1, 31)])
    wb.active.append(list(range(1, 31)))
    wb.save(tmp_path / "wide.xlsx")
    result = read_workbook(tmp_path / "wide.xlsx", ReadLimits(max_cols=10))
    assert len(result.tables()[0].columns) == 10
    assert any("not read" in w for w in result.sheets[0].warnings)


def test_dates_stay_dates_in_both_date_systems(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.epoch = openpyxl.utils.datetime.MAC_EPOCH
    wb.active.append(["When", "n"])
    wb.active.append([date(2021, 1, 1), 1])
    wb.active.append([date(2021, 1, 2), 2])
    wb.save(tmp_path / "mac.xlsx")
    result = read_workbook(tmp_path / "mac.xlsx")
    assert result.date_system == "1904"
    assert result.tables()[0].column("When").values[0] == datetime(2021, 1, 1)
