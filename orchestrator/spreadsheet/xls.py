"""The legacy .xls (BIFF, Excel 97-2003) backend, on ``xlrd``.

``xlrd`` 2.x reads only .xls, is maintained, and exposes merged ranges and number formats when
opened with ``formatting_info=True``. BIFF stores a formula's cached result but xlrd does not
decode formula text, so .xls formula cells arrive as their values only.
"""

from __future__ import annotations

from datetime import datetime, time
from pathlib import Path
from typing import Any

import xlrd
from xlrd.biffh import XLRDError

from orchestrator.spreadsheet.errors import (
    CorruptFileError,
    PasswordProtectedError,
    SpreadsheetTooLargeError,
)
from orchestrator.spreadsheet.raw import CellKind, RawCell, RawSheet, ReadLimits, kind_of


def _open(path: Path) -> xlrd.Book:
    try:
        return xlrd.open_workbook(str(path), formatting_info=True, on_demand=True)
    except XLRDError as exc:
        if "encrypt" in str(exc).lower():
            raise PasswordProtectedError(path) from exc
        raise CorruptFileError(
            path, f"xlrd cannot read the .xls workbook ({exc})", "Re-save it in Excel as .xlsx"
        ) from exc
    except (AssertionError, IndexError, KeyError, ValueError, OSError) as exc:
        raise CorruptFileError(
            path,
            f"the .xls workbook is damaged ({type(exc).__name__}: {exc})",
            "Re-save it in Excel as .xlsx, or send the original file again",
        ) from exc


def read_xls(path: Path, limits: ReadLimits) -> tuple[list[RawSheet], list[str], int, str]:
    """Read an .xls file.

    Returns:
        ``(sheets, warnings, total sheet count, date system "1900"|"1904")``.

    Raises:
        PasswordProtectedError: The workbook is encrypted (BIFF FILEPASS).
        CorruptFileError: xlrd cannot parse it.
        SpreadsheetTooLargeError: Over a row or cell limit.
    """
    book = _open(path)
    notes: list[str] = []
    sheets: list[RawSheet] = []
    cells_read = 0
    try:
        total = book.nsheets
        formats = {key: fmt.format_str for key, fmt in book.format_map.items()}
        for index in range(min(total, limits.max_sheets)):
            try:
                sh = book.sheet_by_index(index)
            except (XLRDError, AssertionError, IndexError, KeyError, ValueError) as exc:
                notes.append(f"sheet {index + 1} could not be parsed ({exc}); skipped")
                continue
            sheet = RawSheet(
                name=sh.name, index=index, state="hidden" if sh.visibility else "visible"
            )
            data_rows = 0
            for r in range(sh.nrows):
                kept = 0
                for c in range(min(sh.ncols, limits.max_cols)):
                    ctype = sh.cell_type(r, c)
                    if ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                        continue
                    # Any: a float, str or int by cell type (types-xlrd says str)
                    value: Any = sh.cell_value(r, c)
                    xf = book.xf_list[sh.cell_xf_index(r, c)]
                    fmt = formats.get(xf.format_key, "General")
                    if ctype == xlrd.XL_CELL_ERROR:
                        cell = RawCell(
                            xlrd.error_text_from_code.get(value, "#N/A"), CellKind.ERROR, fmt
                        )
                    elif ctype == xlrd.XL_CELL_DATE:
                        when: datetime | time
                        if 0 <= value < 1:
                            when = xlrd.xldate.xldate_as_datetime(value, book.datemode).time()
                        else:
                            when = xlrd.xldate.xldate_as_datetime(value, book.datemode)
                        cell = RawCell(when, kind_of(when) or CellKind.DATETIME, fmt)
                    elif ctype == xlrd.XL_CELL_BOOLEAN:
                        cell = RawCell(bool(value), CellKind.BOOL, fmt)
                    else:
                        kind = kind_of(value)
                        if kind is None:
                            continue
                        cell = RawCell(value, kind, fmt)
                    sheet.cells[(r + 1, c + 1)] = cell
                    kept += 1
                if kept:
                    data_rows += 1
                    cells_read += kept
                    if data_rows > limits.max_rows or cells_read > limits.max_cells:
                        raise SpreadsheetTooLargeError(
                            path,
                            f"sheet '{sh.name}' is over the reading limit "
                            f"({limits.max_rows:,} rows, {limits.max_cells:,} cells)",
                            "Split it into smaller files, or raise the limits",
                        )
            if sh.ncols > limits.max_cols:
                sheet.warnings.append(f"columns after {limits.max_cols} were not read")
            for rlo, rhi, clo, chi in sh.merged_cells:
                sheet.merged.append((rlo + 1, clo + 1, rhi, chi))
            sheets.append(sheet)
            book.unload_sheet(index)
        return sheets, notes, total, "1904" if book.datemode == 1 else "1900"
    finally:
        book.release_resources()
