"""Pivot subtotals, template footers and zip part-name case (tester6 findings 1, 4, 17).

Each workbook is written here with openpyxl; the expected data-row count and column totals
are computed by hand from the rows written (the leaves only), never read from the code.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import openpyxl
import pytest

from orchestrator.spreadsheet import read_workbook

Row = tuple[object, ...]


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


# (name, header, rows, expected data rows, {column: expected total})
SUBTOTALS: list[tuple[str, Row, list[Row], int, dict[str, float]]] = [
    (
        "zh_prefix_space_grand_bottom",
        ("部门", "姓名", "奖金"),
        [
            ("市场", "甲", 3),
            ("市场", "乙", 4),
            ("市场 小计", None, 7),
            ("研发", "丙", 8),
            ("研发", "丁", 9),
            ("研发", "戊", 1),
            ("研发 小计", None, 18),
            ("总计", None, 25),
        ],
        5,
        {"奖金": 25},
    ),
    (
        "zh_prefix_nospace_no_grand",
        ("区域", "门店", "销量"),
        [
            ("华北", "北京", 11),
            ("华北", "天津", 6),
            ("华北小计", None, 17),
            ("华南", "广州", 2),
            ("华南", "深圳", 40),
            ("华南小计", None, 42),
        ],
        4,
        {"销量": 59},
    ),
    (
        "en_group_total_no_grand_two_cols",
        ("Region", "Rep", "Units", "Revenue"),
        [
            ("North", "Ann", 3, 300.5),
            ("North", "Bob", 2, 120),
            ("North Total", None, 5, 420.5),
            ("South", "Cid", 7, 80),
            ("South Total", None, 7, 80),
            ("West", "Dee", 1, 10),
            ("West", "Eve", 4, 15),
            ("West Total", None, 5, 25),
        ],
        5,
        {"Units": 17, "Revenue": 525.5},
    ),
    (
        "en_subtotal_in_col2_grand_bottom",
        ("Region", "City", "Sales"),
        [
            ("East", "Boston", 12),
            ("East", "NYC", 30),
            ("East", "Subtotal", 42),
            ("West", "LA", 9),
            ("West", "Subtotal", 9),
            ("Grand Total", None, 51),
        ],
        3,
        {"Sales": 51},
    ),
    (
        "trad_prefix_grand_top",
        ("地區", "城市", "營收"),
        [
            ("總計", None, 100),
            ("北區", "台北", 60),
            ("北區", "基隆", 15),
            ("北區 小計", None, 75),
            ("南區", "高雄", 25),
            ("南區 小計", None, 25),
        ],
        3,
        {"營收": 100},
    ),
    (
        "zh_huizong_last",
        ("门店", "销售"),
        [("北京", 13), ("上海", 21), ("广州", 8), ("深圳", 5), ("汇总", 47)],
        4,
        {"销售": 47},
    ),
    (
        "trad_huizong_prefix_subtotals_col3",
        ("部門", "組", "說明", "金額"),
        [
            ("業務", "一組", "甲", 4),
            ("業務", "一組", "乙", 6),
            ("業務", "一組", "一組 小計", 10),
            ("業務", "二組", "丙", 5),
            ("業務", "二組", "二組 小計", 5),
            ("彙總", None, None, 15),
        ],
        3,
        {"金額": 15},
    ),
    (
        "heads_above_no_grand",
        ("Category", "Item", "Cost"),
        [
            ("Food", None, 33),
            (None, "Bread", 3),
            (None, "Milk", 10),
            (None, "Meat", 20),
            ("Travel", None, 150),
            (None, "Taxi", 50),
            (None, "Train", 100),
        ],
        5,
        {"Cost": 183},
    ),
    (
        "label_right_of_number",
        ("Store", "Sales", "Note"),
        [("N1", 10, "ok"), ("N2", 25, "late"), ("N3", 6, "ok"), (None, 41, "Total")],
        3,
        {"Sales": 41},
    ),
    (
        "en_nested3",
        ("L1", "L2", "L3", "V"),
        [
            ("A", "a1", "x", 2),
            ("A", "a1", "y", 3),
            ("A", "a1 Total", None, 5),
            ("A", "a2", "z", 4),
            ("A", "a2 Total", None, 4),
            ("A Total", None, None, 9),
            ("B", "b1", "w", 6),
            ("B", "b1", "v", 1),
            ("B", "b1 Total", None, 7),
            ("B Total", None, None, 7),
            ("Grand Total", None, None, 16),
        ],
        5,
        {"V": 16},
    ),
    (
        "hyphen_subtotal_lower_grand",
        ("Team", "Person", "Hours"),
        [
            ("Ops", "Kim", 8),
            ("Ops", "Lee", 7.5),
            ("Ops sub-total", None, 15.5),
            ("Dev", "Max", 6),
            ("Dev", "Ned", 4),
            ("Dev sub-total", None, 10),
            ("grand total:", None, 25.5),
        ],
        4,
        {"Hours": 25.5},
    ),
    (
        "zh_heji_suffix_negative_three_cols",
        ("渠道", "产品", "收入", "退款", "净额"),
        [
            ("线上", "A", 100, -10, 90),
            ("线上", "B", 50, -5, 45),
            ("线上 合计", None, 150, -15, 135),
            ("线下", "C", 70, 0, 70),
            ("线下", "D", 30, -30, 0),
            ("线下 合计", None, 100, -30, 70),
            ("总计", None, 250, -45, 205),
        ],
        4,
        {"收入": 250, "退款": -45, "净额": 205},
    ),
    (
        "sum_word_in_col2",
        ("Dept", "Line", "Amount"),
        [
            ("HR", "Pens", 2),
            ("HR", "Paper", 5),
            ("HR", "Sum", 7),
            ("IT", "Cables", 9),
            ("IT", "Mice", 11),
            ("IT", "Sum", 20),
        ],
        4,
        {"Amount": 27},
    ),
    (
        "trad_heji_prefix_no_grand",
        ("分店", "品項", "數量"),
        [
            ("台中", "茶", 3),
            ("台中", "咖啡", 9),
            ("台中 合計", None, 12),
            ("台南", "茶", 1),
            ("台南", "果汁", 2),
            ("台南 合計", None, 3),
        ],
        4,
        {"數量": 15},
    ),
    # not subtotals: the words or the arithmetic say no
    (
        "store_named_total_is_data",
        ("Store", "Sales"),
        [("Total Wine", 10), ("Costco", 20), ("Target", 5), ("Walmart", 7)],
        4,
        {"Sales": 42},
    ),
    (
        "row_equal_to_sum_above_without_label_is_data",
        ("Name", "Qty"),
        [("a", 1), ("b", 2), ("c", 3), ("d", 6)],
        4,
        {"Qty": 12},
    ),
    (
        "outline_shape_but_not_sums_is_data",
        ("Category", "Item", "Cost"),
        [("Food", None, 30), (None, "Bread", 3), (None, "Milk", 10), ("Travel", None, 7)],
        4,
        {"Cost": 50},
    ),
    (
        "label_subtotal_but_not_a_sum_is_data",
        ("Dept", "Item", "Cost"),
        [("Ops", "Ops subtotal review", 4), ("Ops", "Pens", 9), ("Ops", "Paper", 3)],
        3,
        {"Cost": 16},
    ),
]


@pytest.mark.parametrize(
    ("header", "rows", "n_rows", "totals"),
    [case[1:] for case in SUBTOTALS],
    ids=[case[0] for case in SUBTOTALS],
)
def test_pivot_subtotal_rows_are_not_data(
    tmp_path: Path, header: Row, rows: list[Row], n_rows: int, totals: dict[str, float]
) -> None:
    _check_read(tmp_path / "p.xlsx", [header], rows, n_rows, totals)


FOOTERS: list[tuple[str, list[Row], list[Row], int, dict[str, float]]] = [
    (
        "signature_approval_version",
        [("Store", "Sales")],
        [
            ("N", 10),
            ("S", 20),
            ("E", 5),
            ("W", 7),
            ("Signature:", None),
            ("Approved by: ______", None),
            ("Version", 3),
        ],
        4,
        {"Sales": 42},
    ),
    (
        "notes_under_heji",
        [("门店", "销售额")],
        [
            ("北京", 12),
            ("上海", 8),
            ("广州", 30),
            ("深圳", 1),
            ("合计", 51),
            ("注：数据来源于财务部", None),
            ("单位：元", None),
        ],
        4,
        {"销售额": 51},
    ),
    (
        "bilingual_second_header",
        [("门店", "销售额"), ("Store", "Sales")],
        [("北京", 12), ("上海", 8), ("广州", 30), ("深圳", 1)],
        4,
        {"销售额 / Sales": 51},
    ),
    (
        "bilingual_three_cols",
        [("产品", "数量", "单价"), ("Product", "Qty", "Price")],
        [("笔", 3, 1.5), ("本", 10, 4), ("尺", 2, 2.25)],
        3,
        {"数量 / Qty": 15, "单价 / Price": 7.75},
    ),
    (
        "trad_signoff_lines",
        [("品名", "金額")],
        [
            ("茶", 40),
            ("咖啡", 60),
            ("果汁", 25),
            ("製表人：王小明", None),
            ("核准：", None),
            ("版本：2.0", None),
        ],
        3,
        {"金額": 125},
    ),
    (
        "en_reviewed_date_rev",
        [("Item", "Qty", "Amount")],
        [
            ("Bolts", 100, 12.5),
            ("Nuts", 250, 20),
            ("Washers", 80, 4),
            ("Reviewed by: ________", None, None),
            ("Date: ________", None, None),
            ("Rev.", 2, None),
        ],
        3,
        {"Qty": 430, "Amount": 36.5},
    ),
    (
        "last_record_without_numbers_is_data",
        [("Name", "Sales", "Region")],
        [("Ann", 10, "N"), ("Bob", 20, "S"), ("Cid", 5, "E"), ("Dan", None, None)],
        4,
        {"Sales": 35},
    ),
    (
        "text_only_notes_no_total",
        [("Month", "Visits")],
        [
            ("Jan", 120),
            ("Feb", 80),
            ("Mar", 100),
            ("Figures are unique visitors", None),
            ("Exported from the web console", None),
        ],
        3,
        {"Visits": 300},
    ),
]


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
