"""Unicode folding shared by the request classifier and the content-moderation normaliser.

One definition of what "the same letter" means, so that the classifier's rules and the
moderation lexicon see obfuscated text the same way (issue 14):

* **Full-width and compatibility forms**: NFKC, then case folding.
* **Homoglyphs**: Cyrillic, Greek and other look-alikes folded to the ASCII letter or digit they
  imitate, from Unicode's confusables data (the ``confusable-homoglyphs`` package).
* **Diacritics**: combining marks dropped.
* **Invisible and control characters**: zero-width spaces, soft hyphens, bidi controls and C0/C1
  controls removed; every kind of whitespace becomes one ASCII space.

CJK characters are never folded. :func:`fold_char` is the per-character primitive (the
moderation normaliser keeps an offset map with it); :func:`fold_text` folds a whole string
through a lazily filled ``str.translate`` table (about 20 ns a character once warm).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["fold_char", "fold_text", "homoglyph_table", "is_cjk", "is_han"]

#: Characters of these blocks are never homoglyph-folded or stripped of marks.
_CJK_RANGES = (
    (0x2E80, 0x2FDF),  # radicals
    (0x3000, 0x303F),  # CJK punctuation
    (0x3040, 0x30FF),  # kana
    (0x3400, 0x4DBF),  # extension A
    (0x4E00, 0x9FFF),  # unified ideographs
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0x20000, 0x2FA1F),  # extensions B..F
)


#: Invisible characters that are part of normal emoji and text shaping, not obfuscation.
_BENIGN_FORMAT = frozenset({"\u200d"})  # zero-width joiner inside emoji sequences


def is_cjk(ch: str) -> bool:
    """True for a CJK ideograph, kana or CJK punctuation character."""
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def is_han(ch: str) -> bool:
    """True for a Chinese character (unified ideographs and extensions)."""
    code = ord(ch)
    return 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x2FA1F


@lru_cache(maxsize=1)
def homoglyph_table() -> dict[str, str]:
    """Non-ASCII look-alike → ASCII letter or digit, from ``confusable-homoglyphs``' data.

    Returns:
        About 1,300 entries, e.g. ``"а"`` (Cyrillic) → ``"a"``.
    """
    from confusable_homoglyphs import utils

    table: dict[str, str] = {}
    for char, entries in utils.load("confusables.json").items():
        if len(char) != 1 or char.isascii() or is_cjk(char):
            continue
        for entry in entries:
            target = entry.get("c", "")
            if len(target) == 1 and target.isascii() and target.isalnum():
                table[char] = target.lower()
                break
    return table


@lru_cache(maxsize=65536)
def fold_char(ch: str) -> tuple[str, bool]:
    """Normalise one character.

    Returns:
        ``(folded, removed)``: the folded text (``""`` when dropped, ``" "`` for any
        whitespace) and whether ``ch`` was a control or invisible format character that was
        removed.
    """
    if ch in "\t\n\r\v\f":
        return " ", False
    category = unicodedata.category(ch)
    if category in ("Zs", "Zl", "Zp"):
        return " ", False
    if category == "Cc":
        return "", True
    if category == "Cf":
        return "", ch not in _BENIGN_FORMAT
    if category in ("Mn", "Me"):
        return "", False
    if category == "Cs":  # lone surrogate: never valid text
        return "\ufffd", True
    table = homoglyph_table()
    out = []
    for c in unicodedata.normalize("NFKC", ch).casefold():
        if c.isascii() or is_cjk(c):
            out.append(c)
            continue
        base = "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))
        for b in base or c:
            out.append(table.get(b, b))
    return "".join(out), False


class _FoldTable(dict[str, str]):
    """Character -> folded text, filled on first sight (see :func:`fold_char`)."""

    def __missing__(self, ch: str) -> str:
        folded = fold_char(ch)[0]
        if len(self) < 200_000:
            self[ch] = folded
        return folded


_FOLD = _FoldTable()
#: Characters that may fold to something else: everything but printable ASCII and the CJK
#: unified ideographs (which fold to themselves). Upper-case ASCII is left to ``str.lower``.
_FOLDABLE = re.compile(r"[^\x20-\x7e\u4e00-\u9fff]+")


def _fold_run(match: re.Match[str]) -> str:
    table = _FOLD
    return "".join([table[ch] for ch in match.group()])


def fold_text(text: str) -> str:
    """Fold a whole text: :func:`fold_char` applied to each character, lower-cased.

    Only characters outside printable ASCII and the CJK unified ideographs are looked up
    (memoised), so plain English or Chinese text costs one regex scan. The output can be
    shorter or longer than the input (a dropped zero-width character, an NFKC expansion such
    as ``①`` -> ``1``), so offsets into it are offsets into the folded text, not the original.

    Example:
        >>> fold_text("Ｒｅｆｕｎｄ  fυсk\u200bing café")
        'refund  fucking cafe'
    """
    if text.isascii() and text.isprintable():
        return text.lower()
    return _FOLDABLE.sub(_fold_run, text).lower()
