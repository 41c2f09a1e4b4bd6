"""Issue 46 items 1-6 and 12 on workbooks of xl12's own (round 12), in variants earlier tests
do not write: dialog and Excel 4 macro sheets beside worksheets, Strict Open XML with a pivot
and dates, shared strings with rich runs and phonetic guides, formulas saved without values,
pivots of three levels and subtotals above their groups, multi-row headers under merged
titles, totals labelled in Traditional Chinese, codes (zip, phone, SKU, 编号/代码/邮编) that
are numbers, European and Indian amounts written as text, and request cells that hold errors,
rich text, long text and dates.

Each workbook is written in ``tmp_path`` with openpyxl (then its XML edited for what openpyxl
cannot write); the expected figures are computed here from the values written.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.batch import ColumnMapping, open_input
from orchestrator.exceptions import UserError
from tests.unit.test_spreadsheet_kinds11 import (
    Expected,
    Row,
    _book,
    _expect,
    _rezip,
    _strict,
    assert_figures,
    case_workbook,
)

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
SHEET_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"
#: kind -> (relationship type, content type, part folder, root element)
OTHER_SHEETS = {
    "dialog": (
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/dialogsheet",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.dialogsheet+xml",
        "dialogsheets",
        "dialogsheet",
    ),
    "macro": (
        "http://schemas.microsoft.com/office/2006/relationships/xlMacrosheet",
        "application/vnd.ms-excel.macrosheet+xml",
        "macrosheets",
        "xm:macrosheet",
    ),
    "intl_macro": (
        "http://schemas.microsoft.com/office/2006/relationships/xlIntlMacrosheet",
        "application/vnd.ms-excel.intlmacrosheet+xml",
        "macrosheets",
        "xm:macrosheet",
    ),
}
#: Cells a macro sheet holds (they look like a table, and must not be read as one).
MACRO_CELLS = (
    '<row r="1"><c r="A1" t="inlineStr"><is><t>Macro</t></is></c>'
    '<c r="B1" t="inlineStr"><is><t>Qty</t></is></c></row>'
    '<row r="2"><c r="A2" t="inlineStr"><is><t>a</t></is></c><c r="B2"><v>5</v></c></row>'
    '<row r="3"><c r="A3" t="inlineStr"><is><t>b</t></is></c><c r="B3"><v>7</v></c></row>'
)


def _add_part(
    path: Path,
    part: str,
    body: Callable[[], str],
    content_type: str,
    rel: tuple[str, str, str],
    workbook: Callable[[str], str] = lambda t: t,
    sheets: Callable[[str], str] = lambda t: t,
) -> Path:
    """``path`` with ``part`` added as Excel registers a part: its content type, a workbook
    relationship ``rel`` (``(id, type, target)``), ``workbook`` applied to the workbook part
    and ``sheets`` to each sheet part; ``body`` is called once they are rewritten."""
    rel_id, rel_type, target = rel
    additions = {
        "[Content_Types].xml": (
            "</Types>",
            f'<Override PartName="/{part}" ContentType="{content_type}"/>',
        ),
        "xl/_rels/workbook.xml.rels": (
            "</Relationships>",
            f'<Relationship Id="{rel_id}" Type="{rel_type}" Target="{target}"/>',
        ),
    }

    def edit(entry: str, data: bytes) -> bytes:
        text = data.decode()
        if entry in additions:
            end, extra = additions[entry]
            text = text.replace(end, extra + end)
        elif entry == "xl/workbook.xml":
            text = workbook(text)
        elif entry.startswith("xl/worksheets/sheet"):
            text = sheets(text)
        return text.encode()

    _rezip(path, edit=edit)
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(part, body())
    return path


def _insert_sheet(path: Path, kind: str, name: str, position: int) -> Path:
    """Add a ``kind`` sheet (see :data:`OTHER_SHEETS`) named ``name`` at ``position`` in the
    workbook's sheet order: part, content type, relationship and ``<sheet>`` entry."""
    rel_type, content_type, folder, root = OTHER_SHEETS[kind]
    body = (
        f'<{root} xmlns="{MAIN}" xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main">'
        f"<sheetData>{MACRO_CELLS if 'macro' in kind else ''}</sheetData></{root}>"
    )

    def listed(text: str) -> str:
        sheets = re.findall(r"<sheet [^>]*/>", text)
        new = f'<sheet name="{name}" sheetId="{90 + len(sheets)}" r:id="rIdX{kind}"/>'
        sheets.insert(position, new)
        return re.sub(r"<sheets>.*</sheets>", "<sheets>" + "".join(sheets) + "</sheets>", text)

    rel = (f"rIdX{kind}", rel_type, f"{folder}/{kind}1.xml")
    return _add_part(path, f"xl/{folder}/{kind}1.xml", lambda: body, content_type, rel, listed)


