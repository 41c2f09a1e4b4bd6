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
from datetime import date

from openpyxl.utils import get_column_letter

from orchestrator.spreadsheet.columns import (
    MAX_ISSUES_LISTED,
    TableNotes,
    build_column,
    header_name,
    percent_format,
    split_by_currency_column,
    typed_numbers,
)
from orchestrator.spreadsheet.model import Column, Sheet, Skipped, Table, TextBlock
from orchestrator.spreadsheet.raw import CellKind, RawCell, RawSheet, RawTable, ReadLimits
from orchestrator.spreadsheet.refs import (
    Box,
    Cells,
    a1,
    is_copy,
    row_cells,
    sheet_ref,
)
from orchestrator.spreadsheet.structure import (
    footer_rows,
    has_number,
    index_name_row,
    labels_over_values,
    pivot_subtotals,
    remove_placeholders,
    structure_reason,
    units_row,
    unlabelled_total,
)
from orchestrator.spreadsheet.textvalues import cell_value

__all__ = [
    "HEADER_SCAN_ROWS",
    "MAX_ISSUES_LISTED",
    "MAX_TABLES_PER_SHEET",
    "Box",
    "a1",
    "build_sheet",
    "build_table",
    "percent_format",
    "sheet_ref",
]

HEADER_SCAN_ROWS = 10
#: A header is at most this many rows (``2024`` over ``H1`` over ``Units | Revenue``).
MAX_HEADER_ROWS = 3
MAX_TABLES_PER_SHEET = 50
MAX_TEXT_LINES = 50
MAX_TEXT_CHARS = 300
#: A subtotal row is checked against the runs of up to this many data rows above it (and
#: against all of them), which bounds the work per labelled row.
MAX_GROUP_ROWS = 1000
_TOTALS = re.compile(
    r"^\s*(?:(?:grand|sub)[\s-]?)?totals?\b"
    r"|^\s*(?:sum|average|avg|mean|overall|all|gesamt|insgesamt|summe|zwischensumme|"
    r"durchschnitt|mittelwert|somme|moyenne|sous-total|suma|promedio|media|totale|totaal|"
    r"gemiddelde|итого|всего|среднее)\s*[:：]?\s*$"
    r"|^\s*(?:[合总總小共累]\s*[计計]|[汇彙匯]\s*[总總]|总\s*和|總\s*和|平\s*均|均值|平均值)",
    re.IGNORECASE,
)
#: Exact total labels: a row so labelled (with a number) is a total row, no check needed.
_STRONG_TOTAL = re.compile(
    r"^\s*(?:(?:grand|sub)[\s-]?)?totals?\s*[:：]?\s*$"
    r"|^\s*(?:sum|gesamt|insgesamt|summe|zwischensumme|somme|sous-total|suma|totale|totaal|"
    r"итого|всего)\s*[:：]?\s*$"
    r"|^\s*(?:[合总總小共]\s*[计計]|[汇彙匯]\s*[总總]|总\s*和|總\s*和)\s*[:：]?\s*$",
    re.IGNORECASE,
)
#: A total word ending a label, as a whole word ("销售 小计", "East 合计", "Ops sub-total",
#: "HR Sum", "北區 小計", "彙總"): English, Simplified and Traditional Chinese. Such a row
#: counts only when its numbers total the rows above it (checked, never trusted).
_END_TOTAL = re.compile(
    r"(?:^|[\s\-_/(（:：])(?:grand\s*|sub[\s-]?)?(?:totals?|sum)\s*[:：)）]?\s*$"
    r"|(?:[小合总總共]\s*[计計]|[汇彙匯]\s*[总總])\s*[:：)）]?\s*$",
    re.IGNORECASE,
)
#: A label that ends in "total" ("East Total", "Overall total", "Region subtotal"): Excel's
#: Data > Subtotal writes "<group> Total" rows. Checked against the rows above like the weak
#: labels of :data:`_TOTALS` ("Total Wine & More" is a store, "Average" may be a category).
_TRAILING_TOTAL = re.compile(r"^\s*\S.{0,40}?\s(?:grand\s)?(?:sub)?totals?\s*[:：]?\s*$", re.I)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
#: A formula that totals the rows above it (``=SUM(B2:B5)``, ``=SUBTOTAL(9,B2:B5)``).
_TOTAL_FORMULA = re.compile(r"^=?\s*(?:SUM|SUBTOTAL|AGGREGATE)\s*\(", re.IGNORECASE)
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
    for axis in (0, 1):  # rows first, then columns
        runs = _runs(p[axis] for p in points)
        if len(runs) > 1 and depth < 64:
            out = []
            for lo, hi in runs:
                out.extend(xy_cut([p for p in points if lo <= p[axis] <= hi], depth + 1))
            return out
    return [points]


