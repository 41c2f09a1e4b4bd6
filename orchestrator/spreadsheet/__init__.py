"""Read real, messy spreadsheets into a typed model: Workbook → Sheet → Table → Column.

Example:
    >>> from orchestrator.spreadsheet import read_workbook
    >>> wb = read_workbook("../shared/data/spreadsheets/calamine_temperature-in-middle.xlsx")
    >>> table = wb.tables()[0]
    >>> table.ref, [c.name for c in table.columns]
    ('B4:C6', ['label', 'value'])
"""

from orchestrator.spreadsheet.errors import (
    CorruptFileError,
    EmptyWorkbookError,
    PasswordProtectedError,
    SpreadsheetError,
    SpreadsheetTooLargeError,
    UnsupportedFileError,
)
from orchestrator.spreadsheet.model import (
    CellIssue,
    Column,
    ColumnType,
    Sheet,
    Skipped,
    Table,
    TextBlock,
    Workbook,
)
from orchestrator.spreadsheet.raw import CellKind, ReadLimits
from orchestrator.spreadsheet.reader import read_workbook

__all__ = [
    "CellIssue",
    "CellKind",
    "Column",
    "ColumnType",
    "CorruptFileError",
    "EmptyWorkbookError",
    "PasswordProtectedError",
    "ReadLimits",
    "Sheet",
    "Skipped",
    "SpreadsheetError",
    "SpreadsheetTooLargeError",
    "Table",
    "TextBlock",
    "UnsupportedFileError",
    "Workbook",
    "read_workbook",
]