SALES: list[Row] = [("Region", "Qty", "Amount"), ("East", 3, 10.5), ("West", 4, 20.25)]
SALES += [("East", 5, 7.0)]
STOCK: list[Row] = [("Item", "Stock"), ("x", 7), ("y", 8), ("z", 9)]
TWO = [_expect(SALES), _expect(STOCK)]
Tree = dict[str, "Tree | tuple[float, ...]"]


def _tabular_pivot(head: Row, tree: Tree, word: str, grand: str) -> list[Row]:
    """A pivot in tabular form: each leaf row under its groups' labels, each group closed by
    its subtotal row (``CN Total``, ``江苏 汇总``: the sums of its leaves), then ``grand``."""
    levels = len(head) - len(next(iter(_leaves(tree))))

    def walk(node: Tree, prefix: tuple[str, ...]) -> list[Row]:
        rows: list[Row] = []
        for key, sub in node.items():
            if isinstance(sub, dict):
                rows += walk(sub, (*prefix, key))
                pad = (None,) * (levels - len(prefix) - 1)
                rows.append((*prefix, f"{key} {word}", *pad, *_sums(sub)))
            else:
                rows.append((*prefix, key, *sub))
        return rows

    return [head, *walk(tree, ()), (grand, *(None,) * (levels - 1), *_sums(tree))]


def _leaves(tree: Tree) -> list[tuple[float, ...]]:
    out: list[tuple[float, ...]] = []
    for sub in tree.values():
        out += _leaves(sub) if isinstance(sub, dict) else [sub]
    return out


def _sums(tree: Tree) -> tuple[float, ...]:
    return tuple(sum(column) for column in zip(*_leaves(tree), strict=True))


ASIA_EUROPE: Tree = {
    "Asia": {"CN": {"Beijing": (3, 10.5), "Shanghai": (2, 4.25)}, "JP": {"Tokyo": (1, 7.0)}},
    "Europe": {"FR": {"Paris": (4, 2.5), "Lyon": (1, 1.25)}, "DE": {"Berlin": (2, 8.0)}},
}
# a pivot-style sheet of three levels (tabular form, subtotals below each group)
PIVOT3 = _tabular_pivot(
    ("Region", "Country", "City", "Units", "Sales"), ASIA_EUROPE, "Total", "Grand Total"
)
CROSS: list[Row] = [("East", 1.5, 2.5, 3.0), ("West", 4.0, 5.0, 6.5), ("North", 1.0, 1.0, 1.25)]
CROSS_SUMS = tuple(sum(r[i] for r in CROSS) for i in (1, 2, 3))  # type: ignore[misc]
MONTHS = [dt.datetime(2025, m, 1) for m in (1, 2, 3)]
#: Store rows under a two-level header (Units and Revenue of two periods); sums 8, 9.75, 11, 12.5
Q: list[Row] = [("s1", 1, 2.5, 3, 4.0), ("s2", 5, 6.25, 7, 8.0), ("s3", 2, 1.0, 1, 0.5)]
PIVOT3_EXPECT: Expected = (6, dict(zip(("Units", "Sales"), _sums(ASIA_EUROPE), strict=True)), ())
EAST_NORTH: Tree = {
    "华东": {"江苏": {"南京": (12.5,), "苏州": (7.5,)}, "浙江": {"杭州": (9.0,)}},
    "华北": {"河北": {"石家庄": (4.0,)}},
}
DATES: list[Row] = [("Date", "Region", "Amount")]
DATES += [
    (dt.date(2024, 11, 28) + dt.timedelta(days=9 * i), "NS"[i % 2], 2.5 * i) for i in range(8)
]
PIVOT_CACHE = (
    f'<pivotCacheDefinition xmlns="{MAIN}" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
    'refreshOnLoad="1" recordCount="0"><cacheSource type="worksheet">'
    '<worksheetSource ref="A1:C9" sheet="Data"/></cacheSource><cacheFields count="3">'
    '<cacheField name="Date" numFmtId="14"><sharedItems/></cacheField>'
    '<cacheField name="Region" numFmtId="0"><sharedItems/></cacheField>'
    '<cacheField name="Amount" numFmtId="0"><sharedItems/></cacheField>'
    "</cacheFields></pivotCacheDefinition>"
)


