"""Tell what a file really is from its first bytes, before any parser touches it.

Extensions lie and parsers fail with unhelpful messages (an encrypted .xlsx makes openpyxl say
``BadZipFile: File is not a zip file``), so the reader decides from content:

* ``PK\\x03\\x04`` — a ZIP package: an OOXML workbook when it holds ``xl/workbook.xml``
  (``xl/workbook.bin``: .xlsb; ``content.xml``: OpenDocument; ``word/``: a Word file).
* ``D0 CF 11 E0 A1 B1 1A E1`` — a Compound File Binary (CFB/OLE2) container
  ([MS-CFB] 2.2). Office puts a password-encrypted OOXML workbook in one, with the streams
  ``EncryptionInfo`` and ``EncryptedPackage`` ([MS-OFFCRYPTO] 2.3.4); a legacy .xls keeps its
  BIFF records in the stream ``Workbook`` (or ``Book`` for BIFF5).
* anything else is read as delimited text only when it decodes as text
  (:func:`~orchestrator.spreadsheet.encodings.text_encoding`: UTF-8/16/32, GB18030, Big5,
  CP949, Shift_JIS, EUC-JP; or the user's ``--encoding``).

A file without an extension (chat front ends store uploads as ``upload_7f3a9c``) is decided
by its bytes alone; a file with an extension must hold what the extension says.

CFB directories are read with ``olefile`` (a maintained OLE2 parser), not by hand.
"""

from __future__ import annotations

import zipfile
from enum import StrEnum
from pathlib import Path

import olefile

from orchestrator.spreadsheet.encodings import LEGACY_HINT, LEGACY_TEXT, text_encoding
from orchestrator.spreadsheet.errors import (
    CorruptFileError,
    PasswordProtectedError,
    UnsupportedFileError,
)

CFB_MAGIC = bytes.fromhex("D0CF11E0A1B11AE1")
ZIP_MAGIC = b"PK\x03\x04"

#: Extensions the reader accepts, and the format each must contain.
EXTENSIONS: dict[str, str] = {
    "xlsx": "xlsx",
    "xlsm": "xlsx",
    "xltx": "xlsx",
    "xltm": "xlsx",
    "xls": "xls",
    "csv": "csv",
    "tsv": "csv",
}


class FileFormat(StrEnum):
    """A format the reader can parse."""

    XLSX = "xlsx"
    XLS = "xls"
    CSV = "csv"


def _resave_hint(what: str) -> str:
    return f"Open it in Excel or LibreOffice and save it as .xlsx ({what} is not supported)"


def _zip_format(path: Path) -> FileFormat:
    try:
        with zipfile.ZipFile(path) as archive:
            # Excel reads "xl\\workbook.xml" (a Windows zip tool's name) as xl/workbook.xml
            names = {name.replace("\\", "/").lstrip("/") for name in archive.namelist()}
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorruptFileError(
            path,
            f"the ZIP package is damaged ({exc})",
            "Re-save the workbook in Excel, or send the original file again",
        ) from exc
    if "xl/workbook.xml" in names:
        return FileFormat.XLSX
    if "xl/workbook.bin" in names:
        raise UnsupportedFileError(
            path, "it is an Excel binary workbook (.xlsb)", _resave_hint(".xlsb")
        )
    if "content.xml" in names and "mimetype" in names:
        raise UnsupportedFileError(
            path, "it is an OpenDocument file (.ods/.odt)", _resave_hint("OpenDocument")
        )
    if any(n.startswith("word/") for n in names):
        raise UnsupportedFileError(
            path, "it is a Word document, not a spreadsheet", "Attach the spreadsheet itself"
        )
    if any(n.startswith("ppt/") for n in names):
        raise UnsupportedFileError(
            path, "it is a PowerPoint file, not a spreadsheet", "Attach the spreadsheet itself"
        )
    raise UnsupportedFileError(
        path, "it is a ZIP archive without a workbook in it", "Attach the .xlsx file itself"
    )


