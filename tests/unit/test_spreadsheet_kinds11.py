"""Issue 46 items 1-6 and 12 on workbooks of xl11's own (round 11), in variants earlier tests
do not write: a chartsheet first or alone, backslashes in some entries or in relationship
targets, Strict with 1904 dates and ISO ``t="d"`` cells, total rows labelled in other columns
or not labelled at all, a number merged across columns, pivots of two levels, codes with
leading zeros, amounts stored as text with their own total rows, and request cells that a
writer cached as 0 (XlsxWriter).

Each workbook is written in ``tmp_path`` with openpyxl (then its zip rewritten for kinds 1-3);
the expected figures are computed here from the values written, never read from the code.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from openpyxl.chart import BarChart, Reference

from orchestrator.batch import ColumnMapping, open_input
from orchestrator.spreadsheet import SpreadsheetError, read_workbook
from workflows.excel_report.analysis import analyse

Row = tuple[object, ...]
#: One expected table: data rows, {column: total}, columns that must not be totalled.
Expected = tuple[int, dict[str, float], tuple[str, ...]]

SALES: list[Row] = [("Region", "Qty", "Amount"), ("East", 3, 10.5), ("West", 4, 20.25)]
SALES += [("East", 5, 7.0), ("North", 1, 100.0)]
STOCK: list[Row] = [("Item", "Stock"), ("x", 7), ("y", 8), ("z", 9)]


def _expect(rows: list[Row], codes: tuple[str, ...] = ()) -> Expected:
    """The data rows and column totals of ``rows`` (header first), computed from the values."""
    head, body = rows[0], rows[1:]
    totals = {
        str(name): float(sum(r[i] for r in body if isinstance(r[i], int | float)))  # type: ignore[misc]
        for i, name in enumerate(head)
        if name not in codes and all(isinstance(r[i], int | float) for r in body)
    }
    return len(body), totals, codes


def _book(path: Path, sheets: dict[str, list[Row]], merges: tuple[str, ...] = ()) -> Path:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, rows in sheets.items():
        ws = wb.create_sheet(title)
        for row in rows:
            ws.append(list(row))
        for ref in merges:
            ws.merge_cells(ref)
    wb.save(path)
    return path


def _charts(path: Path, at: tuple[int | None, ...]) -> Path:
    """SALES with a chartsheet at each index of ``at`` (None: last)."""
    wb = openpyxl.load_workbook(_book(path, {"Data": SALES, "Stock": STOCK}))
    for k, index in enumerate(at):
        chart = BarChart()
        chart.add_data(Reference(wb["Data"], min_col=2, min_row=1, max_row=5))
        wb.create_chartsheet(f"Chart{k}", index).add_chart(chart)
    wb.save(path)
    return path


def _rezip(
    path: Path,
    rename: Callable[[str], str] = lambda n: n,
    edit: Callable[[str, bytes], bytes] = lambda n, b: b,
) -> Path:
    with zipfile.ZipFile(path) as src:
        entries = [(i.filename, src.read(i.filename)) for i in src.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, body in entries:
            dst.writestr(rename(name), edit(name, body))
    return path


_STRICT = [
    ("spreadsheetml/2006/main", "spreadsheetml/main"),
    ("officeDocument/2006/relationships", "officeDocument/relationships"),
    ("drawingml/2006/main", "drawingml/main"),
    ("drawingml/2006/chart", "drawingml/chart"),
    ("officeDocument/2006/extended-properties", "officeDocument/extendedProperties"),
]


def _strict(name: str, body: bytes) -> bytes:
    for old, new in _STRICT:
        body = body.replace(
            f"http://schemas.openxmlformats.org/{old}".encode(),
            f"http://purl.oclc.org/ooxml/{new}".encode(),
        )
    return body


def _iso_dates(name: str, body: bytes) -> bytes:
    """Date serials of column A written as ISO text cells (``t="d"``), as Strict allows."""
    if not name.endswith("sheet1.xml"):
        return body

    def iso(m: re.Match[bytes]) -> bytes:
        day = dt.date(1899, 12, 30) + dt.timedelta(days=float(m[3]))
        return b'<c r="%s"%s t="d"><v>%sT00:00:00</v></c>' % (m[1], m[2], day.isoformat().encode())

    return re.sub(rb'<c r="(A[2-9])"( s="\d+")?><v>([\d.]+)</v></c>', iso, body)


def _slashed(test: Callable[[str], bool]) -> Callable[[str], str]:
    return lambda n: n.replace("/", "\\") if test(n) else n


def _rels_backslash(name: str, body: bytes) -> bytes:
    if not name.endswith(".rels"):
        return body
    return re.sub(rb'Target="([^"]+)"', lambda m: b'Target="%s"' % m[1].replace(b"/", b"\\"), body)


def _chart_only(name: str, body: bytes) -> bytes:
    """The workbook part lists its chartsheets only."""
    if name != "xl/workbook.xml":
        return body
    return re.sub(rb'<sheet [^>]*name="(?:Data|Stock)"[^>]*/>', b"", body)


TWO = [_expect(SALES), _expect(STOCK)]
DATED: list[Row] = [("Date", "Customer", "Amount")]
DATED += [(dt.date(2025, 1, i), f"c{i}", i * 1.5) for i in range(1, 7)]
H: Row = ("Store", "Units", "Revenue")
D: list[Row] = [("s1", 2, 10.0), ("s2", 3, 20.0), ("s3", 5, 30.5)]
TOTAL: Row = (None, 10, 60.5)  # the sums of D


def _package(tmp: Path, case: str) -> Path | None:
    """The workbooks of kinds 1-3 (None for another case)."""
    p = tmp / f"{case}.xlsx"
    both = {"Data": SALES, "Stock": STOCK}
    builders: dict[str, Callable[[], Path]] = {
        "chart_first": lambda: _charts(p, (0,)),
        "chart_first_and_last": lambda: _charts(p, (0, None)),
        "chart_only": lambda: _rezip(_charts(p, (0,)), edit=_chart_only),
        "bs_one_sheet": lambda: _rezip(_book(p, both), _slashed(lambda n: "sheet2" in n)),
        "bs_shared_strings": lambda: _rezip(_book(p, both), _slashed(lambda n: "shared" in n)),
        "bs_rel_targets": lambda: _rezip(
            _book(p, both), _slashed(lambda n: "worksheets" in n), _rels_backslash
        ),
        "bs_leading": lambda: _rezip(
            _book(p, both), lambda n: "\\" + n.replace("/", "\\") if "sheets" in n else n
        ),
        "strict_dates": lambda: _rezip(_book(p, {"S": DATED}), edit=_strict),
        "strict_iso_dates": lambda: _rezip(
            _book(p, {"S": DATED}), edit=lambda n, b: _iso_dates(n, _strict(n, b))
        ),
        "strict_backslash_chart": lambda: _rezip(
            _charts(p, (None,)), _slashed(lambda n: n.startswith("xl/")), _strict
        ),
    }
    return builders[case]() if case in builders else None


DATED_EXPECT = (6, {"Amount": 31.5}, ())
PACKAGES: dict[str, list[Expected] | None] = {
    "chart_first": TWO,
    "chart_first_and_last": TWO,
    "chart_only": None,  # a clear SpreadsheetError
    "bs_one_sheet": TWO,
    "bs_shared_strings": TWO,
    "bs_rel_targets": TWO,
    "bs_leading": TWO,
    "strict_dates": [DATED_EXPECT],
    "strict_iso_dates": [DATED_EXPECT],
    "strict_backslash_chart": TWO,
}


def _money(fmt: str, values: list[float]) -> list[str]:
    """``values`` written as text in one convention: ``us``, ``eu``, ``paren``..."""
    out = []
    for v in values:
        us = f"{abs(v):,.2f}"
        eu = us.replace(",", "_").replace(".", ",").replace("_", ".")
        sign = "-" if v < 0 else ""
        out.append(
            {
                "yen": f"{sign}¥{us}",
                "eur_after": f"{sign}{eu} €",
                "paren": f"({us})" if v < 0 else us,
                "usd_code": f"USD {sign}{us}",
                "minus_dollar": f"{sign}${us}",
                "fullwidth": f"{sign}￥{us}".translate(
                    str.maketrans("0123456789,.", "０１２３４５６７８９，．")
                ),
                "yuan": f"{sign}{us}元",
                "rmb_words": f"人民币{sign}{us}元",
                "usd_zh": f"{sign}{us}美元",
            }[fmt]
        )
    return out


AMOUNTS = [1234.5, -12.3, 2000.0, 15.25]
# (case, rows, merges, expected): kinds 4-6 as rows of one sheet
TABLES: list[tuple[str, list[Row], tuple[str, ...], list[Expected]]] = [
    *(
        (f"total_{label}_col{col}", [H, *D, row], (), [_expect([H, *D])])
        for label, col, row in [
            ("合计", 1, ("合计", 10, 60.5)),
            ("小计", 1, ("小计", 10, 60.5)),
            ("总计", 1, ("总计", 10, 60.5)),
            ("Sum", 1, ("Sum", 10, 60.5)),
            ("Grand_total", 1, ("Grand total", 10, 60.5)),
            ("Total", 4, (None, 10, 60.5, "Total")),
            ("none", 0, TOTAL),
        ]
    ),
    ("unlabelled_total_footer", [H, *D, TOTAL, ("Prepared by: Bob",)], (), [_expect([H, *D])]),
    ("unlabelled_not_total", [H, *D, (None, 4, 9.0)], (), [_expect([H, *D, (None, 4, 9.0)])]),
    (
        "merged_number_across",
        [("Item", "Q1", "Q2"), ("a", 1, 2), ("b", 6, None), ("c", 3, 4)],
        ("B3:C3",),
        [(3, {"Q1": 10, "Q2": 6}, ())],
    ),
    (
        "pivot_label_second_column",
        [
            ("Region", "Product", "Sales"),
            ("N", "a", 1.5),
            ("N", "b", 2.25),
            (None, "小计", 3.75),
            ("S", "a", 4.0),
            ("S", "c", 0.75),
            (None, "小计", 4.75),
            (None, "总计", 8.5),
        ],
        (),
        [(4, {"Sales": 8.5}, ())],
    ),
    (
        "pivot_two_levels",
        [
            ("Region", "Country", "City", "Sales"),
            ("E", "CN", "Bj", 10),
            ("E", "CN", "Sh", 20),
            ("E", "CN Total", None, 30),
            ("E", "JP", "Tk", 5),
            ("E", "JP Total", None, 5),
            ("E Total", None, None, 35),
            ("W", "US", "NY", 7),
            ("W", "US", "LA", 3),
            ("W", "US Total", None, 10),
            ("W Total", None, None, 10),
            ("Grand Total", None, None, 45),
        ],
        (),
        [(5, {"Sales": 45}, ())],
    ),
    (
        "pivot_outline_two_levels",
        [
            ("Row Labels", "Sum of Units"),
            ("Asia", 30),
            ("  China", 25),
            ("    Bj", 10),
            ("    Sh", 15),
            ("  Japan", 5),
            ("    Tk", 5),
            ("Europe", 12),
            ("  France", 12),
            ("    Paris", 8),
            ("    Lyon", 4),
            ("Grand Total", 42),
        ],
        (),
        [(5, {"Sum of Units": 42}, ())],
    ),
    *(
        (f"codes_{name}", rows, (), [_expect(rows, (str(rows[0][0]),))])
        for name, rows in [
            (
                "text_leading_zero",
                [("Brand code", "Sales"), ("007", 1.0), ("012", 2.0), ("007", 3.0)],
            ),
            ("neutral_header", [("Ref", "Sales"), ("00123", 1.0), ("00456", 2.0), ("00123", 3.0)]),
            ("zh_store", [("门店编号", "销量"), ("0101", 3), ("0102", 4), ("0101", 5)]),
            (
                "iso_numeric",
                [("Currency", "Net"), (840, 10.0), (978, 12.0), (840, 3.0), (156, 4.0)],
            ),
            ("year", [("Year", "Revenue"), (2021, 10.0), (2022, 12.0), (2023, 15.0), (2024, 11.0)]),
            ("zh_hant", [("貨幣單位", "銷售額"), (1, 1.0), (1, 2.0), (2, 3.0), (1, 4.0)]),
        ]
    ),
    *(
        (
            f"text_{fmt}_{total}",
            [
                ("Item", "Amount"),
                *((f"i{k}", text) for k, text in enumerate(_money(fmt, AMOUNTS))),
                *([(total, _money(fmt, [sum(AMOUNTS)])[0])] if total != "none" else []),
            ],
            (),
            [(len(AMOUNTS), {"Amount": sum(AMOUNTS)}, ())],
        )
        for fmt, total in [
            ("yen", "合计"),
            ("eur_after", "Total"),
            ("paren", "Grand total"),
            ("usd_code", "none"),
            ("minus_dollar", "Sum"),
            ("fullwidth", "总计"),
            ("yuan", "none"),
            ("rmb_words", "合计"),
            ("usd_zh", "none"),
        ]
    ),
    (
        "text_pivot_subtotals",
        [
            ("Region", "Rep", "Amount"),
            ("N", "a", "$10.00"),
            ("N", "b", "$5.50"),
            ("N Total", None, "$15.50"),
            ("S", "c", "$1,000.00"),
            ("S Total", None, "$1,000.00"),
            ("Grand Total", None, "$1,015.50"),
        ],
        (),
        [(3, {"Amount": 1015.5}, ())],
    ),
]
CASES = list(PACKAGES) + [case[0] for case in TABLES]


Table = tuple[str, list[Row], tuple[str, ...], list[Expected]]


def case_workbook(
    tmp: Path,
    case: str,
    packages: dict[str, Any],
    package: Callable[[Path, str], Path | None],
    tables: list[Table],
) -> tuple[Path, Any]:
    """The workbook of ``case`` in ``tmp`` and its expected figures: a package built by
    ``package`` (expected in ``packages``), or the rows of ``tables`` written as one sheet."""
    if case in packages:
        path = package(tmp, case)
        assert path is not None
        return path, packages[case]
    _, rows, merges, expected = next(t for t in tables if t[0] == case)
    return _book(tmp / f"{case}.xlsx", {"Sheet1": rows}, merges), expected


@pytest.mark.parametrize("case", CASES)
def test_own_workbooks_give_the_figures_of_their_values(tmp_path: Path, case: str) -> None:
    path, expected = case_workbook(tmp_path, case, PACKAGES, _package, TABLES)
    if expected is None:
        with pytest.raises(SpreadsheetError, match="no worksheet"):
            read_workbook(path)
        return
    assert_figures(path, expected)


def assert_figures(path: Path, expected: list[Expected]) -> None:
    """The workbook at ``path`` has one table per ``expected`` entry, each with its data rows
    and column totals, and no total of its code columns."""
    wb = read_workbook(path)
    figures = analyse(wb).figures
    assert len(wb.tables()) == len(expected), [t.ref for t in wb.tables()]
    for table, (n_rows, totals, codes) in zip(wb.tables(), expected, strict=True):
        got = {f.label: f.value for f in figures if f.table_id == table.id}
        assert table.n_rows == n_rows, table.skipped
        for name, total in totals.items():
            assert got.get(f"total `{name}`") == pytest.approx(total), (name, got)
        for name in codes:
            assert not any(label.startswith(f"total `{name}`") for label in got), name


def _requests(path: Path, texts: list[str], edit: Callable[[str, bytes], bytes]) -> Path:
    _book(path, {"Sheet1": [("id", "body"), *((f"r{i}", t) for i, t in enumerate(texts))]})
    return _rezip(path, edit=edit)


def _cached_zero(name: str, body: bytes) -> bytes:
    """As XlsxWriter writes a formula: a cached 0, and Excel asked to recalculate on open."""
    if name.endswith("sheet1.xml"):
        body = re.sub(
            rb'<c r="(B\d+)" t="str"><f>(.*?)</f><v\s*/?>(?:</v>)?</c>',
            rb'<c r="\1"><f>\2</f><v>0</v></c>',
            body,
        )
    return body


@pytest.mark.parametrize(
    ("edit", "rename"),
    [
        (_cached_zero, None),
        (_strict, None),
        (lambda n, b: b, _slashed(lambda n: n.startswith("xl/"))),
    ],
    ids=["xlsxwriter_cached_zero", "strict", "backslash"],
)
def test_request_cells_typed_as_formulas_are_read_in_every_package(
    tmp_path: Path,
    edit: Callable[[str, bytes], bytes],
    rename: Callable[[str], str] | None,
) -> None:
    texts = ["=please refund order 5512", "=Refund: order 77", "=退款 5512", "=SUM(A1:A2)", "plain"]
    path = _requests(tmp_path / "in.xlsx", texts, edit)
    if rename is not None:
        _rezip(path, rename)
    rows = list(open_input(path, ColumnMapping(text="body", id="id")).rows())
    got = [(row.text, (row.problem or "")[:34]) for row in rows]
    assert got == [
        ("please refund order 5512", ""),
        ("Refund: order 77", ""),
        ("退款 5512", ""),
        (None, "cell B5 holds a formula (=SUM(A1:A"),
        ("plain", ""),
    ]