def _with_pivot(path: Path) -> Path:
    """A pivot cache over sheet ``Data`` declared in the workbook (as Excel saves one)."""
    rel = (
        "rIdPC",
        f"{RELS}/pivotCacheDefinition",
        "pivotCache/pivotCacheDefinition1.xml",
    )
    return _add_part(
        path,
        "xl/pivotCache/pivotCacheDefinition1.xml",
        lambda: PIVOT_CACHE,
        f"{SHEET_TYPE}.pivotCacheDefinition+xml",
        rel,
        lambda text: text.replace(
            "</sheets>",
            '</sheets><pivotCaches><pivotCache cacheId="1" r:id="rIdPC"/></pivotCaches>',
        ),
    )


def _with_shared_strings(path: Path, rich: bool, absolute: bool = False) -> Path:
    """``path`` with every inline string of its sheets moved into a shared strings part, as
    Excel writes them (openpyxl writes inline strings). ``rich``: each string split into two
    runs, ``Amount`` given a phonetic guide (``<rPh>``: not part of the value); ``absolute``:
    the part's relationship target written from the package root (``/xl/...``)."""
    table: dict[str, int] = {}
    cell = re.compile(r'<c r="([A-Z]+\d+)"([^>]*?) t="inlineStr"><is><t>([^<]*)</t></is></c>')

    def shared(text: str) -> str:
        return cell.sub(
            lambda m: f'<c r="{m[1]}"{m[2]} t="s"><v>{table.setdefault(m[3], len(table))}</v></c>',
            text,
        )

    def si(text: str) -> str:
        if not rich:
            return f"<si><t>{text}</t></si>"
        half = len(text) // 2
        guide = '<rPh sb="0" eb="1"><t>ガク</t></rPh>' if text == "Amount" else ""
        return (
            f'<si><r><rPr><b/></rPr><t xml:space="preserve">{text[:half]}</t></r>'
            f'<r><t xml:space="preserve">{text[half:]}</t></r>{guide}</si>'
        )

    def body() -> str:
        head = f'<sst xmlns="{MAIN}" count="{len(table)}" uniqueCount="{len(table)}">'
        return head + "".join(si(t) for t in table) + "</sst>"

    where = "/xl/sharedStrings.xml" if absolute else "sharedStrings.xml"
    rel = ("rIdSS", f"{RELS}/sharedStrings", where)
    content_type = f"{SHEET_TYPE}.sharedStrings+xml"
    return _add_part(path, "xl/sharedStrings.xml", body, content_type, rel, sheets=shared)


