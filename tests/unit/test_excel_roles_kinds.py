"""Column roles by kind (tester6 findings 2 and 5): code-like integer columns (barcodes, store,
branch and department numbers, area codes, NAICS, months, code clusters with no header hint)
and Excel date serials under a date header are never summed, while measures that look alike
(repeating amounts, small quantities, wide spreads, decimals) still are. Each case is a real
.xlsx written with openpyxl and read by the reader, then profiled."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from orchestrator.spreadsheet import read_workbook
from workflows.excel_report.roles import AnalysisConfig, TableProfile, profile


def _profile(tmp_path: Path, name: str, values: list[object]) -> TableProfile:
    """A two-column sheet: a text label column and ``name`` holding ``values``."""
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["Label", name])
    for i, v in enumerate(values):
        ws.append([f"row {i + 1}", v])
    path = tmp_path / "t.xlsx"
    wb.save(path)
    table = read_workbook(path).sheets[0].tables[0]
    return profile(table, AnalysisConfig())


CODES: list[tuple[str, list[object]]] = [
    ("商品条码", [6901234567892, 6901234567892, 6920202888883, 6901234567892]),  # EAN-13 repeats
    ("Barcode", [12345678, 12345678, 87654321, 12345678, 55554444]),  # EAN-8 repeats
    ("UPC", [36000291452, 36000291452, 12345678905]),  # name hint
    ("Col1", [7001, 7002, 7001, 7003]),  # fixed width, clustered, repeating
    ("Column B", [3301, 3302, 3301, 3303, 3302, 3304]),
    ("Branch", [101, 102, 101, 103, 104, 102]),
    ("Store", [12, 15, 12, 18, 15, 21]),
    ("Dept", [10, 20, 10, 30, 20, 40]),
    ("Department", [1, 2, 3, 1, 2]),
    ("Item #", [5001, 5002, 5003, 5004, 5005, 5006]),
    ("PO#", [88, 91, 93, 95]),
    ("NAICS", [541511, 541512, 541511, 722511, 445110, 541511]),
    ("SIC code", [7372, 5812, 7372, 5411]),
    ("区号", [10, 21, 10, 20, 21, 755]),
    ("邮编", [100000, 200000, 100000, 510000]),
    ("门店", [3, 5, 3, 8, 5]),
    ("门店编号", [31, 32, 33, 34]),
    ("部门", [1, 2, 1, 3]),
    ("月份", [1, 2, 3, 1, 2, 3]),
    ("Month", [1, 2, 3, 4, 5, 6, 7, 12]),
    ("年份", [2021, 2022, 2023, 2022]),
    ("商品条形码", [6921168509256, 6921168509256, 6921168509256, 6901028075831]),
    ("货号", [10023, 10024, 10023, 10025]),
]


MEASURES: list[tuple[str, list[object]]] = [
    ("Amount", [1200, 1500, 1200, 1800, 1500, 1200]),  # repeating round-ish amounts
    ("Sales", [3301, 3302, 3301, 3303]),  # clustered like codes, but the name is a measure
    ("Store sales", [3301, 3302, 3301, 3303, 3302, 3304]),
    ("门店销售额", [120, 150, 120, 180]),
    ("月销售额", [1, 2, 3, 1, 2, 3]),
    ("Qty", [1, 2, 3, 4, 5, 6, 7, 12]),
    ("数量", [5, 5, 5, 5]),
    ("Revenue", [12345678, 12345678, 23456789, 34567890]),  # 8 digits, repeating
    ("Col2", [12.5, 7.25, 12.5, 3.0]),  # decimals: a measure
    ("Column C", [12, 450, 3, 78, 1200, 12]),  # wide spread
    ("Units sold", [4001, 4002, 4001, 4003]),
    ("Order date count", [45292, 45293, 45292, 45294]),  # a count, not a date
    ("Population", [1234567, 1234567, 2345678, 3456789]),
    ("Warehouse stock", [120, 45, 120, 300, 45]),  # a code word, but not the last word
    ("Store inventory", [12, 15, 12, 18]),
    ("门店库存", [3, 5, 3, 8, 5]),
    ("Dept budget", [10, 20, 10, 30, 20, 40]),
    ("Months employed", [1, 2, 3, 4, 5, 6]),
    # counts named with an id word ("number", "no"): measures (unique counts included)
    ("Number of orders", [3, 7, 12, 5, 9, 4, 8, 11, 2, 6, 10, 1]),
    ("No. of returns", [1, 0, 2, 1, 3, 0]),
    ("# of visits", [120, 98, 143, 87, 110]),
    ("订单数", [12, 15, 9, 20]),
]


SERIALS: list[tuple[str, list[object]]] = [
    ("日期", [45292, 45293, 45294, 45295]),
    ("Date", [44927, 44958, 44986, 45017]),
    ("Order Date", [43831, 43832, 43833]),
    ("交易时间", [45292.5, 45292.75, 45293.25]),  # datetime serials
    ("Time", [45000.125, 45001.5, 45002.0]),
    ("Fecha", [40000, 40001, 40002]),
    ("Ship date", [36526, 36527, 36528, 36529]),
    ("交易日期", [20240101, 20240102, 20240101, 20240105]),  # yyyymmdd integers
]


CASES = [(n, v, False) for n, v in CODES + SERIALS] + [(n, v, True) for n, v in MEASURES]


@pytest.mark.parametrize(("name", "values", "summed"), CASES, ids=[c[0] for c in CASES])
def test_codes_and_date_serials_are_never_summed_and_measures_are(
    tmp_path: Path, name: str, values: list[object], summed: bool
) -> None:
    """Codes (23 kinds) and date serials (8) are identifiers; look-alike measures (22) are
    summed."""
    prof = _profile(tmp_path, name, values)
    assert (name in prof.measures) is summed
    assert (name in prof.identifiers) is not summed


def test_a_date_header_over_small_numbers_is_still_a_measure(tmp_path: Path) -> None:
    """Days or counts under a date-ish name, outside the serial range, are summed."""
    prof = _profile(tmp_path, "Days to date", [3, 5, 8, 13])
    assert "Days to date" in prof.measures
