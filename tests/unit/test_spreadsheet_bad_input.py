"""Bad spreadsheets get a clear error naming the file and the problem, never a crash.

Every fixture is generated in a temp folder (tests/fixtures/spreadsheets.py); the one real
encrypted workbook is ../shared/data/spreadsheets/calamine_pass_protected.xlsx (tafia/calamine
tests, MIT; see ../shared/data/SOURCES.md).
"""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from pathlib import Path

import openpyxl
import pytest
from case_tables import cases

from orchestrator.exceptions import UserError
from orchestrator.spreadsheet import (
    CorruptFileError,
    EmptyWorkbookError,
    PasswordProtectedError,
    ReadLimits,
    SpreadsheetError,
    SpreadsheetTooLargeError,
    UnsupportedFileError,
    read_workbook,
)
from tests.fixtures import spreadsheets as fx


def assert_names_file(exc: SpreadsheetError, path: Path, *words: str) -> None:
    message = str(exc)
    assert message.startswith(path.name + ":"), message
    for word in words:
        assert word in message, message
    assert exc.fix and exc.fix in message  # says how to fix it
    assert isinstance(exc, UserError)


def test_generated_encrypted_xlsx_is_reported_as_password_protected(tmp_path: Path) -> None:
    path = fx.encrypted_workbook(tmp_path / "locked.xlsx")
    with pytest.raises(PasswordProtectedError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, "password-protected")


def test_real_encrypted_workbook(data_dir: Path) -> None:
    path = data_dir / "spreadsheets" / "calamine_pass_protected.xlsx"
    with pytest.raises(PasswordProtectedError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, "password-protected")


def test_encrypted_workbook_renamed_to_xls_is_still_password_protected(tmp_path: Path) -> None:
    path = fx.encrypted_workbook(tmp_path / "locked.xls")
    with pytest.raises(PasswordProtectedError):
        read_workbook(path)


def test_truncated_xlsx_is_corrupt(tmp_path: Path) -> None:
    good = fx.sales_workbook(tmp_path / "good.xlsx").read_bytes()
    path = tmp_path / "cut.xlsx"
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(CorruptFileError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, "damaged")


