"""Kinds xl14 found on workbooks of its own (round 14): amounts in several currencies in one
column (by each cell's number format, or by a currency column beside them), and delimited
text in the encodings and separators Excel writes (UTF-16 "Unicode Text", Big5, ``sep=;``),
for the report reader and for a batch's sheet of requests.

Each file is written in ``tmp_path``; the expected figures are computed here from the values
written (per currency: a plain dict sum), never by the project's code.
"""

from __future__ import annotations

import codecs
from collections import defaultdict
from pathlib import Path

import openpyxl
import pytest

from orchestrator.batch import ColumnMapping, open_input
from orchestrator.exceptions import UserError
from orchestrator.spreadsheet import UnsupportedFileError, read_workbook
from tests.unit.test_spreadsheet_kinds11 import _book
from workflows.excel_report.analysis import analyse

FORMATS = {
    "$": '"$"#,##0.00',
    "€": "#,##0.00 [$€-407]",
    "¥": "[$¥-804]#,##0.00",
    "￥": "￥#,##0.00",
    "£": "£#,##0",
    "USD": "[$USD] #,##0.00",
    None: "General",
}


def _totals(path: Path) -> dict[str, float]:
    """``label -> value`` of every total figure of the workbook's analysis."""
    figures = analyse(read_workbook(path)).figures
    return {f.label: float(f.value) for f in figures if f.label.startswith("total ")}


def _per_currency(rows: list[tuple[float, str | None]]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for value, unit in rows:
        out[unit or "no currency"] += value
    return dict(out)


@pytest.mark.parametrize(
    ("rows", "split"),
    [
        ([(100, "$"), (200, "€"), (300, "$"), (1000, "¥")], True),
        ([(12.5, "£"), (7.25, "USD"), (3, "£"), (40, "USD"), (1, "USD")], True),
        ([(1.5, "€"), (2.5, None), (4, "$")], True),  # an unformatted value is its own group
        ([(5, "¥"), (6, "￥"), (7, "¥")], False),  # one currency, written two ways
        ([(5, "$"), (6, None), (7, "$")], False),  # one currency and plain numbers
    ],
)
def test_a_column_formatted_in_several_currencies_gets_one_total_each(
    tmp_path: Path, rows: list[tuple[float, str | None]], split: bool
) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["Invoice", "Amount"])
    for i, (value, unit) in enumerate(rows, start=2):
        ws.append([f"INV-{i}", value])
        ws.cell(i, 2).number_format = FORMATS[unit]
    path = tmp_path / "amounts.xlsx"
    wb.save(path)
    totals = _totals(path)
    if not split:
        assert totals == {"total `Amount`": sum(v for v, _ in rows)}
        return
    assert "total `Amount`" not in totals  # never one total over several currencies
    expected = _per_currency(rows)
    got = {k.removeprefix("total `Amount` in `").removesuffix("`"): v for k, v in totals.items()}
    assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("header", "rows"),
    [
        (("Invoice", "Currency", "Amount", "Qty"), [("USD", 100), ("EUR", 200), ("USD", 300)]),
        (("订单", "币种", "金额", "数量"), [("人民币", 100), ("美元", 20), ("港币", 1000)]),
        (("訂單", "幣別", "金額", "數量"), [("人民幣", 9.5), ("美元", 3), ("人民幣", 0.5)]),
        (("Ref", "Ccy", "Net", "Units"), [("gbp", 10), ("GBP", 5), ("€", 7), ("EUR", 1)]),
    ],
)
def test_amounts_beside_a_currency_column_are_totalled_per_currency(
    tmp_path: Path, header: tuple[str, ...], rows: list[tuple[str, float]]
) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(list(header))
    for i, (cur, value) in enumerate(rows):
        ws.append([f"R{i}", cur, value, i + 1])
    path = tmp_path / "ccy.xlsx"
    wb.save(path)
    totals = _totals(path)
    amount, count = header[2], header[3]
    assert f"total `{amount}`" not in totals
    names = {"USD": "$", "美元": "$", "EUR": "€", "€": "€", "GBP": "£", "人民币": "¥"}
    names |= {"人民幣": "¥", "港币": "HK$"}
    expected = _per_currency([(v, names[c.upper() if c.isascii() else c]) for c, v in rows])
    got = {
        k.removeprefix(f"total `{amount}` in `").removesuffix("`"): v
        for k, v in totals.items()
        if k.startswith(f"total `{amount}` in")
    }
    assert got == pytest.approx(expected)
    assert totals[f"total `{count}`"] == sum(range(1, len(rows) + 1))  # a count: not split


