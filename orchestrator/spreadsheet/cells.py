"""Text written into a spreadsheet cell: shown as text, never evaluated as a formula.

Shared by the writers of spreadsheets (the Excel report, batch results), so it lives with the
reader, below both (moved from ``workflows/excel_report/render.py``, issue 49: the batch results
no longer import a workflow).
"""

from __future__ import annotations

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.utils.escape import unescape

#: A cell value beginning with one of these is read as a formula (OWASP "CSV Injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def cell_text(text: str, max_chars: int = 32_000) -> str:
    """A string that a spreadsheet shows as text, never evaluates as a formula: the control
    characters openpyxl refuses removed, cut to ``max_chars``, and ``'`` put before a formula
    trigger (:data:`FORMULA_TRIGGERS`).

    Example:
        >>> cell_text('=HYPERLINK("http://evil","x")')
        '\\'=HYPERLINK("http://evil","x")'
        >>> cell_text("@SUM(A1)"), cell_text("plain")
        ("'@SUM(A1)", 'plain')
    """
    text = ILLEGAL_CHARACTERS_RE.sub("", str(text))[:max_chars]
    if text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def stored_text(text: str) -> str:
    """A cell's text as Excel shows it: the OOXML escapes of characters XML cannot hold
    (``_x000D_`` for a carriage return, ``_x005F_`` for a literal ``_``) decoded, which
    openpyxl's streaming reader leaves in the string.

    Example:
        >>> stored_text("Amount_x000D_\\n(USD)")
        'Amount\\r\\n(USD)'
    """
    return unescape(text) if "_x" in text else text
