"""The .xlsx/.xlsm backend: openpyxl in read-only (streaming) mode, two passes when needed.

openpyxl's ``ReadOnlyWorksheet`` streams rows but drops what a report needs (merged ranges,
Excel tables) and pads every gap with empty rows and columns, so a sheet that declares
``A1:XFD1048576`` (calamine issue_174) takes a million padded rows to iterate. This module
drives ``WorkSheetParser`` — the streaming parser that ``ReadOnlyWorksheet`` itself uses — so
that only rows present in the XML cost anything, and keeps the merged ranges and table parts
the same parse yields. Those are openpyxl internals (``openpyxl.worksheet._reader``); they
have been stable since openpyxl 2.6 and are exercised by the unit tests.

Formulas: pass 1 reads with ``data_only=False`` (a formula cell's value is its text). When a
sheet has formula cells, pass 2 re-streams it with ``data_only=True`` for the cached values;
a formula without a cached value becomes :attr:`CellKind.UNCACHED`, not an empty cell. A
workbook that asks Excel to recalculate every formula on open (``<calcPr fullCalcOnLoad="1"/>``,
which XlsxWriter writes by default) stores placeholder results (0), so pass 2 is not run and
every formula stays unknown (``RawSheet.placeholder_cache``).

Formulas are not evaluated here. The ``formulas`` and ``pycel`` libraries could compute simple
ones, but both load the whole workbook into their own model (no streaming: minutes and GBs on
large sheets), ``formulas`` brings a large dependency tree and ``pycel``'s last release is a
2021 beta; a formula evaluated wrongly would be a wrong figure stated as fact, whereas
"unknown" is always true. So formula cells without a trustworthy cached value are unknown and
the report says which cells they are.

Hidden rows and columns (``<row hidden="1">``, ``<col hidden="1">``) are recorded in
``RawSheet.hidden_rows``/``hidden_cols``; table detection leaves them out unless
``ReadLimits.include_hidden``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Generator
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from openpyxl.packaging.relationship import get_dependents, get_rels_path
from openpyxl.styles.numbers import BUILTIN_FORMATS, BUILTIN_FORMATS_MAX_SIZE
from openpyxl.utils.cell import get_column_letter, range_boundaries
from openpyxl.worksheet._read_only import ReadOnlyWorksheet
from openpyxl.worksheet._reader import WorkSheetParser
from openpyxl.worksheet.table import Table
from openpyxl.xml.functions import fromstring

from orchestrator.spreadsheet.cells import stored_text
from orchestrator.spreadsheet.errors import CorruptFileError, SpreadsheetTooLargeError
from orchestrator.spreadsheet.package import FULL_CALC, normalised_copy
from orchestrator.spreadsheet.raw import (
    CellKind,
    RawCell,
    RawSheet,
    RawTable,
    ReadLimits,
    kind_of,
)

#: ``<calcPr calcMode="manual">``: the writer asked Excel not to recalculate. XlsxWriter's
#: ``set_calc_mode("manual")`` writes it without ``fullCalcOnLoad``, with 0 as every formula's
#: cached result; an Excel-saved manual workbook keeps real (possibly stale) results.
_MANUAL_CALC = re.compile(rb"<(?:\w+:)?calcPr\b[^>]*\bcalcMode\s*=\s*[\"']manual[\"']")


class _Budget:
    """Counts non-empty cells over the whole workbook against ``limits.max_cells``."""

    def __init__(self, path: Path, limits: ReadLimits) -> None:
        self.path = path
        self.limits = limits
        self.cells = 0

    def add(self, n: int) -> None:
        self.cells += n
        if self.cells > self.limits.max_cells:
            raise SpreadsheetTooLargeError(
                self.path,
                f"it holds more than {self.limits.max_cells:,} non-empty cells",
                "Split it into smaller files, or raise the limit (ReadLimits.max_cells)",
            )


def _formula_text(value: Any) -> str:
    text = getattr(value, "text", value)  # ArrayFormula / DataTableFormula keep it in .text
    return str(text if text is not None else "=")


class XlsxBook:
    """One open .xlsx workbook (read-only). Use as a context manager.

    Raises:
        CorruptFileError: openpyxl cannot open the package (any exception from
            ``load_workbook`` is caught here: it is a third-party parser facing arbitrary
            bytes, and its failures include ``TypeError`` and ``KeyError``).
    """

    def __init__(self, path: Path, limits: ReadLimits) -> None:
        self.path = path
        self.limits = limits
        self._handle: Any = None
        self._full_calc: bool | None = None
        # backslash entry names and Strict Open XML are rewritten first (see package.py)
        self._handle = normalised_copy(path, 20 * limits.max_file_bytes)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Unknown extension", "no default style"
                # openpyxl refuses a path without an .xlsx-family extension; the bytes were
                # already checked (sniff), so an extensionless upload is passed as a stream
                source: Any = self._handle or path
                if self._handle is None and path.suffix.lower() not in (
                    ".xlsx",
                    ".xlsm",
                    ".xltx",
                    ".xltm",
                ):
                    self._handle = source = path.open("rb")
                # Any: the private parts read below (_archive, _sheets, _cell_styles, ...) are
                # not in types-openpyxl
                self.wb: Any = load_workbook(
                    source, read_only=True, data_only=False, keep_links=False
                )
        except Exception as exc:  # see the class docstring
            if self._handle is not None:
                self._handle.close()
            raise CorruptFileError(
                path,
                f"openpyxl cannot open the workbook ({type(exc).__name__}: {exc})",
                "Re-save it in Excel as .xlsx, or send the original file again",
            ) from exc
        self._formats: dict[int, str] = {}
        self._workbook_head: bytes | None = None
        self._kinds: list[str] | None = None

    def __enter__(self) -> XlsxBook:
        return self

    def __exit__(self, *_: object) -> None:
        self.wb.close()
        if self._handle is not None:
            self._handle.close()

    @property
    def date_system(self) -> str:
        """``"1904"`` for the Mac 1904 date system, else ``"1900"``."""
        return "1904" if self.wb.epoch.year == 1904 else "1900"

    def _workbook_xml(self) -> bytes:
        if self._workbook_head is None:
            try:
                self._workbook_head = self.wb._archive.read("xl/workbook.xml")
            except (KeyError, AttributeError, OSError):
                self._workbook_head = b""
        return self._workbook_head

    @property
    def placeholder_cache(self) -> bool:
        """True when the workbook asks Excel to recalculate every formula on open."""
        # read the file's own <calcPr>: openpyxl's CalcProperties defaults fullCalcOnLoad to
        # True when the element is absent, which would mark every Excel-saved file
        if self._full_calc is None:
            self._full_calc = bool(FULL_CALC.search(self._workbook_xml()))
        return self._full_calc

    @property
    def manual_calc(self) -> bool:
        """True when the workbook's calculation mode is manual (see :data:`_MANUAL_CALC`)."""
        return bool(_MANUAL_CALC.search(self._workbook_xml()))

    def sheet_state(self, index: int) -> str:
        """``visible``, ``hidden`` or ``veryHidden`` of sheet ``index`` (0-based, in
        :attr:`sheet_names` order: chartsheets included)."""
        return str(getattr(self.wb._sheets[index], "sheet_state", "visible") or "visible")

    def sheet_kind(self, index: int) -> str:
        """``worksheet``, ``chartsheet``, ``dialogsheet`` or ``macrosheet`` of sheet ``index``
        (:attr:`sheet_names` order; see :func:`sheet_kinds`)."""
        if self._kinds is None:
            self._kinds = sheet_kinds(self.wb)
        return self._kinds[index]

    @property
    def sheet_names(self) -> list[str]:
        return list(self.wb.sheetnames)

    def _number_format(self, style_id: int) -> str:
        fmt = self._formats.get(style_id)
        if fmt is None:
            try:
                fmt_id = self.wb._cell_styles[style_id].numFmtId
                if fmt_id < BUILTIN_FORMATS_MAX_SIZE:
                    fmt = BUILTIN_FORMATS.get(fmt_id, "General")
                else:
                    fmt = self.wb._number_formats[fmt_id - BUILTIN_FORMATS_MAX_SIZE]
            except (IndexError, AttributeError):
                fmt = "General"
            self._formats[style_id] = fmt
        return fmt

    def _rows(self, ws: Any, data_only: bool) -> tuple[WorkSheetParser, Generator[Any, None, None]]:
        src = ws._get_source()
        parser = WorkSheetParser(
            src,
            ws._shared_strings,
            data_only=data_only,
            epoch=self.wb.epoch,
            date_formats=self.wb._date_formats,
            timedelta_formats=self.wb._timedelta_formats,
        )

        def rows() -> Generator[Any, None, None]:
            try:
                with warnings.catch_warnings():
                    # openpyxl warns "Unknown extension is not supported" for sheet extensions
                    # (x14 conditional formats, sparklines) it skips; the cells still parse
                    warnings.filterwarnings("ignore", "Unknown extension", UserWarning)
                    yield from parser.parse()
            finally:
                src.close()

        return parser, rows()

    def _cell(self, cell: dict[str, Any]) -> RawCell | None:
        value, data_type = cell["value"], cell["data_type"]
        if value is None:
            return None
        style_id = cell["style_id"] or 0
        fmt = self._formats.get(style_id) or self._number_format(style_id)
        # Dispatch on openpyxl's data type first: this runs once per cell.
        if data_type == "n":
            return RawCell(value, CellKind.NUMBER, fmt)
        if data_type == "s":
            if not value or value.isspace():
                return None
            return RawCell(stored_text(value), CellKind.TEXT, fmt)
        if data_type == "f":
            return RawCell(None, CellKind.UNCACHED, fmt, formula=_formula_text(value))
        if data_type == "e":
            return RawCell(str(value), CellKind.ERROR, fmt)
        if data_type == "b":
            return RawCell(bool(value), CellKind.BOOL, fmt)
        kind = kind_of(value)  # "d": datetime, date, time or timedelta
        if kind is None:
            return None
        return RawCell(value, kind, fmt)

    def read_sheet(self, index: int, budget: _Budget) -> RawSheet:
        """Read sheet ``index`` (0-based) into a sparse :class:`RawSheet`.

        Raises:
            SpreadsheetTooLargeError: Over ``max_rows`` rows with data, or the workbook over
                ``max_cells``.
            Exception: Whatever openpyxl raises on a sheet it cannot parse (the caller
                records it and carries on with the other sheets).
        """
        ws = self.wb._sheets[index]
        limits = self.limits
        sheet = RawSheet(name=ws.title, index=index, state=getattr(ws, "sheet_state", "visible"))
        if all(x is not None for x in (ws.min_row, ws.min_column, ws.max_row, ws.max_column)):
            sheet.declared_dimension = (
                f"{get_column_letter(ws.min_column)}{ws.min_row}:"
                f"{get_column_letter(ws.max_column)}{ws.max_row}"
            )
        parser, rows = self._rows(ws, data_only=False)
        formulas = self._read_cells(ws.title, sheet, rows, budget)
        if parser.merged_cells is not None:
            for merged in parser.merged_cells.mergeCell:
                min_col, min_row, max_col, max_row = range_boundaries(merged.ref)
                sheet.merged.append((min_row, min_col, max_row, max_col))  # type: ignore[arg-type]  # A1:B2 has all 4
        sheet.tables = self._tables(ws, parser)
        sheet.include_hidden = limits.include_hidden
        _read_hidden(parser, sheet, limits.max_cols)
        sheet.placeholder_cache = self.placeholder_cache
        if formulas and not sheet.placeholder_cache:
            self._cached_values(ws, sheet, formulas)
        return sheet

    def _read_cells(
        self, title: str, sheet: RawSheet, rows: Any, budget: _Budget
    ) -> list[tuple[int, int]]:
        """Pass 1: the sheet's values and formulas (``rows``: the ``(row, cells)`` pairs of
        :meth:`_rows`) into ``sheet.cells`` (columns past
        ``max_cols`` counted in a warning); returns the formula cells' ``(row, column)``.

        Raises:
            SpreadsheetTooLargeError: Over ``max_rows`` rows with data, or the workbook over
                ``max_cells``.
        """
        limits = self.limits
        formulas: list[tuple[int, int]] = []
        data_rows = 0
        dropped_right = 0
        for row_idx, row in rows:
            kept = 0
            for cell in row:
                if cell["value"] is None:
                    continue
                if cell["column"] > limits.max_cols:
                    dropped_right += 1
                    continue
                raw = self._cell(cell)
                if raw is None:
                    continue
                sheet.cells[(row_idx, cell["column"])] = raw
                kept += 1
                if raw.formula is not None:
                    formulas.append((row_idx, cell["column"]))
            if kept:
                data_rows += 1
                budget.add(kept)
                if data_rows > limits.max_rows:
                    raise SpreadsheetTooLargeError(
                        self.path,
                        f"sheet '{title}' has more than {limits.max_rows:,} rows with data "
                        "(reading stopped there to keep memory bounded)",
                        "Split the sheet into smaller files, or raise the limit "
                        "(ORCH_SPREADSHEET_MAX_ROWS)",
                    )
        if dropped_right:
            sheet.warnings.append(
                f"{dropped_right:,} values right of column {get_column_letter(limits.max_cols)} "
                f"were not read (limit of {limits.max_cols} columns)"
            )
        return formulas

    def _cached_values(self, ws: Any, sheet: RawSheet, formulas: list[tuple[int, int]]) -> None:
        """Pass 2: fill each formula cell with its cached value (``data_only=True``).

        A formula whose cached result is an empty string (``t="str"`` with an empty ``<v>``:
        ``=IF(B6="","",B6*C6)`` filled down a template) is an empty cell, not an unknown one.
        In a workbook in manual calculation mode, a sheet whose formulas (two or more) all
        cache 0 holds placeholders (XlsxWriter's ``set_calc_mode("manual")``): they stay
        unknown, and the sheet is marked ``placeholder_cache``.
        """
        wanted: dict[int, set[int]] = {}
        for r, c in formulas:
            wanted.setdefault(r, set()).add(c)
        last = max(wanted)
        found: dict[tuple[int, int], RawCell] = {}
        empty: list[tuple[int, int]] = []
        _, rows = self._rows(ws, data_only=True)
        for row_idx, row in rows:
            if row_idx > last:
                break
            cols = wanted.get(row_idx)
            if not cols:
                continue
            for cell in row:
                if cell["column"] not in cols:
                    continue
                cached = self._cell(cell)
                if cached is not None and cached.kind is not CellKind.UNCACHED:
                    found[(row_idx, cell["column"])] = cached
                elif cached is None and cell["data_type"] in ("s", "str", "inlineStr"):
                    empty.append((row_idx, cell["column"]))
        rows.close()
        if (
            self.manual_calc
            and len(formulas) >= 2
            and not empty
            and len(found) == len(formulas)
            and all(c.kind is CellKind.NUMBER and c.value == 0 for c in found.values())
        ):
            sheet.placeholder_cache = True
            return
        for key, cached in found.items():
            target = sheet.cells[key]
            target.value, target.kind = cached.value, cached.kind
        for key in empty:
            del sheet.cells[key]

    def _tables(self, ws: Any, parser: WorkSheetParser) -> list[RawTable]:
        parts = getattr(parser.tables, "tablePart", None) or []
        if not parts:
            return []
        archive = self.wb._archive
        rels_path = get_rels_path(ws._worksheet_path)
        if rels_path not in archive.namelist():
            return []
        rels = get_dependents(archive, rels_path)
        tables: list[RawTable] = []
        for part in parts:
            try:
                target = rels.get(part.id).target
                table = Table.from_tree(fromstring(archive.read(target)))
                if table is None:
                    raise ValueError("an empty table part")
                min_col, min_row, max_col, max_row = range_boundaries(table.ref)
            except (KeyError, TypeError, ValueError) as exc:
                ws_name = ws.title
                raise CorruptFileError(
                    self.path,
                    f"the Excel table {part.id} of sheet '{ws_name}' cannot be read ({exc})",
                    "Re-save the workbook in Excel",
                ) from exc
            tables.append(
                RawTable(
                    name=table.displayName or table.name or f"Table{len(tables) + 1}",
                    ref=(min_row, min_col, max_row, max_col),  # type: ignore[arg-type]  # A1:B2 has all 4
                    header_rows=int(
                        table.headerRowCount if table.headerRowCount is not None else 1
                    ),
                    totals_rows=int(table.totalsRowCount or 0),
                )
            )
        return tables


