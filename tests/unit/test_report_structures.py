"""Issue 46 items 4-6: structure that is not data, codes that are not quantities, and money
stored as text. Workbooks are generated here (English and Chinese); every expected figure is
computed in the test from the values written, not copied from the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import Workbook as XlWorkbook

from orchestrator.spreadsheet import read_workbook
from workflows.excel_report.analysis import analyse


def _save(path: Path, rows: list[list[object]], merges: list[str] = ()) -> Path:  # type: ignore[assignment]
    wb = XlWorkbook()
    ws = wb.active
    ws.title = "Data"
    for row in rows:
        ws.append(row)
    for ref in merges:
        ws.merge_cells(ref)
    wb.save(path)
    return path


def _figs(path: Path) -> dict[str, object]:
    return {f.label: f.value for f in analyse(read_workbook(path)).figures}


def _totals(figs: dict[str, object]) -> dict[str, object]:
    return {k[len("total `") : -1]: v for k, v in figs.items() if k.startswith("total `")}


# --- item 5: code columns ----------------------------------------------------------------

CODES = [1001, 1002, 1001, 1003, 1002, 1001, 1003, 1001]
SALES = [120.5, 80.0, 95.25, 60.0, 70.0, 110.0, 45.5, 99.0]


@pytest.mark.parametrize(
    "code_name,codes",
    [
        ("品牌名称", CODES),
        ("货币单位", [1, 1, 1, 2, 1, 1, 2, 1]),
        ("Brand", CODES),
        ("Currency unit", [156, 156, 840, 156, 840, 156, 156, 156]),
        ("Type", [3, 1, 2, 3, 1, 1, 2, 3]),
        ("商品类别", [21, 22, 21, 23, 21, 22, 23, 21]),
        ("Group", [4411, 4423, 4411, 4437, 4423, 4411, 4437, 4411]),  # codes by value alone
    ],
)
def test_a_code_column_is_never_summed(tmp_path: Path, code_name: str, codes: list[int]) -> None:
    rows = [[code_name, "销售额 Sales"]] + [[c, s] for c, s in zip(codes, SALES, strict=True)]
    figs = _figs(_save(tmp_path / "codes.xlsx", rows))
    totals = _totals(figs)
    assert code_name not in totals and not any(f"`{code_name}`" in k for k in figs if "mean" in k)
    assert totals["销售额 Sales"] == pytest.approx(sum(SALES))
    if len(set(codes)) >= 2:  # the codes group the measure instead
        by_code = {c: sum(s for k, s in zip(codes, SALES, strict=True) if k == c) for c in codes}
        first = max(by_code, key=by_code.__getitem__)
        key = f"total `销售额 Sales` where `{code_name}` = `{first}`"
        assert figs[key] == pytest.approx(by_code[first])


@pytest.mark.parametrize(
    "name,values",
    [
        ("Quantity", [1, 2, 1, 3, 2, 1, 3, 1]),
        ("数量", [5, 5, 6, 5, 6, 5, 5, 6]),
        ("Amount", [1200, 1500, 1200, 1800, 1500, 1200, 1800, 1200]),
        ("Units", [100, 100, 250, 100, 250, 100, 100, 250]),
        ("Visitors", [1015, 1020, 1015, 1033, 1020, 1015, 1033, 1015, 1020]),
    ],
)
def test_a_quantity_that_repeats_is_still_summed(
    tmp_path: Path, name: str, values: list[int]
) -> None:
    rows = [["Region", name]] + [[f"R{i % 3}", v] for i, v in enumerate(values)]
    assert _totals(_figs(_save(tmp_path / "q.xlsx", rows)))[name] == sum(values)


# --- item 6: money stored as text --------------------------------------------------------


def _amounts(tmp_path: Path, texts: list[object], name: str = "Amount") -> tuple:
    rows = [["Item", name]] + [[f"item {i}", t] for i, t in enumerate(texts)]
    path = _save(tmp_path / "money.xlsx", rows)
    wb = read_workbook(path)
    return wb.tables()[0].column(name), _figs(path)


@pytest.mark.parametrize(
    "texts,expected,unit",
    [
        (["$1,234.50", "$980.00", "$ -", "-", "$12.00"], [1234.5, 980.0, None, None, 12.0], "$"),
        ([" $ 1,234.50 ", " $ (980.00)", " $ - ", " $ 12.00 "], [1234.5, -980.0, None, 12.0], "$"),
        (["￥1,200", "￥800", "１，０５０元", "¥12,000"], [1200, 800, 1050, 12000], "¥"),
        (["US$1,234.50", "US$980.00", "USD 12.00"], [1234.5, 980.0, 12.0], "$"),
        (["₹1,20,000.00", "₹5,000.00", "₹75,000.50"], [120000.0, 5000.0, 75000.5], "₹"),
        (["¥1,200.00元", "¥800.00元", "RMB 1,050.00"], [1200.0, 800.0, 1050.0], "¥"),
        (["(1,234.00)", "1,000.00", "250.50", "n/a"], [-1234.0, 1000.0, 250.5, None], None),
        (["€1,234.50", "1.234,50 €", "€ 12.00", "€3,5"], [1234.5, 1234.5, 12.0, 3.5], "€"),
        (["1.234,50 €", "980,00 €", "(1.234,00 €)", "—"], [1234.5, 980.0, -1234.0, None], "€"),
    ],
)
def test_money_stored_as_text_is_read_as_numbers_with_a_note(
    tmp_path: Path, texts: list[str], expected: list[float | None], unit: str | None
) -> None:
    col, figs = _amounts(tmp_path, texts)
    assert col.is_numeric and col.unit == unit and col.note and "text read as numbers" in col.note
    assert col.values == pytest.approx(expected)
    assert figs["total `Amount`"] == pytest.approx(sum(v for v in expected if v is not None))


def test_amounts_in_several_currencies_are_totalled_per_currency(tmp_path: Path) -> None:
    texts = ["$1,234.50", "1.234,50 €", "¥1,200", "$20.00", "€ 5,00", "¥300", "$3.50"]
    col, figs = _amounts(tmp_path, texts, "金额 Amount")
    assert col.values == pytest.approx([1234.5, 1234.5, 1200, 20.0, 5.0, 300, 3.5])
    assert "3 currencies" in (col.note or "") and col.unit is None
    over_column = [k for k in figs if k.startswith(("total `金额 Amount`", "mean `金额 Amount`"))]
    assert over_column and all(" in `" in k for k in over_column)  # per currency only
    assert figs["total `金额 Amount` in `$`"] == pytest.approx(1234.5 + 20.0 + 3.5)
    assert figs["total `金额 Amount` in `€`"] == pytest.approx(1234.5 + 5.0)
    assert figs["total `金额 Amount` in `¥`"] == pytest.approx(1500)


@pytest.mark.parametrize(
    "texts", [["red", "blue", "$3.00", "green"], ["A-1", "B-22", "C-3"], ["12 Main St", "7 Elm"]]
)
def test_text_that_is_not_money_stays_text(tmp_path: Path, texts: list[str]) -> None:
    col, figs = _amounts(tmp_path, texts)
    assert not col.is_numeric and "total `Amount`" not in figs
