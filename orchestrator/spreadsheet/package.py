"""Rewrite an .xlsx package that Excel opens but openpyxl does not into one it reads.

Two kinds of valid-to-Excel packages are rewritten, entry by entry and streamed (memory stays
bounded), into a temporary file that the xlsx backend then reads:

* **Backslash entry names.** Some Windows zip tools store ``xl\\worksheets\\sheet1.xml``.
  Excel treats ``\\`` as ``/`` in part names; Python's ``zipfile`` keeps it literally on
  Linux, so openpyxl finds no ``xl/workbook.xml``. Names are rewritten with ``/`` (a leading
  ``/`` is dropped), and so are the ``Target`` paths of the relationships parts.
* **Part names that differ in case** from the names the package refers to them by
  (``xl/worksheets/Sheet1.xml`` where the workbook's relationships say ``sheet1.xml``).
  OPC part names are case-insensitive (ECMA-376 Part 2, 9.1.1.1) and Excel opens such a
  file; ``zipfile`` and openpyxl look names up exactly (the sheets are "missing"). Each such
  entry is renamed to the name the content types or relationships use.
* **Strict Open XML** (ISO/IEC 29500 Strict, Excel's "Strict Open XML Spreadsheet"). Its
  parts use the ``http://purl.oclc.org/ooxml/...`` namespaces and relationship types where
  transitional files use ``http://schemas.openxmlformats.org/...``; the elements are the same
  for what the reader uses (cells, shared strings, styles, merged ranges, tables). openpyxl
  knows only the transitional namespaces (a strict workbook loads with 0 sheets), so each
  strict namespace URI is replaced by its transitional one (ECMA-376 Part 1, Annex A, and
  Part 4's transitional schemas). No maintained Python library converts strict to
  transitional (LibreOffice can, but it is not a dependency), hence this table.
"""

from __future__ import annotations

import posixpath
import re
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

from openpyxl.xml.functions import fromstring

from orchestrator.spreadsheet.errors import CorruptFileError, SpreadsheetTooLargeError

_STRICT = b"http://purl.oclc.org/ooxml/"
_TRANSITIONAL = b"http://schemas.openxmlformats.org/"
#: Strict namespace (and relationship-type prefix) → transitional, longest first so that a
#: prefix never shadows a longer URI.
STRICT_TO_TRANSITIONAL: tuple[tuple[bytes, bytes], ...] = tuple(
    sorted(
        (
            (_STRICT + strict.encode(), _TRANSITIONAL + transitional.encode())
            for strict, transitional in (
                ("spreadsheetml/main", "spreadsheetml/2006/main"),
                ("officeDocument/relationships", "officeDocument/2006/relationships"),
                ("officeDocument/extendedProperties", "officeDocument/2006/extended-properties"),
                ("officeDocument/customProperties", "officeDocument/2006/custom-properties"),
                ("officeDocument/docPropsVTypes", "officeDocument/2006/docPropsVTypes"),
                ("officeDocument/sharedTypes", "officeDocument/2006/sharedTypes"),
                ("officeDocument/math", "officeDocument/2006/math"),
                ("officeDocument/bibliography", "officeDocument/2006/bibliography"),
                ("officeDocument/customXml", "officeDocument/2006/customXml"),
                ("drawingml/main", "drawingml/2006/main"),
                ("drawingml/chart", "drawingml/2006/chart"),
                ("drawingml/chartDrawing", "drawingml/2006/chartDrawing"),
                ("drawingml/spreadsheetDrawing", "drawingml/2006/spreadsheetDrawing"),
                ("drawingml/picture", "drawingml/2006/picture"),
                ("drawingml/diagram", "drawingml/2006/diagram"),
                ("drawingml/lockedCanvas", "drawingml/2006/lockedCanvas"),
                ("drawingml/compatibility", "drawingml/2006/compatibility"),
                ("schemaLibrary/main", "schemaLibrary/2006/main"),
            )
        ),
        key=lambda pair: -len(pair[0]),
    )
)
#: ``<calcPr fullCalcOnLoad="1"/>`` in ``xl/workbook.xml``: the writer asks Excel to
#: recalculate every formula on open, so cached formula values are placeholders.
FULL_CALC = re.compile(rb"<(?:\w+:)?calcPr\b[^>]*\bfullCalcOnLoad\s*=\s*[\"'](?:1|true)[\"']")
_CHUNK = 1 << 20
_MAX_REFS_PART = 8 << 20  # a relationships or content-types part larger than this is not read
_CARRY = max(len(strict) for strict, _ in STRICT_TO_TRANSITIONAL)
_TARGET = re.compile(rb'(\bTarget\s*=\s*["\'])([^"\']*)')
_BACKSLASH_TARGET = re.compile(rb'\bTarget\s*=\s*["\'][^"\']*\\')


def _name(name: str) -> str:
    return name.replace("\\", "/").lstrip("/")