def test_one_currency_column_leaves_the_total(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["Invoice", "Amount", "Currency"])
    for i, value in enumerate((100, 250.5, 30)):
        ws.append([f"I{i}", value, "USD"])
    wb.save(tmp_path / "one.xlsx")
    assert _totals(tmp_path / "one.xlsx")["total `Amount`"] == pytest.approx(380.5)


ROWS = [["产品", "数量", "金额"], ["苹果", "3", "12.50"], ["香蕉", "4", "8.25"]]
ROWS += [["橙子", "5", "20"]]
TRAD = [["產品", "數量", "金額"], ["蘋果", "3", "12.50"], ["香蕉", "4", "8.25"]]
TRAD += [["橙子", "5", "20"], ["客戶陳大文", "1", "0.5"]]


def _text(rows: list[list[str]], sep: str, line: str = "") -> str:
    return line + "".join(sep.join(r) + "\r\n" for r in rows)


@pytest.mark.parametrize(
    ("rows", "sep", "encoding", "bom", "line"),
    [
        (ROWS, "\t", "utf-16-le", codecs.BOM_UTF16_LE, ""),  # Excel's "Unicode Text"
        (ROWS, ",", "utf-16-be", codecs.BOM_UTF16_BE, ""),
        (ROWS, ",", "utf-16-le", b"", ""),  # no BOM
        (ROWS, ";", "utf-16-le", b"", ""),
        (ROWS, ",", "utf-32-le", codecs.BOM_UTF32_LE, ""),
        (TRAD, ",", "big5", b"", ""),
        (TRAD, "\t", "cp950", b"", ""),
        (TRAD, ",", "gbk", b"", ""),  # Traditional characters saved in GBK
        (ROWS, ";", "utf-8", b"", "sep=;\r\n"),  # Excel's separator line
        (ROWS, "|", "gbk", b"", "sep=|\r\n"),
        (ROWS, ",", "utf-8", codecs.BOM_UTF8, "SEP=,\r\n"),
    ],
)
def test_delimited_text_in_the_encodings_excel_writes(
    tmp_path: Path, rows: list[list[str]], sep: str, encoding: str, bom: bytes, line: str
) -> None:
    path = tmp_path / "list.csv"
    path.write_bytes(bom + _text(rows, sep, line).encode(encoding))
    wb = read_workbook(path)
    (table,) = wb.tables()
    assert [c.name for c in table.columns] == rows[0]
    assert len(table.rows) == len(rows) - 1
    totals = _totals(path)
    assert totals[f"total `{rows[0][2]}`"] == pytest.approx(sum(float(r[2]) for r in rows[1:]))
    assert totals[f"total `{rows[0][1]}`"] == sum(int(r[1]) for r in rows[1:])


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        # Shift_JIS (CP932) is read as Japanese now: test_csv_encodings15
        ("Name,Ort\r\nMüller,Köln\r\nJosé,Málaga\r\n", "cp1252"),
        ("Name,Ort\r\nGrüße,Straße\r\nÅsa,Ørsted\r\n", "latin-1"),
    ],
)
def test_text_in_other_code_pages_is_refused_not_read_as_mojibake(
    tmp_path: Path, text: str, encoding: str
) -> None:
    (path := tmp_path / "list.csv").write_bytes(text.encode(encoding))
    with pytest.raises(UnsupportedFileError, match="CSV UTF-8"):
        read_workbook(path)
    with pytest.raises(UserError, match="CSV UTF-8"):
        open_input(path, ColumnMapping(text=text.split(",")[0]))