def _cfb_format(path: Path) -> FileFormat:
    try:
        with olefile.OleFileIO(str(path)) as ole:
            streams = {"/".join(entry) for entry in ole.listdir(streams=True, storages=False)}
    except (OSError, ValueError) as exc:  # olefile raises OSError subclasses on bad headers
        raise CorruptFileError(
            path,
            f"the Office compound file is damaged ({exc})",
            "Re-save the workbook in Excel, or send the original file again",
        ) from exc
    if {"EncryptionInfo", "EncryptedPackage"} & streams:
        raise PasswordProtectedError(path)
    if "Workbook" in streams or "Book" in streams:
        return FileFormat.XLS
    raise UnsupportedFileError(
        path,
        "it is an Office compound file without a workbook stream (a Word .doc or similar)",
        "Attach the spreadsheet itself",
    )


def sniff(path: Path, encoding: str | None = None) -> FileFormat:
    """The format of ``path`` from its content, checked against its extension.

    Args:
        path: The file.
        encoding: The codec the user named for a delimited text file (``--encoding``): a
            .csv/.tsv file that is no workbook is then text, whatever its bytes.

    Returns:
        The format a backend can read.

    Raises:
        UnsupportedFileError: Missing or empty file, unknown extension (no extension is
            fine: the content decides), content that is not a spreadsheet, or an extension
            that does not match the content (the message names the real format and the
            extension to use).
        PasswordProtectedError: An encrypted workbook.
        CorruptFileError: A damaged ZIP or compound file.
    """
    if path.is_dir():
        raise UnsupportedFileError(path, "is a folder, not a file", "Pass one spreadsheet file")
    if not path.is_file():
        raise UnsupportedFileError(path, "no such file", f"Check the path {path}")
    extension = path.suffix.lower().lstrip(".")
    if extension and extension not in EXTENSIONS:
        accepted = ", ".join(f".{e}" for e in EXTENSIONS)
        hint = (
            _resave_hint(f".{extension}")
            if extension in {"xlsb", "ods", "numbers"}
            else f"Send a spreadsheet ({accepted})"
        )
        raise UnsupportedFileError(
            path, f"the extension .{extension or '(none)'} is not a spreadsheet type", hint
        )
    with path.open("rb") as handle:
        head = handle.read(8192)
    if not head:
        raise UnsupportedFileError(path, "the file is empty (0 bytes)", "Send the file again")

    if head.startswith(ZIP_MAGIC):
        found = _zip_format(path)
    elif head.startswith(CFB_MAGIC):
        found = _cfb_format(path)  # raises PasswordProtectedError whatever the extension
    elif head.lstrip().lower().startswith((b"<html", b"<!doctype", b"<?xml", b"<table")):
        raise UnsupportedFileError(
            path,
            "it is an HTML or XML file, not a workbook (some systems export web pages as .xls)",
            _resave_hint("HTML/XML"),
        )
    elif text_encoding(head, complete=len(head) < 8192) is not None or (
        encoding is not None and extension in ("csv", "tsv")
    ):
        found = FileFormat.CSV
    elif extension in ("csv", "tsv") and b"\x00" not in head:
        # text in a legacy code page (Windows-1252, Latin-1...): say so, as the CSV reader does
        raise UnsupportedFileError(path, LEGACY_TEXT, LEGACY_HINT)
    else:
        raise UnsupportedFileError(
            path,
            "the content is not a spreadsheet (neither a workbook nor delimited text)",
            "Attach an .xlsx, .xls or .csv file",
        )

    if not extension:
        return found  # no extension to check against: the bytes decide
    expected = EXTENSIONS[extension]
    if found.value != expected:
        described = {
            FileFormat.XLSX: "an Excel workbook (.xlsx)",
            FileFormat.XLS: "a legacy Excel 97-2003 workbook (.xls)",
            FileFormat.CSV: "plain text",
        }[found]
        real_ext = {"xlsx": "xlsx", "xls": "xls", "csv": "csv"}[found.value]
        raise UnsupportedFileError(
            path,
            f"the extension says .{extension} but the content is {described}",
            f"Rename it to .{real_ext} if that is what it is, or export it again",
        )
    return found
