"""The .csv/.tsv backend: the standard library's ``csv`` module, streamed, with typed cells.

Encoding (:func:`text_encoding`): a BOM's (UTF-8 as Excel writes "CSV UTF-8", UTF-16 as it
writes "Unicode Text", UTF-32), UTF-16 without a BOM, UTF-8, then GB18030 and Big5. Excel on
a Chinese-locale Windows saves plain "CSV" in the ANSI code page (GBK, of which GB18030 is the
superset; Big5 in Taiwan and Hong Kong); UTF-8 is tried first because GB18030 would also
"decode" many UTF-8 byte sequences into the wrong characters, and GB18030 or Big5 is taken only
when the text reads as Chinese in it (a Shift-JIS file decodes as GB18030 too, into rare
characters). Anything else is refused with a hint to re-export as UTF-8 (guessing among
single-byte code pages is unreliable on short files). Excel's ``sep=;`` first line names the
separator and is not a row.

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

#: Byte-order marks and the codec each names (UTF-32's before UTF-16's, which it starts with).
_BOMS = (
    ((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE), "utf-32"),
    ((codecs.BOM_UTF8,), "utf-8-sig"),
    ((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE), "utf-16"),
)

#: Why text was refused, and what to do (the CSV reader, the sniffer and batch inputs).
LEGACY_TEXT = (
    "the text is neither UTF-8, UTF-16, GB18030 (GBK) nor Big5 (a legacy code page such as "
    "Windows-1252, Shift-JIS or EUC-KR?)"
)
LEGACY_HINT = "Export it again as 'CSV UTF-8' (Excel: File > Save As > CSV UTF-8)"


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


def _utf16_without_bom(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` for UTF-16 text saved without a BOM: NUL bytes (the high byte
    of each ASCII character) on a fifth or more of one side of the byte pairs, and at most a
    tenth as many on the other (a character such as U+9000 has a NUL low byte)."""
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if len(head) < 4 or max(even, odd) * 5 < len(head) // 2 or min(even, odd) * 10 > max(even, odd):
        return None
    return "utf-16-le" if odd > even else "utf-16-be"


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _gb_common(ch: str) -> bool:
    try:
        ch.encode("gb2312")
    except UnicodeEncodeError:
        return False
    return True


def _big5_common(ch: str) -> bool:
    try:
        code = ch.encode("cp950")
    except UnicodeEncodeError:
        return False
    return len(code) == 2 and 0xA1 <= code[0] <= 0xC6  # symbols and the 5,401 common hanzi


def _plausible(text: str, encoding: str) -> bool:
    """Whether ``text`` decoded as ``encoding`` (gb18030 or cp950) reads as Chinese: four in
    five of its non-ASCII characters common ones (GB2312's, after folding Traditional to
    Simplified; Big5's frequent set). Both codecs decode almost any run of high bytes, so a
    Big5 or Shift-JIS file read as GB18030 gives rare characters (``產品`` → ``玻珇``)."""
    wide = "".join(ch for ch in text if ord(ch) >= 0x80)
    if not wide:
        return True
    if encoding == "gb18030":
        from orchestrator.textnorm import to_simplified

        wide, common = to_simplified(wide), _gb_common
    else:
        common = _big5_common
    return sum(map(common, wide)) * 5 >= len(wide) * 4


def text_encoding(head: bytes, *, complete: bool) -> str | None:
    """The codec that reads ``head`` (a file's first bytes; ``complete`` when they are the
    whole file) as text: a BOM's (UTF-8, UTF-16, UTF-32), UTF-16 without a BOM, UTF-8,
    then GB18030 and Big5 when the text reads as Chinese in them; None when none does.

    Example:
        >>> text_encoding("产品,金额".encode("gbk"), complete=True)
        'gb18030'
        >>> text_encoding("產品,金額".encode("big5"), complete=True)
        'cp950'
        >>> text_encoding("Müller,1".encode("cp1252"), complete=True) is None
        True
    """
    found = next((enc for boms, enc in _BOMS if head.startswith(boms)), None)
    candidates = [found] if found else [_utf16_without_bom(head) or "utf-8-sig", "gb18030", "cp950"]
    for encoding in candidates:
        if encoding in ("gb18030", "cp950") and (b"\x00" in head or single_byte_code_page(head)):
            return None  # binary, or Latin-1 text that would read as mojibake
        try:
            text = codecs.getincrementaldecoder(encoding)().decode(head, final=complete)
        except UnicodeDecodeError:
            continue
        if encoding in ("gb18030", "cp950") and not _plausible(text, encoding):
            continue
        if encoding.startswith("utf-16-") and _CONTROL.search(text):
            return None  # a guess without a BOM that reads as control characters: binary
        return encoding
    return None


def detect_encoding(path: Path, probe_bytes: int = 1 << 20) -> str:
    """The codec of a delimited text file, from its first ``probe_bytes``
    (:func:`text_encoding`).

    Raises:
        UnsupportedFileError: No codec reads it as text.
    """
    with path.open("rb") as handle:
        head = handle.read(probe_bytes)
    encoding = text_encoding(head, complete=len(head) < probe_bytes)
    if encoding is None:
        raise UnsupportedFileError(path, LEGACY_TEXT, LEGACY_HINT)
    return encoding


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
