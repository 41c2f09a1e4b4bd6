"""The .csv/.tsv backend: the standard library's ``csv`` module, streamed, with typed cells.

Encoding: :mod:`~orchestrator.spreadsheet.encodings` (a BOM's, UTF-8, then the East Asian
legacy code pages when the text reads as their language; ``ReadLimits.encoding``, the user's
``--encoding``, when given); an unsure guess is a warning naming ``--encoding``. Excel's
``sep=;`` first line names the separator and is not a row.

Cells are typed per field with :func:`~orchestrator.spreadsheet.textvalues.cell_value`, the
same parser the .xlsx path uses for numbers and dates stored as text: plain numbers,
percentages (``12.5%`` → 0.125 with a ``0.0%`` format), currency amounts, accounting
negatives, ISO dates and date-times, and Excel error literals. Each typed cell keeps its text,
so table detection reads every column again with one convention (decimal comma or point, day
or month first) decided from all of its values
(:func:`~orchestrator.spreadsheet.textvalues.convert_column`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

from orchestrator.spreadsheet.encodings import detect_encoding
from orchestrator.spreadsheet.errors import CorruptFileError, SpreadsheetTooLargeError
from orchestrator.spreadsheet.raw import ERROR_LITERALS, CellKind, RawCell, RawSheet, ReadLimits
from orchestrator.spreadsheet.textvalues import cell_value


def parse_text_cell(text: str) -> RawCell | None:
    """Type one CSV field like Excel does when it opens a CSV; None when blank.

    Example:
        >>> parse_text_cell("12.5%").value, parse_text_cell("12.5%").number_format
        (0.125, '0.0%')
        >>> parse_text_cell("$1,234").value, parse_text_cell("(1,200)").value
        (1234, -1200)
    """
    stripped = text.strip()
    if not stripped:
        return None
    if stripped in ERROR_LITERALS:
        return RawCell(stripped, CellKind.ERROR)
    typed = cell_value(stripped)
    if typed is None:
        return RawCell(stripped, CellKind.TEXT)
    value, fmt, kind = typed
    if kind == "date":
        kind_ = CellKind.DATE if fmt == "yyyy-mm-dd" else CellKind.DATETIME
        return RawCell(value, kind_, fmt, text=stripped)
    return RawCell(value, CellKind.NUMBER, fmt, text=stripped)


#: Excel's first line naming the separator of a CSV file (``sep=;``): not a row.
_SEP_LINE = re.compile(r"^\ufeff?sep=(.)\r?\n?$", re.IGNORECASE)


def separator_line(line: str) -> str | None:
    """The separator a ``sep=X`` first line names, or None for any other line.

    Example:
        >>> separator_line("sep=;"), separator_line("id;text")
        (';', None)
    """
    match = _SEP_LINE.match(line)
    return match.group(1) if match else None


def _rows(path: Path, encoding: str) -> Iterator[list[str]]:
    with path.open(newline="", encoding=encoding) as handle:
        sep = separator_line(handle.readline())
        if sep is None:
            handle.seek(0)
        sample = handle.read(65536)
        handle.seek(0)
        if sep is not None:
            handle.readline()  # Excel's separator line is no row
            dialect: type[csv.Dialect] | csv.Dialect = csv.excel
            yield from csv.reader(handle, dialect, delimiter=sep)
            return
        if path.suffix.lower() == ".tsv":
            dialect = csv.excel_tab
        else:
            try:
                dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
            except csv.Error:
                dialect = csv.excel
        yield from csv.reader(handle, dialect)


def read_csv(path: Path, limits: ReadLimits) -> tuple[list[RawSheet], list[str]]:
    """Read a delimited text file as one sheet named after the file.

    Returns:
        ``([sheet], warnings)``.

    Raises:
        UnsupportedFileError: Undecodable text.
        CorruptFileError: Malformed CSV (e.g. a field over the csv module's size limit, or a
            decoding error after the probed head).
        SpreadsheetTooLargeError: More than ``limits.max_rows`` rows with data.
    """
    guess = detect_encoding(path, given=limits.encoding)
    encoding = guess.encoding
    sheet = RawSheet(name=path.stem[:31] or "Sheet1", index=0)
    notes = [f"read as delimited text, encoding {encoding}"]
    notes += [note] if (note := guess.note()) else []
    data_rows = 0
    dropped = 0
    try:
        for r, fields in enumerate(_rows(path, encoding), start=1):
            kept = 0
            for c, text in enumerate(fields, start=1):
                if c > limits.max_cols:
                    dropped += 1
                    continue
                cell = parse_text_cell(text)
                if cell is not None:
                    sheet.cells[(r, c)] = cell
                    kept += 1
            if kept:
                data_rows += 1
                if data_rows > limits.max_rows or len(sheet.cells) > limits.max_cells:
                    raise SpreadsheetTooLargeError(
                        path,
                        f"it has more than {limits.max_rows:,} rows with data (reading "
                        "stopped there to keep memory bounded)",
                        "Split the file, or raise the limit (ORCH_SPREADSHEET_MAX_ROWS)",
                    )
    except (csv.Error, UnicodeDecodeError) as exc:
        raise CorruptFileError(
            path,
            f"the delimited text is malformed ({exc})",
            "Export it again as CSV UTF-8, or pass the file's code page with --encoding",
        ) from exc
    if dropped:
        sheet.warnings.append(f"{dropped:,} values after column {limits.max_cols} were not read")
    return [sheet], notes
