"""What a format backend (xlsx, xls, csv) hands to table detection: sparse sheets of cells.

These are internal to :mod:`orchestrator.spreadsheet` (slotted dataclasses, because a sheet can
hold millions of them); the typed, public result is
:class:`~orchestrator.spreadsheet.model.Workbook`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator.spreadsheet.encodings import codec_name

#: A cell value after reading: what Python gets from openpyxl/xlrd/csv.
Scalar = bool | int | float | str | datetime | date | time | timedelta | None


class CellKind(StrEnum):
    """What a cell holds.

    ``uncached`` is a formula cell whose file stores no computed value (the workbook was
    written by a library, not saved by Excel): its value is unknown, not empty.
    """

    NUMBER = "number"
    TEXT = "text"
    BOOL = "bool"
    DATETIME = "datetime"
    DATE = "date"
    TIME = "time"
    DURATION = "duration"
    ERROR = "error"
    UNCACHED = "uncached"


#: Excel's error literals (ECMA-376 Part 1, 18.18.23 ST_CellErrorType, plus Excel 365's).
ERROR_LITERALS = frozenset(
    {
        "#NULL!",
        "#DIV/0!",
        "#VALUE!",
        "#REF!",
        "#NAME?",
        "#NUM!",
        "#N/A",
        "#GETTING_DATA",
        "#SPILL!",
        "#CALC!",
        "#FIELD!",
        "#BLOCKED!",
        "#UNKNOWN!",
        "#CONNECT!",
        "#BUSY!",
    }
)


def kind_of(value: Scalar) -> CellKind | None:
    """The :class:`CellKind` of a Python value; None for an empty cell.

    Example:
        >>> kind_of(3.5), kind_of("x"), kind_of(None)
        (<CellKind.NUMBER: 'number'>, <CellKind.TEXT: 'text'>, None)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return CellKind.BOOL
    if isinstance(value, int | float):
        return CellKind.NUMBER
    if isinstance(value, datetime):
        if value.time() == time(0):
            return CellKind.DATE
        return CellKind.DATETIME
    if isinstance(value, date):
        return CellKind.DATE
    if isinstance(value, time):
        return CellKind.TIME
    if isinstance(value, timedelta):
        return CellKind.DURATION
    if isinstance(value, str):
        if not value.strip():
            return None
        return CellKind.TEXT
    return CellKind.TEXT


@dataclass(slots=True)
class RawCell:
    """One non-empty cell.

    Attributes:
        value: The value (the cached value for a formula; None when ``kind`` is ``uncached``;
            the error literal such as ``"#DIV/0!"`` when ``kind`` is ``error``).
        kind: What it holds.
        number_format: Excel number format code (``"0.00%"``, ``"[$¥-804]#,##0"``...).
        formula: The formula text with its ``=`` when the cell holds a formula.
        merged_from: ``(row, col)`` of the merged range's top-left cell when the value was
            spread from there; None for a cell that holds its own value.
        text: The original text when the value was typed from text (a CSV field), so the
            column step can read it again with its column's convention.
    """

    value: Scalar
    kind: CellKind
    number_format: str = "General"
    formula: str | None = None
    merged_from: tuple[int, int] | None = None
    text: str | None = None


@dataclass(slots=True)
class RawTable:
    """An Excel table (ListObject) as the file declares it.

    Attributes:
        name: Its display name.
        ref: ``(min_row, min_col, max_row, max_col)``, 1-based, inclusive.
        header_rows: 0 or 1.
        totals_rows: 0 or 1.
    """

    name: str
    ref: tuple[int, int, int, int]
    header_rows: int = 1
    totals_rows: int = 0


@dataclass(slots=True)
class RawSheet:
    """One sheet as a backend read it (sparse: only non-empty cells are stored).

    Attributes:
        name: Sheet title.
        index: 0-based position in the workbook.
        state: ``visible``, ``hidden`` or ``veryHidden``.
        cells: ``{(row, col): RawCell}``, 1-based.
        merged: Merged ranges ``(min_row, min_col, max_row, max_col)``.
        tables: Declared Excel tables.
        declared_dimension: The ``<dimension ref>`` the file states, when it states one.
        warnings: What the backend skipped or capped, in words.
        hidden_rows: 1-based rows marked hidden (``<row hidden="1">``).
        hidden_cols: 1-based columns marked hidden (``<col hidden="1">``).
        placeholder_cache: The workbook asks Excel to recalculate every formula on open
            (``fullCalcOnLoad``), so cached formula values are placeholders, not results.
        include_hidden: Hidden rows and columns are data (not skipped).
    """

    name: str
    index: int
    state: str = "visible"
    cells: dict[tuple[int, int], RawCell] = field(default_factory=dict)
    merged: list[tuple[int, int, int, int]] = field(default_factory=list)
    tables: list[RawTable] = field(default_factory=list)
    declared_dimension: str | None = None
    warnings: list[str] = field(default_factory=list)
    hidden_rows: set[int] = field(default_factory=set)
    hidden_cols: set[int] = field(default_factory=set)
    placeholder_cache: bool = False
    include_hidden: bool = False


class ReadLimits(BaseModel):
    """Bounds that keep reading a hostile or huge workbook fast and small in memory.

    Attributes:
        max_sheets: Sheets with values read; later sheets are not read, and the workbook's
            ``warnings`` say how many. A sheet that holds no value does not count (opening it
            costs little), so a workbook whose data sits after many empty sheets is still
            read, and one that is empty throughout (bigfoot.xlsx: 1,024 empty sheets) is
            called empty only once every sheet was looked at.
        max_sheets_scanned: Sheets looked at in all, empty ones included (.xlsx); the bound
            on the cost of a workbook of thousands of empty sheets.
        max_rows: Non-empty rows read per sheet. A sheet with more is refused with
            :class:`~orchestrator.spreadsheet.errors.SpreadsheetTooLargeError` (nothing
            partial): the reader streams and stops at ``max_rows + 1``, so a 1,048,576-row
            sheet costs ``max_rows`` rows of memory, not a million.
        max_cols: Columns read; values right of it are dropped with a warning (a sheet can
            declare ``A1:XFD1048576``, 16,384 columns).
        max_cells: Non-empty cells read in the whole workbook; more is refused.
        max_merged_cells: Largest merged range whose value is spread to every cell.
        max_file_bytes: Largest file accepted.
        include_hidden: Read hidden rows, columns and sheets as data. Off by default: what
            is hidden is not on screen, so a report on it would not match what people see;
            what is skipped is listed (``Workbook.skipped``).
        encoding: The codec of a delimited text file (``--encoding``: ``cp949``, ``EUC-KR``),
            read as given; None guesses it (:mod:`~orchestrator.spreadsheet.encodings`).
            An unknown codec is a validation error.
    """

    model_config = ConfigDict(frozen=True)

    max_sheets: int = Field(256, ge=1)
    max_sheets_scanned: int = Field(4096, ge=1)
    max_rows: int = Field(100_000, ge=1)
    max_cols: int = Field(512, ge=1, le=16_384)
    max_cells: int = Field(3_000_000, ge=1)
    max_merged_cells: int = Field(10_000, ge=1)
    max_file_bytes: int = Field(200 * 1024 * 1024, ge=1)
    include_hidden: bool = False
    encoding: str | None = None

    @field_validator("encoding")
    @classmethod
    def _known_codec(cls, value: str | None) -> str | None:
        return None if value is None else codec_name(value)
