"""Batch inputs: a sheet of requests (``.xlsx``/``.xlsm`` or ``.csv``), or a folder of workbooks.

Rows are streamed, never loaded whole: an ``.xlsx`` through openpyxl's read-only mode, a
``.csv`` through :mod:`csv`, so memory stays bounded on a 100,000-row sheet. What grows:
the set of ids seen, for the duplicate check (only with an id column), and, for ``.xlsx``, the
workbook's shared-strings table (each distinct string once), which openpyxl loads whole.
Each data row becomes a :class:`BatchRow`; a row that cannot be a request (empty text, a
duplicate id, an attachment outside the allowed folder...) carries a ``problem`` and becomes a
failed row of the batch, never an exception.
What makes the whole input unusable (a missing column, an empty sheet, a header-only sheet,
an unreadable file) raises a :class:`~orchestrator.exceptions.UserError` before any request
is sent.

Example:
    >>> from pathlib import Path
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "in.csv").write_text("ticket,body\\nT1,Where is my refund?\\nT2,\\n")
    >>> source = SheetInput(folder / "in.csv", ColumnMapping(text="body", id="ticket"))
    >>> [(r.row_id, r.problem) for r in source.rows()]
    [('T1', None), ('T2', 'empty text in column body (line 3)')]
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import json
import re
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import IO, Any, Protocol

from openpyxl.utils import get_column_letter
from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.batch.files import file_problem
from orchestrator.exceptions import UserError
from orchestrator.spreadsheet.cells import stored_text
from orchestrator.spreadsheet.csvfile import separator_line
from orchestrator.spreadsheet.encodings import detect_encoding
from orchestrator.spreadsheet.errors import SpreadsheetError
from orchestrator.spreadsheet.package import FULL_CALC, normalised_copy
from orchestrator.spreadsheet.raw import ReadLimits
from orchestrator.spreadsheet.xlsx import sheet_kinds

#: Extensions read as sheets of requests.
SHEET_EXTENSIONS = (".xlsx", ".xlsm", ".csv")
#: Extensions of the workbooks a folder input sends to ``excel_report``.
WORKBOOK_EXTENSIONS = (".xlsx", ".xlsm", ".xls", ".csv")
#: Text sent with a workbook of a folder input, or with an attachment row whose text is empty.
WORKBOOK_REQUEST_TEXT = "Please write a report on the attached spreadsheet: {name}"


class ColumnMapping(BaseModel):
    """Which header names hold the parts of a request (names as in the sheet's first row).

    Attributes:
        text: The request text (required).
        id: Row ids (unique); the row number when None.
        channel: The channel (``email``, ``chat``...).
        thread: A conversation thread id (kept in the request's metadata as ``thread_id``;
            with a customer too, the row is a turn of that customer's conversation).
        customer: The customer id of a thread's turn; a thread belongs to the customer of
            its first row, and a row of another customer on it fails (ThreadOwnerError).
        attachment: Path of a file sent with the request, relative to the allowed folder.
    """

    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1)
    id: str | None = None
    channel: str | None = None
    thread: str | None = None
    customer: str | None = None
    attachment: str | None = None

    @model_validator(mode="after")
    def _one_role_per_column(self) -> ColumnMapping:
        seen: dict[str, str] = {}
        for role, column in self.named().items():
            if column in seen:
                raise ValueError(
                    f"column {column!r} is named both as --{seen[column]}-column and as "
                    f"--{role}-column; each role needs a column of its own"
                )
            seen[column] = role
        return self

    def named(self) -> dict[str, str]:
        """``{role: column}`` of the columns that are set."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class BatchRow(BaseModel):
    """One data row of the input.

    Attributes:
        index: 0-based position among the data rows (blank rows are skipped, not counted).
        row_id: The id column's value, or ``row-<line>``.
        line: 1-based line (CSV) or row number (sheet) in the file.
        text: The request text, or None when empty.
        channel: Channel, when mapped and filled.
        thread: Thread id, when mapped and filled.
        customer: Customer id, when mapped and filled.
        attachment: The resolved attachment path, when mapped, filled and allowed.
        problem: Why this row cannot be sent (it becomes a failed row), or None.
    """

    model_config = ConfigDict(frozen=True)

    index: int
    row_id: str
    line: int
    text: str | None = None
    channel: str | None = None
    thread: str | None = None
    customer: str | None = None
    attachment: str | None = None
    problem: str | None = None


class BatchInput(Protocol):
    """What the runner reads: a description, a fingerprint, a row count and the rows."""

    path: Path

    def describe(self) -> dict[str, Any]:
        """The mapping and options, JSON-serialisable (stored with the batch)."""
        ...

    def fingerprint(self) -> str:
        """A hex digest of the input's bytes and its mapping (same input, same digest)."""
        ...

    def count(self) -> int:
        """Data rows (streams the input once)."""
        ...

    def rows(self) -> Iterator[BatchRow]:
        """The data rows, in input order, streamed."""
        ...


def _near(column: str, names: Sequence[str]) -> str:
    """``", did you mean 'X'?"`` for a header that differs from ``column`` only in case or
    spacing, or is a close spelling (difflib); empty when none is."""
    folded = {n.casefold().strip(): n for n in names if n}
    hit = folded.get(column.casefold().strip())
    if hit is None:
        close = difflib.get_close_matches(column, [n for n in names if n], n=1, cutoff=0.75)
        hit = close[0] if close else None
    return f", did you mean {hit!r}?" if hit is not None else ""


#: Excel's error literals: a formula's cached value that is not the request.
_ERRORS = frozenset(
    {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#SPILL!", "#CALC!"}
)
#: Two words in a row outside string literals (``please refund``, ``Refund: order``), or
#: CJK text: prose that Excel stored as a formula because it began with ``=``, ``+``, ``-``
#: or ``@``.
_PROSE = re.compile(r"[^\W\d_]{2,}[:,;.!?]?\s+[^\W\d_]|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


@dataclass(frozen=True, slots=True)
class FormulaCell:
    """A workbook cell holding a formula whose file has no usable cached value (none, or an
    Excel error such as ``#NAME?``).

    Attributes:
        formula: The formula as stored, with its ``=``.
        cached: The cached error literal, or None when nothing is cached.
    """

    formula: str
    cached: str | None = None
    placeholder: bool = False

    @property
    def typed_text(self) -> str | None:
        """What the user typed when the "formula" is prose (``=please refund order 5512``
        gives ``please refund order 5512``); None for a real formula (``=SUM(A1:A3)``)."""
        body = self.formula[1:].strip()
        outside = re.sub(r'"[^"]*"', " ", body)  # string literals are a formula's text
        if _PROSE.search(outside) and not re.search(r"[A-Za-z_.]+\(", outside):
            return body
        return None

    def problem(self, ref: str) -> str:
        """Why the cell at ``ref`` (``B5``) cannot be read, and what to do."""
        value = (
            f"whose value is the error {self.cached}"
            if self.cached
            else "whose saved value is a placeholder (the file asks Excel to recalculate)"
            if self.placeholder
            else "with no saved value"
        )
        return (
            f"cell {ref} holds a formula ({self.formula[:80]}) {value}; open the file in Excel "
            "and save it so the value is stored, or type the text without a leading '='"
        )


@dataclass(frozen=True, slots=True)
class ErrorCell:
    """A workbook cell whose value is an Excel error (``#N/A``, ``#REF!``...) with no formula:
    pasted as values, or typed. It holds no request text.

    Attributes:
        error: The error literal.
    """

    error: str
    typed_text = None

    def problem(self, ref: str) -> str:
        """Why the cell at ``ref`` (``B5``) cannot be read, and what to do."""
        return (
            f"cell {ref} holds the error {self.error}, not text; put the request text in it "
            "(or fix what produced the error) and run the row again"
        )


#: Cells that hold no usable text: the row fails, naming the cell and why.
UNREADABLE = (FormulaCell, ErrorCell)


def _cell(value: Any) -> str | None:
    """A cell as text: None or blank -> None; dates in ISO format (a date at midnight without
    its time); whole floats without .0; a :class:`FormulaCell` -> its typed text (None for a
    real formula); an :class:`ErrorCell` -> None."""
    if value is None:
        return None
    if isinstance(value, UNREADABLE):
        return value.typed_text
    if isinstance(value, datetime) and value.time() == time():
        text = value.date().isoformat()
    elif isinstance(value, datetime | date):
        text = value.isoformat()
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    return text if text.strip() else None


def _with_formula(value: Any, stored: Any, placeholder: bool = False) -> Any:
    """The cell to use: ``value`` (the cached value), or a :class:`FormulaCell` when the cell
    holds a formula (``stored``) whose cached value is missing, an Excel error, or 0 or
    empty where the workbook asks Excel to recalculate on open (``placeholder``: XlsxWriter
    writes ``=please refund`` with a cached 0); a cached text is the formula's result."""
    if isinstance(value, str):
        value = stored_text(value)
    if not (isinstance(stored, str) and stored.startswith("=")):
        if isinstance(value, str) and value.strip() in _ERRORS:
            return ErrorCell(value.strip())
        return value
    if value is None or (isinstance(value, str) and value.strip() in _ERRORS):
        return FormulaCell(stored, value.strip() if isinstance(value, str) else None)
    if placeholder and (value == 0 or value == ""):  # XlsxWriter's cached result
        return FormulaCell(stored, None, placeholder=True)
    return value


def _open_twice(path: Path) -> tuple[list[Any], IO[bytes] | None, bool]:
    """``path`` opened read-only twice (cached values, then formulas), the temporary copy
    they read (a package Excel opens but openpyxl does not: backslash entry names, Strict
    Open XML, part names in another case; :mod:`orchestrator.spreadsheet.package`) or None,
    and whether its formulas' cached values are placeholders (``fullCalcOnLoad``).

    Raises:
        UserError: The file cannot be opened as a workbook."""
    from openpyxl import load_workbook

    books: list[Any] = []
    handle: IO[bytes] | None = None
    try:
        handle = normalised_copy(path, 20 * ReadLimits().max_file_bytes)
        for data_only in (True, False):
            if handle is not None:
                handle.seek(0)
            source: Any = handle or path
            books.append(load_workbook(source, read_only=True, data_only=data_only))
        placeholder = bool(FULL_CALC.search(books[0]._archive.read("xl/workbook.xml")))
    except Exception as exc:  # zipfile, KeyError, InvalidFileException, SpreadsheetError...
        for book in books:
            book.close()
        if handle is not None:
            handle.close()
        raise UserError(
            f"{path} cannot be opened as a workbook ({type(exc).__name__}: {exc})"
        ) from exc
    return books, handle, placeholder


def _csv_rows(path: Path, handle: IO[str]) -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` of each CSV record, ``line`` being its last line.

    The reader is strict, so a double quote left open is an error that names its line: read
    leniently, it runs to the end of the file (or to the next quote) and glues every line
    after it into one cell (one request, the others lost). A one-line record that only strict
    reading refuses (text after a closing quote: ``"Fragile" sticker torn``) is read
    leniently, as before.

    Raises:
        UserError: A quote opened on some line is never closed, or closes mid-cell on a later
            line.
    """
    raw: list[str] = []  # the lines of the record being read
    first = handle.readline()
    sep = separator_line(first)  # Excel's "sep=;" line names the separator and is no row

    def lines() -> Iterator[str]:
        for text in ([] if sep else [first]) if first else []:
            raw.append(text)
            yield text
        for text in handle:
            raw.append(text)
            yield text

    delimiter = sep or _header_delimiter(first)
    reader, last = csv.reader(lines(), strict=True, delimiter=delimiter), 0
    offset = 1 if sep else 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise UserError(
                    f"{path} is not a readable CSV file: the double quote opened on line "
                    f"{last + 1} is never closed, so every line after it would be one cell; "
                    "close the quote (or remove it) and run again"
                ) from exc
            if len(raw) > 1:  # a quote that closes mid-cell lines later: lines glued
                raise UserError(
                    f"{path} is not a readable CSV file: the double quote opened on line "
                    f"{last + 1} closes in the middle of a cell on line {last + len(raw)}, so "
                    "the lines between would be one cell; fix the quotes and run again"
                ) from exc
            # one line: lenient, as it was always read
            cells = next(csv.reader(raw, delimiter=delimiter), [])
        raw.clear()
        last = reader.line_num + offset
        yield last, cells


def _header_delimiter(header: str) -> str:
    """The separator of a CSV file from its header line: a comma, else a tab or a semicolon
    when the header holds one (Excel in a European locale saves CSV with ``;``)."""
    return next((d for d in ",\t;" if d in header), ",")


def _csv_row(
    cells: Sequence[Any], columns: int | None, text_at: int, line: int
) -> tuple[Sequence[Any], list[str]]:
    """A CSV row's cells, and ``[why]`` it cannot be read, when it has text in more cells than
    its header's ``columns`` (an unquoted comma split a text). When the text is the last
    column, what the commas split off is the rest of it, joined back; otherwise which cells
    make up the request is unknown and the row fails. ``columns`` None: not a CSV file."""
    if columns is None or not any(_cell(c) for c in cells[columns:]):
        return cells, []  # trailing empty cells (a line ending in commas) are no split
    if text_at == columns - 1:
        return [*cells[:text_at], ",".join(str(c) for c in cells[text_at:])], []
    return cells, [
        f"line {line} has {len(cells)} cells but the header names {columns} columns; put a "
        "text that holds a comma in double quotes"
    ]


def resolve_attachment(value: str, allowed: Path) -> tuple[str | None, str | None]:
    """``(resolved path, None)`` for a file inside ``allowed``, else ``(None, reason)``.

    Relative paths are taken from ``allowed``; symlinks are resolved before the check, so
    neither ``..`` nor a link can lead outside it.

    Example:
        >>> resolve_attachment("../../etc/passwd", Path("/tmp"))[1]
        "attachment '../../etc/passwd' is outside the allowed folder /tmp"
    """
    base = allowed.resolve()
    try:
        target = (base / value).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte
        return None, f"attachment {value!r} cannot be resolved: {exc}"
    if not target.is_relative_to(base):
        return None, f"attachment {value!r} is outside the allowed folder {base}"
    problem = file_problem(target)
    if problem == "does not exist":
        return None, f"attachment {value!r} does not exist in {base}"
    if problem is not None:
        return None, f"attachment {value!r} ({target}) {problem}; attach a regular file"
    return str(target), None


def _digest(path: Path, extra: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(extra, sort_keys=True).encode())
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class SheetInput:
    """A sheet of requests: an ``.xlsx``/``.xlsm`` workbook (one sheet) or a ``.csv`` file.

    Args:
        path: The file.
        mapping: Which columns hold what.
        sheet: Worksheet name (workbooks); the first sheet when None.
        attachments_dir: The folder attachments must be inside; the file's folder when None.
        encoding: A ``.csv`` file's codec (``--encoding``); guessed when None, and an unsure
            guess is refused (the message names ``--encoding``).

    Raises:
        UserError: From :meth:`header` (and so :meth:`validate`, :meth:`count`, :meth:`rows`):
            the file is missing, of another type, unreadable, empty, has only a header row, has
            no such sheet, or lacks a mapped column (the message lists the columns it has).
    """

    def __init__(
        self,
        path: Path,
        mapping: ColumnMapping,
        *,
        sheet: str | None = None,
        attachments_dir: Path | None = None,
        encoding: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.mapping = mapping
        self.sheet, self.encoding = sheet, encoding
        self.attachments_dir = Path(attachments_dir) if attachments_dir else self.path.parent
        self._sheet_read: str | None = None  # the worksheet read last (named in errors)
        self._sheets_seen: list[str] = []  # the workbook's sheets (suggested in errors)
        _require_input_file(self.path)
        if self.path.suffix.lower() not in SHEET_EXTENSIONS:
            raise UserError(
                f"input file {self.path} is not a sheet of requests; give an .xlsx, .xlsm or "
                ".csv file, or a folder of workbooks"
            )

    def describe(self) -> dict[str, Any]:
        """The mapping, sheet and attachments folder (stored with the batch)."""
        return {
            "kind": "sheet",
            "columns": self.mapping.named(),
            "sheet": self.sheet,
            "attachments_dir": str(self.attachments_dir.resolve()),
            **({"encoding": self.encoding} if self.encoding else {}),
        }

    def fingerprint(self) -> str:
        """SHA-256 of the file's bytes and :meth:`describe`."""
        return _digest(self.path, self.describe())

    def _raw_rows(self) -> Generator[tuple[int, Sequence[Any]], None, None]:
        """``(line, cells)`` of every row, header included, streamed."""
        if self.path.suffix.lower() == ".csv":
            try:  # as the spreadsheet reader reads CSV; a guess it is unsure of is no request
                guess = detect_encoding(self.path, 1 << 16, given=self.encoding)
                if (encoding := guess.encoding) and guess.unsure:
                    raise UserError(f"{self.path}: {guess.note(read=False)}")
                with self.path.open(newline="", encoding=encoding) as handle:
                    yield from _csv_rows(self.path, handle)
            except SpreadsheetError as exc:
                raise UserError(str(exc)) from exc
            except UnicodeDecodeError as exc:
                raise UserError(
                    f"{self.path} is not {encoding} text past its start ({exc.reason} at "
                    f"byte {exc.start}); save it as CSV UTF-8, or pass its code page with "
                    "--encoding"
                ) from exc
            except csv.Error as exc:  # a cell over the csv module's field limit...
                raise UserError(f"{self.path} is not a readable CSV file: {exc}") from exc
            return
        # Two streams of the same sheet: the cached values, and the formulas (a formula with
        # no cached value is None in the first; what the user typed is in the second).
        books, copy, placeholder = _open_twice(self.path)
        try:
            values, formulas = (self._worksheet(book) for book in books)
            self._sheet_read = values.title
            lines = zip(
                values.iter_rows(values_only=True),
                formulas.iter_rows(values_only=True),
                strict=True,  # the same sheet twice: the same rows
            )
            for line, (cells, texts) in enumerate(lines, start=1):
                yield (
                    line,
                    [_with_formula(c, t, placeholder) for c, t in zip(cells, texts, strict=False)],
                )
        except UserError:
            raise
        except Exception as exc:  # a damaged sheet part: openpyxl's XML parser on it
            raise UserError(
                f"{self._where()} cannot be read ({type(exc).__name__}: {exc}); save it again "
                "in Excel and retry"
            ) from exc
        finally:
            for book in books:
                book.close()
            if copy is not None:
                copy.close()

    def _worksheet(self, workbook: Any) -> Any:
        """The worksheet to read (``self.sheet``, else the first worksheet: chart, dialog and
        Excel 4 macro sheets are not sheets of requests)."""
        kinds = dict(zip(workbook.sheetnames, sheet_kinds(workbook), strict=True))
        names = [name for name, kind in kinds.items() if kind == "worksheet"]
        self._sheets_seen = names
        if self.sheet is None:
            if not names:
                raise UserError(
                    f"{self.path} has no worksheet (only chart, dialog or macro sheets)"
                )
            return workbook[names[0]]
        if self.sheet in names:
            return workbook[self.sheet]
        what = (
            f"'s sheet {self.sheet!r} is a {kinds[self.sheet]}, not a sheet of requests"
            if self.sheet in kinds
            else f" has no sheet {self.sheet!r}"
        )
        raise UserError(f"{self.path}{what}; its sheets: " + (", ".join(names) or "none"))

    def _where(self) -> str:
        """The file, and for a workbook the sheet read (named even when it was the first)."""
        sheet = self.sheet or self._sheet_read
        if sheet is None or self.path.suffix.lower() == ".csv":
            return str(self.path)
        which = "sheet" if self.sheet else "its first sheet"
        return f"{self.path} ({which} {sheet!r})"

    def _other_sheets(self) -> str:
        """``"; its other sheets: ... (choose one with --sheet NAME)"``, or ``""``."""
        read = self.sheet or self._sheet_read
        others = [n for n in self._sheets_seen if n != read]
        if not others:
            return ""
        return (
            f"; the workbook's other sheets: {', '.join(repr(n) for n in others)} (read one "
            "with --sheet NAME)"
        )

    def header(self) -> tuple[list[str], dict[str, int]]:
        """The header names and ``{role: column index}`` of the mapped columns.

        Raises:
            UserError: Empty file, a header with no name, header-only, or a missing column.
        """
        rows = self._raw_rows()
        try:
            for _line, cells in rows:
                names = [(_cell(c) or "").strip() for c in cells]
                if any(names):
                    break
            else:
                raise UserError(
                    f"{self._where()} is empty; the first row must name the columns and the "
                    "rows below it hold one request each" + self._other_sheets()
                )
            while names and not names[-1]:
                names.pop()
            positions: dict[str, int] = {}
            missing = []
            for role, column in self.mapping.named().items():
                if names.count(column) > 1:
                    where = ", ".join(str(i + 1) for i, n in enumerate(names) if n == column)
                    raise UserError(
                        f"{self._where()} has {names.count(column)} columns named {column!r} "
                        f"(--{role}-column; columns {where}); rename all but one so that the "
                        "batch knows which to read"
                    )
                if column in names:
                    positions[role] = names.index(column)
                else:
                    missing.append(f"{column!r} (--{role}-column)" + _near(column, names))
            if missing:
                raise UserError(
                    f"{self._where()} has no column {', '.join(missing)}; its columns are: "
                    + ", ".join(repr(n) for n in names if n)
                    + self._other_sheets()
                )
            if not any(any(_cell(c) for c in cells) for _line, cells in rows):
                raise UserError(
                    f"{self._where()} has a header row but no data rows; add one request per "
                    "row below the header" + self._other_sheets()
                )
        finally:
            rows.close()
        return names, positions

    def validate(self) -> None:
        """Check the header and that a data row exists (see :meth:`header`)."""
        self.header()

    def count(self) -> int:
        """Data rows (non-blank rows below the header); streams the file once."""
        return sum(1 for _ in self._data_cells())

    def _data_cells(self) -> Generator[tuple[int, Sequence[Any]], None, None]:
        rows = self._raw_rows()
        try:
            for _line, cells in rows:
                if any(_cell(c) for c in cells):
                    break  # the header
            for line, cells in rows:
                if any(_cell(c) or isinstance(c, UNREADABLE) for c in cells):
                    yield line, cells
        finally:
            rows.close()

    def rows(self) -> Iterator[BatchRow]:
        """The data rows as :class:`BatchRow`, in input order, streamed."""
        names, positions = self.header()
        seen: dict[str, int] = {}
        column = self.mapping.named()
        # a CSV row has as many cells as its header; a sheet may hold notes beside the table
        columns = len(names) if self.path.suffix.lower() == ".csv" else None
        for index, (line, raw) in enumerate(self._data_cells()):
            cells, problems = _csv_row(raw, columns, positions["text"], line)

            def get(
                role: str, cells: Sequence[Any] = cells, line: int = line, out: list = problems
            ) -> str | None:
                at = positions.get(role)
                if at is None or at >= len(cells):
                    return None
                value = cells[at]
                if isinstance(value, UNREADABLE) and value.typed_text is None:
                    out.append(value.problem(f"{get_column_letter(at + 1)}{line}"))
                return _cell(value)

            row_id = f"row-{line}"
            if "id" in positions:
                value = get("id")
                if value is not None:
                    row_id = value.strip()[:255]
                elif not problems:  # a formula's problem is said already
                    problems.append(f"empty id in column {column['id']} (line {line})")
            if "id" not in positions:
                pass  # row numbers are unique: nothing to remember
            elif row_id in seen:
                problems.append(f"duplicate id {row_id!r} (first at line {seen[row_id]})")
            else:
                seen[row_id] = line
            text, attachment = get("text"), None
            raw_attachment = get("attachment")
            if raw_attachment is not None:
                attachment, problem = resolve_attachment(
                    raw_attachment.strip(), self.attachments_dir
                )
                if problem:
                    problems.append(problem)
            text_cell = cells[positions["text"]] if positions["text"] < len(cells) else None
            if text is None:
                if isinstance(text_cell, UNREADABLE):
                    pass  # get() named the cell and why
                elif attachment is not None:
                    text = WORKBOOK_REQUEST_TEXT.format(name=Path(attachment).name)
                else:
                    problems.append(f"empty text in column {column['text']} (line {line})")
            yield BatchRow(
                index=index,
                row_id=row_id,
                line=line,
                text=text,
                channel=get("channel"),
                thread=get("thread"),
                customer=get("customer"),
                attachment=attachment,
                problem="; ".join(problems) or None,
            )


class WorkbookFolderInput:
    """A folder of workbooks: each file with a workbook extension is one ``excel_report``
    request (its text asks for a report, the file is its attachment), in name order.

    Args:
        path: The folder (not recursive; hidden files are skipped).

    Raises:
        UserError: The folder does not exist, or holds no workbook.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise UserError(f"{self.path} is not a folder")
        if not self._files():
            raise UserError(
                f"folder {self.path} holds no workbook ({', '.join(WORKBOOK_EXTENSIONS)})"
            )

    def _files(self) -> list[Path]:
        return sorted(
            p
            for p in self.path.iterdir()
            if p.suffix.lower() in WORKBOOK_EXTENSIONS and not p.name.startswith((".", "~$"))
        )

    def describe(self) -> dict[str, Any]:
        """``{"kind": "folder"}`` (stored with the batch)."""
        return {"kind": "folder", "columns": {"attachment": "<file>"}}

    def fingerprint(self) -> str:
        """SHA-256 over the workbooks' names and bytes."""
        digest = hashlib.sha256(b"folder")
        for file in self._files():
            digest.update(file.name.encode() + b"\0" + _digest(file, {}).encode())
        return digest.hexdigest()

    def validate(self) -> None:
        """Nothing more to check (the constructor did)."""

    def count(self) -> int:
        """Workbooks in the folder."""
        return len(self._files())

    def rows(self) -> Iterator[BatchRow]:
        """One row per workbook; a symlink that leads outside the folder is a failed row."""
        for index, file in enumerate(self._files()):
            attachment, problem = resolve_attachment(file.name, self.path)
            yield BatchRow(
                index=index,
                row_id=file.name,
                line=index + 1,
                text=WORKBOOK_REQUEST_TEXT.format(name=file.name),
                attachment=attachment,
                problem=problem,
            )


def _require_input_file(path: Path) -> None:
    """Refuse an input that is not a regular file, saying what it is (missing, a device like
    /dev/null, a pipe, a dangling symlink...).

    Raises:
        UserError: See :func:`~orchestrator.batch.files.file_problem`.
    """
    problem = file_problem(path)
    if problem is not None:
        raise UserError(
            f"input file {path} {problem}; give an .xlsx, .xlsm or .csv file of requests, or "
            "a folder of workbooks"
        )


def open_input(
    path: Path,
    mapping: ColumnMapping | None,
    *,
    sheet: str | None = None,
    attachments_dir: Path | None = None,
    encoding: str | None = None,
) -> SheetInput | WorkbookFolderInput:
    """The input at ``path``: a folder of workbooks, or a sheet read with ``mapping``;
    validated (header, columns, at least one data row) before it is returned.

    Raises:
        UserError: See :class:`SheetInput` and :class:`WorkbookFolderInput`; a sheet given
            without a text column; an ``attachments_dir`` that is no folder.
    """
    path = Path(path)
    if attachments_dir is not None and not Path(attachments_dir).is_dir():
        what = "is not a folder" if Path(attachments_dir).exists() else "does not exist"
        raise UserError(
            f"--attachments-dir {attachments_dir} {what}; give the folder the attachments are in"
        )
    if path.is_dir():
        source: SheetInput | WorkbookFolderInput = WorkbookFolderInput(path)
    else:
        _require_input_file(path)
        if mapping is None:
            raise UserError(f"name the text column of {path} with --text-column")
        if sheet is not None and path.suffix.lower() == ".csv":
            raise UserError(
                f"--sheet {sheet!r} names a worksheet, and {path} is a CSV file, which has none; "
                "drop --sheet, or give the .xlsx workbook"
            )
        source = SheetInput(
            path, mapping, sheet=sheet, attachments_dir=attachments_dir, encoding=encoding
        )
    source.validate()
    return source