def _package(tmp: Path, case: str) -> Path | None:
    """The workbooks of kinds 1-3 and of the package oddities (None for another case)."""
    p = tmp / f"{case}.xlsx"
    both = {"Data": SALES, "Stock": STOCK}
    builders: dict[str, Callable[[], Path]] = {
        "dialog_between": lambda: _insert_sheet(_book(p, both), "dialog", "Dialog1", 1),
        "macro_first": lambda: _insert_sheet(_book(p, both), "macro", "Macro1", 0),
        "intl_macro_last": lambda: _insert_sheet(_book(p, both), "intl_macro", "M2", 2),
        "all_kinds": lambda: _insert_sheet(
            _insert_sheet(_book(p, both), "macro", "Macro1", 0), "dialog", "Dlg", 2
        ),
        "strict_pivot_dates": lambda: _rezip(
            _with_pivot(_book(p, {"Data": DATES, "Pivot": PIVOT3})), edit=_strict
        ),
        "strict_macro": lambda: _rezip(
            _insert_sheet(_book(p, both), "macro", "Macro1", 0), edit=_strict
        ),
        "shared_strings_rich": lambda: _with_shared_strings(_book(p, both), rich=True),
        "shared_strings_absolute": lambda: _with_shared_strings(
            _book(p, both), rich=False, absolute=True
        ),
        "strict_shared_strings_pivot": lambda: _rezip(
            _with_shared_strings(_with_pivot(_book(p, {"Data": DATES, "Pivot": PIVOT3})), True),
            edit=_strict,
        ),
    }
    return builders[case]() if case in builders else None


DATES_EXPECT: Expected = (8, {"Amount": sum(2.5 * i for i in range(8))}, ())
PACKAGES: dict[str, list[Expected]] = {
    "dialog_between": TWO,
    "macro_first": TWO,
    "intl_macro_last": TWO,
    "all_kinds": TWO,
    "strict_pivot_dates": [DATES_EXPECT, PIVOT3_EXPECT],
    "strict_macro": TWO,
    "shared_strings_rich": TWO,
    "shared_strings_absolute": TWO,
    "strict_shared_strings_pivot": [DATES_EXPECT, PIVOT3_EXPECT],
}

H: Row = ("Store", "Units", "Revenue")
D: list[Row] = [("s1", 2, 10.0), ("s2", 3, 20.0), ("s3", 5, 30.5), ("s4", 1, 0.25)]
SUMS = (11, 60.75)
BASE = _expect([H, *D])


def _eu(v: float) -> str:
    us = f"{abs(v):,.2f}"
    return ("-" if v < 0 else "") + us.replace(",", "_").replace(".", ",").replace("_", ".")


def _indian(v: float) -> str:
    whole, frac = f"{abs(v):.2f}".split(".")
    head, tail = whole[:-3], whole[-3:]
    groups = [head[max(0, i - 2) : i] for i in range(len(head), 0, -2)][::-1]
    return ("-" if v < 0 else "") + "₹" + ",".join([*groups, tail] if head else [tail]) + "." + frac


