"""The .csv/.tsv backend: the standard library's ``csv`` module, streamed, with typed cells.

Encoding: UTF-8 (a BOM, as Excel writes for "CSV UTF-8", is dropped), then GB18030. Excel on a
Chinese-locale Windows saves plain "CSV" in the ANSI code page (GBK), and GB18030 is its
superset, so those files read correctly; UTF-8 is tried first because GB18030 would also
"decode" many UTF-8 byte sequences into the wrong characters. Anything else is refused with a
hint to re-export as UTF-8 (guessing among single-byte code pages is unreliable on short files).

Cells are typed per field with :func:`~orchestrator.spreadsheet.textvalues.cell_value`, the
same parser the .xlsx path uses for numbers and dates stored as text: plain numbers,
percentages (``12.5%`` → 0.125 with a ``0.0%`` format), currency amounts, accounting
negatives, ISO dates and date-times, and Excel error literals. Each typed cell keeps its text,
so table detection reads every column again with one convention (decimal comma or point, day
or month first) decided from all of its values
(:func:`~orchestrator.spreadsheet.textvalues.convert_column`).
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterator
from pathlib import Path

from orchestrator.spreadsheet.errors import (
    CorruptFileError,
    SpreadsheetTooLargeError,
    UnsupportedFileError,
)
from orchestrator.spreadsheet.raw import ERROR_LITERALS, CellKind, RawCell, RawSheet, ReadLimits
from orchestrator.spreadsheet.textvalues import cell_value

ENCODINGS = ("utf-8-sig", "gb18030")


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


_HIGH_RUN = re.compile(rb"[\x80-\xff]+")


def single_byte_code_page(head: bytes) -> bool:
    """Whether ``head`` (text that is not UTF-8) reads as a single-byte legacy code page
    (Windows-1252, Latin-1) rather than GB18030.

    GB18030 decodes most Latin-1 text without error, as mojibake (``Müller`` → ``M黮ler``),
    because its trail bytes include ASCII letters. Chinese text puts its characters in runs of
    two or more high bytes; a single-byte code page puts an accented letter, one high byte,
    between ASCII ones. So: most runs of high bytes one byte long → a single-byte code page.
    """
    runs = [len(m) for m in _HIGH_RUN.findall(head)]
    return bool(runs) and sum(n == 1 for n in runs) * 2 > len(runs)


def detect_encoding(path: Path, probe_bytes: int = 1 << 20) -> str:
    """The first of :data:`ENCODINGS` that decodes the file's first ``probe_bytes``.

    Raises:
        UnsupportedFileError: Neither decodes.
    """
    with path.open("rb") as handle:
        head = handle.read(probe_bytes)
    for encoding in ENCODINGS:
        if encoding == "gb18030" and single_byte_code_page(head):
            continue  # Latin-1 text would read as mojibake: refused below
        decoder = codecs.getincrementaldecoder(encoding)()
        try:
            decoder.decode(head, final=len(head) < probe_bytes)
        except UnicodeDecodeError:
            continue
        return encoding
    raise UnsupportedFileError(
        path,
        "the text is neither UTF-8 nor GB18030 (a legacy code page such as Windows-1252?)",
        "Export it again as 'CSV UTF-8' (Excel: File > Save As > CSV UTF-8)",
    )


def _rows(path: Path, encoding: str) -> Iterator[list[str]]:
    with path.open(newline="", encoding=encoding) as handle:
        sample = handle.read(65536)
        handle.seek(0)
        if path.suffix.lower() == ".tsv":
            dialect: type[csv.Dialect] | csv.Dialect = csv.excel_tab
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
    encoding = detect_encoding(path)
    sheet = RawSheet(name=path.stem[:31] or "Sheet1", index=0)
    notes = [f"read as delimited text, encoding {encoding}"]
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
            path, f"the delimited text is malformed ({exc})", "Export it again as CSV UTF-8"
        ) from exc
    if dropped:
        sheet.warnings.append(f"{dropped:,} values after column {limits.max_cols} were not read")
    return [sheet], notes
