"""Issue 46 items 1-3: packages Excel opens that the reader refused or crashed on.

Chart, dialog and macro sheets beside worksheets; Windows backslash entry names; Strict Open
XML. Every workbook is generated here (tests/fixtures/spreadsheets.py), several per kind, and
the figures read are checked against the values written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.spreadsheet import (
    CorruptFileError,
    EmptyWorkbookError,
    SpreadsheetError,
    read_workbook,
)
from orchestrator.spreadsheet import reader as reader_module
from tests.fixtures import spreadsheets as fx
from workflows.excel_report.analysis import analyse


@pytest.mark.parametrize("where", ["first", "middle", "last", "both"])
def test_chartsheets_beside_worksheets_are_skipped_and_noted(tmp_path: Path, where: str) -> None:
    wb = read_workbook(fx.chartsheet_workbook(tmp_path / f"{where}.xlsx", where, data_rows=7))
    charts = 2 if where == "both" else 1
    assert [s.name for s in wb.sheets] == ["数据", "Costs"]  # the right cells under each name
    assert wb.sheets_total == 2 + charts
    assert wb.sheets[0].tables[0].column("Sales").values == [10 * (i + 1) for i in range(7)]
    assert wb.sheets[1].tables[0].column("Cost").values == [2.5, 5.0, 7.5]
    assert sum("chart sheet" in note for note in wb.warnings) == charts
    assert [s.ref for s in wb.skipped if s.what == "sheet"] == [
        f"'Chart {k + 1}'" for k in range(charts)
    ]
    total = {f.label: f.value for f in analyse(wb).figures}["total `Sales`"]
    assert total == sum(10 * (i + 1) for i in range(7))


def test_a_workbook_of_chart_sheets_only_is_a_clear_empty_error(tmp_path: Path) -> None:
    with pytest.raises(EmptyWorkbookError, match=r"no worksheet.*charts"):
        read_workbook(fx.charts_only_workbook(tmp_path / "charts.xlsx"))


@pytest.mark.parametrize("kind", ["macrosheet", "dialogsheet"])
def test_macro_and_dialog_sheets_are_not_data(tmp_path: Path, kind: str) -> None:
    wb = read_workbook(fx.macrosheet_workbook(tmp_path / f"{kind}.xlsx", kind))
    assert [s.name for s in wb.sheets] == ["Data"]
    assert wb.tables()[0].column("Amount").values == [100, 101, 102, 103]
    word = "macro" if kind == "macrosheet" else "dialog"
    assert any(f"is a {word} sheet" in note for note in wb.warnings)
    assert not any(999 in t.columns[-1].values for t in wb.tables())


@pytest.mark.parametrize("which", ["all", "xl", "leading"])
def test_backslash_entry_names_read_as_excel_reads_them(tmp_path: Path, which: str) -> None:
    plain = read_workbook(fx.sales_workbook(tmp_path / "plain.xlsx", rows=12))
    wb = read_workbook(fx.backslash_workbook(tmp_path / f"bs_{which}.xlsx", which))
    assert [(t.ref, t.n_rows) for t in wb.tables()] == [(t.ref, t.n_rows) for t in plain.tables()]
    assert wb.tables()[0].column("Revenue").values == plain.tables()[0].column("Revenue").values
    assert wb.tables()[0].column("Date").values == plain.tables()[0].column("Date").values


@pytest.mark.parametrize(
    "builder",
    [fx.sales_workbook, fx.merged_workbook, fx.excel_tables_workbook, fx.formula_workbook],
)
def test_strict_open_xml_reads_like_transitional(tmp_path: Path, builder) -> None:
    plain = read_workbook(builder(tmp_path / "plain.xlsx"))
    strict = read_workbook(fx.strict_workbook(tmp_path / "strict.xlsx", builder))

    def shape(wb):
        return [
            (t.ref, t.source, t.header_rows, t.rows, [(c.name, c.values) for c in t.columns])
            for t in wb.tables()
        ]

    assert shape(strict) == shape(plain)
    assert [s.merged_ranges for s in strict.sheets] == [s.merged_ranges for s in plain.sheets]


def test_a_strict_package_with_a_broken_zip_entry_is_a_spreadsheet_error(tmp_path: Path) -> None:
    path = fx.strict_workbook(tmp_path / "strict.xlsx")
    data = bytearray(path.read_bytes())
    at = data.find(b"xl/worksheets/sheet1.xml") + 60  # inside that entry's compressed bytes
    data[at : at + 40] = bytes(40)
    path.write_bytes(bytes(data))
    with pytest.raises(SpreadsheetError):
        read_workbook(path)


@pytest.mark.parametrize("exc", [IndexError("list index out of range"), KeyError("x"), TypeError])
def test_no_exception_but_a_spreadsheet_error_reaches_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    def broken(*_args: object) -> None:
        raise exc

    monkeypatch.setattr(reader_module, "build_sheet", broken)
    path = fx.sales_workbook(tmp_path / "s.xlsx", rows=5)
    with pytest.raises(CorruptFileError, match=r"^s\.xlsx: the reader failed on it") as info:
        read_workbook(path)
    assert info.value.fix and "\n" not in str(info.value)
