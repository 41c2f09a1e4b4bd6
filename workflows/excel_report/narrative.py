"""Model text is untrusted data: escape it, resolve its figure citations, strip its numbers.

Policy (applied to every string the model wrote before it reaches a report):

* ``{F12}`` (or a bare ``F12``) that names a figure of the analysis is replaced by the
  figure's computed value, rendered by code, with its id: ``$2,297,200.86 (F12)``.
* A citation of an id that does not exist is removed and counted.
* Any other number the model wrote (any run of decimal digits, in any script, also inside a
  word such as ``Q3`` or after a bare separator such as ``.5`` or ``,5``) is kept only when
  it equals a figure's displayed value (then it is tagged with that figure's id); otherwise
  it is replaced by :data:`REMOVED` and counted. Other numeric characters (superscripts,
  fractions, circled and Roman numerals: Unicode categories ``No`` and ``Nl``) are always
  removed. So no digit in a report comes from the model. (Numbers spelt in words or CJK
  numerals such as 三 are not detected.)
* A number that is part of a name the caller passes in ``keep`` (a period such as ``2016`` or
  ``2016-03``, a numeric group value: names from the figure ledger) is kept as written, since
  the claim checker (:mod:`workflows.excel_report.claims`) needs the period a sentence names.
* Markdown and HTML control characters are escaped, backticks and control characters are
  removed, whitespace is collapsed: the text cannot open code spans, links, tables or tags.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

from workflows.excel_report.figures import Figure

REMOVED = "[number removed]"
_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
_CITATION = re.compile(r"\{\s*(F\d{1,4})\s*\}|(?<![\w{])(F\d{1,4})(?!\w)")
#: A number as the model may write it. A run of digits is matched wherever it starts, also
#: after a separator (``.5``, ``,5``): the left-to-right scan consumes ``1,234.5`` whole, so
#: no lookbehind is needed to avoid splitting one.
NUMBER = re.compile(r"(?<!\d)[-+−]?[$€£¥￥]?[.,]?\d+(?:[.,]\d+)*(?:\s?%)?")
#: Where a removed number was, until :data:`REMOVED` replaces it after escaping.
_REMOVED_MARK = "\ue002"
#: Around a kept name (see ``keep``), until the number scan is done.
_KEEP_OPEN, _KEEP_CLOSE = "\ue003", "\ue004"
_MD_SPECIAL = re.compile(r"([\\*_\[\]<>|#~!(){}])")


class SafeText(BaseModel):
    """Model text made safe for a report.

    Attributes:
        markdown: Escaped Markdown with figure values inserted by code.
        plain: The same text without Markdown escapes (for spreadsheet cells).
        cited: Figure ids it cites.
        removed_numbers: Numbers the model wrote that are not figures (removed).
        unknown_citations: Figure ids it cited that do not exist (removed).
    """

    model_config = ConfigDict(frozen=True)

    markdown: str
    plain: str
    cited: list[str] = []
    removed_numbers: list[str] = []
    unknown_citations: list[str] = []


def normalise_number(token: str) -> str:
    """``"$1,234.50"`` → ``"1234.50"``; ``"12.5 %"`` → ``"12.5%"`` (for comparisons)."""
    token = token.replace("−", "-").replace(" ", "")
    return re.sub(r"[$€£¥￥,+]", "", token)


def allowed_numbers(figures: Mapping[str, Figure]) -> dict[str, str]:
    """Normalised displayed value → figure id, for every figure."""
    allowed: dict[str, str] = {}
    for fid, figure in figures.items():
        for token in NUMBER.findall(figure.display):
            allowed.setdefault(normalise_number(token), fid)
    return allowed


def _protect(text: str, keep: Iterable[str]) -> str:
    """``text`` with each name of ``keep`` that holds a digit (whole, not inside a longer
    number) wrapped in marks that the number scan skips."""
    names = sorted({k for k in keep if any(ch.isdigit() for ch in k)}, key=len, reverse=True)
    if not names:
        return text
    pattern = "|".join(re.escape(n) for n in names)
    return re.sub(rf"(?<![\d.,])({pattern})(?![\d]|[.,]\d)", f"{_KEEP_OPEN}\\1{_KEEP_CLOSE}", text)


def sanitise(
    text: str, figures: Mapping[str, Figure], *, max_chars: int = 1000, keep: Iterable[str] = ()
) -> SafeText:
    """Apply the module's policy to one model-written string (``keep``: names whose digits
    are kept as written, see the module docstring).

    Example:
        >>> from workflows.excel_report.figures import Figure, Provenance
        >>> f = Figure(id="F1", label="total", value=5.0, display="5", table_id="T1",
        ...            provenance=Provenance(cells="'S'!A1:A3", operation="sum"))
        >>> sanitise("Sales were {F1}, up 40% on *last* year", {"F1": f}).markdown
        'Sales were 5 (F1), up [number removed] on \\\\*last\\\\* year'
    """
    text = "".join(
        ch
        for ch in unicodedata.normalize("NFC", text)
        if ch in "\n\t" or unicodedata.category(ch)[0] != "C"
    )
    text = " ".join(text.replace("`", "'").split())[:max_chars]
    cited: list[str] = []
    unknown: list[str] = []
    removed = [ch for ch in text if unicodedata.category(ch) in ("No", "Nl")]
    if removed:  # a numeral that is not a decimal digit: ½ ⁵ ① Ⅻ
        text = "".join(
            _REMOVED_MARK if unicodedata.category(ch) in ("No", "Nl") else ch for ch in text
        )

    def cite(match: re.Match[str]) -> str:
        fid = match.group(1) or match.group(2)
        if fid in figures:
            cited.append(fid)
            return f"{_MARK_OPEN}{fid}{_MARK_CLOSE}"
        unknown.append(fid)
        return ""

    text = _protect(_CITATION.sub(cite, text), keep)
    allowed = allowed_numbers(figures)

    def check(match: re.Match[str]) -> str:
        token = match.group(0)
        fid = allowed.get(normalise_number(token))
        if fid is None:
            removed.append(token)
            return _REMOVED_MARK
        cited.append(fid)
        return f"{_MARK_OPEN}{fid}{_MARK_CLOSE}"

    parts = re.split(
        f"({_MARK_OPEN}F\\d+{_MARK_CLOSE}|{_KEEP_OPEN}[^{_KEEP_CLOSE}]*{_KEEP_CLOSE})", text
    )
    text = "".join(
        part if part.startswith((_MARK_OPEN, _KEEP_OPEN)) else NUMBER.sub(check, part)
        for part in parts
    )
    text = text.replace(_KEEP_OPEN, "").replace(_KEEP_CLOSE, "")
    markdown = _MD_SPECIAL.sub(r"\\\1", text)
    plain = text

    def value(match: re.Match[str]) -> str:
        fid = match.group(1)
        return f"{figures[fid].display} ({fid})"

    mark = re.compile(f"{_MARK_OPEN}(F\\d+){_MARK_CLOSE}")
    markdown = mark.sub(value, markdown).replace(_REMOVED_MARK, REMOVED)
    plain = mark.sub(value, plain).replace(_REMOVED_MARK, REMOVED)
    return SafeText(
        markdown=markdown.strip(),
        plain=plain.strip(),
        cited=list(dict.fromkeys(cited)),
        removed_numbers=removed,
        unknown_citations=unknown,
    )
