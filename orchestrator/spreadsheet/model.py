"""The reader's typed result: Workbook → Sheet → Table → Column, with cell ranges throughout.

Every table and column carries the A1 range it came from (``'Orders'!R2:R9995``), so any figure
computed from it can name its cells.

Example:
    >>> from orchestrator.spreadsheet import read_workbook  # doctest: +SKIP
    >>> wb = read_workbook("../shared/data/spreadsheets/sample_superstore.xlsx")  # doctest: +SKIP
    >>> [(t.name, t.header_rows, t.n_rows) for t in wb.tables()]  # doctest: +SKIP
    [('Orders', [1], 9994), ('Returns', [1], 296), ('People', [1], 4)]
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.spreadsheet.raw import CellKind

#: A cell value in the model (a Python scalar; dates stay dates).
Value = bool | int | float | str | datetime | date | time | timedelta | None


class ColumnType(StrEnum):
    """Inferred type of a column: the kind of at least 90% of its non-error values."""

    INTEGER = "integer"
    NUMBER = "number"
    TEXT = "text"
    BOOL = "bool"
    DATE = "date"
    DATETIME = "datetime"
    TIME = "time"
    DURATION = "duration"
    MIXED = "mixed"
    EMPTY = "empty"


class CellIssue(BaseModel):
    """A cell the analysis cannot use as a value.

    Attributes:
        ref: A1 reference with sheet, ``'Sheet1'!C4``.
        kind: ``error`` (an Excel error value such as ``#DIV/0!``), ``uncached_formula``
            (a formula whose file holds no computed value: unknown, not empty) or
            ``placeholder_value`` (a formula in a workbook that asks Excel to recalculate
            every formula on open, ``<calcPr fullCalcOnLoad="1"/>``, as XlsxWriter writes:
            its cached value is a placeholder such as 0, so it is unknown).
        detail: The error literal or the formula text.
    """

    model_config = ConfigDict(frozen=True)

    ref: str
    kind: Literal["error", "uncached_formula", "placeholder_value"]
    detail: str


class Skipped(BaseModel):
    """Something in the workbook the reader or the analysis did not use, and why.

    Attributes:
        what: ``sheet``, ``row``, ``column``, ``cell``, ``table`` or ``figure``.
        ref: Where: ``'Stock'!5:5`` (a row), ``'Stock'!C:C`` (a column), ``'Old draft'``
            (a sheet), ``'Stock'!C4`` (a cell), a table id, or a figure's description.
        reason: Why it was not used, in words (``hidden row``, ``total row``...).
    """

    model_config = ConfigDict(frozen=True)

    what: Literal["sheet", "row", "column", "cell", "table", "figure"]
    ref: str
    reason: str


class Column(BaseModel):
    """One column of a table.

    Attributes:
        name: Header text (merged or multi-row headers joined with `` / ``); ``Column X``
            when the table has no header.
        letter: Sheet column letter.
        type: Inferred :class:`ColumnType`.
        unit: ``%``, a currency symbol (``$``, ``¥``, ``€``...) or a unit from the header
            (``kg`` in ``Weight (kg)``); None when unknown.
        number_format: The most common Excel number format of its values.
        range: The data cells, ``'Sheet'!C2:C100``.
        values: One value per data row (None for empty, error and uncached cells).
        non_empty: Cells with a usable value.
        nonconforming: Usable values of another kind than ``type``.
        errors: Cells holding Excel errors.
        formulas: Formula cells (their cached values are in ``values``).
        uncached_formulas: Formula cells without a cached value.
        merged_values: Values spread from a merged range.
        unknown: A1 references (no sheet) of data cells whose value is unknown or unusable
            for the column's type: errors, formulas without a (trustworthy) cached value,
            text in a numeric column. Empty cells are not in it.
        note: How text values were read (``day first, from '13/01/2025'``), or None.
        value_units: The currency of each value, when the column's values are in several
            currencies (``$1,234.50`` beside ``1.234,50 €``): they are never added together;
            None when the column has one unit or none.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    letter: str
    index: int = Field(ge=1)
    type: ColumnType
    unit: str | None = None
    number_format: str = "General"
    range: str
    values: list[Value]
    non_empty: int = Field(ge=0)
    nonconforming: int = Field(0, ge=0)
    errors: int = Field(0, ge=0)
    formulas: int = Field(0, ge=0)
    uncached_formulas: int = Field(0, ge=0)
    merged_values: int = Field(0, ge=0)
    unknown: list[str] = []
    note: str | None = None
    value_units: list[str | None] | None = None

    @property
    def is_numeric(self) -> bool:
        return self.type in (ColumnType.INTEGER, ColumnType.NUMBER)

    @property
    def is_temporal(self) -> bool:
        return self.type in (ColumnType.DATE, ColumnType.DATETIME)


class Table(BaseModel):
    """A rectangular table found on a sheet.

    Attributes:
        id: ``T1``, ``T2``... in reading order over the workbook.
        name: The Excel table name, else ``<sheet> <range>``.
        sheet: Sheet title.
        source: ``excel_table`` (a declared ListObject) or ``detected`` (found by layout).
        ref: The whole table, ``B9:D20`` (no sheet prefix).
        header_rows: 1-based sheet rows of the header (empty when it has none).
        rows: 1-based sheet row of each data row.
        totals_rows: Rows that look like a totals line (``Total``/``合计``), left out of
            the data so they are not counted twice.
        columns: The columns, left to right.
        issues: Error and uncached-formula cells, at most 200 listed.
        issue_count: All of them.
        formula_examples: Up to 5 ``(ref, formula)`` pairs.
        skipped: Rows, columns and cells of the table left out, with the reason (hidden rows
            and columns, total/subtotal/average rows, text columns that look numeric).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    sheet: str
    source: Literal["excel_table", "detected"]
    ref: str
    header_rows: list[int]
    rows: list[int]
    totals_rows: list[int] = []
    columns: list[Column]
    issues: list[CellIssue] = []
    issue_count: int = 0
    formula_examples: list[tuple[str, str]] = []
    skipped: list[Skipped] = []

    @property
    def n_rows(self) -> int:
        """Data rows."""
        return len(self.rows)

    def column(self, name: str) -> Column:
        """The column called ``name``.

        Raises:
            KeyError: No such column.
        """
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"table {self.id} has no column {name!r}")


class TextBlock(BaseModel):
    """Free text on a sheet that is not a table (titles, notes, README sheets).

    Attributes:
        ref: Its range on the sheet.
        lines: Its text, row by row (at most 50 lines of 300 characters kept).
    """

    model_config = ConfigDict(frozen=True)

    ref: str
    lines: list[str]


class Sheet(BaseModel):
    """One sheet.

    Attributes:
        name: Title.
        index: 0-based position.
        state: ``visible``, ``hidden`` or ``veryHidden``.
        declared_dimension: The range the file declares (can be wrong: ``A1:XFD1048576``).
        used_range: The range that really holds values; None for an empty sheet.
        cells: Non-empty cells read.
        tables: Tables found.
        text_blocks: Free text found.
        merged_ranges: Merged ranges, A1 notation.
        kinds: Count of cells per :class:`~orchestrator.spreadsheet.raw.CellKind`.
        warnings: What the reader capped or could not read.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    index: int = Field(ge=0)
    state: str = "visible"
    declared_dimension: str | None = None
    used_range: str | None = None
    cells: int = Field(0, ge=0)
    tables: list[Table] = []
    text_blocks: list[TextBlock] = []
    merged_ranges: list[str] = []
    kinds: dict[CellKind, int] = {}
    warnings: list[str] = []


class Workbook(BaseModel):
    """What the reader found in one file.

    Attributes:
        path: The file read.
        format: ``xlsx``, ``xls`` or ``csv``.
        date_system: ``1900`` or ``1904`` (Mac) serial dates; already converted to dates.
        sheets: The sheets read (empty ones included, so the count is honest).
        sheets_total: Sheets in the file.
        warnings: Sheets skipped or not parsed, and other workbook-level notes.
        read_seconds: Wall time spent reading.
        skipped: What was not used (hidden sheets, and every table's ``skipped``), in order.
        include_hidden: True when hidden rows, columns and sheets were read as data.
    """

    model_config = ConfigDict(frozen=True)

    path: str
    format: Literal["xlsx", "xls", "csv"]
    date_system: Literal["1900", "1904"] = "1900"
    sheets: list[Sheet]
    sheets_total: int = Field(ge=0)
    warnings: list[str] = []
    read_seconds: float = Field(0.0, ge=0)
    skipped: list[Skipped] = []
    include_hidden: bool = False

    @property
    def filename(self) -> str:
        from pathlib import PurePath

        return PurePath(self.path).name

    def tables(self) -> list[Table]:
        """Every table of every sheet, in order."""
        return [table for sheet in self.sheets for table in sheet.tables]
