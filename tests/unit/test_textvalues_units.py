"""Amounts written with a size unit (tester6 finding 3): 万, 万元, 亿, 千, ¥1.2万, $1.2M, 300K,
2.5bn are read exactly (Decimal scaling, no float error), the column's note says units were
applied, and lengths such as ``1.5m`` (metres) are never read as millions. End to end, a
workbook of such text cells gets its exact total."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest

from orchestrator.spreadsheet import read_workbook
from orchestrator.spreadsheet.textvalues import convert_column, parse_number
from workflows.excel_report.analysis import analyse

UNITS: list[tuple[str, int | float, str | None]] = [
    ("1.5亿", 150_000_000, None),
    ("0.5亿", 50_000_000, None),
    ("12万元", 120_000, "元"),
    ("¥1.2万", 12_000, "¥"),
    ("3万", 30_000, None),
    ("1.23456万", 12_345.6, None),
    ("5千", 5_000, None),
    ("2百万", 2_000_000, None),
    ("1.1千万", 11_000_000, None),
    ("$1.2M", 1_200_000, "$"),
    ("$300K", 300_000, "$"),
    ("$45k", 45_000, "$"),
    ("300K", 300_000, None),
    ("2.5bn", 2_500_000_000, None),
    ("USD 3.3B", 3_300_000_000, "USD"),
    ("€0.1M", 100_000, "€"),
    ("1.2 million", 1_200_000, None),
    ("-2.5万", -25_000, None),
    ("(1.5M)", -1_500_000, None),
    ("0.07亿", 7_000_000, None),
    ("1,200万", 12_000_000, None),
    ("4.2mn", 4_200_000, None),
]


@pytest.mark.parametrize(("text", "value", "unit"), UNITS, ids=[u[0] for u in UNITS])
def test_size_units_scale_exactly(text: str, value: float, unit: str | None) -> None:
    got = parse_number(text)
    assert got is not None, text
    assert got.value == value and type(got.value) is type(value)
    assert got.unit == unit
    assert got.scale is not None


@pytest.mark.parametrize("text", ["1.5m", "20 m", "3 kg", "12 mm", "5%万", "1.2 MXN"])
def test_lengths_weights_and_nonsense_are_not_scaled(text: str) -> None:
    got = parse_number(text)
    assert got is None or (got.scale is None and got.value < 1000)


def test_plain_numbers_keep_no_scale() -> None:
    got = parse_number("$1,200.50")
    assert got is not None and got.scale is None and got.value == 1200.5


def test_the_column_note_says_units_were_applied() -> None:
    conv = convert_column(["1.5亿", "2亿", "0.5亿", "1亿"])
    assert conv.kind == "number"
    assert conv.values == [150_000_000, 200_000_000, 50_000_000, 100_000_000]
    assert conv.note is not None and "size unit" in conv.note and "亿" in conv.note


@pytest.mark.parametrize(
    ("cells", "total"),
    [
        (["12万元", "3万元", "5万元", "10万元"], 300_000),
        (["¥1.2万", "¥3万", "¥5,000", "¥800"], 47_800),
        (["$1.2M", "$300K", "$45k", "$1M"], 2_545_000),
        (["1.5亿", "2亿", "0.5亿", "1亿"], 500_000_000),
    ],
)
def test_a_workbook_of_unit_amounts_gets_its_exact_total(
    tmp_path: Path, cells: list[str], total: int
) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["Region", "金额"])
    for region, cell in zip(["East", "West", "North", "South"], cells, strict=True):
        ws.append([region, cell])
    path = tmp_path / "units.xlsx"
    wb.save(path)
    analysis = analyse(read_workbook(path))
    values = [f.value for f in analysis.figures if f.column == "金额"]
    assert total in values, values