def _box(points: list[tuple[int, int]]) -> Box:
    rows = [r for r, _ in points]
    cols = [c for _, c in points]
    return min(rows), min(cols), max(rows), max(cols)


def _is_title(row: list[RawCell], width: int) -> bool:
    if width == 1:
        return False
    if len(row) == 1:
        return True
    origins = {cell.merged_from for cell in row}
    return len(origins) == 1 and None not in origins


def _period(cell: RawCell) -> tuple[int, int] | None:
    """The period a cell names when it is a column label, as ``(kind, order)``: a year (a
    whole number of 1900-2100: ``(0, year)``) or a date (``(1, day number)``); else None."""
    value = cell.value
    if cell.kind in (CellKind.DATE, CellKind.DATETIME) and isinstance(value, date):
        return 1, value.toordinal()
    if cell.kind is CellKind.NUMBER and isinstance(value, int | float) and value == int(value):
        return (0, int(value)) if 1900 <= value <= 2100 else None
    return None


def _period_labels(cells: Cells, r: int, box: Box) -> bool:
    """Whether the cells of row ``r`` that are not text label columns by period (a cross-tab's
    ``Region | 2022 | 2023 | 2024``, or month dates): two or more distinct years or dates of
    one kind in order, and the numbers below them mostly are not periods (the row names
    the columns, it is not data of the same kind)."""
    _, c1, r2, c2 = box
    keys: list[tuple[int, int]] = []
    columns: list[int] = []
    for c in range(c1, c2 + 1):
        cell = cells.get((r, c))
        if cell is None or cell.kind is CellKind.TEXT:
            continue
        key = _period(cell)
        if key is None:
            return False
        if not is_copy(cell, r, c):
            keys.append(key)
            columns.append(c)
    if len(keys) < 2 or len({kind for kind, _ in keys}) != 1 or len(set(keys)) < len(keys):
        return False
    order = [value for _, value in keys]
    if order != sorted(order) and order != sorted(order, reverse=True):
        return False
    below = [
        cell
        for x in range(r + 1, min(r2, r + 5) + 1)
        for c in columns
        if (cell := cells.get((x, c))) is not None and cell.kind is CellKind.NUMBER
    ]
    return len(below) >= len(columns) and sum(_period(b) is None for b in below) * 2 > len(below)


