"""Issue 46 item 12: a request cell that Excel stored as a formula.

A user who types ``=please refund order 5512`` (or ``+``/``-``/``@`` first) gets a formula
cell with no cached value, or with ``#NAME?`` cached once Excel calculated it. The batch
reads what the user typed when the formula is prose, and fails the row naming the cell and
why when it is a real formula without a usable value. Workbooks are written here.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook

from orchestrator.batch import BatchOptions, ColumnMapping, open_input, run_batch_job
from orchestrator.batch.inputs import FormulaCell
from orchestrator.testing import ScriptedModel
from tests.unit.test_batch import ScriptedFactory, read_results

PROSE = [
    ("=please refund order 5512", "please refund order 5512"),
    ("=+where is my parcel 8841?", "+where is my parcel 8841?"),
    ("=-cancel my subscription now", "-cancel my subscription now"),
    ("=请退款 订单5512", "请退款 订单5512"),
    ("=我的包裹在哪里", "我的包裹在哪里"),
    ('=refund "twice" charged order 77', 'refund "twice" charged order 77'),
]
REAL = ["=SUM(A1:A3)", "=A2&B2", "=refund", '=CONCAT("please ", "refund")', "=1+2"]


def _cache(sheet_xml: bytes, kind: str, value: str) -> bytes:
    """Give every formula cell of ``sheet_xml`` the cached ``value`` of type ``kind``."""
    text = re.sub(
        r'<c r="([A-Z]+\d+)"[^>]*>\s*<f>(.*?)</f>\s*(?:<v>\s*</v>|<v\s*/>)?\s*</c>',
        lambda m: f'<c r="{m[1]}" t="{kind}"><f>{m[2]}</f><v>{value}</v></c>',
        sheet_xml.decode(),
    )
    return text.encode()


def _book(path: Path, texts: list[str], cached_error: str | None = None) -> Path:
    wb = Workbook()
    ws = wb.active
    ws.append(["id", "body"])
    for i, text in enumerate(texts):
        ws.append([f"r{i}", text])  # openpyxl stores a string that starts with "=" as a formula
    wb.save(path)
    if cached_error is not None:  # as Excel saves it after calculating: the error is cached
        with zipfile.ZipFile(path) as src:
            entries = [(i.filename, src.read(i.filename)) for i in src.infolist()]
        with zipfile.ZipFile(path, "w") as dst:
            for name, body in entries:
                if name == "xl/worksheets/sheet1.xml":
                    body = _cache(body, "e", cached_error)
                dst.writestr(name, body)
    return path


@pytest.mark.parametrize("formula,typed", PROSE)
def test_prose_stored_as_a_formula_is_what_the_user_typed(formula: str, typed: str) -> None:
    assert FormulaCell(formula).typed_text == typed


@pytest.mark.parametrize("formula", REAL)
def test_a_real_formula_is_not_read_as_text(formula: str) -> None:
    assert FormulaCell(formula).typed_text is None


@pytest.mark.parametrize("cached", [None, "#NAME?"])
def test_rows_read_the_typed_text_or_name_the_cell(tmp_path: Path, cached: str | None) -> None:
    texts = [formula for formula, _ in PROSE] + REAL + ["plain text request"]
    path = _book(tmp_path / "in.xlsx", texts, cached)
    rows = list(open_input(path, ColumnMapping(text="body", id="id")).rows())
    assert len(rows) == len(texts)  # no formula row is dropped as blank
    for row, (_, typed) in zip(rows, PROSE, strict=False):
        assert (row.text, row.problem) == (typed, None)
    for k, row in enumerate(rows[len(PROSE) : len(PROSE) + len(REAL)]):
        line = len(PROSE) + k + 2
        assert row.text is None and "empty text" not in (row.problem or "")
        assert row.problem is not None and row.problem.startswith(f"cell B{line} holds a formula")
        assert REAL[k][:20] in row.problem
        if cached:
            assert f"the error {cached}" in row.problem
    assert rows[-1].text == "plain text request" and rows[-1].problem is None


def test_a_formula_with_a_cached_value_keeps_that_value(tmp_path: Path) -> None:
    path = _book(tmp_path / "in.xlsx", ['="please "&"refund order 5512"'])
    with zipfile.ZipFile(path) as src:
        entries = [(i.filename, src.read(i.filename)) for i in src.infolist()]
    with zipfile.ZipFile(path, "w") as dst:
        for name, body in entries:
            if name == "xl/worksheets/sheet1.xml":
                body = _cache(body, "str", "please refund order 5512")
            dst.writestr(name, body)
    (row,) = open_input(path, ColumnMapping(text="body", id="id")).rows()
    assert (row.text, row.problem) == ("please refund order 5512", None)


async def test_the_batch_sends_the_typed_request_and_fails_the_real_formula(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'telemetry.db'}"
    path = _book(tmp_path / "in.xlsx", ["=please refund order 5512", "=SUM(A1:A3)"])
    model = ScriptedModel()
    factory = ScriptedFactory(db, {"u1": model})
    source = open_input(path, ColumnMapping(text="body", id="id"))
    out = tmp_path / "results.xlsx"
    options = BatchOptions(concurrency=1, backoff_initial_s=0, backoff_max_s=0)
    await run_batch_job(source, factory, ["u1"], options, out=out)
    rows = {r["id"]: r for r in read_results(out)}
    assert rows["r0"]["status"] != "failed"
    assert any("please refund order 5512" in m.content for call in model.calls for m in call)
    assert rows["r1"]["status"] == "failed"
    assert str(rows["r1"]["error"]).startswith("cell B3 holds a formula (=SUM(A1:A3))")