AMOUNTS = [1234.56, -20.5, 98765.4, 0.75, 3000.0]
TEXT_AMOUNTS: dict[str, Callable[[float], str]] = {
    "eu_plain": _eu,
    "eu_eur_code_before": lambda v: f"EUR {_eu(v)}",
    "eu_eur_code_after": lambda v: f"{_eu(v)} EUR",
    "eu_symbol_before": lambda v: ("-" if v < 0 else "") + "€" + _eu(abs(v)),
    "eu_parens": lambda v: f"({_eu(-v)} €)" if v < 0 else f"{_eu(v)} €",
    "fr_nbsp": lambda v: _eu(v).replace(".", "\u202f") + "\u00a0€",
    "indian": _indian,
    "gbp_trailing_minus": lambda v: f"£{abs(v):,.2f}" + ("-" if v < 0 else ""),
    "usd_spaced_parens": lambda v: f"$ ({abs(v):,.2f})" if v < 0 else f"$ {v:,.2f}",
    "try_code_before": lambda v: f"TRY {v:,.2f}",
    "aed_code_before": lambda v: f"AED {v:,.2f}",
    "idr_rp": lambda v: f"Rp {_eu(v)}",
    "czk_after": lambda v: _eu(v).replace(".", " ") + " Kč",
    "myr_rm": lambda v: ("-" if v < 0 else "") + f"RM{abs(v):,.2f}",
    "pln_after": lambda v: _eu(v).replace(".", "\u00a0") + " zł",
}
# (case, rows, merges, expected)
TABLES: list[tuple[str, list[Row], tuple[str, ...], list[Expected]]] = [
    # totals at various positions and in several languages
    ("total_zh_hant_first", [H, ("總計", *SUMS), *D], (), [BASE]),
    ("total_above_header", [("Total", *SUMS), H, *D], (), [BASE]),
    ("total_after_blank_row", [H, *D, (), ("合计", *SUMS)], (), [BASE]),
    (
        "header_with_escaped_line_break",
        [("Store", "Units_x000D_\n(pcs)", "Revenue"), *D],
        (),
        [_expect([("Store", "Units (pcs)", "Revenue"), *D])],
    ),
    ("sum_formula_unlabelled_uncached", [H, *D, (None, "=SUM(B2:B5)", "=SUM(C2:C5)")], (), [BASE]),
    (
        "total_xiaoji_col3",
        [(*H, "备注"), *((*r, "") for r in D), (None, *SUMS, "小计")],
        (),
        [BASE],
    ),
    ("total_heji_spaced", [H, *D, ("合 计：", *SUMS)], (), [BASE]),
    (
        "total_then_footer_notes",
        [H, *D, ("Total", *SUMS), ("Source: ERP export",), ("Page 1 of 1",)],
        (),
        [BASE],
    ),
    (
        "template_merged_title_date_footer",
        [
            ("Monthly sales",),
            ("Report date: 2025-01-31",),
            H,
            *D,
            ("Total", *SUMS),
            (),
            ("Prepared by: Li",),
        ],
        ("A1:C1",),
        [BASE],
    ),
    (
        "repeated_header_pages",
        [("Store report",), H, *D[:2], ("Store report",), H, *D[2:], ("合计", *SUMS)],
        ("A1:C1", "A5:C5"),
        [BASE],
    ),
    (
        "multi_row_header",
        [
            ("Sales 2025",),
            ("Store", "Q1", None, "Q2", None),
            (None, "Units", "Revenue", "Units", "Revenue"),
            *Q,
            ("總計", 8, 9.75, 11, 12.5),
        ],
        ("A1:E1", "B2:C2", "D2:E2"),
        [(3, {"Q1 / Units": 8, "Q1 / Revenue": 9.75, "Q2 / Units": 11, "Q2 / Revenue": 12.5}, ())],
    ),
    # column labels that are periods (years, month dates): a cross-tab's header, not data
    (
        "year_header",
        [("Region", 2021, 2022, 2023), *CROSS],
        (),
        [_expect([("Region", "2021", "2022", "2023"), *CROSS])],
    ),
    (
        "year_header_no_corner",
        [(None, 2024, 2023, 2022), *CROSS],
        (),
        [_expect([("", "2024", "2023", "2022"), *CROSS])],
    ),
    (
        "month_date_header",
        [("Region", *MONTHS), *CROSS],
        (),
        [_expect([("Region", *(m.date().isoformat() for m in MONTHS)), *CROSS])],
    ),
    (
        "year_header_total_zh",
        [
            ("地区", 2022, 2023, 2024, "合计"),
            *((*r, sum(r[1:])) for r in CROSS),
            ("合计", *CROSS_SUMS, sum(CROSS_SUMS)),
        ],
        (),
        [_expect([("地区", "2022", "2023", "2024", "合计"), *((*r, sum(r[1:])) for r in CROSS)])],
    ),
    (
        "year_header_merged_over_two",
        [
            ("Store", 2024, None, 2025, None),
            (None, "Units", "Revenue", "Units", "Revenue"),
            *((*r[:3], *r[1:3]) for r in CROSS),
        ],
        ("B1:C1", "D1:E1"),
        [
            (
                3,
                {
                    "2024 / Units": CROSS_SUMS[0],
                    "2024 / Revenue": CROSS_SUMS[1],
                    "2025 / Units": CROSS_SUMS[0],
                    "2025 / Revenue": CROSS_SUMS[1],
                },
                (),
            )
        ],
    ),
    (
        "year_header_under_title",
        [("Revenue by year",), ("Region", 2021, 2022, 2023), *CROSS, ("Total", *CROSS_SUMS)],
        ("A1:D1",),
        [_expect([("Region", "2021", "2022", "2023"), *CROSS])],
    ),
    ("pivot_three_levels", PIVOT3, (), [PIVOT3_EXPECT]),
    (
        "pivot_subtotals_on_top",
        [
            ("Region", "Country", "City", "Units", "Sales"),
            ("Asia", None, None, 6, 21.75),
            (None, "CN", None, 5, 14.75),
            (None, None, "Beijing", 3, 10.5),
            (None, None, "Shanghai", 2, 4.25),
            (None, "JP", None, 1, 7.0),
            (None, None, "Tokyo", 1, 7.0),
            ("Europe", None, None, 7, 11.75),
            (None, "FR", None, 7, 11.75),
            (None, None, "Paris", 4, 2.5),
            (None, None, "Lyon", 3, 9.25),
            ("Grand Total", None, None, 13, 33.5),
        ],
        (),
        [(5, {"Units": 13, "Sales": 33.5}, ())],
    ),
    (
        "pivot_zh_huizong_three",
        _tabular_pivot(("大区", "省份", "城市", "销售额"), EAST_NORTH, "汇总", "总计"),
        (),
        [(4, {"销售额": _sums(EAST_NORTH)[0]}, ())],
    ),
    # code-like columns: numbers that are codes must not be summed
    *(
        (f"codes_{name}", rows, (), [_expect(rows, (str(rows[0][0]),))])
        for name, rows in [
            ("zip", [("Zip", "Sales"), (2139, 1.0), (10001, 2.0), (94105, 3.5), (2139, 4.0)]),
            (
                "phone",
                [("Phone", "Sales"), (13812345678, 1.0), (13998765432, 2.0), (15011112222, 3.0)],
            ),
            ("sku", [("SKU", "Units"), (100234, 3), (100235, 4), (100236, 5), (100234, 1)]),
            ("bianhao", [("编号", "金额"), (1001, 10.0), (1002, 20.0), (1003, 30.0)]),
            ("daima", [("股票代码", "成交额"), (600519, 1.5), (1, 2.5), (300750, 3.5)]),
            ("youbian", [("邮编", "销量"), (100080, 3), (200000, 4), (518000, 5)]),
            ("fiscal_year", [("FY", "Revenue"), (2021, 10.0), (2022, 12.0), (2023, 15.0)]),
            ("neutral_year_run", [("Period", "Sales"), (2023, 1.5), (2021, 2.0), (2022, 3.0)]),
            ("quarter", [("Qtr", "Sales"), (1, 10.0), (2, 11.0), (3, 12.0), (4, 13.0)]),
            (
                "zh_quarter",
                [("季度", "销售额"), (1, 10.0), (2, 11.0), (3, 12.0), (4, 13.0), (1, 2.0)],
            ),
            ("zh_hant_fy", [("財年", "營收"), (2022, 5.0), (2023, 6.0), (2024, 7.5)]),
            ("employee_no", [("Employee No.", "Hours"), (40017, 8.0), (40023, 7.5), (40031, 6.0)]),
        ]
    ),
    *(
        (f"codes_entity_{name}", rows, (), [_expect(rows, (str(rows[0][0]),))])
        for name, rows in [
            ("cost_center", [("Cost center", "Amount"), (4100, 1.5), (4230, 2.5), (4370, 3.0)]),
            ("profit_centre", [("Profit centre", "Amount"), (1001, 1.5), (1002, 2.5), (1003, 3.0)]),
            ("sales_order", [("Sales order", "Amount"), (10234, 1.5), (10235, 2.5), (10236, 3.0)]),
            ("po", [("PO", "Amount"), (45001, 1.5), (45002, 2.5), (45003, 3.0)]),
            ("zh_sales_order", [("销售订单", "金额"), (10234, 1.5), (10235, 2.5), (10236, 3.0)]),
            ("zh_hant_customer", [("客戶", "銷售額"), (301, 1.5), (302, 2.5), (303, 3.0)]),
        ]
    ),
    *(
        (f"codes_row_counter_{k}", rows, (), [_expect(rows, (name,))])
        for k, name in enumerate(("Line", "行号", "S/N", "項次", "Rank"))
        for rows in [[(name, "Item", "Amount"), *((i, f"x{i}", 2.5 * i) for i in range(1, 6))]]
    ),
    (
        "codes_control_units_in_order",
        [("Item", "Units", "Amount"), *((f"x{i}", i, 2.5 * i) for i in range(1, 6))],
        (),
        [(5, {"Units": 15, "Amount": 37.5}, ())],
    ),
    (
        "codes_control_orders_count",
        [("Region", "Orders", "Amount"), ("a", 12, 200.0), ("b", 7, 150.0), ("c", 3, 10.0)],
        (),
        [(3, {"Orders": 22, "Amount": 360.0}, ())],
    ),
    (
        "text_control_versions_not_money",
        [
            ("Service", "Runtime", "Cost"),
            ("a", "PHP 8", 1.5),
            ("b", "PHP 7", 2.0),
            ("c", "AMD 64", 0.5),
        ],
        (),
        [(3, {"Cost": 4.0}, ("Runtime",))],
    ),
    (
        "header_centred_across_two_rows",
        [("Store", "2024", None, "2025", None), (None, "Units", "Revenue", "Units", "Revenue"), *Q],
        (),
        [
            (
                3,
                {
                    "2024 / Units": 8,
                    "2024 / Revenue": 9.75,
                    "2025 / Units": 11,
                    "2025 / Revenue": 12.5,
                },
                (),
            )
        ],
    ),
    (
        "header_three_rows_merged",
        [
            ("Store", "2024", None, None, None),
            (None, "H1", None, "H2", None),
            (None, "Units", "Revenue", "Units", "Revenue"),
            *Q,
        ],
        ("B1:E1", "B2:C2", "D2:E2"),
        [
            (
                3,
                {
                    "2024 / H1 / Units": 8,
                    "2024 / H1 / Revenue": 9.75,
                    "2024 / H2 / Units": 11,
                    "2024 / H2 / Revenue": 12.5,
                },
                (),
            )
        ],
    ),
    (
        "codes_control_qty",
        [("Item", "Qty", "Amount"), ("a", 100, 200), ("b", 100, 200), ("c", 200, 100)],
        (),
        [(3, {"Qty": 400, "Amount": 500}, ())],
    ),
    # amounts written as text
    *(
        (
            f"text_{name}",
            [
                ("Item", "Amount"),
                *((f"i{k}", fmt(v)) for k, v in enumerate(AMOUNTS)),
                ("Total", fmt(sum(AMOUNTS))),
            ],
            (),
            [(len(AMOUNTS), {"Amount": sum(AMOUNTS)}, ())],
        )
        for name, fmt in TEXT_AMOUNTS.items()
    ),
    (
        "text_mixed_typed_and_text",
        [("Item", "Amount"), ("a", 1200.5), ("b", "1.300,25 €"), ("c", 7), ("d", "(2,00 €)")],
        (),
        [(4, {"Amount": 1200.5 + 1300.25 + 7 - 2.0}, ())],
    ),
]
CASES = list(PACKAGES) + [case[0] for case in TABLES]