def _xml(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> list[Any]:
    """The elements of a small XML part; none for a part over :data:`_MAX_REFS_PART` bytes
    uncompressed (a zip bomb is not unpacked here)."""
    if info.file_size > _MAX_REFS_PART:
        return []
    return list(fromstring(archive.read(info)).iter())


def _part_references(archive: zipfile.ZipFile, entries: dict[str, zipfile.ZipInfo]) -> set[str]:
    """The part names the package refers to: the content types' overrides, every internal
    relationship target (resolved against its source part's folder) and each referred
    part's own relationships part. ``entries`` maps lower-cased part names to entries."""
    refs = {"[Content_Types].xml", "_rels/.rels"}
    types = entries.get("[content_types].xml")
    if types is not None:
        for node in _xml(archive, types):
            if node.tag.endswith("Override") and node.get("PartName"):
                refs.add(_name(node.get("PartName", "")))
    for lower, info in entries.items():
        if not lower.endswith(".rels"):
            continue
        base = posixpath.dirname(posixpath.dirname(_name(info.filename)))
        for node in _xml(archive, info):
            target = node.get("Target")
            if not node.tag.endswith("Relationship") or not target:
                continue
            if node.get("TargetMode") == "External":
                continue
            target = target.replace("\\", "/")
            part = target.lstrip("/") if target.startswith("/") else posixpath.join(base, target)
            refs.add(posixpath.normpath(part))
    for part in list(refs):
        folder, leaf = posixpath.split(part)
        refs.add(posixpath.join(folder, "_rels", leaf + ".rels"))
    return refs


def case_renames(archive: zipfile.ZipFile) -> dict[str, str]:
    """Entry name → the name the package refers to it by, for each entry whose name differs
    from its reference only in case (empty for a well-formed package)."""
    entries = {_name(info.filename).lower(): info for info in archive.infolist()}
    renames: dict[str, str] = {}
    for ref in _part_references(archive, entries):
        info = entries.get(ref.lower())
        if info is not None and _name(info.filename) != ref:
            renames[_name(info.filename)] = ref
    return renames


def is_strict(archive: zipfile.ZipFile) -> bool:
    """Whether the package's root relationships (``_rels/.rels``) use Strict Open XML."""
    for info in archive.infolist():
        if _name(info.filename) == "_rels/.rels":
            with archive.open(info) as src:
                return _STRICT in src.read(1 << 16)
    return False


def _translate(data: bytes) -> bytes:
    for strict, transitional in STRICT_TO_TRANSITIONAL:
        data = data.replace(strict, transitional)
    return data


def _slash_targets(data: bytes) -> bytes:
    """A relationships part with each ``Target`` written with ``/`` (``xl\\worksheets\\...``
    is the same part to Excel)."""
    return _TARGET.sub(lambda m: m[1] + m[2].replace(b"\\", b"/"), data)


def _copy(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, out: IO[bytes], strict: bool, left: list[int]
) -> None:
    """Stream one entry into ``out``, translating namespaces when ``strict``; ``left`` is the
    one-element budget of uncompressed bytes still allowed (mutated). A small relationships
    part is read whole, its targets written with ``/``."""
    carry = b""
    if _name(info.filename).endswith(".rels") and info.file_size <= _MAX_REFS_PART:
        data = archive.read(info)
        left[0] -= len(data)
        if left[0] < 0:
            raise OverflowError
        out.write(_slash_targets(_translate(data) if strict else data))
        return
    with archive.open(info) as src:
        while chunk := src.read(_CHUNK):
            left[0] -= len(chunk)
            if left[0] < 0:
                raise OverflowError
            if not strict:
                out.write(chunk)
                continue
            buffer = _translate(carry + chunk)
            out.write(buffer[:-_CARRY])
            carry = buffer[-_CARRY:]
    if carry:
        out.write(carry)


def _rewrite(
    archive: zipfile.ZipFile,
    out: IO[bytes],
    strict: bool,
    max_unpacked: int,
    renames: dict[str, str],
) -> None:
    left = [max_unpacked]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as dst:
        seen: set[str] = set()
        for info in archive.infolist():
            name = _name(info.filename)
            name = renames.get(name, name)
            if not name or name.endswith("/") or name in seen:
                continue  # folders; a duplicate name keeps its first entry
            seen.add(name)
            xml = name.endswith((".xml", ".rels", ".vml"))
            with dst.open(name, "w", force_zip64=True) as sink:
                _copy(archive, info, sink, strict and xml, left)


def normalised_copy(path: Path, max_unpacked: int) -> IO[bytes] | None:
    """A temporary file holding ``path`` rewritten for openpyxl, or None when it needs nothing.

    Args:
        path: An .xlsx package (already sniffed as a ZIP with a workbook).
        max_unpacked: Bound on the uncompressed bytes rewritten (a zip bomb stops there).

    Returns:
        An open binary file positioned at 0 (the caller closes it), or None.

    Raises:
        CorruptFileError: The ZIP cannot be read while rewriting it.
        SpreadsheetTooLargeError: Over ``max_unpacked`` bytes uncompressed.
    """
    out: IO[bytes] | None = None
    try:
        with zipfile.ZipFile(path) as archive:
            backslash = any("\\" in info.filename for info in archive.infolist()) or any(
                _BACKSLASH_TARGET.search(archive.read(info))
                for info in archive.infolist()
                if info.filename.lower().endswith(".rels") and info.file_size <= _MAX_REFS_PART
            )
            strict = is_strict(archive)
            renames = case_renames(archive)
            if not (backslash or strict or renames):
                return None
            out = tempfile.TemporaryFile()  # noqa: SIM115 (returned open: the caller closes it)
            _rewrite(archive, out, strict, max_unpacked, renames)
    except OverflowError as exc:
        if out is not None:
            out.close()
        raise SpreadsheetTooLargeError(
            path,
            f"its parts hold more than {max_unpacked / 2**20:,.0f} MiB uncompressed",
            "Split it into smaller files",
        ) from exc
    except (
        zipfile.BadZipFile,
        zlib.error,
        OSError,
        EOFError,
        ValueError,
        RuntimeError,
        SyntaxError,  # a .rels or content-types part that is not XML (ParseError)
    ) as exc:
        if out is not None:
            out.close()
        raise CorruptFileError(
            path,
            f"the ZIP package cannot be read ({type(exc).__name__}: {exc})",
            "Re-save the workbook in Excel, or send the original file again",
        ) from exc
    out.seek(0)
    return out