def test_xlsx_with_a_broken_sheet_part_is_corrupt_not_a_crash(tmp_path: Path) -> None:
    src = fx.sales_workbook(tmp_path / "good.xlsx")
    path = tmp_path / "broken.xlsx"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(path, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data[: len(data) // 3]  # cut XML in the middle of the sheet data
            zout.writestr(item, data)
    with pytest.raises(CorruptFileError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, "Sales")


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("photo.xlsx", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, ["not a spreadsheet"]),
        ("notes.xlsx", b"just some notes\n", ["extension says .xlsx", "plain text"]),
        ("report.pdf", b"%PDF-1.7\n", ["extension .pdf"]),
        ("noext.bin", b"a,b\n1,2\n", ["extension .bin"]),
        ("empty.csv", b"", ["empty (0 bytes)"]),
        ("page.xls", b"<html><table><tr><td>1</td></tr></table></html>", ["HTML"]),
        ("binary.csv", b"\x00\x01\x02\x03" * 100, ["not a spreadsheet"]),
    ],
)
def test_files_that_are_not_spreadsheets(
    tmp_path: Path, name: str, content: bytes, words: list[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(UnsupportedFileError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, *words)


def test_wrong_extensions_name_the_real_format(tmp_path: Path) -> None:
    xlsx = fx.sales_workbook(tmp_path / "a.xlsx")
    as_csv = tmp_path / "a.csv"
    as_csv.write_bytes(xlsx.read_bytes())
    with pytest.raises(UnsupportedFileError) as info:
        read_workbook(as_csv)
    assert_names_file(info.value, as_csv, ".csv", "(.xlsx)", "Rename it to .xlsx")
    xls = fx.xls_workbook(tmp_path / "b.xls")
    as_xlsx = tmp_path / "b.xlsx"
    as_xlsx.write_bytes(xls.read_bytes())
    with pytest.raises(UnsupportedFileError) as info:
        read_workbook(as_xlsx)
    assert_names_file(info.value, as_xlsx, "97-2003", "Rename it to .xls")


def test_word_document_and_bare_zip(tmp_path: Path) -> None:
    docx = tmp_path / "letter.xlsx"
    with zipfile.ZipFile(docx, "w") as z:
        z.writestr("word/document.xml", "<w/>")
    with pytest.raises(UnsupportedFileError) as info:
        read_workbook(docx)
    assert_names_file(info.value, docx, "Word document")
    bare = tmp_path / "bundle.xlsx"
    with zipfile.ZipFile(bare, "w") as z:
        z.writestr("readme.txt", "hi")
    with pytest.raises(UnsupportedFileError):
        read_workbook(bare)


def test_empty_workbook(tmp_path: Path) -> None:
    path = fx.empty_workbook(tmp_path / "blank.xlsx", sheets=3)
    with pytest.raises(EmptyWorkbookError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, "empty", "3 sheets")


def test_missing_file_and_wrong_argument_type(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFileError) as info:
        read_workbook(tmp_path / "nope.xlsx")
    assert "no such file" in str(info.value)
    with pytest.raises(UserError):
        read_workbook(12345)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def million_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fx.million_row_workbook(tmp_path_factory.mktemp("big") / "million.xlsx")


def test_million_row_sheet_is_refused_with_bounded_memory(million_rows: Path) -> None:
    # the file declares 1,048,576 rows and its sheet XML is tens of MB of real rows
    with zipfile.ZipFile(million_rows) as z:
        assert z.getinfo("xl/worksheets/sheet1.xml").file_size > 40 * 2**20
    assert openpyxl.load_workbook(million_rows, read_only=True).active.max_row == 1_048_576
    limits = ReadLimits(max_rows=20_000)
    tracemalloc.start()
    try:
        with pytest.raises(SpreadsheetTooLargeError) as info:
            read_workbook(million_rows, limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_names_file(info.value, million_rows, "more than 20,000 rows", "'Sheet'")
    # streaming: the peak holds about max_rows cells, nowhere near a million
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_cell_limit_over_the_whole_workbook(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    for _ in range(50):
        wb.active.append(list(range(20)))
    wb.save(tmp_path / "cells.xlsx")
    with pytest.raises(SpreadsheetTooLargeError) as info:
        read_workbook(tmp_path / "cells.xlsx", ReadLimits(max_cells=500))
    assert "500 non-empty cells" in str(info.value)


def test_file_size_limit(tmp_path: Path) -> None:
    path = fx.sales_workbook(tmp_path / "s.xlsx")
    with pytest.raises(SpreadsheetTooLargeError) as info:
        read_workbook(path, ReadLimits(max_file_bytes=1024))
    assert "MiB" in str(info.value)


def test_error_values_are_reported_per_cell_not_fatal(tmp_path: Path) -> None:
    wb = read_workbook(fx.formula_workbook(tmp_path / "errors.xlsx"))
    details = sorted(i.detail for i in wb.tables()[0].issues if i.kind == "error")
    assert details == ["#DIV/0!", "#REF!"]


def test_one_unparseable_sheet_does_not_lose_the_others(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    wb.active.title = "Good"
    wb.active.append(["a", "b"])
    wb.active.append([1, 2])
    wb.create_sheet("Bad").append(["x", "y"])
    buf = io.BytesIO()
    wb.save(buf)
    path = tmp_path / "half.xlsx"
    with zipfile.ZipFile(buf) as zin, zipfile.ZipFile(path, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet2.xml":
                data = (  # declares its size, then breaks off inside the sheet data
                    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
                    b'main"><dimension ref="A1:B1"/><sheetData><row r="1"><c r="A1" t="s">'
                    b"<v>99</v></c>"
                )
            zout.writestr(item, data)
    result = read_workbook(path)
    assert [s.name for s in result.sheets] == ["Good"]
    assert any("'Bad' could not be parsed" in w for w in result.warnings)


# --- sheet limits are stated honestly (issue 18 leftover) ---------------------------------


def _sheets_workbook(
    path: Path, sheets: int, data_on: set[int], hidden: frozenset[int] = frozenset()
) -> Path:
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for index in range(sheets):
        ws = wb.create_sheet(f"S{index}")
        if index in data_on:
            ws.append(["item", "qty"])
            ws.append(["apple", index])
        if index in hidden:
            ws.sheet_state = "hidden"
    wb.save(path)
    return path


def test_empty_sheets_do_not_use_up_the_sheet_limit(tmp_path: Path) -> None:
    # data only on the 7th sheet, past max_sheets=3: empty sheets are looked at, not counted
    path = _sheets_workbook(tmp_path / "late.xlsx", 8, data_on={6})
    wb = read_workbook(path, ReadLimits(max_sheets=3))
    assert [s.name for s in wb.sheets if s.cells] == ["S6"]
    assert not wb.warnings  # every sheet was looked at


def test_sheets_with_values_past_the_limit_are_counted_in_a_warning(tmp_path: Path) -> None:
    path = _sheets_workbook(tmp_path / "many.xlsx", 6, data_on={0, 1, 2, 3, 4, 5})
    wb = read_workbook(path, ReadLimits(max_sheets=2))
    assert [s.name for s in wb.sheets] == ["S0", "S1"] and wb.sheets_total == 6
    assert any("4 sheets after the first 2 were not read" in w for w in wb.warnings), wb.warnings


def test_a_workbook_not_looked_at_to_the_end_is_not_called_empty(tmp_path: Path) -> None:
    path = _sheets_workbook(tmp_path / "far.xlsx", 12, data_on={11})
    with pytest.raises(SpreadsheetTooLargeError) as info:
        read_workbook(path, ReadLimits(max_sheets=2, max_sheets_scanned=5))
    message = str(info.value)
    assert "empty" not in message, message
    assert_names_file(info.value, path, "first 5 of its 12 sheets", "other 7 were not read")
    # looked at in full, the same file is read
    assert read_workbook(path, ReadLimits(max_sheets=2)).sheets[11].cells


def test_only_hidden_sheets_with_values_says_hidden_not_empty(tmp_path: Path) -> None:
    path = _sheets_workbook(tmp_path / "hid.xlsx", 3, data_on={1}, hidden={1})
    with pytest.raises(EmptyWorkbookError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, "hidden", "include-hidden")
    assert "the workbook is empty" not in str(info.value)
    assert read_workbook(path, ReadLimits(include_hidden=True)).sheets[1].cells


def test_inspect_says_hidden_and_marks_every_cut_list(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from orchestrator.cli import app

    path = tmp_path / "wide.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Wide"
    ws.append([f"col{c}" for c in range(100)])
    ws.append(list(range(100)))
    ws.append(list(range(100)))
    for index in range(14):
        wb.create_sheet(f"Blank{index}")
    notes = wb.create_sheet("Notes")
    for r in range(1, 30, 3):
        notes.cell(r, 1, f"note {r}")
    old = wb.create_sheet("Old draft")
    old.append(["a", "b"])
    old.append([1, 2])
    old.sheet_state = "hidden"
    wb.save(path)
    result = CliRunner().invoke(app, ["report", str(path), "--inspect"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    out = result.output
    old_row = next(line for line in out.splitlines() if "Old draft" in line)
    assert "hidden, not read" in old_row and "empty" not in old_row
    assert "+60 more (100 columns)" in out  # 40 listed, the other 60 counted
    assert "+4 more empty sheets" in out  # 10 listed, 4 counted
    assert out.count("Blank") == 10
    assert "more text blocks" in out


@pytest.mark.parametrize(
    ("name", "text", "encoding"), cases("spreadsheet_bad_input.toml", "legacy_code_page")
)
def test_a_csv_in_a_legacy_code_page_is_named_as_such(
    tmp_path: Path, name: str, text: str, encoding: str
) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    with pytest.raises(UnsupportedFileError) as info:
        read_workbook(path)
    assert_names_file(info.value, path, "neither UTF-8, UTF-16, GB18030", "CSV UTF-8")
    assert "not a spreadsheet" not in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "产品,数量,城市\n苹果,12,北京\n",
        "代码,名称\nA股,iPhone手机\n600519,贵州茅台\n",
        "名字,年龄\n张三,30\n",
    ],
)
def test_a_gb18030_csv_still_reads_as_chinese(tmp_path: Path, text: str) -> None:
    path = tmp_path / "zh.csv"
    path.write_bytes(text.encode("gb18030"))
    table = read_workbook(path).sheets[0].tables[0]
    assert table.columns[0].name == text.split(",")[0].split("\n")[0]
