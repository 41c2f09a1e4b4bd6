"""Find tables, headers and free text on a sparse sheet.

The layout rules (the workflow logic of this package, so written here rather than taken from a
library):

1. **Merged ranges** are spread: every cell of a merged range gets the top-left value, marked
   ``merged_from`` (ranges over ``ReadLimits.max_merged_cells`` cells are not spread).
2. **Excel tables** (ListObjects) are taken as declared: their range, header row and totals row.
3. **The rest is cut into blocks** by recursive XY-cut (Nagy & Seth, 1984): a region is split
   at fully empty rows, then at fully empty columns, until no cut is left. Two blocks are
   joined again when the lower one continues the upper one (same columns, first row not a
   header: a blank row inside data), or when a single empty column separates two blocks with
   exactly the same rows (a spacer column inside one table).
4. **Headers**: within the first 10 rows of a block, rows that are a title (one value, or a
   single merged range) or a sparse note (text filling under half the width) are skipped;
   the first row that is all text, fills at least half the width and whose values do not
   recur in their columns below is the header. A header row holding a horizontally merged
   range followed by another all-text row makes a two-row header (``Top / Sub``). A row with
   numbers or dates before any header means the block has no header.
5. A block of one row, or one column of text, is a :class:`TextBlock`, not a table. A row
   anywhere in a table whose first value is a total, subtotal or average label (``Total``,
   ``Grand Total``, ``Subtotal``, ``Average``, ``合计``, ``小计``, ``平均``, ``Summe``...) and
   that holds a number is kept out of the data (listed in ``Table.skipped``), so it is not
   counted twice.
6. **Hidden rows and columns** stay in the layout (a hidden row must not cut a table in two)
   but are left out of the data unless ``ReadLimits.include_hidden``; each is listed in
   ``Table.skipped``.
7. **Numbers and dates stored as text** are read per column with one convention
   (:func:`~orchestrator.spreadsheet.textvalues.convert_column`); a column left as text
   although it looks numeric is listed with the reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from openpyxl.utils import get_column_letter, quote_sheetname

from orchestrator.spreadsheet.model import (
    CellIssue,
    Column,
    ColumnType,
    Sheet,
    Skipped,
    Table,
    TextBlock,
    Value,
)
from orchestrator.spreadsheet.raw import CellKind, RawCell, RawSheet, RawTable, ReadLimits
from orchestrator.spreadsheet.structure import (
    footer_rows,
    pivot_subtotals,
    remove_placeholders,
    structure_reason,
)
from orchestrator.spreadsheet.textvalues import convert_column

Box = tuple[int, int, int, int]  # min_row, min_col, max_row, max_col (1-based, inclusive)
Cells = dict[tuple[int, int], RawCell]

HEADER_SCAN_ROWS = 10
MAX_TABLES_PER_SHEET = 50
MAX_ISSUES_LISTED = 200
MAX_TEXT_LINES = 50
MAX_TEXT_CHARS = 300
_TOTALS = re.compile(
    r"^\s*(?:(?:grand|sub)[\s-]?)?totals?\b"
    r"|^\s*(?:sum|average|avg|mean|overall|all|gesamt|insgesamt|summe|zwischensumme|"
    r"durchschnitt|mittelwert|somme|moyenne|sous-total|suma|promedio|media|totale|totaal|"
    r"gemiddelde|итого|всего|среднее)\s*[:：]?\s*$"
    r"|^\s*(?:[合总總小共累]\s*[计計]|总\s*和|總\s*和|平\s*均|均值|平均值)",
    re.IGNORECASE,
)
#: Exact total labels: a row so labelled (with a number) is a total row, no check needed.
_STRONG_TOTAL = re.compile(
    r"^\s*(?:(?:grand|sub)[\s-]?)?totals?\s*[:：]?\s*$"
    r"|^\s*(?:sum|gesamt|insgesamt|summe|zwischensumme|somme|sous-total|suma|totale|totaal|"
    r"итого|всего)\s*[:：]?\s*$|^\s*(?:[合总總小共]\s*[计計]|总\s*和|總\s*和)\s*[:：]?\s*$",
    re.IGNORECASE,
)
#: A label that ends in "total" ("East Total", "Overall total", "Region subtotal"): Excel's
#: Data > Subtotal writes "<group> Total" rows. Checked against the rows above like the weak
#: labels of :data:`_TOTALS` ("Total Wine & More" is a store, "Average" may be a category).
_TRAILING_TOTAL = re.compile(r"^\s*\S.{0,40}?\s(?:grand\s)?(?:sub)?totals?\s*[:：]?\s*$", re.I)
#: A formula that totals the rows above it (``=SUM(B2:B5)``, ``=SUBTOTAL(9,B2:B5)``).
_TOTAL_FORMULA = re.compile(r"^=?\s*(?:SUM|SUBTOTAL|AGGREGATE)\s*\(", re.IGNORECASE)
_HEADER_UNIT = re.compile(r"[\(（\[]\s*([^()（）\[\]]{1,12}?)\s*[\)）\]]\s*$")
_FORMAT_CURRENCY = re.compile(r"\[\$([^\-\]]+)(?:-[0-9A-Fa-f]+)?\]|([$€£¥￥₹₩₽₺₪฿₫₱₴₦])")
_USABLE = frozenset(
    {
        CellKind.NUMBER,
        CellKind.TEXT,
        CellKind.BOOL,
        CellKind.DATE,
        CellKind.DATETIME,
        CellKind.TIME,
        CellKind.DURATION,
    }
)


def a1(box: Box) -> str:
    """``(1, 2, 10, 4)`` → ``"B1:D10"``."""
    r1, c1, r2, c2 = box
    start, end = f"{get_column_letter(c1)}{r1}", f"{get_column_letter(c2)}{r2}"
    return start if start == end else f"{start}:{end}"


def sheet_ref(sheet: str, ref: str) -> str:
    """``'Sheet 1'!A1:B2`` (quoted as Excel quotes it)."""
    return f"{quote_sheetname(sheet)}!{ref}"


def spread_merged(raw: RawSheet, limits: ReadLimits) -> None:
    """Give every cell of each merged range the value of its top-left cell (in place)."""
    for r1, c1, r2, c2 in raw.merged:
        area = (r2 - r1 + 1) * (c2 - c1 + 1)
        origin = raw.cells.get((r1, c1))
        if origin is None or area <= 1:
            continue
        if area > limits.max_merged_cells:
            raw.warnings.append(
                f"merged range {a1((r1, c1, r2, c2))} has {area:,} cells; its value was not "
                f"spread (limit {limits.max_merged_cells:,})"
            )
            continue
        origin.merged_from = (r1, c1)
        for r in range(r1, r2 + 1):
            for c in range(c1, c2 + 1):
                if (r, c) != (r1, c1):
                    raw.cells[(r, c)] = RawCell(
                        origin.value, origin.kind, origin.number_format, None, (r1, c1)
                    )


def _runs(indices: Iterable[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive integers: ``[1,2,3,7,8]`` → ``[(1,3),(7,8)]``."""
    runs: list[tuple[int, int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def xy_cut(points: list[tuple[int, int]], depth: int = 0) -> list[list[tuple[int, int]]]:
    """Split occupied positions into blocks at fully empty rows and columns (recursive)."""
    row_runs = _runs(r for r, _ in points)
    if len(row_runs) > 1 and depth < 64:
        out = []
        for lo, hi in row_runs:
            out.extend(xy_cut([p for p in points if lo <= p[0] <= hi], depth + 1))
        return out
    col_runs = _runs(c for _, c in points)
    if len(col_runs) > 1 and depth < 64:
        out = []
        for lo, hi in col_runs:
            out.extend(xy_cut([p for p in points if lo <= p[1] <= hi], depth + 1))
        return out
    return [points]


def _box(points: list[tuple[int, int]]) -> Box:
    rows = [r for r, _ in points]
    cols = [c for _, c in points]
    return min(rows), min(cols), max(rows), max(cols)


def _row_cells(cells: Cells, r: int, c1: int, c2: int) -> list[RawCell]:
    return [cell for c in range(c1, c2 + 1) if (cell := cells.get((r, c))) is not None]


def _is_copy(cell: RawCell, r: int, c: int) -> bool:
    """True for a value spread from a merged range's top-left cell (not the cell itself)."""
    return cell.merged_from is not None and cell.merged_from != (r, c)


def _is_title(row: list[RawCell], width: int) -> bool:
    if width == 1:
        return False
    if len(row) == 1:
        return True
    origins = {cell.merged_from for cell in row}
    return len(origins) == 1 and None not in origins


def _header_like(cells: Cells, r: int, box: Box) -> bool:
    _, c1, r2, c2 = box
    row = _row_cells(cells, r, c1, c2)
    width = c2 - c1 + 1
    if not row or any(cell.kind is not CellKind.TEXT for cell in row):
        return False
    if len(row) * 2 < width or _is_title(row, width):
        return False
    texts = [
        str(cell.value).strip()
        for c in range(c1, c2 + 1)
        if (cell := cells.get((r, c))) is not None and not _is_copy(cell, r, c)
    ]
    if len(set(texts)) < len(texts):
        return False
    # a header's labels do not recur as values in the rows below it (a row that repeats
    # the whole header is the header repeated, as a report repeats it per section)
    for c in range(c1, c2 + 1):
        head = cells.get((r, c))
        if head is None or _is_copy(head, r, c):
            continue
        for below in range(r + 1, min(r2, r + 50) + 1):
            cell = cells.get((below, c))
            if (
                cell is not None
                and not _is_copy(cell, below, c)
                and cell.value == head.value
                and not _repeats(cells, r, below, c1, c2)
            ):
                return False
    return True


def _repeats(cells: Cells, r: int, below: int, c1: int, c2: int) -> bool:
    """Whether row ``below`` holds exactly the values of row ``r`` (two or more)."""
    a = [cells[(r, c)].value if (r, c) in cells else None for c in range(c1, c2 + 1)]
    b = [cells[(below, c)].value if (below, c) in cells else None for c in range(c1, c2 + 1)]
    return a == b and sum(v is not None for v in a) >= 2


def find_header(cells: Cells, box: Box) -> tuple[list[int], list[int]]:
    """``(header rows, title/note rows above it)`` for a block; ``([], [])`` when headerless."""
    r1, c1, r2, c2 = box
    width = c2 - c1 + 1
    notes: list[int] = []
    for r in range(r1, min(r1 + HEADER_SCAN_ROWS, r2)):
        row = _row_cells(cells, r, c1, c2)
        if not row:
            continue
        if _header_like(cells, r, box):
            fuller = r + 1 < r2 and _header_like(cells, r + 1, box)
            if fuller and len(_row_cells(cells, r + 1, c1, c2)) > len(row):
                notes.append(r)  # a sparse caption row above the real header (pivot layout)
                continue
            header = [r]
            merged_across = any(
                cell.merged_from is not None and cell.merged_from[0] == r for cell in row
            )
            nxt = r + 1
            if merged_across and nxt < r2:
                below = _row_cells(cells, nxt, c1, c2)
                if (
                    below
                    and all(cell.kind is CellKind.TEXT for cell in below)
                    and len(below) * 2 >= width
                ):
                    header.append(nxt)
            return header, notes
        if any(cell.kind is not CellKind.TEXT for cell in row):
            return [], []
        if _is_title(row, width) or len(row) * 2 < width:
            notes.append(r)
            continue
        return [], []
    return [], []


def _join_blocks(cells: Cells, boxes: list[Box]) -> list[Box]:
    """Undo cuts that split one table (see the module docstring, rule 3)."""
    boxes = sorted(boxes, key=lambda b: (b[1], b[0]))
    merged = True
    while merged:
        merged = False
        for i, a in enumerate(boxes):
            for j, b in enumerate(boxes):
                if i == j:
                    continue
                same_rows = a[0] == b[0] and a[2] == b[2]
                spacer = b[1] == a[3] + 2 and same_rows
                if spacer:
                    rows_a = {r for (r, c) in cells if a[0] <= r <= a[2] and a[1] <= c <= a[3]}
                    rows_b = {r for (r, c) in cells if b[0] <= r <= b[2] and b[1] <= c <= b[3]}
                    spacer = rows_a == rows_b
                overlap = min(a[3], b[3]) - max(a[1], b[1]) + 1
                continues = (
                    b[0] > a[2]
                    and not any(
                        x[0] > a[2]
                        and x[2] < b[0]
                        and x[1] <= max(a[3], b[3])
                        and x[3] >= min(a[1], b[1])
                        for x in boxes
                    )
                    and overlap * 2 >= max(a[3] - a[1] + 1, b[3] - b[1] + 1)
                    and a[2] > a[0]
                    and bool(find_header(cells, a)[0])
                    and not _header_like(cells, b[0], b)
                    and any(
                        cell.kind is not CellKind.TEXT
                        for cell in _row_cells(cells, b[0], b[1], b[3])
                    )
                )
                if spacer or continues:
                    joined = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    boxes = [x for k, x in enumerate(boxes) if k not in (i, j)] + [joined]
                    merged = True
                    break
            if merged:
                break
    return sorted(boxes)


#: Quoted literal text (``0.00"%"``) and backslash-escaped characters (``0.0\\%``) of an Excel
#: number format: a ``%`` there is text shown after the number, not Excel's x100 percent.
_FORMAT_LITERAL = re.compile(r'"[^"]*"|\\.')


def percent_format(fmt: str) -> Literal["fraction", "points"] | None:
    """How an Excel number format shows a percentage: ``fraction`` for Excel's percent
    (``0%``, ``0.0%``: the cell holds 0.125 and shows 12.5%), ``points`` for a ``%`` written as
    literal text (``0.00"%"``, ``0.0\\%``: the cell holds 12.5 and shows 12.5%), None for no
    ``%`` at all (ECMA-376 Part 1, 18.8.31 numFmts)."""
    if "%" not in fmt:
        return None
    if "%" in _FORMAT_LITERAL.sub("", fmt):
        return "fraction"
    return "points"


def _percent_scale(formats: Counter[str], header: str, values: list[Value]) -> tuple[str, float]:
    """The format a numeric column is read with, and the factor that makes its values the
    fractions the ``%`` unit means (1, or 0.01 for values written in percent points).

    * Cells in Excel's percent formats (``0%``, ``0.0%``... counted together) on at least half
      of the formatted cells make the column a percentage, whatever the single most common
      format is (three General cells beside two ``0%``, two ``0.0%`` and one ``0.00%``).
    * A ``%`` that the format writes as text (``0.00"%"``) means the values are points.
    * A header that names the unit (``Growth %``, ``Discount (%)``) over plain numbers: points
      when a value is above 1 in magnitude (12.5 is 12.5%, not 1,250%), fractions otherwise.
    """
    if not formats:
        return "General", 1.0
    by_kind: Counter[str | None] = Counter()
    for f, n in formats.items():
        by_kind[percent_format(f)] += n
    for kind, scale in (("fraction", 1.0), ("points", 0.01)):
        if by_kind[kind] * 2 >= sum(formats.values()):
            kept = (f for f in formats if percent_format(f) == kind)
            return max(kept, key=formats.__getitem__), scale
    fmt = formats.most_common(1)[0][0]
    if _header_percent(header):
        numbers = [abs(v) for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if numbers and max(numbers) > 1:
            return fmt, 0.01
    return fmt, 1.0


def _header_percent(header: str) -> bool:
    match = _HEADER_UNIT.search(header)
    return (match is not None and match.group(1).strip() == "%") or header.rstrip().endswith("%")


def _unit(fmt: str, header: str, ctype: ColumnType) -> str | None:
    if ctype in (ColumnType.INTEGER, ColumnType.NUMBER):
        if percent_format(fmt) is not None:
            return "%"
        match = _FORMAT_CURRENCY.search(fmt.replace('"', ""))
        if match:
            return (match.group(1) or match.group(2)).strip()
    match = _HEADER_UNIT.search(header)
    if match:
        return match.group(1).strip()
    if header.rstrip().endswith("%"):
        return "%"
    return None


def _column_type(kinds: Counter[CellKind], values: list[Value]) -> tuple[ColumnType, int]:
    total = sum(kinds.values())
    if not total:
        return ColumnType.EMPTY, 0
    merged = Counter(kinds)
    if merged[CellKind.DATE] and merged[CellKind.DATETIME]:
        merged[CellKind.DATETIME] += merged.pop(CellKind.DATE)
    kind, count = merged.most_common(1)[0]
    if count * 10 < total * 9:
        return ColumnType.MIXED, 0
    nonconforming = total - count
    if kind is CellKind.NUMBER:
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if all(isinstance(v, int) or float(v).is_integer() for v in numbers):
            return ColumnType.INTEGER, nonconforming
        return ColumnType.NUMBER, nonconforming
    return ColumnType(kind.value), nonconforming


def _header_name(cells: Cells, header_rows: list[int], c: int) -> str:
    parts: list[str] = []
    for r in header_rows:
        cell = cells.get((r, c))
        if cell is not None and cell.value is not None:
            text = " ".join(str(cell.value).split())
            if text and text not in parts:
                parts.append(text)
    return " / ".join(parts)[:80]


def _total_label(row: list[RawCell]) -> str | None:
    """The label of a total/subtotal/average row (first value a total label, a number in
    the row); None for a data row."""
    if not row or row[0].kind is not CellKind.TEXT:
        return None
    label = str(row[0].value).strip()
    if not (_TOTALS.match(label) or _TRAILING_TOTAL.match(label)):
        return None
    if not any(cell.kind is CellKind.NUMBER or cell.kind is CellKind.UNCACHED for cell in row):
        return None
    return label[:40]


def _aggregates_rows_above(cells: Cells, r: int, c1: int, c2: int, groups: list[list[int]]) -> bool:
    """Whether a number of row ``r`` is the sum or the mean of its column over one of the row
    groups (the data rows since the last total row, and all data rows so far), or a formula
    that totals the rows above (``SUM``, ``SUBTOTAL``, ``AGGREGATE``)."""
    for c in range(c1, c2 + 1):
        cell = cells.get((r, c))
        if cell is None or cell.kind not in (CellKind.NUMBER, CellKind.UNCACHED):
            continue
        if cell.formula is not None and _TOTAL_FORMULA.match(cell.formula):
            return True
        if cell.kind is not CellKind.NUMBER or isinstance(cell.value, bool):
            continue
        target = float(cell.value)  # type: ignore[arg-type]
        for rows in groups:
            numbers = [
                float(v.value)  # type: ignore[arg-type]
                for q in rows
                if (v := cells.get((q, c))) is not None
                and v.kind is CellKind.NUMBER
                and not isinstance(v.value, bool)
            ]
            if len(numbers) < 2:
                continue
            total = sum(numbers)
            for expected in (total, total / len(numbers)):
                if abs(target - expected) <= 1e-6 * max(1.0, abs(expected)):
                    return True
    return False


@dataclass(slots=True)
class _TextColumn:
    """A column's text cells read again as numbers or dates (see rule 7)."""

    cells: dict[int, RawCell] = field(default_factory=dict)  # row -> retyped cell
    note: str | None = None
    reason: str | None = None  # why a numeric-looking column stayed text
    left_out: list[int] = field(default_factory=list)  # rows left as text in a converted one
    left_reason: str = ""
    blank: set[int] = field(default_factory=set)  # rows whose text says "no value" (-, n/a)
    currencies: dict[int, str | None] | None = None  # row -> currency, when several


def _convert_text(cells: Cells, rows: list[int], c: int) -> _TextColumn:
    """Read the text-origin cells of column ``c`` with one convention for the column."""
    origin: list[tuple[int, str]] = []
    has_text = False
    for r in rows:
        cell = cells.get((r, c))
        if cell is None:
            continue
        if cell.kind is CellKind.TEXT:
            has_text = True
            origin.append((r, str(cell.value).strip()))
        elif cell.text is not None:
            origin.append((r, cell.text))
    out = _TextColumn()
    if not has_text:
        return out  # nothing left as text: every cell was typed on its own
    conversion = convert_column([text for _, text in origin])
    if conversion.kind is None:
        out.reason = conversion.reason
        if conversion.reason:  # numeric-looking: also undo per-cell typing (one convention)
            for r, text in origin:
                out.cells[r] = RawCell(text, CellKind.TEXT)
        return out
    out.note = conversion.note
    for (r, text), value, fmt in zip(origin, conversion.values, conversion.formats, strict=True):
        if value is None:
            out.cells[r] = RawCell(text, CellKind.TEXT)
            continue
        if conversion.kind == "number":
            out.cells[r] = RawCell(value, CellKind.NUMBER, fmt, text=text)
        else:
            timed = fmt != "yyyy-mm-dd"
            out.cells[r] = RawCell(
                value, CellKind.DATETIME if timed else CellKind.DATE, fmt, text=text
            )
    out.left_out = [origin[i][0] for i in conversion.left_out]
    out.left_reason = conversion.note or "not a number or date in the column's convention"
    out.blank = {origin[i][0] for i in conversion.blank}
    if conversion.currencies is not None:
        out.currencies = {
            r: unit for (r, _), unit in zip(origin, conversion.currencies, strict=True)
        }
    return out


def _drop_form_rows(
    sheet: str,
    cells: Cells,
    data_rows: list[int],
    totals_rows: list[int],
    span: tuple[int, int],
    skipped: list[Skipped],
) -> None:
    """Take footer rows and pivot subtotal rows out of ``data_rows`` (in place; see
    :mod:`~orchestrator.spreadsheet.structure`, rules 5 and 6)."""
    c1, c2 = span
    form = footer_rows(cells, data_rows, totals_rows, c1, c2)
    subtotals = pivot_subtotals(
        cells, [r for r in data_rows if r not in form], sorted(totals_rows), c1, c2
    )
    for r in subtotals:
        form[r] = "a pivot subtotal (the sum of the rows below it; the sheet's grand total agrees)"
        totals_rows.append(r)
    for r in sorted(form):
        data_rows.remove(r)
        skipped.append(Skipped(what="row", ref=sheet_ref(sheet, f"{r}:{r}"), reason=form[r]))


def _select_rows(
    raw: RawSheet, box: Box, header_rows: list[int], totals: int, skipped: list[Skipped]
) -> tuple[list[int], list[int]]:
    """``(data rows, totals rows)`` of a table: the rows under the header, less hidden rows,
    form rows (:mod:`~orchestrator.spreadsheet.structure`) and total rows, each left out
    appended to ``skipped`` with its reason."""
    cells = raw.cells
    r1, c1, r2, c2 = box
    first = (header_rows[-1] + 1) if header_rows else r1
    last = r2 - totals
    hidden_rows = set() if raw.include_hidden else raw.hidden_rows
    candidates = [r for r in range(first, last + 1) if _row_cells(cells, r, c1, c2)]
    totals_rows = [r for r in range(last + 1, r2 + 1) if _row_cells(cells, r, c1, c2)]
    data_rows: list[int] = []
    wide = sum(len(_row_cells(cells, r, c1, c2)) >= 2 for r in candidates) >= 0.8 * len(candidates)
    for r in candidates:
        if r in hidden_rows:
            skipped.append(
                Skipped(what="row", ref=sheet_ref(raw.name, f"{r}:{r}"), reason="hidden row")
            )
            continue
        form = structure_reason(cells, r, (c1, c2), header_rows, wide)
        if form is not None:
            skipped.append(Skipped(what="row", ref=sheet_ref(raw.name, f"{r}:{r}"), reason=form))
            continue
        row = _row_cells(cells, r, c1, c2)
        label = _total_label(row)
        if label is not None and not _STRONG_TOTAL.match(label):
            # a weak label ("Average", "Total Wine & More", "East Total") counts only when the
            # row sums or averages the rows above it
            since = [q for q in data_rows if q > (totals_rows[-1] if totals_rows else 0)]
            if not _aggregates_rows_above(cells, r, c1, c2, [since, data_rows]):
                label = None
        elif (
            label is None
            and data_rows
            and row
            and row[0].kind is not CellKind.TEXT
            and any(c.formula is not None and _TOTAL_FORMULA.match(c.formula) for c in row)
        ):
            label = "(a SUM formula)"  # no label: a formula totals the rows above (=SUM(B2:B5))
        if label is not None and len(candidates) > 1:
            totals_rows.append(r)
            skipped.append(
                Skipped(
                    what="row",
                    ref=sheet_ref(raw.name, f"{r}:{r}"),
                    reason=f"total, subtotal or average row ({label!r})",
                )
            )
            continue
        data_rows.append(r)
    _drop_form_rows(raw.name, cells, data_rows, totals_rows, (c1, c2), skipped)
    totals_rows.sort()
    return data_rows, totals_rows


def build_table(
    raw: RawSheet,
    box: Box,
    header_rows: list[int],
    table_id: str,
    *,
    name: str | None = None,
    source: str = "detected",
    totals: int = 0,
) -> Table | None:
    """A :class:`Table` of the cells of ``box`` under ``header_rows``; None without data."""
    cells = raw.cells
    _, c1, _, c2 = box
    skipped: list[Skipped] = []
    hidden_cols = set() if raw.include_hidden else raw.hidden_cols
    data_rows, totals_rows = _select_rows(raw, box, header_rows, totals, skipped)
    if not data_rows:
        return None
    columns: list[Column] = []
    issues: list[CellIssue] = []
    issue_count = 0
    formula_examples: list[tuple[str, str]] = []
    seen_names: Counter[str] = Counter()
    for c in range(c1, c2 + 1):
        letter = get_column_letter(c)
        header = _header_name(cells, header_rows, c)
        if c in hidden_cols:
            if header or any((r, c) in cells for r in data_rows):
                skipped.append(
                    Skipped(
                        what="column",
                        ref=sheet_ref(raw.name, f"{letter}:{letter}"),
                        reason=f"hidden column{f' {header!r}' if header else ''}",
                    )
                )
            continue
        texts = _convert_text(cells, data_rows, c)
        values: list[Value] = []
        kinds: Counter[CellKind] = Counter()
        formats: Counter[str] = Counter()
        errors = formulas = uncached = merged_values = 0
        issue_rows: list[int] = []
        for r in data_rows:
            cell = texts.cells.get(r) or cells.get((r, c))
            if cell is None or r in texts.blank:
                values.append(None)
                continue
            ref = sheet_ref(raw.name, f"{letter}{r}")
            if cell.formula is not None:
                formulas += 1
                if len(formula_examples) < 5:
                    formula_examples.append((ref, cell.formula[:200]))
            if _is_copy(cell, r, c):
                merged_values += 1
                if cell.kind is CellKind.NUMBER and cell.merged_from[0] < r:  # type: ignore[index]
                    values.append(None)  # one merged number is one value (structure rule 4)
                    continue
            if cell.kind is CellKind.ERROR:
                errors += 1
                issue_count += 1
                if len(issues) < MAX_ISSUES_LISTED:
                    issues.append(CellIssue(ref=ref, kind="error", detail=str(cell.value)))
                values.append(None)
                issue_rows.append(r)
            elif cell.kind is CellKind.UNCACHED:
                uncached += 1
                issue_count += 1
                kind = "placeholder_value" if raw.placeholder_cache else "uncached_formula"
                if len(issues) < MAX_ISSUES_LISTED:
                    issues.append(CellIssue(ref=ref, kind=kind, detail=cell.formula or "="))
                values.append(None)
                issue_rows.append(r)
            else:
                values.append(cell.value)
                kinds[cell.kind] += 1
                formats[cell.number_format] += 1
        if not header and not kinds and not errors and not uncached:
            continue  # an empty spacer column
        ctype, nonconforming = _column_type(kinds, values)
        if ctype in (ColumnType.INTEGER, ColumnType.NUMBER):
            conforming = (CellKind.NUMBER,)
        else:
            conforming = tuple(k for k in kinds if k.value == ctype.value) or tuple(kinds)
        fmt = formats.most_common(1)[0][0] if formats else "General"
        if ctype in (ColumnType.INTEGER, ColumnType.NUMBER):
            fmt, scale = _percent_scale(formats, header, values)
            if scale != 1.0:  # percent points -> the fractions that the "%" unit means
                values = [
                    v * scale if isinstance(v, int | float) and not isinstance(v, bool) else v
                    for v in values
                ]
                ctype = ColumnType.NUMBER
        unknown = [f"{letter}{r}" for r in issue_rows]
        if ctype in (ColumnType.INTEGER, ColumnType.NUMBER):
            unknown += [
                f"{letter}{r}"
                for r, v in zip(data_rows, values, strict=True)
                if v is not None and (not isinstance(v, int | float) or isinstance(v, bool))
            ]
            unknown.sort(key=lambda ref: int(ref[len(letter) :]))
        base = header or f"Column {letter}"
        seen_names[base] += 1
        col_name = base if seen_names[base] == 1 else f"{base} ({seen_names[base]})"
        columns.append(
            Column(
                name=col_name,
                letter=letter,
                index=c,
                type=ctype,
                unit=None if texts.currencies else _unit(fmt, header, ctype),
                number_format=fmt,
                range=sheet_ref(raw.name, f"{letter}{data_rows[0]}:{letter}{data_rows[-1]}"),
                values=values,
                non_empty=sum(kinds.values()),
                nonconforming=nonconforming if conforming else 0,
                errors=errors,
                formulas=formulas,
                uncached_formulas=uncached,
                merged_values=merged_values,
                unknown=unknown,
                note=texts.note,
                value_units=(
                    [texts.currencies.get(r) for r in data_rows] if texts.currencies else None
                ),
            )
        )
        if texts.reason:
            skipped.append(
                Skipped(
                    what="column",
                    ref=sheet_ref(raw.name, f"{letter}:{letter}"),
                    reason=f"{col_name!r} left as text: {texts.reason}",
                )
            )
        for r in texts.left_out:
            skipped.append(
                Skipped(
                    what="cell",
                    ref=sheet_ref(raw.name, f"{letter}{r}"),
                    reason=f"{col_name!r}: {texts.left_reason}",
                )
            )
    if not columns:
        return None
    return Table(
        id=table_id,
        name=name or f"{raw.name} {a1(box)}",
        sheet=raw.name,
        source=source,  # type: ignore[arg-type]
        ref=a1(box),
        header_rows=header_rows,
        rows=data_rows,
        totals_rows=totals_rows,
        columns=columns,
        issues=issues,
        issue_count=issue_count,
        formula_examples=formula_examples,
        skipped=skipped,
    )


def _text_block(cells: Cells, box: Box, rows: Iterable[int] | None = None) -> TextBlock:
    r1, c1, r2, c2 = box
    lines: list[str] = []
    for r in rows if rows is not None else range(r1, r2 + 1):
        row = [
            cell
            for c in range(c1, c2 + 1)
            if (cell := cells.get((r, c))) is not None and not _is_copy(cell, r, c)
        ]
        if row:
            text = " | ".join(" ".join(str(cell.value).split()) for cell in row)
            lines.append(text[:MAX_TEXT_CHARS])
        if len(lines) >= MAX_TEXT_LINES:
            break
    return TextBlock(ref=a1(box), lines=lines)


def _excel_table(raw: RawSheet, declared: RawTable, table_id: str) -> Table | None:
    header = [declared.ref[0]] if declared.header_rows else []
    return build_table(
        raw,
        declared.ref,
        header,
        table_id,
        name=declared.name,
        source="excel_table",
        totals=declared.totals_rows,
    )


def build_sheet(raw: RawSheet, limits: ReadLimits, next_id: list[int]) -> Sheet:
    """Turn a :class:`RawSheet` into a :class:`Sheet` of tables and text blocks.

    Args:
        raw: The sheet as read (its merged ranges are spread in place).
        limits: Reading limits (merged-range spreading).
        next_id: One-element counter for table ids across the workbook (mutated).
    """
    placeholders = remove_placeholders(raw)
    kinds = Counter(cell.kind for cell in raw.cells.values())
    used = a1(_box(list(raw.cells))) if raw.cells else None
    spread_merged(raw, limits)
    tables: list[Table] = []
    blocks: list[TextBlock] = []
    warnings = list(raw.warnings)

    def new_id() -> str:
        next_id[0] += 1
        return f"T{next_id[0]}"

    claimed: set[tuple[int, int]] = set()
    for declared in raw.tables:
        table = _excel_table(raw, declared, new_id())
        r1, c1, r2, c2 = declared.ref
        claimed.update(p for p in raw.cells if r1 <= p[0] <= r2 and c1 <= p[1] <= c2)
        if table is not None:
            tables.append(table)
    # a placeholder still holds its place in the layout (a template's fill row does not cut
    # its table in two), but is no value
    free = [p for p in raw.cells if p not in claimed] + [
        p for p in placeholders if p not in claimed
    ]
    cells = {p: cell for p, cell in raw.cells.items() if p not in claimed}
    boxes = [_box(points) for points in xy_cut(free) if any(p in cells for p in points)]
    boxes = _join_blocks(raw.cells, boxes)
    for box in boxes:
        if len(tables) >= MAX_TABLES_PER_SHEET:
            warnings.append(
                f"more than {MAX_TABLES_PER_SHEET} tables on the sheet; the rest were not read"
            )
            break
        r1, c1, r2, c2 = box
        column_texts = c1 == c2 and all(
            cell.kind is CellKind.TEXT
            for (r, c), cell in cells.items()
            if r1 <= r <= r2 and c == c1
        )
        if r1 == r2 or column_texts:
            blocks.append(_text_block(cells, box))
            continue
        header, notes = find_header(cells, box)
        if notes:
            blocks.append(_text_block(cells, (notes[0], c1, notes[-1], c2), notes))
        if header:
            box = (header[0], c1, r2, c2)
        view = RawSheet(
            raw.name,
            raw.index,
            cells=cells,
            hidden_rows=raw.hidden_rows,
            hidden_cols=raw.hidden_cols,
            placeholder_cache=raw.placeholder_cache,
            include_hidden=raw.include_hidden,
        )
        table = build_table(view, box, header, new_id())
        if table is None:
            next_id[0] -= 1
            blocks.append(_text_block(cells, box))
        else:
            tables.append(table)
    merged = [a1(m) for m in raw.merged]
    return Sheet(
        name=raw.name,
        index=raw.index,
        state=raw.state,
        declared_dimension=raw.declared_dimension,
        used_range=used,
        cells=sum(kinds.values()),
        tables=tables,
        text_blocks=blocks,
        merged_ranges=merged[:500],
        kinds=dict(kinds),
        warnings=warnings,
    )
