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

#: What a sheet that is not a worksheet holds, for the note that says it was skipped.
_NOT_CELLS = {
    "chartsheet": "a chart sheet (a chart, no cells)",
    "dialogsheet": "a dialog sheet (an Excel 5 dialog, no data)",
    "macrosheet": "a macro sheet (Excel 4 macros, not data)",
}


def _read_xlsx(
    path: Path, limits: ReadLimits, skipped: list[Skipped]
) -> tuple[list[RawSheet], list[str], int, str, int]:
    """``(sheets, notes, total sheets, date system, sheets looked at)``.

    Sheets are looked at in order until ``limits.max_sheets`` of them held a value or
    ``limits.max_sheets_scanned`` were looked at: empty and hidden sheets cost little and do
    not count against ``max_sheets``. Chart, dialog and macro sheets are not read: each is
    noted and appended to ``skipped``.

    Raises:
        EmptyWorkbookError: Every sheet is a chart, dialog or macro sheet.
    """
    notes: list[str] = []
    raws: list[RawSheet] = []
    looked_at = 0
    with_values = 0
    with XlsxBook(path, limits) as book:
        names = book.sheet_names
        budget = _Budget(path, limits)
        for index in range(min(len(names), limits.max_sheets_scanned)):
            if with_values >= limits.max_sheets:
                break
            looked_at += 1
            kind = book.sheet_kind(index)
            if kind != "worksheet":
                notes.append(f"sheet '{names[index]}' is {_NOT_CELLS[kind]}; skipped")
                skipped.append(
                    Skipped(
                        what="sheet", ref=quote_sheetname(names[index]), reason=_NOT_CELLS[kind]
                    )
                )
                continue
            state = book.sheet_state(index)
            if state != "visible" and not limits.include_hidden:
                # not read at all: a hidden sheet is not on screen (listed in Workbook.skipped)
                raws.append(RawSheet(name=names[index], index=index, state=state))
                continue
            try:
                raw = book.read_sheet(index, budget)
            except SpreadsheetError:
                raise
            except Exception as exc:  # openpyxl on arbitrary XML
                # One sheet openpyxl cannot parse must not lose the others: record and go on.
                notes.append(
                    f"sheet '{names[index]}' could not be parsed ({type(exc).__name__}: {exc}); "
                    "skipped"
                )
                continue
            raws.append(raw)
            with_values += bool(raw.cells)
        if names and not raws and len(skipped) == looked_at:
            raise EmptyWorkbookError(
                path,
                f"it holds no worksheet, only {len(skipped):,} chart, dialog or macro sheet(s)",
                "Send the workbook that holds the data the charts are drawn from",
            )
        if names and not raws:
            raise CorruptFileError(
                path, "none of its sheets can be parsed: " + "; ".join(notes), "Re-save it in Excel"
            )
        return raws, notes, len(names), book.date_system, looked_at


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
        CorruptFileError: Damaged file, or no sheet openpyxl can parse (and any unexpected
            failure of the reader: no other exception reaches the caller).
        EmptyWorkbookError: No sheet holds a value (or every sheet is a chart sheet).
        SpreadsheetTooLargeError: Over a limit (file size, rows per sheet, cells).

    Example:
        >>> wb = read_workbook("../shared/data/spreadsheets/calamine_header-row.xlsx")
        >>> [(t.ref, t.header_rows) for t in wb.tables()]
        [('A9:D10', [9])]
    """
    if not isinstance(path, str | Path):
        raise UserError(f"read_workbook() takes a file path, got {type(path).__name__}")
    path = Path(path)
    try:
        return _read_workbook(path, limits or ReadLimits())
    except (UserError, MemoryError):
        raise
    except Exception as exc:  # a reader bug on an input no test had: never a bare traceback
        raise CorruptFileError(
            path,
            f"the reader failed on it ({type(exc).__name__}: {exc})",
            "Re-save it in Excel as .xlsx and send it again; if it still fails, report it "
            "with the file attached",
        ) from exc


def _read_workbook(path: Path, limits: ReadLimits) -> Workbook:
    """:func:`read_workbook` once its arguments are checked."""
    started = time.perf_counter()
    if path.is_file() and path.stat().st_size > limits.max_file_bytes:
        raise SpreadsheetTooLargeError(
            path,
            f"the file is {path.stat().st_size / 2**20:,.0f} MiB, over the "
            f"{limits.max_file_bytes / 2**20:,.0f} MiB limit",
            "Split it into smaller files",
        )
    fmt = sniff(path, limits.encoding)
    date_system = "1900"
    skipped: list[Skipped] = []
    if fmt is FileFormat.XLSX:
        raws, notes, total, date_system, looked_at = _read_xlsx(path, limits, skipped)
    elif fmt is FileFormat.XLS:
        raws, notes, total, date_system = read_xls(path, limits)
        looked_at = min(total, limits.max_sheets)
    else:
        raws, notes = read_csv(path, limits)
        total = looked_at = 1
    if total > looked_at:
        notes.append(
            f"{total - looked_at:,} sheets after the first {looked_at:,} were not read "
            f"(ReadLimits.max_sheets: {limits.max_sheets:,} sheets with values; "
            f"max_sheets_scanned: {limits.max_sheets_scanned:,} sheets in all)"
        )
    for raw in raws:
        if raw.state != "visible" and not limits.include_hidden:
            raw.cells.clear()  # the xls backend reads hidden sheets; they are not data here
    counter = [0]
    sheets = [build_sheet(raw, limits, counter) for raw in raws]
    for sheet in sheets:
        if sheet.state != "visible" and not limits.include_hidden:
            what = "very hidden" if sheet.state == "veryHidden" else "hidden"
            skipped.append(
                Skipped(
                    what="sheet",
                    ref=quote_sheetname(sheet.name),
                    reason=f"{what} sheet (not read; --include-hidden reads it)",
                )
            )
        for table in sheet.tables:
            skipped.extend(table.skipped)
    if not any(sheet.cells for sheet in sheets):
        hidden = sum(sheet.state != "visible" for sheet in sheets)
        if total > looked_at:  # not known to be empty: the rest was never looked at
            raise SpreadsheetTooLargeError(
                path,
                f"none of the first {looked_at:,} of its {total:,} sheets holds a visible value "
                f"and the other {total - looked_at:,} were not read",
                "Move the sheets with data to the front, or raise the limits "
                "(ReadLimits.max_sheets / max_sheets_scanned, ORCH_SPREADSHEET_MAX_SHEETS)",
            )
        if hidden and not limits.include_hidden:
            raise EmptyWorkbookError(
                path,
                f"no visible sheet holds a value ({hidden:,} of its {total:,} sheets are hidden "
                "and were not read)",
                "Unhide the sheets with data, or read hidden sheets too "
                "(--include-hidden, ReadLimits.include_hidden)",
            )
        raise EmptyWorkbookError(
            path,
            f"the workbook is empty: none of its {total:,} sheets holds a value",
            "Send a file with data in it",
        )
    return Workbook(
        path=str(path),
        format=fmt.value,
        date_system=date_system,
        sheets=sheets,
        sheets_total=total,
        warnings=notes,
        read_seconds=time.perf_counter() - started,
        skipped=skipped,
        include_hidden=limits.include_hidden,
    )
