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

On top of that, word-level obfuscation (what evades a word list rather than a character
table):

* **Leetspeak**: digits and symbols standing for letters inside a word
  (:data:`LEET`, :func:`unleet`: ``k1ll`` → ``kill``, ``d!e`` → ``die``, ``ur$elf`` →
  ``urself``); a word of digits only (``2024``) is left alone.
* **Spaced letters**: three or more single letters split by spaces or symbols
  (``k i l l``, ``k.i.l.l``) joined into one word (:func:`join_spaced_letters`).

:func:`fold_obfuscation` applies both to a whole text for callers that need no offsets (the
request classifier); the moderation matcher uses :func:`unleet` per word and keeps offsets.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import opencc

__all__ = [
    "ASCII_SEPARATORS",
    "LEET",
    "TOKEN",
    "fold_char",
    "fold_obfuscation",
    "fold_text",
    "homoglyph_table",
    "is_cjk",
    "is_han",
    "is_traditional",
    "join_spaced_letters",
    "to_simplified",
    "to_traditional",
    "tokens",
    "unleet",
    "visible_format",
]

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
def _t2s() -> opencc.OpenCC:
    import opencc  # OpenCC's own package: phrase-level Traditional -> Simplified tables

    return opencc.OpenCC("t2s")


#: 帐 in the money words where Simplified writes 账 (OpenCC folds 帳 to 帐, a variant that the
#: rules, written with 账, do not know: 到帐, 结帐, 帐户, 帐号, 帐单); 帐篷 (a tent) stays.
_ACCOUNT_ZHANG = re.compile(
    r"帐(?=[户号單单目款本务面期])|(?<=[到结對对记記转轉查入算付欠出销還还赊挂])帐"
)


def to_simplified(text: str) -> str:
    """Traditional Chinese folded to Simplified (OpenCC ``t2s``: characters and phrases);
    text with no Chinese character is returned unchanged without a lookup.

    Wherever Chinese text is matched or scored (classifier, moderation lexicon, scorer), a
    post in Traditional characters must read like its Simplified twin.

    Example:
        >>> to_simplified("請審核這條評論")
        '请审核这条评论'
        >>> to_simplified("退款什麼時候會到帳？")
        '退款什么时候会到账？'
        >>> to_simplified("Where is ORD-100042?")
        'Where is ORD-100042?'
    """
    if not any(is_han(ch) for ch in text):
        return text
    return _ACCOUNT_ZHANG.sub("账", str(_t2s().convert(text)))


def is_traditional(text: str) -> bool:
    """True when ``text`` holds a Chinese character that only Traditional script writes
    (OpenCC's ``t2s`` changes it); Simplified text, or text with no Chinese, is False.

    Example:
        >>> is_traditional("退款什麼時候會到帳？"), is_traditional("我的帐户")
        (True, False)
    """
    return any(is_han(ch) for ch in text) and str(_t2s().convert(text)) != text


#: OpenCC's Simplified -> Traditional configuration per locale: Hong Kong's standard for
#: ``zh_HK`` and ``zh_MO``, else Taiwan's (為, 台), which most Traditional text online follows;
#: OpenCC's own ``s2t`` standard writes 爲 and 臺, which few readers use.
_S2T = {"zh_HK": "s2hk", "zh_MO": "s2hk"}


@lru_cache(maxsize=4)
def _s2t(config: str) -> opencc.OpenCC:
    import opencc

    return opencc.OpenCC(config)


def to_traditional(text: str, locale: str = "") -> str:
    """Simplified Chinese converted to Traditional (OpenCC ``s2hk`` for ``zh_HK`` and
    ``zh_MO``, else ``s2tw``). Only Chinese characters change: digits, ids and Latin letters
    are kept as they are.

    Example:
        >>> to_traditional("退款已处理：ORD-100042。")
        '退款已處理：ORD-100042。'
    """
    if not any(is_han(ch) for ch in text):
        return text
    return str(_s2t(_S2T.get(locale, "s2tw")).convert(text))


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
#: The classifier's tokens of a folded text (its rules and its n-gram model read the same
#: ones): runs of ``[a-z0-9]``, and runs of Chinese characters.
TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
#: ``bytes.translate`` table: every byte but ``[a-z0-9]`` becomes a space (ASCII texts only).
ASCII_SEPARATORS = bytes(c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256))