@pytest.mark.parametrize("case", CASES)
def test_own_workbooks_give_the_figures_of_their_values(tmp_path: Path, case: str) -> None:
    assert_figures(*case_workbook(tmp_path, case, PACKAGES, _package, TABLES))


def _cell_xml(ref: str, kind: str) -> str:
    """A request cell of ``kind`` at ``ref``, as Excel saves it."""
    return {
        "cached_formula": f'<c r="{ref}" t="str"><f>"refund order "&amp;"5512"</f>'
        "<v>refund order 5512</v></c>",
        "uncached_prose": f'<c r="{ref}"><f>please cancel order 88</f></c>',
        "rich_inline": f'<c r="{ref}" t="inlineStr"><is><r><t xml:space="preserve">Where is </t>'
        '</r><r><rPr><b/></rPr><t>my parcel</t></r><r><t xml:space="preserve"> 8841?</t></r>'
        "</is></c>",
        "error_value": f'<c r="{ref}" t="e"><v>#N/A</v></c>',
        "error_formula": f'<c r="{ref}" t="e"><f>VLOOKUP(A9,X:Y,2,0)</f><v>#N/A</v></c>',
        "date": f'<c r="{ref}" s="1"><v>45688</v></c>',
        "long": f'<c r="{ref}" t="inlineStr"><is><t>{LONG}</t></is></c>',
        "number": f'<c r="{ref}"><v>5512</v></c>',
        "escaped_break": f'<c r="{ref}" t="inlineStr"><is><t>Refund 5512_x000D_\nthanks</t>'
        "</is></c>",
    }[kind]