def _header_like(cells: Cells, r: int, box: Box, repeats: bool = True) -> bool:
    _, c1, r2, c2 = box
    row = row_cells(cells, r, c1, c2)
    width = c2 - c1 + 1
    if not row:
        return False
    if any(cell.kind is not CellKind.TEXT for cell in row) and not _period_labels(cells, r, box):
        return False
    if len(row) * 2 < width or _is_title(row, width):
        return False
    texts = [
        str(cell.value).strip()
        for c in range(c1, c2 + 1)
        if (cell := cells.get((r, c))) is not None and not is_copy(cell, r, c)
    ]
    if len(set(texts)) < len(texts) and not (repeats and labels_over_values(cells, r, box, texts)):
        return False
    # a header's labels do not recur as values in the rows below it (a row that repeats
    # the whole header is the header repeated, as a report repeats it per section)
    for c in range(c1, c2 + 1):
        head = cells.get((r, c))
        if head is None or is_copy(head, r, c):
            continue
        for below in range(r + 1, min(r2, r + 50) + 1):
            cell = cells.get((below, c))
            if (
                cell is not None
                and not is_copy(cell, below, c)
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
        row = row_cells(cells, r, c1, c2)
        if not row:
            continue
        if _total_above(row):
            notes.append(r)  # a total shown above the header (a summary line): not data
            continue
        if _header_like(cells, r, box):
            # (a second row of repeated labels is this one's sub-header, not the real header)
            fuller = r + 1 < r2 and _header_like(cells, r + 1, box, repeats=False)
            if fuller and len(row_cells(cells, r + 1, c1, c2)) > len(row):
                notes.append(r)  # a sparse caption row above the real header (pivot layout)
                continue
            header = [r]
            while len(header) < MAX_HEADER_ROWS and _header_continues(cells, header[-1], box):
                header.append(header[-1] + 1)
            if len(header) == 1 and _second_header(cells, r, box):
                header.append(r + 1)  # a bilingual header: 销售额 over Sales
            header = _with_index_name(cells, header, box)
            if units_row(cells, header[-1] + 1, box):
                header = [*header, header[-1] + 1]  # (USD) | (kg) under the labels
            return header, notes
        if any(cell.kind is not CellKind.TEXT for cell in row):
            return [], []
        if _is_title(row, width) or len(row) * 2 < width or len({c.value for c in row}) == 1:
            notes.append(r)  # a title, a note, or one title repeated across (Sales | Sales)
            continue
        return [], []
    return [], []


def _label_row(cells: Cells, r: int, box: Box) -> bool:
    """Labels over at least half the width: text, or the years/dates of a period header."""
    _, c1, _, c2 = box
    row = row_cells(cells, r, c1, c2)
    return len(row) * 2 >= c2 - c1 + 1 and (
        all(cell.kind is CellKind.TEXT for cell in row) or _period_labels(cells, r, box)
    )


def _with_index_name(cells: Cells, header: list[int], box: Box) -> list[int]:
    """``header`` grown down to a pandas index-name row (``Region`` alone under ``Year |
    2024 | 2025`` and ``Product | a | b``) when every row between is a row of labels."""
    for r in range(header[-1] + 1, header[0] + MAX_HEADER_ROWS + 1):
        if index_name_row(cells, r, box, header):
            return list(range(header[0], r + 1))
        if not _label_row(cells, r, box):
            break
    return header


def _total_above(row: list[RawCell]) -> bool:
    """Whether a row before the header is a total shown above the table: an exact total label
    (:data:`_STRONG_TOTAL`) first, and a number after it (typed, or text that reads as one:
    ``$1,015.50``)."""
    first = row[0]
    if first.kind is not CellKind.TEXT or not _STRONG_TOTAL.match(str(first.value)):
        return False
    return any(
        cell.kind in (CellKind.NUMBER, CellKind.UNCACHED)
        or (
            cell.kind is CellKind.TEXT
            and (read := cell_value(str(cell.value))) is not None
            and read[2] == "number"
        )
        for cell in row[1:]
    )


def _header_continues(cells: Cells, r: int, box: Box) -> bool:
    """Whether row ``r + 1`` is one more header row under header row ``r``: all text over at
    least half the width, under a row whose labels span columns, merged (``2024`` over
    ``Units | Revenue``) or centred across empty cells that the row below fills (then data
    must start right under it: a number or date in the next row)."""
    _, c1, r2, c2 = box
    nxt = r + 1
    below = row_cells(cells, nxt, c1, c2)
    if nxt >= r2 or not below or len(below) * 2 < c2 - c1 + 1:
        return False
    if any(cell.kind is not CellKind.TEXT for cell in below):
        return False
    row = {c: cell for c in range(c1, c2 + 1) if (cell := cells.get((r, c))) is not None}
    if any(cell.merged_from is not None and cell.merged_from[0] == r for cell in row.values()):
        return True
    first = min(row, default=c2)
    spanned = [c for c in range(first + 1, c2 + 1) if c not in row and (nxt, c) in cells]
    return bool(spanned) and any(
        (cell := cells.get((nxt + 1, c))) is not None and cell.kind is not CellKind.TEXT
        for c in range(c1, c2 + 1)
    )


def _second_header(cells: Cells, r: int, box: Box) -> bool:
    """Whether row ``r + 1`` is a second header line under header row ``r`` (a translation:
    ``销售额`` over ``Sales``): text in exactly the header's columns, every label of one row
    Chinese and none of the other, and a number right below one of them."""
    _, c1, r2, c2 = box
    if r + 2 > r2:
        return False
    head = {c: cell for c in range(c1, c2 + 1) if (cell := cells.get((r, c))) is not None}
    second = {c: cell for c in range(c1, c2 + 1) if (cell := cells.get((r + 1, c))) is not None}
    if set(second) != set(head) or len(second) < 2:
        return False
    if any(cell.kind is not CellKind.TEXT or is_copy(cell, r + 1, c) for c, cell in second.items()):
        return False
    cjk = [[bool(_CJK.search(str(row[c].value))) for c in head] for row in (head, second)]
    if not (all(cjk[0]) and not any(cjk[1])) and not (all(cjk[1]) and not any(cjk[0])):
        return False  # not the same labels in two scripts ("A股, iPhone手机" is data)
    return any(
        (cell := cells.get((r + 2, c))) is not None and cell.kind is CellKind.NUMBER for c in second
    )


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
                        for cell in row_cells(cells, b[0], b[1], b[3])
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


def _total_label(row: list[RawCell]) -> tuple[str, bool] | None:
    """``(label, trusted)`` of a total/subtotal/average row, None for a data row.

    The label is the row's first value when it is a total label, else any text cell of the
    row that is one or ends in a total word (``East 小计``, a ``Subtotal`` in the second
    column, a ``Total`` right of its number); ``trusted`` only for an exact total label
    (:data:`_STRONG_TOTAL`) as the first value: the others must total the rows above.
    The row must hold a number."""
    if not any(cell.kind is CellKind.NUMBER or cell.kind is CellKind.UNCACHED for cell in row):
        return None
    for i, cell in enumerate(row):
        if cell.kind is not CellKind.TEXT:
            continue
        label = str(cell.value).strip()
        if i == 0 and (_TOTALS.match(label) or _TRAILING_TOTAL.match(label)):
            return label[:40], bool(_STRONG_TOTAL.match(label))
        if _STRONG_TOTAL.match(label) or _END_TOTAL.search(label):
            return label[:40], False
    return None


def _aggregates_rows_above(cells: Cells, r: int, c1: int, c2: int, data_rows: list[int]) -> bool:
    """Whether a number of row ``r`` is the sum or the mean of its column over the data rows
    right above it (any run that ends at the last data row: a group's rows, a nested
    group's rows, or all of them; :data:`MAX_GROUP_ROWS` at most besides all), or a formula
    that totals the rows above (``SUM``, ``SUBTOTAL``, ``AGGREGATE``)."""
    for c in range(c1, c2 + 1):
        cell = cells.get((r, c))
        if cell is None or cell.kind not in (CellKind.NUMBER, CellKind.UNCACHED):
            continue
        if cell.formula is not None and _TOTAL_FORMULA.match(cell.formula):
            return True
        if cell.kind is not CellKind.NUMBER or isinstance(cell.value, bool):
            continue
        target = float(cell.value)  # type: ignore[arg-type]  # a NUMBER cell: int or float
        numbers = [
            float(v.value)  # type: ignore[arg-type]  # a NUMBER cell: int or float
            for q in data_rows
            if (v := cells.get((q, c))) is not None
            and v.kind is CellKind.NUMBER
            and not isinstance(v.value, bool)
        ]
        if _is_run_aggregate(target, numbers):
            return True
    return False


def _is_run_aggregate(target: float, numbers: list[float]) -> bool:
    """Whether ``target`` is the sum (or, of two or more, the mean) of the last k
    ``numbers`` for some k (k <= :data:`MAX_GROUP_ROWS`, or all of them)."""
    total = 0.0
    for k, value in enumerate(reversed(numbers), start=1):
        total += value
        if k > MAX_GROUP_ROWS and k < len(numbers):
            continue
        if abs(target - total) <= 1e-6 * max(1.0, abs(total)):
            return True
        mean = total / k
        if k >= 2 and abs(target - mean) <= 1e-6 * max(1.0, abs(mean)):
            return True
    return False


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
        form[r] = "a pivot subtotal (the sum of the rows below it)"
        totals_rows.append(r)
    for r in sorted(form):
        data_rows.remove(r)
        _skip_row(skipped, sheet, r, form[r])


def _skip_row(skipped: list[Skipped], sheet: str, r: int, reason: str) -> None:
    skipped.append(Skipped(what="row", ref=sheet_ref(sheet, f"{r}:{r}"), reason=reason))


def _select_rows(
    raw: RawSheet, box: Box, header_rows: list[int], totals: int, skipped: list[Skipped]
) -> tuple[list[int], list[int]]:
    """``(data rows, totals rows)`` of a table: the rows under the header, less hidden rows,
    form rows (:mod:`~orchestrator.spreadsheet.structure`) and total rows, each left out
    appended to ``skipped`` with its reason."""
    r1, c1, r2, c2 = box
    first = (header_rows[-1] + 1) if header_rows else r1
    last = r2 - totals
    hidden_rows = set() if raw.include_hidden else raw.hidden_rows
    candidates = [r for r in range(first, last + 1) if row_cells(raw.cells, r, c1, c2)]
    totals_rows = [r for r in range(last + 1, r2 + 1) if row_cells(raw.cells, r, c1, c2)]
    wide = sum(len(row_cells(raw.cells, r, c1, c2)) >= 2 for r in candidates) >= 0.8 * len(
        candidates
    )
    # numbers stored as text read as numbers in the convention of the rows that are no form
    body = [
        r
        for r in candidates + totals_rows
        if structure_reason(raw.cells, r, (c1, c2), header_rows, wide) is None
    ]
    cells = typed_numbers(raw.cells, header_rows + candidates + totals_rows, body, c1, c2)
    data_rows: list[int] = []
    bottom = max((r for r in candidates if has_number(cells, r, c1, c2)), default=None)
    for r in candidates:
        if r in hidden_rows:
            _skip_row(skipped, raw.name, r, "hidden row")
            continue
        form = structure_reason(cells, r, (c1, c2), header_rows, wide)
        if form is not None:
            _skip_row(skipped, raw.name, r, form)
            continue
        label = _row_total(cells, r, (c1, c2), data_rows, r == bottom)
        if label is not None and len(candidates) > 1:
            totals_rows.append(r)
            _skip_row(skipped, raw.name, r, f"total, subtotal or average row ({label!r})")
            continue
        data_rows.append(r)
    _drop_form_rows(raw.name, cells, data_rows, totals_rows, (c1, c2), skipped)
    totals_rows.sort()
    return data_rows, totals_rows


def _row_total(
    cells: Cells, r: int, span: tuple[int, int], data_rows: list[int], bottom: bool = False
) -> str | None:
    """The total label of row ``r`` (a label, ``(a SUM formula)`` or, for the ``bottom`` row
    with a number, ``(the column sums, no label)``), None for a data row."""
    c1, c2 = span
    row = row_cells(cells, r, c1, c2)
    if bottom and unlabelled_total(cells, r, c1, c2, data_rows):
        return "(the column sums, no label)"
    found = _total_label(row)
    label = found[0] if found else None
    if found is not None and not found[1]:
        # a weak label ("Average", "Total Wine & More", "East Total", "销售 小计", a
        # "Subtotal" in the 2nd column) counts only when the row sums or averages rows above
        if not _aggregates_rows_above(cells, r, c1, c2, data_rows):
            return None
        return label
    if (
        label is None
        and data_rows
        and row
        and row[0].kind is not CellKind.TEXT
        and any(c.formula is not None and _TOTAL_FORMULA.match(c.formula) for c in row)
    ):
        return "(a SUM formula)"  # no label: a formula totals the rows above (=SUM(B2:B5))
    return label


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
    _, c1, _, c2 = box
    skipped: list[Skipped] = []
    hidden_cols = set() if raw.include_hidden else raw.hidden_cols
    data_rows, totals_rows = _select_rows(raw, box, header_rows, totals, skipped)
    if not data_rows:
        return None
    notes = TableNotes(skipped)
    seen_names: Counter[str] = Counter()
    columns: list[Column] = []
    for c in range(c1, c2 + 1):
        header = header_name(raw.cells, header_rows, c)
        if c in hidden_cols:
            _skip_hidden_column(raw, c, header, data_rows, skipped)
            continue
        column = build_column(raw, c, header, data_rows, notes, seen_names)
        if column is not None:
            columns.append(column)
    if not columns:
        return None
    columns = split_by_currency_column(columns)
    return Table(
        id=table_id,
        name=name or f"{raw.name} {a1(box)}",
        sheet=raw.name,
        source=source,
        ref=a1(box),
        header_rows=header_rows,
        rows=data_rows,
        totals_rows=totals_rows,
        columns=columns,
        issues=notes.issues,
        issue_count=notes.issue_count,
        formula_examples=notes.formula_examples,
        skipped=skipped,
    )


def _skip_hidden_column(
    raw: RawSheet, c: int, header: str, data_rows: list[int], skipped: list[Skipped]
) -> None:
    """List a hidden column left out of the data (one with a header or a value)."""
    if header or any((r, c) in raw.cells for r in data_rows):
        letter = get_column_letter(c)
        skipped.append(
            Skipped(
                what="column",
                ref=sheet_ref(raw.name, f"{letter}:{letter}"),
                reason=f"hidden column{f' {header!r}' if header else ''}",
            )
        )


def _text_block(cells: Cells, box: Box, rows: Iterable[int] | None = None) -> TextBlock:
    r1, c1, r2, c2 = box
    lines: list[str] = []
    for r in rows if rows is not None else range(r1, r2 + 1):
        row = [
            cell
            for c in range(c1, c2 + 1)
            if (cell := cells.get((r, c))) is not None and not is_copy(cell, r, c)
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
