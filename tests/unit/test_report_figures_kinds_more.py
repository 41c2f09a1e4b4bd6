"""More workbooks of the report's fault kinds: percentages written as points, formula results a
writer left as placeholders or blanks, and total rows named the way people and Excel name them.

Each workbook is generated here (values vary by parameter) and each expected value is computed
here from those values, not copied from the code.
"""

from __future__ import annotations

import re
import statistics
import zipfile
from pathlib import Path

import pytest

from orchestrator.spreadsheet import read_workbook
from tests.unit.test_report_figures_kinds import _figs, _save
from workflows.excel_report.offline import figures_only_report


def _rewrite(path: Path, edit: dict[str, object]) -> Path:
    """Rewrite members of the saved .xlsx (a callable of the member's text each), as a writer
    other than openpyxl would have written them."""
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename in edit:
                data = edit[item.filename](data.decode()).encode()  # type: ignore[operator]
            dst.writestr(item, data)
    tmp.replace(path)
    return path


# ------------------------------------------------------------------ percentages as points


@pytest.mark.parametrize(
    ("fmt", "values"),
    [
        ('0.00"%"', [12.5, 14.0, 9.5, 16.0]),
        ("0.0\\%", [3.2, -1.5, 7.75]),
        ('#,##0" %"', [40, 55, 61, 38, 70]),
    ],
)
def test_a_percent_sign_written_as_text_means_points(
    tmp_path: Path, fmt: str, values: list[float]
) -> None:
    rows = [["Store", "Uplift"], *[[f"s{i}", v] for i, v in enumerate(values)]]
    figs = _figs(_save(rows, tmp_path / "p.xlsx", {2: fmt}))
    assert not any(k.startswith("total `Uplift`") for k in figs)
    assert figs["mean `Uplift`"] == pytest.approx(statistics.mean(values) / 100)


@pytest.mark.parametrize(
    ("header", "values", "scale"),
    [
        ("Growth %", [12.5, 14.0, 9.5, 16.0], 0.01),
        ("Discount (%)", [5, 10, 0, 2.5], 0.01),
        ("毛利率（%）", [31.0, 28.5, 35.25], 0.01),
        ("Share %", [0.25, 0.5, 0.125], 1.0),  # fractions under a % header stay fractions
    ],
)
def test_a_percent_header_over_plain_numbers(
    tmp_path: Path, header: str, values: list[float], scale: float
) -> None:
    rows = [["Item", header], *[[f"i{i}", v] for i, v in enumerate(values)]]
    figs = _figs(_save(rows, tmp_path / "h.xlsx"))
    assert not any(k.startswith(f"total `{header}`") for k in figs)
    assert figs[f"mean `{header}`"] == pytest.approx(statistics.mean(values) * scale)


def test_percent_formats_count_together_against_general(tmp_path: Path) -> None:
    values = [0.05, 0.1, 0.0, 0.025, 0.2, 0.15, 0.075, 0.3]
    rows = [["Item", "Discount"], *[[f"i{i}", v] for i, v in enumerate(values)]]
    path = _save(rows, tmp_path / "m.xlsx")
    from openpyxl import load_workbook

    wb = load_workbook(path)
    for r, fmt in zip(range(2, 10), ["0%", "0%", "0.0%", "0.0%", "0.00%"], strict=False):
        wb.active.cell(r, 2).number_format = fmt  # 5 cells in three % formats, 3 General
    wb.save(path)
    figs = _figs(path)
    assert "total `Discount`" not in figs
    assert figs["mean `Discount`"] == pytest.approx(statistics.mean(values))


# ------------------------------------------------------------------ formula results


def _cache_every_formula(text: str, value: str) -> str:
    return re.sub(r"(<f>[^<]*</f>)(<v>[^<]*</v>|<v ?/>)?", rf"\1<v>{value}</v>", text)


def _manual_calc(text: str) -> str:
    text = re.sub(r"<calcPr[^>]*/>", "", text)
    return text.replace(
        "</workbook>", '<calcPr calcId="124519" calcMode="manual" calcOnSave="0"/></workbook>'
    )


@pytest.mark.parametrize("n", [2, 5])
def test_manual_calc_with_every_formula_at_zero_is_a_placeholder(tmp_path: Path, n: int) -> None:
    rows = [["Qty", "Price", "Line"]] + [
        [q + 1, 2.5 * q + 1, f"=A{q + 2}*B{q + 2}"] for q in range(n)
    ]
    path = _rewrite(
        _save(rows, tmp_path / "z.xlsx"),
        {
            "xl/worksheets/sheet1.xml": lambda t: _cache_every_formula(t, "0"),
            "xl/workbook.xml": _manual_calc,
        },
    )
    wb = read_workbook(path)
    assert {i.kind for i in wb.tables()[0].issues} == {"placeholder_value"}
    figs = _figs(path)
    assert not any("`Line`" in k for k in figs)
    assert figs["total `Qty`"] == sum(q + 1 for q in range(n))


def test_manual_calc_with_real_cached_results_is_trusted(tmp_path: Path) -> None:
    rows = [["Qty", "Price", "Line"], [2, 3.0, "=A2*B2"], [4, 0.5, "=A3*B3"]]

    def cached(text: str) -> str:  # Excel saved it: the real results are in <v>
        text = text.replace("<f>A2*B2</f><v></v>", "<f>A2*B2</f><v>6</v>")
        text = _cache_every_formula(text, "X")
        return text.replace("<f>A2*B2</f><v>X</v>", "<f>A2*B2</f><v>6</v>").replace(
            "<f>A3*B3</f><v>X</v>", "<f>A3*B3</f><v>2</v>"
        )

    path = _rewrite(
        _save(rows, tmp_path / "c.xlsx"),
        {"xl/worksheets/sheet1.xml": cached, "xl/workbook.xml": _manual_calc},
    )
    assert _figs(path)["total `Line`"] == pytest.approx(8)


