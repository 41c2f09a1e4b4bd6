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


# --- item 4: template and pivot structure ------------------------------------------------


def _table(path: Path):  # type: ignore[no-untyped-def]
    wb = read_workbook(path)
    (table,) = [t for t in wb.tables() if t.n_rows > 1]
    return table, {f.label: f.value for f in analyse(wb).figures}


ITEMS = [("Widget", 2, 12.5), ("Gadget", 1, 40.0), ("Gizmo", 5, 3.2), ("Doohickey", 3, 7.0)]


@pytest.mark.parametrize(
    "footer",
    [
        [
            ["Subtotal", None, None, "=SUM(D2:D5)"],
            ["Tax", None, None, 9.9],
            ["Total", None, None, 999],
        ],
        [["TOTAL AMOUNT DUE", None, None, 123.45], ["Prepared by: Alice"], ["Approved by:"]],
        [["Notes: prices include VAT"], ["Page 1 of 1"]],
        [["合 计", None, None, 1], ["制表人：张三", None, "审核：李四"]],
        [["总计：", None, None, 2], ["备注：以上金额含税"]],
    ],
)
def test_template_footer_and_total_rows_are_not_data(tmp_path: Path, footer: list) -> None:
    rows = [["Item", "Qty", "Unit price", "Amount"]]
    rows += [[n, q, p, round(q * p, 2)] for n, q, p in ITEMS]
    table, figs = _table(_save(tmp_path / "invoice.xlsx", rows + footer))
    assert table.n_rows == len(ITEMS)
    assert figs["total `Amount`"] == pytest.approx(sum(round(q * p, 2) for _, q, p in ITEMS))


@pytest.mark.parametrize(
    "top,fill",
    [
        ([["{{company}} Sales report"], ["{{date}}", None, "{{region}}"]], None),
        ([["{{ company }}"]], ["{{item.name}}", "{{item.qty}}", "{{item.amount}}"]),
        ([["${title}"]], ["{.name}", "{.qty}", "{.amount}"]),
        ([["«Company»", "«Date»"]], ["#{name}", "#{qty}", "#{amount}"]),
    ],
)
def test_a_placeholder_is_never_a_column_name_or_a_row(
    tmp_path: Path, top: list, fill: list | None
) -> None:
    rows = [*top, ["品名 Item", "数量 Qty", "金额 Amount"]]
    if fill:
        rows.append(fill)
    rows += [[n, q, q * p] for n, q, p in ITEMS]
    table, figs = _table(_save(tmp_path / "tpl.xlsx", rows))
    assert [c.name for c in table.columns] == ["品名 Item", "数量 Qty", "金额 Amount"]
    assert table.n_rows == len(ITEMS)
    assert figs["total `金额 Amount`"] == pytest.approx(sum(q * p for _, q, p in ITEMS))


@pytest.mark.parametrize("sections", [("North", "South"), ("华东", "华南", "华北")])
def test_a_header_repeated_below_a_merged_title_is_not_data(
    tmp_path: Path, sections: tuple[str, ...]
) -> None:
    rows: list[list[object]] = []
    merges: list[str] = []
    expected = []
    for k, name in enumerate(sections):
        rows.append([f"Region {name}", None, None])
        merges.append(f"A{len(rows)}:C{len(rows)}")
        rows.append(["Product", "Units", "Revenue"])
        for i in range(3):
            rows.append([f"P{k}{i}", i + 1, 100.0 * (k + 1) + i])
            expected.append(100.0 * (k + 1) + i)
    table, figs = _table(_save(tmp_path / "sections.xlsx", rows, merges))
    assert table.n_rows == len(expected)
    assert figs["total `Revenue`"] == pytest.approx(sum(expected))
    reasons = " ".join(s.reason for s in table.skipped)
    assert "header repeated" in reasons and "merged title" in reasons


@pytest.mark.parametrize("span", [2, 3])
def test_a_merged_record_is_one_row_and_a_merged_number_one_value(
    tmp_path: Path, span: int
) -> None:
    orders = [("A-1", 120.0), ("A-2", 80.5), ("A-3", 42.0)]
    rows: list[list[object]] = [["订单 Order", "订单金额 Order total"]]
    merges = []
    for order, total in orders:
        first = len(rows) + 1
        rows.append([order, total])
        rows.extend([[None, None]] * (span - 1))
        merges += [f"A{first}:A{first + span - 1}", f"B{first}:B{first + span - 1}"]
    table, figs = _table(_save(tmp_path / "merged.xlsx", rows, merges))
    assert table.n_rows == len(orders)
    assert figs["total `订单金额 Order total`"] == pytest.approx(sum(t for _, t in orders))


def test_a_merged_order_total_beside_item_rows_is_counted_once(tmp_path: Path) -> None:
    rows: list[list[object]] = [["Order", "Item", "Item price", "Order total"]]
    merges = []
    orders = {"A-1": [10.0, 20.0, 5.0], "A-2": [7.5, 2.5]}
    for order, prices in orders.items():
        first = len(rows) + 1
        for k, price in enumerate(prices):
            rows.append(
                [order if k == 0 else None, f"i{k}", price, sum(prices) if k == 0 else None]
            )
        last = first + len(prices) - 1
        merges += [f"A{first}:A{last}", f"D{first}:D{last}"]
    table, figs = _table(_save(tmp_path / "orders.xlsx", rows, merges))
    assert table.n_rows == sum(len(p) for p in orders.values())
    assert figs["total `Order total`"] == pytest.approx(sum(sum(p) for p in orders.values()))