REQUESTS = [["id", "message"], ["1", "请帮我退款订单ORD-100076"], ["2", "Where is my parcel?"]]


@pytest.mark.parametrize(
    ("encoding", "bom", "sep", "line"),
    [
        ("gbk", b"", ",", ""),
        ("gb18030", b"", ";", ""),
        ("utf-16-le", codecs.BOM_UTF16_LE, "\t", ""),
        ("utf-16-le", b"", ",", ""),
        ("utf-8", b"", ";", ""),
        ("utf-8", codecs.BOM_UTF8, ";", "sep=;\r\n"),
        ("big5", b"", ",", ""),
    ],
)
def test_a_batch_sheet_of_requests_in_those_encodings(
    tmp_path: Path, encoding: str, bom: bytes, sep: str, line: str
) -> None:
    rows = [list(r) for r in REQUESTS]
    if encoding == "big5":
        rows[1][1] = "請幫我退款訂單ORD-100076"
    path = tmp_path / "inbox.csv"
    path.write_bytes(bom + _text(rows, sep, line).encode(encoding))
    source = open_input(path, ColumnMapping(text="message", id="id"))
    got = [(r.row_id, r.text, r.problem) for r in source.rows()]
    assert got == [(r[0], r[1], None) for r in rows[1:]]
    lines = [r.line for r in source.rows()]
    assert lines == [2 + bool(line), 3 + bool(line)]  # the file's own line numbers


def _sheet(path: Path, rows: list[tuple[object, ...]], merges: tuple[str, ...] = ()) -> Path:
    return _book(path, {"Sheet1": rows}, merges)


DUPLICATES = [
    [("Name", "Amount", "Amount"), ("a", 1, 10), ("b", 2, 20), ("c", 3, 30)],
    [("门店", "金额", "金额", "备注"), ("A", 1.5, 2, "x"), ("B", 2.5, 4, "y")],
    [("Name", "Note", "Note", "Qty"), ("a", "x", "y", 5), ("b", "z", "w", 7)],
    [("Item", "Q1", "Q1", "Q2"), ("p", "$1.00", "$2.50", "$3"), ("q", "$4", "$5", "$6.25")],
    [("Sales", "Sales"), ("Region", "Amount"), ("E", 1), ("W", 2)],  # a title repeated across
]


def _number(value: object) -> float | None:
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    return float(text[1:]) if text.startswith("$") else None


@pytest.mark.parametrize("rows", DUPLICATES)
def test_a_header_that_repeats_a_label_is_still_the_header(
    tmp_path: Path, rows: list[tuple[object, ...]]
) -> None:
    path = _sheet(tmp_path / "dup.xlsx", rows)
    (table,) = read_workbook(path).tables()
    titled = len(set(rows[0])) == 1
    header, data = (rows[1], rows[2:]) if titled else (rows[0], rows[1:])
    assert len(table.rows) == len(data)  # the header row is never a data row
    seen: dict[str, int] = defaultdict(int)
    names = []
    for label in map(str, header):
        seen[label] += 1
        names.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    assert [c.name for c in table.columns] == names
    totals = _totals(path)
    for k, name in enumerate(names):
        values = [_number(r[k]) for r in data]
        if all(v is not None for v in values):
            assert totals[f"total `{name}`"] == pytest.approx(sum(v or 0 for v in values))


PANDAS = {  # how pandas.DataFrame.to_excel lays out an index name under a header of two rows
    "multiindex_columns": (
        [(None, "2024", None, "2025", None), (None, "Sales", "Units", "Sales", "Units")],
        ("B1:C1", "D1:E1"),
        ["2024 / Sales", "2024 / Units", "2025 / Sales", "2025 / Units"],
    ),
    "level_names": ([("Year", 2024, 2025), ("Product", "a", "b")], (), ["2024 / a", "2025 / b"]),
    "values_caption": ([(None, "Sales", None), ("Product", "a", "b")], ("B1:C1",), ["a", "b"]),
}