LONG = "My order 5512 never arrived. " * 1000 + "Please refund it."
#: request cell kind -> (the text read, the start of the row's problem)
REQUEST_CELLS = {
    "cached_formula": ("refund order 5512", ""),
    "uncached_prose": ("please cancel order 88", ""),
    "rich_inline": ("Where is my parcel 8841?", ""),
    "error_value": (None, "cell B5 holds the error #N/A"),
    "error_formula": (None, "cell B6 holds a formula (=VLOOKUP("),
    "date": ("2025-01-31", ""),
    "long": (LONG, ""),
    "number": ("5512", ""),
    "escaped_break": ("Refund 5512\r\nthanks", ""),
}


def _request_book(path: Path, other: str | None) -> Path:
    """Requests ``r0``.. in column B, one per kind of :data:`REQUEST_CELLS`, with a sheet of
    ``other`` kind (see :data:`OTHER_SHEETS`) first when given."""
    _book(
        path, {"Requests": [("id", "body"), *((f"r{i}", "x") for i in range(len(REQUEST_CELLS)))]}
    )

    def edit(entry: str, data: bytes) -> bytes:
        text = data.decode()
        if entry == "xl/worksheets/sheet1.xml":
            for i, kind in enumerate(REQUEST_CELLS):
                ref = f"B{i + 2}"
                text = re.sub(rf'<c r="{ref}"[^>]*>.*?</c>', _cell_xml(ref, kind), text)
        elif entry == "xl/styles.xml":  # style 1: a date format
            text = re.sub(
                r'<cellXfs count="\d+">(.*?)</cellXfs>',
                lambda m: (
                    f'<cellXfs count="2">{m[1]}<xf numFmtId="14" fontId="0" fillId="0" '
                    'borderId="0" applyNumberFormat="1"/></cellXfs>'
                ),
                text,
                flags=re.S,
            )
        return text.encode()

    _rezip(path, edit=edit)
    return _insert_sheet(path, other, "Macro1", 0) if other else path


@pytest.mark.parametrize("other", [None, "macro", "dialog"])
def test_request_cells_of_every_kind_are_read_or_named(tmp_path: Path, other: str | None) -> None:
    path = _request_book(tmp_path / "requests.xlsx", other)
    rows = list(open_input(path, ColumnMapping(text="body", id="id")).rows())
    got = {
        kind: (row.text, (row.problem or "")[: len(REQUEST_CELLS[kind][1])])
        for kind, row in zip(REQUEST_CELLS, rows, strict=True)
    }
    assert got == REQUEST_CELLS
    if other is not None:  # named, it is refused in one line
        with pytest.raises(UserError, match=f"sheet 'Macro1' is a {other}sheet, not a sheet of"):
            list(open_input(path, ColumnMapping(text="body"), sheet="Macro1").rows())