def _pivot(groups: dict[str, dict[str, float]], grand_label: str, head: list[str]) -> list:
    rows: list[list[object]] = [head]
    for group, children in groups.items():
        rows.append([group, round(sum(children.values()), 2)])
        rows += [[f"  {child}", value] for child, value in children.items()]
    total = round(sum(sum(c.values()) for c in groups.values()), 2)
    rows.append([grand_label, total])
    return rows


@pytest.mark.parametrize(
    "groups,grand_label,head",
    [
        (
            {"East": {"Boston": 3.1, "NYC": 5.05}, "West": {"LA": 6.2, "SF": 4.01}},
            "Grand Total",
            ["Row Labels", "Grand Total"],
        ),
        (
            {
                "华东": {"上海": 120, "杭州": 80, "南京": 55},
                "华南": {"广州": 90},
                "华北": {"北京": 60, "天津": 5},
            },
            "总计",
            ["行标签", "求和项:销售额"],
        ),
        ({"A": {"a1": 1.5, "a2": 1.5}, "B": {"b1": 3.0}}, "Total", ["Group", "Sum of Qty"]),
    ],
)
def test_pivot_subtotals_and_their_children_are_not_summed_together(
    tmp_path: Path, groups: dict, grand_label: str, head: list[str]
) -> None:
    rows = _pivot(groups, grand_label, head)
    table, figs = _table(_save(tmp_path / "pivot.xlsx", rows))
    grand = sum(sum(c.values()) for c in groups.values())
    assert figs[f"total `{head[1]}`"] == pytest.approx(grand)
    assert table.n_rows == sum(len(c) for c in groups.values())


def test_a_two_level_pivot_with_two_value_columns(tmp_path: Path) -> None:
    leaves = {("Asia", "CN", "Shanghai"): (4.0, 1.5), ("Asia", "CN", "Beijing"): (2.0, 2.5)}
    leaves |= {("Asia", "JP", "Tokyo"): (3.0, 1.0), ("Europe", "FR", "Paris"): (1.25, 0.75)}
    rows: list[list[object]] = [["Row Labels", "Sum of 2023", "Sum of 2024"]]

    def total(prefix: tuple[str, ...], k: int) -> float:
        return sum(v[k] for key, v in leaves.items() if key[: len(prefix)] == prefix)

    for region in ("Asia", "Europe"):
        rows.append([region, total((region,), 0), total((region,), 1)])
        for country in sorted({k[1] for k in leaves if k[0] == region}):
            rows.append([country, total((region, country), 0), total((region, country), 1)])
            for key, (a, b) in leaves.items():
                if key[:2] == (region, country):
                    rows.append([key[2], a, b])
    rows.append(["Grand Total", total((), 0), total((), 1)])
    table, figs = _table(_save(tmp_path / "pivot2.xlsx", rows))
    assert table.n_rows == len(leaves)
    assert figs["total `Sum of 2023`"] == pytest.approx(total((), 0))
    assert figs["total `Sum of 2024`"] == pytest.approx(total((), 1))


@pytest.mark.parametrize("groups", [6, 25])
def test_a_large_two_level_pivot_is_read_fast_and_right(tmp_path: Path, groups: int) -> None:
    import random

    rng = random.Random(groups)
    rows: list[list[object]] = [["Row Labels", "Sum of Sales"]]
    leaves: list[float] = []
    for g in range(groups):
        subs = [
            [round(rng.uniform(1, 500), 2) for _ in range(rng.randint(1, 8))]
            for _ in range(rng.randint(1, 4))
        ]
        rows.append([f"Region {g}", round(sum(sum(k) for k in subs), 2)])
        for h, kids in enumerate(subs):
            rows.append([f"Store {g}.{h}", round(sum(kids), 2)])
            rows += [[f"Item {k}", v] for k, v in enumerate(kids)]
            leaves += kids
    rows.append(["Grand Total", round(sum(leaves), 2)])
    table, figs = _table(_save(tmp_path / "big_pivot.xlsx", rows))
    assert table.n_rows == len(leaves)
    assert figs["total `Sum of Sales`"] == pytest.approx(sum(leaves))


def test_the_real_pivot_workbook_totals_to_its_own_grand_total() -> None:
    """calamine_pivots.xlsx, PivotSheet2: the report gave `Grand Total` 36.73 (a group's
    subtotal and its children added up); the sheet's own grand total row is the truth."""
    from openpyxl import load_workbook

    from orchestrator.config import DEFAULT_DATA_DIR

    path = Path(DEFAULT_DATA_DIR) / "spreadsheets" / "calamine_pivots.xlsx"
    book = load_workbook(path, read_only=True)
    rows = list(book["PivotSheet2"].iter_rows(min_row=4, max_row=11, values_only=True))
    book.close()
    head, grand = rows[0], rows[-1]
    assert grand[0] == "Grand Total"
    figs = _figs(path)
    for name, expected in zip(head[1:], grand[1:], strict=True):
        assert figs[f"total `{name}`"] == pytest.approx(expected)