@pytest.mark.parametrize("layout", sorted(PANDAS))
@pytest.mark.parametrize("index", ["Region", "地区"])
def test_the_index_name_row_pandas_writes_is_no_data_row(
    tmp_path: Path, layout: str, index: str
) -> None:
    header, merges, names = PANDAS[layout]
    width = len(header[0])
    data = [(f"R{i}", *[(i + 1) * (k + 1) + 0.5 for k in range(width - 1)]) for i in range(3)]
    path = _sheet(tmp_path / "pd.xlsx", [*header, (index,), *data], merges)
    (table,) = read_workbook(path).tables()
    assert len(table.rows) == len(data)
    totals = _totals(path)
    for k, name in enumerate(names, start=1):
        assert totals[f"total `{name}`"] == pytest.approx(sum(float(r[k]) for r in data))


#: Whole amounts that never repeat, ten rows or more, of several widths: amounts (they were
#: read as identifiers, and the report had no figure for them and said every cell was used).
UNIQUE_AMOUNTS = [
    ("Amount", [120, 4500, 87, 2310, 999, 15, 7020, 430, 66, 1204, 318]),
    ("金额", [3000, 150, 27, 980, 12500, 640, 75, 3333, 410, 86]),
    ("Revenue", [1200000, 950000, 3400000, 87000, 12000000, 450000, 2300000, 610000, 99000, 71]),
    ("Qty", list(range(1, 13))),  # a gapless run, but named as a quantity
    ("Sales", [k * 100 for k in range(1, 13)]),
    ("Value", [5, 4890, 230, 17, 66012, 903, 41, 7777, 128, 3054]),  # a neutral name
]
#: Unique integers that number things: one width, a gapless run, or an entity's name.
UNIQUE_IDS = [
    ("Ref", [10234, 10567, 10981, 11002, 11345, 11876, 12001, 12456, 12999, 13020]),
    ("Column B", [7, 3, 1, 10, 2, 9, 4, 8, 6, 5]),
    ("Ticket", [17, 203, 1045, 88, 4021, 9, 310, 12007, 56, 777]),
    ("工单", [5, 61, 702, 8310, 44, 903, 27, 1500, 12, 398]),
]


@pytest.mark.parametrize(("name", "values"), UNIQUE_AMOUNTS + UNIQUE_IDS)
def test_whole_amounts_that_never_repeat_are_totalled_and_ids_are_not(
    tmp_path: Path, name: str, values: list[int]
) -> None:
    rows = [("Label", name), *[(f"r{i}", v) for i, v in enumerate(values)]]
    path = _sheet(tmp_path / "u.xlsx", rows)
    total = _totals(path).get(f"total `{name}`")
    assert total == (sum(values) if (name, values) in UNIQUE_AMOUNTS else None)


@pytest.mark.parametrize(
    ("labels", "units"),
    [
        (("Item", "Amount", "Weight"), (None, "(USD)", "(kg)")),
        (("品名", "金额", "重量"), (None, "元", "千克")),
        (("品名", "金额", "数量"), (None, "（万元）", "件")),
        (("Item", "Sales", "Share"), (None, "EUR", "%")),
    ],
)
def test_a_units_row_under_the_header_is_part_of_it(
    tmp_path: Path, labels: tuple[str, ...], units: tuple[str | None, ...]
) -> None:
    data = [("a", 10, 1.5), ("b", 20, 2.5), ("c", 5, 0.25)]
    path = _sheet(tmp_path / "units.xlsx", [labels, units, *data])
    (table,) = read_workbook(path).tables()
    assert len(table.rows) == len(data)
    amount = table.columns[1].name
    assert amount.startswith(labels[1]) and units[1] in amount  # type: ignore[operator]
    assert _totals(path)[f"total `{amount}`"] == 35
