"""A table's columns: each column's cells read into typed values, its type, unit and number
format (rules 5 to 7 of :mod:`~orchestrator.spreadsheet.detect`). Split out of
:mod:`~orchestrator.spreadsheet.detect` (issue 48).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time
from itertools import islice
from typing import Literal

from openpyxl.utils import get_column_letter

from orchestrator.spreadsheet.model import CellIssue, Column, ColumnType, Skipped, Value
from orchestrator.spreadsheet.raw import CellKind, RawCell, RawSheet
from orchestrator.spreadsheet.refs import Cells, is_copy, sheet_ref
from orchestrator.spreadsheet.textvalues import cell_value, convert_column, currency_name

MAX_ISSUES_LISTED = 200
_HEADER_UNIT = re.compile(r"[\(（\[]\s*([^()（）\[\]]{1,12}?)\s*[\)）\]]\s*$")
_FORMAT_CURRENCY = re.compile(r"\[\$([^\-\]]+)(?:-[0-9A-Fa-f]+)?\]|([$€£¥￥₹₩₽₺₪฿₫₱₴₦])")

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


def _format_currency(fmt: str) -> str | None:
    """The currency an Excel number format shows (``"$"#,##0.00`` → ``$``,
    ``#,##0.00 [$€-407]`` → ``€``), or None."""
    match = _FORMAT_CURRENCY.search(fmt.replace('"', ""))
    return (match.group(1) or match.group(2)).strip() if match else None


def _format_currencies(formats: list[str | None]) -> list[str | None] | None:
    """Each value's currency by its own cell's number format, when a column's typed numbers
    are formatted in two or more currencies (``$100`` beside ``€200``); None otherwise (one
    currency, or none, is the column's unit)."""
    units = [_format_currency(f) if f is not None else None for f in formats]
    return units if len({unicodedata.normalize("NFKC", u) for u in units if u}) > 1 else None


def _unit(fmt: str, header: str, ctype: ColumnType) -> str | None:
    if ctype in (ColumnType.INTEGER, ColumnType.NUMBER):
        if percent_format(fmt) is not None:
            return "%"
        currency = _format_currency(fmt)
        if currency:
            return currency
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


def _label(value: object) -> str:
    """A header cell as a column name: a date as its ISO date (``2025-01-01``), a whole
    number without ``.0`` (a year header ``2024``)."""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time() else value.isoformat(" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def header_name(cells: Cells, header_rows: list[int], c: int) -> str:
    """The name of column ``c``: its labels in ``header_rows``, top first, joined by `` / ``.
    An upper header row's empty cell takes the nearest label left of it in that row (a label
    centred across columns without merging them: ``2024`` over ``Units | Revenue``)."""
    parts: list[str] = []
    for r in header_rows:
        cell = cells.get((r, c))
        if cell is None and r != header_rows[-1]:
            cell = next(
                (cells[(r, x)] for x in range(c - 1, max(c - 10, 0), -1) if (r, x) in cells), None
            )
        if cell is not None and cell.value is not None:
            text = " ".join(_label(cell.value).split())
            if text and text not in parts:
                parts.append(text)
    return " / ".join(parts)[:80]


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
        merged = cells[(r, c)].merged_from  # a value spread from a merged range stays one
        if value is None:
            out.cells[r] = RawCell(text, CellKind.TEXT, merged_from=merged)
            continue
        if conversion.kind == "number":
            out.cells[r] = RawCell(value, CellKind.NUMBER, fmt, merged_from=merged, text=text)
        else:
            timed = fmt != "yyyy-mm-dd"
            kind = CellKind.DATETIME if timed else CellKind.DATE
            out.cells[r] = RawCell(value, kind, fmt, merged_from=merged, text=text)
    out.left_out = [origin[i][0] for i in conversion.left_out]
    out.left_reason = conversion.note or "not a number or date in the column's convention"
    out.blank = {origin[i][0] for i in conversion.blank}
    if conversion.currencies is not None:
        out.currencies = {
            r: unit for (r, _), unit in zip(origin, conversion.currencies, strict=True)
        }
    return out


def typed_numbers(cells: Cells, rows: list[int], body: list[int], c1: int, c2: int) -> Cells:
    """The cells of ``rows`` in columns ``c1..c2``, with each column's numbers stored as text
    (``$1,600.00``, ``1.234,50 €``) on the ``body`` rows read as numbers in the convention of
    those rows, so that total and subtotal rows are found in such columns as in typed ones."""
    typed = {(r, c): cell for r in rows for c in range(c1, c2 + 1) if (cell := cells.get((r, c)))}
    for c in range(c1, c2 + 1):
        texts = (str(x.value) for r in body if (x := cells.get((r, c))) and x.kind is CellKind.TEXT)
        if not any(cell_value(text) for text in islice(texts, 20)):
            continue  # no text cell reads as a number (names, ids): the column stays as it is
        for r, cell in _convert_text(cells, body, c).cells.items():
            if cell.kind is CellKind.NUMBER:
                typed[(r, c)] = cell
    return typed


@dataclass(slots=True)
class TableNotes:
    """What a table's columns find beyond their values, gathered across its columns."""

    skipped: list[Skipped]
    issues: list[CellIssue] = field(default_factory=list)
    issue_count: int = 0
    formula_examples: list[tuple[str, str]] = field(default_factory=list)


@dataclass(slots=True)
class _Cells:
    """One column's data cells as read: values (None where there is none) and their tally."""

    values: list[Value] = field(default_factory=list)
    kinds: Counter[CellKind] = field(default_factory=Counter)
    formats: Counter[str] = field(default_factory=Counter)
    row_formats: list[str | None] = field(default_factory=list)  # each value's number format
    errors: int = 0
    formulas: int = 0
    uncached: int = 0
    merged_values: int = 0
    issue_rows: list[int] = field(default_factory=list)


def build_column(
    raw: RawSheet,
    c: int,
    header: str,
    data_rows: list[int],
    notes: TableNotes,
    seen_names: Counter[str],
) -> Column | None:
    """Column ``c`` of a table over ``data_rows``; None for an empty spacer column.

    Cell issues, formula examples and what was left as text are added to ``notes``;
    ``seen_names`` numbers repeated names (``Amount (2)``).
    """
    letter = get_column_letter(c)
    texts = _convert_text(raw.cells, data_rows, c)
    read = _read_cells(raw, c, data_rows, texts, notes)
    if not header and not read.kinds and not read.errors and not read.uncached:
        return None  # an empty spacer column
    ctype, nonconforming = _column_type(read.kinds, read.values)
    numeric = ctype in (ColumnType.INTEGER, ColumnType.NUMBER)
    if numeric:
        conforming: tuple[CellKind, ...] = (CellKind.NUMBER,)
    else:
        conforming = tuple(k for k in read.kinds if k.value == ctype.value) or tuple(read.kinds)
    fmt = read.formats.most_common(1)[0][0] if read.formats else "General"
    values = read.values
    if numeric:
        fmt, scale = _percent_scale(read.formats, header, values)
        if scale != 1.0:  # percent points -> the fractions that the "%" unit means
            values = [
                v * scale if isinstance(v, int | float) and not isinstance(v, bool) else v
                for v in values
            ]
            ctype = ColumnType.NUMBER
    units = [texts.currencies.get(r) for r in data_rows] if texts.currencies else None
    if units is None and numeric:
        units = _format_currencies(read.row_formats)
    base = header or f"Column {letter}"
    seen_names[base] += 1
    col_name = base if seen_names[base] == 1 else f"{base} ({seen_names[base]})"
    column = Column(
        name=col_name,
        letter=letter,
        index=c,
        type=ctype,
        unit=None if units else _unit(fmt, header, ctype),
        number_format=fmt,
        range=sheet_ref(raw.name, f"{letter}{data_rows[0]}:{letter}{data_rows[-1]}"),
        values=values,
        non_empty=sum(read.kinds.values()),
        nonconforming=nonconforming if conforming else 0,
        errors=read.errors,
        formulas=read.formulas,
        uncached_formulas=read.uncached,
        merged_values=read.merged_values,
        unknown=_unknown(letter, read.issue_rows, data_rows, values, numeric),
        note=texts.note,
        value_units=units,
    )
    _note_text_left(raw.name, letter, col_name, texts, notes.skipped)
    return column


def _read_cells(
    raw: RawSheet, c: int, data_rows: list[int], texts: _TextColumn, notes: TableNotes
) -> _Cells:
    """Column ``c``'s cells on ``data_rows`` (its text cells as ``texts`` read them again)."""
    letter = get_column_letter(c)
    read = _Cells()
    for r in data_rows:
        read.row_formats.append(None)  # set below for a value that is kept
        cell = texts.cells.get(r) or raw.cells.get((r, c))
        if cell is None or r in texts.blank:
            read.values.append(None)
            continue
        ref = sheet_ref(raw.name, f"{letter}{r}")
        if cell.formula is not None:
            read.formulas += 1
            if len(notes.formula_examples) < 5:
                notes.formula_examples.append((ref, cell.formula[:200]))
        if is_copy(cell, r, c):
            read.merged_values += 1
            if cell.kind is CellKind.NUMBER:
                # one merged number is one value, in the range's top-left cell as Excel
                # holds it (structure rule 4): not again below it nor right of it
                read.values.append(None)
                continue
        if cell.kind in (CellKind.ERROR, CellKind.UNCACHED):
            _note_issue(raw, cell, ref, read, notes)
            read.values.append(None)
            read.issue_rows.append(r)
        else:
            read.values.append(cell.value)
            read.kinds[cell.kind] += 1
            read.formats[cell.number_format] += 1
            read.row_formats[-1] = cell.number_format
    return read


def _note_issue(raw: RawSheet, cell: RawCell, ref: str, read: _Cells, notes: TableNotes) -> None:
    """Count an error or uncached-formula cell, and list it while under the limit."""
    notes.issue_count += 1
    kind: Literal["error", "uncached_formula", "placeholder_value"]
    if cell.kind is CellKind.ERROR:
        read.errors += 1
        kind, detail = "error", str(cell.value)
    else:
        read.uncached += 1
        kind = "placeholder_value" if raw.placeholder_cache else "uncached_formula"
        detail = cell.formula or "="
    if len(notes.issues) < MAX_ISSUES_LISTED:
        notes.issues.append(CellIssue(ref=ref, kind=kind, detail=detail))


def _unknown(
    letter: str, issue_rows: list[int], data_rows: list[int], values: list[Value], numeric: bool
) -> list[str]:
    """Cells of the column whose value is not known: issues, and text in a numeric column."""
    unknown = [f"{letter}{r}" for r in issue_rows]
    if numeric:
        unknown += [
            f"{letter}{r}"
            for r, v in zip(data_rows, values, strict=True)
            if v is not None and (not isinstance(v, int | float) or isinstance(v, bool))
        ]
        unknown.sort(key=lambda ref: int(ref[len(letter) :]))
    return unknown


def _note_text_left(
    sheet: str, letter: str, col_name: str, texts: _TextColumn, skipped: list[Skipped]
) -> None:
    """List a numeric-looking column left as text, and the cells a converted one left."""
    if texts.reason:
        skipped.append(
            Skipped(
                what="column",
                ref=sheet_ref(sheet, f"{letter}:{letter}"),
                reason=f"{col_name!r} left as text: {texts.reason}",
            )
        )
    for r in texts.left_out:
        skipped.append(
            Skipped(
                what="cell",
                ref=sheet_ref(sheet, f"{letter}{r}"),
                reason=f"{col_name!r}: {texts.left_reason}",
            )
        )


#: Names of counts, not money: a currency column beside them does not split them.
_COUNT_WORDS = re.compile(
    r"\b(?:qty|quantity|quantities|units?|count|pcs|pieces|items|no\.? of|number of)\b|#|"
    r"数量|數量|件数|件數|个数|個數|人数|人數|次数|次數",
    re.IGNORECASE,
)


def _row_currencies(column: Column) -> list[str | None] | None:
    """Each row's currency when ``column`` is a currency column (every value a currency on
    its own, ``USD``/``EUR``, ``人民币``/``美元``) naming two or more; None otherwise."""
    if column.type is not ColumnType.TEXT or column.non_empty < 2:
        return None
    units = [currency_name(v) if isinstance(v, str) else None for v in column.values]
    named = [u for u in units if u is not None]
    if len(named) != column.non_empty or len(set(named)) < 2:
        return None
    return units


def split_by_currency_column(columns: list[Column]) -> list[Column]:
    """``columns`` with each amount beside a currency column (``Amount | Currency`` with
    ``USD``, ``EUR``... per row) given its rows' currencies (:attr:`Column.value_units`), so
    that no figure adds amounts in two currencies. Counts (``Qty``, ``数量``) and percentages
    are left as they are; so is every column when no column names two or more currencies."""
    units = next((u for col in columns if (u := _row_currencies(col)) is not None), None)
    if units is None:
        return columns
    return [
        col.model_copy(update={"value_units": units, "unit": None})
        if col.type in (ColumnType.INTEGER, ColumnType.NUMBER)
        and col.value_units is None
        and col.unit != "%"
        and not _COUNT_WORDS.search(col.name)
        else col
        for col in columns
    ]
