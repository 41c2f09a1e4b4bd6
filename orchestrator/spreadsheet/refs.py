"""Cell addresses and the sparse cell map shared by table detection and its column reader.

Split out of :mod:`orchestrator.spreadsheet.detect` (issue 48).
"""

from __future__ import annotations

from openpyxl.utils import get_column_letter, quote_sheetname

from orchestrator.spreadsheet.raw import RawCell

Box = tuple[int, int, int, int]  # min_row, min_col, max_row, max_col (1-based, inclusive)
Cells = dict[tuple[int, int], RawCell]


def a1(box: Box) -> str:
    """``(1, 2, 10, 4)`` → ``"B1:D10"``."""
    r1, c1, r2, c2 = box
    start, end = f"{get_column_letter(c1)}{r1}", f"{get_column_letter(c2)}{r2}"
    return start if start == end else f"{start}:{end}"


def sheet_ref(sheet: str, ref: str) -> str:
    """``'Sheet 1'!A1:B2`` (quoted as Excel quotes it)."""
    return f"{quote_sheetname(sheet)}!{ref}"


def row_cells(cells: Cells, r: int, c1: int, c2: int) -> list[RawCell]:
    """The cells of row ``r`` between columns ``c1`` and ``c2`` (inclusive), left to right."""
    return [cell for c in range(c1, c2 + 1) if (cell := cells.get((r, c))) is not None]


def is_copy(cell: RawCell, r: int, c: int) -> bool:
    """True for a value spread from a merged range's top-left cell (not the cell itself)."""
    return cell.merged_from is not None and cell.merged_from != (r, c)