@pytest.mark.parametrize(("filled", "blank"), [(4, 25), (2, 3)])
def test_a_template_formula_that_results_in_an_empty_string_is_empty(
    tmp_path: Path, filled: int, blank: int
) -> None:
    qty = [q + 1 for q in range(filled)]
    price = [1.5 * q + 2 for q in range(filled)]
    rows: list[list[object]] = [["Item", "Qty", "Price", "Line total"]]
    rows += [
        [f"it{i}", q, p, f'=IF(B{i + 2}="","",B{i + 2}*C{i + 2})']
        for i, (q, p) in enumerate(zip(qty, price, strict=True))
    ]
    rows += [
        [None, None, None, f'=IF(B{r}="","",B{r}*C{r})']
        for r in range(filled + 2, filled + 2 + blank)
    ]
    results = iter([q * p for q, p in zip(qty, price, strict=True)])

    def excel_saved(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            row = int(m.group(1))
            if row < filled + 2:
                return f'<c r="D{row}"{m.group(2)}><f>{m.group(3)}</f><v>{next(results)}</v></c>'
            return f'<c r="D{row}" t="str"><f>{m.group(3)}</f><v></v></c>'

        return re.sub(r'<c r="D(\d+)"([^>]*)><f>([^<]*)</f>(?:<v>[^<]*</v>|<v ?/>)?</c>', one, text)

    path = _rewrite(
        _save(rows, tmp_path / "t.xlsx"),
        {
            "xl/worksheets/sheet1.xml": excel_saved,
            "xl/workbook.xml": lambda t: re.sub(r"<calcPr[^>]*/>", '<calcPr calcId="191029"/>', t),
        },
    )
    table = read_workbook(path).tables()[0]
    assert len(table.rows) == filled
    figs = _figs(path)
    assert figs["total `Line total`"] == pytest.approx(
        sum(q * p for q, p in zip(qty, price, strict=True))
    )


# ------------------------------------------------------------------ total rows


def test_group_total_rows_are_totals_and_a_name_with_total_is_data(tmp_path: Path) -> None:
    east, west = [120, 80, 40], [200, 50]
    rows: list[list[object]] = [["Store", "Sales"]]
    rows += [[f"East {i}", v] for i, v in enumerate(east)] + [["East Total", sum(east)]]
    rows += [["Total Wine & More", west[0]], ["Costco", west[1]], ["West Total", sum(west)]]
    rows += [["Grand Total", sum(east) + sum(west)]]
    table = read_workbook(_save(rows, tmp_path / "g.xlsx")).tables()[0]
    assert len(table.rows) == len(east) + len(west)
    assert _figs(_save(rows, tmp_path / "g2.xlsx"))["total `Sales`"] == sum(east) + sum(west)


@pytest.mark.parametrize("label", ["Overall total", "Total:", "Region subtotal"])
def test_a_bottom_total_row_under_other_labels(tmp_path: Path, label: str) -> None:
    values = [7, 5, 6, 11]
    rows = [
        ["Region", "Sales"],
        *[[f"r{i}", v] for i, v in enumerate(values)],
        [label, sum(values)],
    ]
    assert _figs(_save(rows, tmp_path / "o.xlsx"))["total `Sales`"] == sum(values)


def test_a_category_called_average_is_data(tmp_path: Path) -> None:
    counts = {"Good": 10, "Average": 5, "Poor": 2, "Excellent": 4}
    rows = [["Quality", "Count"], *[[k, v] for k, v in counts.items()]]
    assert _figs(_save(rows, tmp_path / "a.xlsx"))["total `Count`"] == sum(counts.values())


def test_an_unlabelled_sum_row_is_a_total(tmp_path: Path) -> None:
    amounts = [120, 80, 200, 50, 15]
    n = len(amounts)
    rows: list[list[object]] = [["Item", "Amount"], *[[f"x{i}", a] for i, a in enumerate(amounts)]]
    rows.append([None, f"=SUM(B2:B{n + 1})"])
    path = _rewrite(
        _save(rows, tmp_path / "u.xlsx"),
        {
            "xl/worksheets/sheet1.xml": lambda t: _cache_every_formula(t, str(sum(amounts))),
            "xl/workbook.xml": lambda t: re.sub(r"<calcPr[^>]*/>", '<calcPr calcId="191029"/>', t),
        },
    )
    assert _figs(path)["total `Amount`"] == sum(amounts)


# ------------------------------------------------------------------ escaping


def test_a_sheet_name_in_the_text_numbers_note_is_escaped(tmp_path: Path) -> None:
    rows = [["Customer", "Amount"], ["a", "1,200.00"], ["b", "35.50"], ["c", "7.25"]]
    path = _save(rows, tmp_path / "e.xlsx", title="<img src=x onerror=1>")
    _, files = figures_only_report(read_workbook(path), tmp_path / "out")
    text = files.markdown.read_text(encoding="utf-8")
    assert "text read as numbers" in text  # the note that names the range is there
    outside_code = re.sub(r"(`+).+?\1", "", text)  # a code span shows its text literally
    assert not re.search(r"(?<!\\)<img", outside_code)  # escaped (\<img) everywhere else
