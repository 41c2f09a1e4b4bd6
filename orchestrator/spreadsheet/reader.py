"""Read a spreadsheet file into a typed :class:`~orchestrator.spreadsheet.model.Workbook`.

One entry point, :func:`read_workbook`: it checks what the file really is
(:mod:`~orchestrator.spreadsheet.sniff`), streams it with the matching backend (openpyxl
read-only for .xlsx/.xlsm, xlrd for .xls, the csv module for .csv/.tsv) under
:class:`~orchestrator.spreadsheet.raw.ReadLimits`, and finds tables and headers
(:mod:`~orchestrator.spreadsheet.detect`). It either returns the whole result or raises a
:class:`~orchestrator.spreadsheet.errors.SpreadsheetError` naming the file; it never returns
half a sheet silently (what it caps is listed in ``warnings``).
"""

from __future__ import annotations

import time
from pathlib import Path

from openpyxl.utils import quote_sheetname

from orchestrator.exceptions import UserError
from orchestrator.spreadsheet.csvfile import read_csv
from orchestrator.spreadsheet.detect import build_sheet
from orchestrator.spreadsheet.errors import (
    CorruptFileError,
    EmptyWorkbookError,
    SpreadsheetError,
    SpreadsheetTooLargeError,
)
from orchestrator.spreadsheet.model import Skipped, Workbook
from orchestrator.spreadsheet.raw import RawSheet, ReadLimits
from orchestrator.spreadsheet.sniff import FileFormat, sniff
from orchestrator.spreadsheet.xls import read_xls
from orchestrator.spreadsheet.xlsx import XlsxBook, _Budget


def _read_xlsx(path: Path, limits: ReadLimits) -> tuple[list[RawSheet], list[str], int, str]:
    notes: list[str] = []
    raws: list[RawSheet] = []
    with XlsxBook(path, limits) as book:
        names = book.sheet_names
        budget = _Budget(path, limits)
        for index in range(min(len(names), limits.max_sheets)):
            state = book.sheet_state(index)
            if state != "visible" and not limits.include_hidden:
                # not read at all: a hidden sheet is not on screen (listed in Workbook.skipped)
                raws.append(RawSheet(name=names[index], index=index, state=state))
                continue
            try:
                raws.append(book.read_sheet(index, budget))
            except SpreadsheetError:
                raise
            except Exception as exc:  # openpyxl on arbitrary XML
                # One sheet openpyxl cannot parse must not lose the others: record and go on.
                notes.append(
                    f"sheet '{names[index]}' could not be parsed ({type(exc).__name__}: {exc}); "
                    "skipped"
                )
        if names and not raws:
            raise CorruptFileError(
                path, "none of its sheets can be parsed: " + "; ".join(notes), "Re-save it in Excel"
            )
        return raws, notes, len(names), book.date_system


def read_workbook(path: str | Path, limits: ReadLimits | None = None) -> Workbook:
    """Read every sheet of ``path`` into sheets → tables → typed columns.

    Args:
        path: An .xlsx/.xlsm/.xls/.csv/.tsv file.
        limits: Reading bounds; :class:`ReadLimits` defaults when None.

    Returns:
        The :class:`Workbook`, with ``read_seconds`` set.

    Raises:
        UserError: ``path`` is not a str or Path.
        UnsupportedFileError: Not a spreadsheet, wrong extension, unsupported format.
        PasswordProtectedError: Encrypted workbook.
        CorruptFileError: Damaged file, or no sheet openpyxl can parse.
        EmptyWorkbookError: No sheet holds a value.
        SpreadsheetTooLargeError: Over a limit (file size, rows per sheet, cells).

    Example:
        >>> wb = read_workbook("../shared/data/spreadsheets/calamine_header-row.xlsx")
        >>> [(t.ref, t.header_rows) for t in wb.tables()]
        [('A9:D10', [9])]
    """
    if not isinstance(path, str | Path):
        raise UserError(f"read_workbook() takes a file path, got {type(path).__name__}")
    started = time.perf_counter()
    path = Path(path)
    limits = limits or ReadLimits()
    if path.is_file() and path.stat().st_size > limits.max_file_bytes:
        raise SpreadsheetTooLargeError(
            path,
            f"the file is {path.stat().st_size / 2**20:,.0f} MiB, over the "
            f"{limits.max_file_bytes / 2**20:,.0f} MiB limit",
            "Split it into smaller files",
        )
    fmt = sniff(path)
    date_system = "1900"
    if fmt is FileFormat.XLSX:
        raws, notes, total, date_system = _read_xlsx(path, limits)
    elif fmt is FileFormat.XLS:
        raws, notes, total, date_system = read_xls(path, limits)
    else:
        raws, notes = read_csv(path, limits)
        total = 1
    if total > limits.max_sheets:
        notes.append(
            f"{total - limits.max_sheets:,} sheets after the first {limits.max_sheets} were "
            "not read (ReadLimits.max_sheets)"
        )
    for raw in raws:
        if raw.state != "visible" and not limits.include_hidden:
            raw.cells.clear()  # the xls backend reads hidden sheets; they are not data here
    counter = [0]
    sheets = [build_sheet(raw, limits, counter) for raw in raws]
    skipped: list[Skipped] = []
    for sheet in sheets:
        if sheet.state != "visible" and not limits.include_hidden:
            what = "very hidden" if sheet.state == "veryHidden" else "hidden"
            skipped.append(
                Skipped(
                    what="sheet",
                    ref=quote_sheetname(sheet.name),
                    reason=f"{what} sheet (not read; pass include_hidden to read it)",
                )
            )
        for table in sheet.tables:
            skipped.extend(table.skipped)
    if not any(sheet.cells for sheet in sheets):
        scope = (
            f"none of its {total:,} sheets"
            if total <= limits.max_sheets
            else f"none of the first {limits.max_sheets} of its {total:,} sheets"
        )
        raise EmptyWorkbookError(
            path, f"the workbook is empty: {scope} holds a value", "Send a file with data in it"
        )
    return Workbook(
        path=str(path),
        format=fmt.value,
        date_system=date_system,  # type: ignore[arg-type]
        sheets=sheets,
        sheets_total=total,
        warnings=notes,
        read_seconds=time.perf_counter() - started,
        skipped=skipped,
        include_hidden=limits.include_hidden,
    )