def sheet_kinds(wb: Any) -> list[str]:
    """``worksheet``, ``chartsheet``, ``dialogsheet`` or ``macrosheet`` of each sheet of an
    openpyxl read-only workbook, in ``wb.sheetnames`` order. openpyxl loads a chartsheet as a
    ``Chartsheet`` (not in ``wb.worksheets``: indexing those by position was the bug), and a
    dialogsheet or an Excel 4 macrosheet as a worksheet, told apart here by its relationship
    type (a dialog or macro sheet is never data)."""
    types: dict[str, str] = {}
    try:
        rels = get_dependents(wb._archive, "xl/_rels/workbook.xml.rels")
        types = {rel.target: rel.Type or "" for rel in rels}
    except (KeyError, AttributeError, TypeError, ValueError, OSError):
        pass  # no readable workbook relationships: every loaded sheet is a worksheet
    kinds = []
    for sheet in wb._sheets:
        if not isinstance(sheet, ReadOnlyWorksheet):
            kinds.append("chartsheet")
            continue
        part = str(getattr(sheet, "_worksheet_path", ""))
        kind = (types.get(part) or part).lower()  # the part's folder when no type
        kinds.append(
            "dialogsheet"
            if "dialogsheet" in kind
            else "macrosheet"
            if "macrosheet" in kind
            else "worksheet"
        )
    return kinds


def _read_hidden(parser: WorkSheetParser, sheet: RawSheet, max_cols: int) -> None:
    """The sheet's hidden rows and columns (columns up to ``max_cols``) into ``sheet``."""
    for row, attrs in parser.row_dimensions.items():
        if str(attrs.get("hidden", "0")).lower() in ("1", "true"):
            sheet.hidden_rows.add(int(row))
    for attrs in parser.column_dimensions.values():
        if str(attrs.get("hidden", "0")).lower() in ("1", "true"):
            low, high = int(attrs.get("min", 0)), int(attrs.get("max", 0))
            sheet.hidden_cols.update(range(low, min(high, max_cols) + 1))
