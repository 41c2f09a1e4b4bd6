"""Fuzzing the spreadsheet reader (issue 18, part 4) on mutated REAL workbooks.

Every example starts from the bytes of a real workbook in ``../shared/data/spreadsheets`` or
``../shared/data/fault_inputs`` and damages it the ways uploads get damaged: a zip entry
dropped, the entries shuffled, the file cut short, an XML part's bytes flipped, cut or
replaced with hostile text (markup, huge numbers, entities). :func:`read_workbook` must then
either return a whole :class:`Workbook` or raise a :class:`SpreadsheetError` (the documented
part of the error tree, :mod:`orchestrator.exceptions`) — never any other exception. The CSV
reader gets arbitrary bytes and arbitrary text in arbitrary encodings.

Profiles and example counts: :mod:`tests.unit.fuzz_profiles`.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.spreadsheet import ReadLimits, SpreadsheetError, Workbook, read_workbook
from tests.unit.fuzz_profiles import EXAMPLES, FUZZ, report_examples, scaled

DATA = Path(DEFAULT_DATA_DIR)
#: Real workbooks small enough to read many times (the large ones are read by other tests).
SEEDS = sorted(
    p
    for folder in (DATA / "spreadsheets", DATA / "fault_inputs")
    for p in folder.glob("*")
    if p.is_file() and p.suffix != ".md" and p.stat().st_size < 70_000
)
SEED_BYTES = {p.name: p.read_bytes() for p in SEEDS}
XLSX_SEEDS = sorted(name for name, data in SEED_BYTES.items() if data[:4] == b"PK\x03\x04")
#: Bounds that keep one damaged workbook cheap (a mutation can declare huge ranges).
LIMITS = ReadLimits(max_rows=5_000, max_cells=200_000, max_sheets=32, max_sheets_scanned=64)

HOSTILE_TEXT = st.sampled_from(
    [
        "",
        "<",
        "&",
        "&#0;",
        "&#xFFFFFF;",
        "]]>",
        "<!DOCTYPE x [<!ENTITY a 'aaaa'>]>",
        "-1",
        "1E+400",
        "NaN",
        "99999999999999999999999",
        "XFD1048577",
        "A0",
        "A1:XFD1048576",
        '=HYPERLINK("http://x")',
        "\x00",
        "\ud7ff",
        "sheet1.xml",
        "../../etc/passwd",
    ]
) | st.text(max_size=12)


@pytest.fixture(scope="module", autouse=True)
def _summary() -> Iterator[None]:
    yield
    report_examples(__name__)


def _zip_entries(data: bytes) -> list[tuple[zipfile.ZipInfo, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [(info, archive.read(info)) for info in archive.infolist()]


def _rezip(entries: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, body in entries:
            archive.writestr(info.filename, body)
    return out.getvalue()


def _read(data: bytes, name: str) -> Workbook | SpreadsheetError:
    """Write ``data`` under ``name`` in a fresh folder and read it; a SpreadsheetError is
    returned, anything else propagates (and fails the test)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            wb = read_workbook(path, LIMITS)
        except SpreadsheetError as exc:
            assert str(exc).startswith(path.name + ":"), exc  # names the file
            assert exc.fix, exc  # and says how to fix it
            return exc
    assert wb.sheets_total >= len(wb.sheets)
    assert any(sheet.cells for sheet in wb.sheets)
    return wb


@st.composite
def mutated_xlsx(draw: st.DrawFn) -> tuple[str, bytes, str]:
    """``(file name, damaged bytes, what was done)`` from one real .xlsx."""
    name = draw(st.sampled_from(XLSX_SEEDS))
    entries = _zip_entries(SEED_BYTES[name])
    how = draw(st.sampled_from(["drop", "shuffle", "truncate", "flip", "cut-xml", "text-xml"]))
    if how == "drop":
        victims = draw(st.sets(st.integers(0, len(entries) - 1), min_size=1, max_size=3))
        data = _rezip([e for i, e in enumerate(entries) if i not in victims])
        what = f"dropped {[entries[i][0].filename for i in sorted(victims)]}"
    elif how == "shuffle":
        order = draw(st.permutations(range(len(entries))))
        data = _rezip([entries[i] for i in order])
        what = "shuffled entries"
    elif how == "truncate":
        raw = SEED_BYTES[name]
        cut = draw(st.integers(0, len(raw) - 1))
        data = raw[:cut]
        what = f"cut at byte {cut}"
    else:
        xml = [
            i for i, (info, _) in enumerate(entries) if info.filename.endswith((".xml", ".rels"))
        ]
        index = draw(st.sampled_from(xml))
        info, body = entries[index]
        if how == "flip":
            flips = draw(
                st.lists(
                    st.tuples(st.integers(0, len(body) - 1), st.integers(0, 255)),
                    min_size=1,
                    max_size=8,
                )
            )
            mutable = bytearray(body)
            for at, value in flips:
                mutable[at] = value
            body = bytes(mutable)
        elif how == "cut-xml":
            body = body[: draw(st.integers(0, len(body)))]
        else:  # replace an attribute value or a text node with hostile text
            text = body.decode("utf-8", "replace")
            quotes = [i for i, ch in enumerate(text) if ch in '">']
            if quotes:
                at = draw(st.sampled_from(quotes))
                end = text.find('"' if text[at] == '"' else "<", at + 1)
                end = end if end != -1 else at + 1
                text = text[: at + 1] + draw(HOSTILE_TEXT) + text[end:]
            body = text.encode("utf-8", "surrogatepass")
        entries[index] = (info, body)
        data = _rezip(entries)
        what = f"{how} in {info.filename}"
    return name, data, what


@settings(parent=scaled(60))
@given(mutated_xlsx())
def test_damaged_real_xlsx_reads_or_raises_a_spreadsheet_error(
    case: tuple[str, bytes, str],
) -> None:
    name, data, _what = case
    EXAMPLES[f"{__name__}::xlsx"] += 1
    _read(data, name if name.endswith(".xlsx") else name + ".xlsx")


@settings(parent=FUZZ)
@given(
    data=st.binary(max_size=4096),
    name=st.sampled_from(["x.csv", "x.tsv", "x.xlsx", "x.xls", "upload"]),
)
def test_arbitrary_bytes_under_any_spreadsheet_name(data: bytes, name: str) -> None:
    EXAMPLES[f"{__name__}::bytes"] += 1
    _read(data, name)


CSV_FIELD = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        [
            "1,234.50",
            "1.234,50 €",
            "(12,50)",
            "12,5 %",
            "$-1",
            "13/01/2025",
            "3/2/2025",
            "=1+1",
            '"',
            '""',
            "\r",
            "\n",
            "\x00",
            "1e309",
            "-0",
            "TRUE",
            "#DIV/0!",
        ]
    ),
)


@settings(parent=FUZZ)
@given(
    rows=st.lists(st.lists(CSV_FIELD, max_size=8), max_size=12),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gb18030", "latin-1", "cp1252"]),
    quote=st.booleans(),
)
def test_csv_reader_on_arbitrary_fields_and_encodings(
    rows: list[list[str]], sep: str, encoding: str, quote: bool
) -> None:
    EXAMPLES[f"{__name__}::csv"] += 1
    lines = []
    for row in rows:
        fields = [('"' + f.replace('"', '""') + '"') if quote else f for f in row]
        lines.append(sep.join(fields))
    data = "\n".join(lines).encode(encoding, "replace")
    _read(data, "data.tsv" if sep == "\t" else "data.csv")