def tokens(text: str) -> list[str]:
    """``TOKEN.findall(text)``. An ASCII text is split with a byte translation and
    ``str.split`` instead: the same tokens, in a tenth of the time on a long text (``re``
    tries both alternatives at every character between tokens).

    Example:
        >>> tokens("log-in to my 账户, order #a12")
        ['log', 'in', 'to', 'my', '账户', 'order', 'a12']
    """
    if text.isascii():
        return text.encode().translate(ASCII_SEPARATORS).decode().split()
    return TOKEN.findall(text)


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


#: Leetspeak digits and symbols, and the letters they stand for (``1`` also stands for ``l``:
#: :func:`unleet` gives both readings).
LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t",
                      "@": "a", "$": "s", "!": "i", "|": "l"})  # fmt: skip
_LEET_L = str.maketrans({"1": "l", "|": "l", "!": "i"})
_LEET_CHARS = frozenset("013457@$!|")


def unleet(word: str) -> tuple[str, ...]:
    """The readings of a leetspeak word, most likely first (``1`` read as ``i``, then as
    ``l``): ``("kiii", "kill")`` for ``ki11``; callers try every reading. A word with no
    letter (``2024``, ``!!``) or no leet character gives ``()``; so does a reading that
    keeps a non-letter.

    Example:
        >>> unleet("k1ll"), unleet("d!e"), unleet("2024")
        (('kill', 'klll'), ('die',), ())
    """
    if not any(c.isalpha() for c in word) or not _LEET_CHARS & set(word):
        return ()
    first = word.translate(LEET)
    second = word.translate(_LEET_L).translate(LEET)
    return tuple(w for w in dict.fromkeys((first, second)) if w.isalpha())


_SPACED = re.compile(r"(?<![A-Za-z])(?:[A-Za-z][ .\-_*~|/\\,+:;'\"]{1,3}){2,}[A-Za-z](?![A-Za-z])")
_SPACE_GAP = re.compile(r"[ .\-_*~|/\\,+:;'\"]")


def join_spaced_letters(text: str) -> str:
    """Join runs of three or more single Latin letters split by spaces or symbols
    (``k i l l``, ``k.i.l.l``, ``k-i-l-l``) into one word; other text (Chinese included) is
    kept as is.

    Example:
        >>> join_spaced_letters("k i l l yourself, a b c")
        'kill yourself, abc'
    """
    return _SPACED.sub(lambda m: _SPACE_GAP.sub("", m.group()), text)


_LEET_WORD = re.compile(r"[a-z0-9@$!|]*[a-z][a-z0-9@$!|]*")


def fold_obfuscation(text: str) -> str:
    """:func:`fold_text`, then leetspeak words read as letters (first reading of
    :func:`unleet`) and spaced-out letters joined (:func:`join_spaced_letters`).

    Example:
        >>> fold_obfuscation("K1LL  y0urself, k i l l")
        'kill  yourself, kill'
    """
    folded = fold_text(text)
    folded = _LEET_WORD.sub(lambda m: (unleet(m.group()) or (m.group(),))[0], folded)
    return join_spaced_letters(folded)


def visible_format(text: str) -> str:
    """``text`` with each Unicode format character (category Cf: bidi overrides and isolates,
    zero-width characters) written as ``<U+202E>``, so what a reader sees is what was written
    (a right-to-left override shows the rest of a line reversed); the Excel report writes
    workbook names and model text through it (tester15 T15-6).

    Example:
        >>> visible_format("S\u202eheet"), visible_format("plain")
        ('S<U+202E>heet', 'plain')
    """
    if text.isascii():
        return text
    return "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) == "Cf" else c for c in text)
