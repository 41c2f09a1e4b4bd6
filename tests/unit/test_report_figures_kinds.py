"""Issue 15, kinds 1-7: generated workbooks of each kind, and the fault inputs of ../shared/data.

Each expected value is computed here from the generated data, not copied from the code.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from openpyxl import Workbook as XlWorkbook

from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.spreadsheet import ReadLimits, read_workbook
from orchestrator.spreadsheet.textvalues import convert_column, parse_number
from workflows.excel_report.analysis import analyse
from workflows.excel_report.offline import figures_only_report
from workflows.excel_report.render import could_not_use

FAULTS = Path(DEFAULT_DATA_DIR) / "fault_inputs"


def _save(
    rows: list[list[object]], path: Path, formats: dict[int, str] | None = None, title: str = "Data"
) -> Path:
    wb = XlWorkbook()
    ws = wb.active
    ws.title = title
    for row in rows:
        ws.append(row)
    for col, fmt in (formats or {}).items():
        for r in range(2, len(rows) + 1):
            ws.cell(r, col).number_format = fmt
    wb.save(path)
    return path


def _figs(path: Path, **limits: object) -> dict[str, float | int | str]:
    analysis = analyse(read_workbook(path, ReadLimits(**limits)))  # type: ignore[arg-type]
    return {f.label: f.value for f in analysis.figures}


def test_a_percentage_column_is_averaged_never_summed(tmp_path: Path) -> None:
    rows = [["Region", "Month", "Win ratio"]]
    data = [
        ("N", date(2024, 1, 1), 0.4),
        ("S", date(2024, 1, 1), 0.5),
        ("N", date(2024, 2, 1), 0.45),
        ("S", date(2024, 2, 1), 0.41),
    ]
    rows += [list(r) for r in data]
    figs = _figs(_save(rows, tmp_path / "p.xlsx", {3: "0%"}))
    assert not any(k.startswith(("total `Win ratio`", "share")) for k in figs)
    assert figs["mean `Win ratio` where `Region` = `S`"] == pytest.approx((0.5 + 0.41) / 2)
    jan, feb = (0.4 + 0.5) / 2, (0.45 + 0.41) / 2
    key = "change in `Win ratio` from `2024-01` to `2024-02` in percentage points"
    assert figs[key] == pytest.approx(feb - jan)
    assert not any(k.startswith("percent change") for k in figs)


def test_a_price_is_weighted_by_quantity(tmp_path: Path) -> None:
    rows = [["Item", "Qty", "Unit price"], ["a", 1, 10.0], ["b", 3, 20.0], ["c", 6, 5.0]]
    figs = _figs(_save(rows, tmp_path / "w.xlsx"))
    assert "total `Unit price`" not in figs
    assert figs["mean `Unit price` weighted by `Qty`"] == pytest.approx((10 + 60 + 30) / 10)


def test_placeholder_cached_values_are_unknown(tmp_path: Path) -> None:
    rows = [["Qty", "Price", "Line"]] + [
        [q, p, f"=A{r}*B{r}"] for r, (q, p) in enumerate([(1, 2.0), (2, 3.0)], start=2)
    ]
    path = _save(rows, tmp_path / "f.xlsx")  # openpyxl writes fullCalcOnLoad="1"
    wb = read_workbook(path)
    assert {i.kind for i in wb.tables()[0].issues} == {"placeholder_value"}
    assert not any("`Line`" in k for k in _figs(path))
    assert any("Line" in line for line in could_not_use(wb, analyse(wb)))


def test_fault_cached_zero_gives_no_figure_for_the_formula_column() -> None:
    figs = _figs(FAULTS / "xlsxwriter_formulas_cached_zero.xlsx")
    assert not any("Line total" in k for k in figs)


@pytest.mark.parametrize("name", ["one_uncached_formula_in_column.xlsx", "upload_7f3a9c"])
def test_a_total_with_an_unknown_cell_says_its_coverage(name: str) -> None:
    figs = _figs(FAULTS / name)
    assert figs["total `Actual` (over 3 of 4 cells; unknown: C4)"] == 2330
    assert "total `Actual`" not in figs


def test_hidden_rows_columns_sheets_are_skipped_and_listed(tmp_path: Path) -> None:
    wb = XlWorkbook()
    ws = wb.active
    ws.title = "S"
    for row in [["K", "V", "Secret"], ["a", 1, 5], ["draft", 1000, 5], ["b", 2, 5]]:
        ws.append(row)
    ws.row_dimensions[3].hidden = True
    ws.column_dimensions["C"].hidden = True
    wb.create_sheet("Old").append(["K", "V"])
    wb["Old"].append(["z", 9])
    wb["Old"].sheet_state = "hidden"
    wb.save(tmp_path / "h.xlsx")
    figs = _figs(tmp_path / "h.xlsx")
    assert figs["total `V`"] == 3 and not any("Secret" in k for k in figs)
    skipped = read_workbook(tmp_path / "h.xlsx").skipped
    assert sorted(s.what for s in skipped) == ["column", "row", "sheet"]
    everything = analyse(read_workbook(tmp_path / "h.xlsx", ReadLimits(include_hidden=True)))
    totals = [f.value for f in everything.figures if f.label == "total `V`"]
    assert totals == [1003, 9]  # the hidden row, and the hidden sheet's table
    fault = _figs(FAULTS / "hidden_rows_columns_sheet.xlsx")
    assert fault["total `On hand`"] == 14 and 99_999 not in fault.values()


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["1,234", "$2,500.00", "(1,200)"], [1234, 2500.0, -1200]),
        (["1.234,50", "300", "(12,50)"], [1234.5, 300, -12.5]),
        (["45%", "12.5%"], [0.45, 0.125]),
        (["1 250,00 €", "€300"], [1250.0, 300]),
    ],
)
def test_numbers_stored_as_text(texts: list[str], expected: list[float]) -> None:
    conversion = convert_column(texts)
    assert conversion.kind == "number"
    assert conversion.values == pytest.approx(expected)


def test_dates_stored_as_text_infer_the_order_per_column() -> None:
    assert [d.month for d in convert_column(["05/01/2025", "13/01/2025"]).values] == [1, 1]
    assert [d.day for d in convert_column(["01/05/2025", "01/13/2025"]).values] == [5, 13]
    ambiguous = convert_column(["03/04/2024", "04/05/2024"])
    assert ambiguous.kind is None and "ambiguous" in (ambiguous.reason or "")
    assert parse_number("007") is None


@pytest.mark.parametrize(
    ("name", "checks"),
    [
        ("text_numbers_european.xlsx", {"total `Amount`": 4985.10, "total `Fee`": -49.85}),
        ("text_numbers_us.xlsx", {"total `Total`": 13372.50, "mean `Discount`": 0.04375}),
        ("rates_by_channel_and_month.xlsx", {}),
    ],
)
def test_fault_text_workbooks(name: str, checks: dict[str, float]) -> None:
    figs = _figs(FAULTS / name)
    for label, value in checks.items():
        assert figs[label] == pytest.approx(value)
    assert not any(k.startswith("total `Conversion rate`") for k in figs)


def test_csv_and_xlsx_read_text_numbers_the_same(tmp_path: Path) -> None:
    rows = [["Day", "Amount"], ["05.01.2025", "1.234,50"], ["13.01.2025", "2,5"]]
    (tmp_path / "e.csv").write_text("\n".join(";".join(r) for r in rows), encoding="utf-8")
    xlsx, csv = _figs(_save(rows, tmp_path / "e.xlsx")), _figs(tmp_path / "e.csv")
    assert xlsx["total `Amount`"] == csv["total `Amount`"] == pytest.approx(1237.0)


def test_total_rows_ids_and_gaps(tmp_path: Path) -> None:
    rows = [
        ["型号", "Month", "Sales"],
        [880001, date(2024, 1, 5), 10],
        [880002, date(2024, 2, 5), 20],
        ["小计", None, 30],
        [880003, date(2024, 4, 5), 5],
        ["Grand Total", None, 35],
    ]
    figs = _figs(_save(rows, tmp_path / "t.xlsx"))
    assert figs["total `Sales`"] == 35 and not any("型号" in k for k in figs)
    assert "change in `Sales` from `2024-01` to `2024-02`" in figs
    assert not any("from `2024-02` to `2024-04`" in k for k in figs)


def test_shares_divide_the_printed_total(tmp_path: Path) -> None:
    rows = [["Store", "Sales"], ["A", 10], ["B", 30], [None, 60], ["A", 0]]
    analysis = analyse(read_workbook(_save(rows, tmp_path / "s.xlsx")))
    by = analysis.by_id()
    for f in analysis.figures:
        if f.provenance.operation == "group_share":
            total = by[f.provenance.inputs[0]]
            assert total.value == 100 and total.id in f.label


def test_no_model_report_is_deterministic_and_lists_what_was_skipped(tmp_path: Path) -> None:
    wb = read_workbook(FAULTS / "hidden_rows_columns_sheet.xlsx")
    _, first = figures_only_report(wb, tmp_path / "a")
    _, second = figures_only_report(wb, tmp_path / "b")
    text = first.markdown.read_text(encoding="utf-8")
    assert text == second.markdown.read_text(encoding="utf-8")
    section = text.split("## What this report could not use")[1]
    assert "hidden row" in section and "hidden column" in section and "hidden sheet" in section
    # No model was called, so the report says so and never that a model found nothing.
    assert "no model was called" in text
    assert "written by the model;" not in text and "The model gave no finding" not in text


@pytest.mark.parametrize(
    ("name", "additive"),
    [
        ("Sales price", False),
        ("Share price", False),
        ("Unit cost", False),
        ("Average sales", False),
        ("Total conversion rate", False),
        ("平均销售额", False),
        ("单价", False),
        ("Total price", True),
        ("Price amount", True),
        ("Corporate sales", True),
        ("Line total (€)", True),
        ("销售额", True),
        ("Units", True),
    ],
)
def test_a_price_or_an_average_is_never_summed_whatever_else_its_name_says(
    name: str, additive: bool
) -> None:
    from orchestrator.spreadsheet import Column, ColumnType
    from workflows.excel_report.analysis import is_additive

    column = Column(
        name=name,
        letter="B",
        index=2,
        type=ColumnType.NUMBER,
        range="B2:B3",
        values=[1.0, 2.0],
        non_empty=2,
    )
    assert is_additive(column) is additive
