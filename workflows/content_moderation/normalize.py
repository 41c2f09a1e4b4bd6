"""Text normalisation for term matching, with an offset map back into the original post.

Obfuscation that the normalisation undoes, character by character (each output character
remembers the original characters it came from, so every match reports a span of the
*original* text):

* **Full-width and compatibility forms** — Unicode NFKC (``ｆｕｃｋ`` → ``fuck``, ``①`` → ``1``,
  mathematical bold letters → plain letters), then case folding.
* **Homoglyphs** — Cyrillic/Greek/other look-alikes folded to the Latin letter they imitate
  (``fυсk`` with Greek upsilon and Cyrillic es → ``fuck``). The table is built from the
  ``confusable-homoglyphs`` package (Unicode's confusables.txt): each non-ASCII, non-CJK
  character whose confusable list holds an ASCII letter or digit maps to the first such.
  A library rather than a hand table: Unicode lists over 1,300 such characters.
* **Diacritics** — combining marks dropped (``fück`` → ``fuck``, "zalgo" text).
* **Invisible and control characters** — zero-width spaces, soft hyphens, bidi controls and
  C0/C1 controls are removed (``fu\\u200bck`` → ``fuck``) and counted.
* **HTML entities** — ``&amp;``, ``&#8220;`` decoded (the span covers the whole entity).
* **Disguises** (:mod:`.disguise`) — bidi controls removed and right-to-left runs put in the
  order a reader sees (and counted: ``bidi``), insulting emoji read as words (``emoji``),
  Traditional Chinese folded to Simplified.

Separators, repeated letters, leetspeak and pinyin are handled by the matcher on top of this
text (:mod:`workflows.content_moderation.matcher`), because they need word context.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# The character folding is shared with the request classifier (issue 14): one definition, lower
# in the layers. Re-exported here for the matcher, lexicon and dataset modules.
from orchestrator.textnorm import LEET, fold_char, homoglyph_table, is_cjk, is_han  # noqa: F401
from workflows.content_moderation.disguise import reveal

_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


@dataclass(frozen=True, slots=True)
class Normalized:
    """A normalised text and the map back to the original.

    Attributes:
        original: The text as given.
        text: The normalised text (lower case, NFKC, homoglyphs folded, marks and invisible
            characters removed, each whitespace character as one space).
        starts: ``starts[i]`` is the original offset of the first character that produced
            ``text[i]`` (int64 array, one per normalised character).
        ends: ``ends[i]`` is one past the last original character that produced ``text[i]``.
        removed: Control and invisible characters removed (bidi controls included).
        bidi: Bidi control characters among them (a disguise signal).
        emoji: Emoji read as words (:mod:`.disguise`).
    """

    original: str
    text: str
    starts: np.ndarray
    ends: np.ndarray
    removed: int
    bidi: int = 0
    emoji: int = 0

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original ``(start, end)`` offsets of normalised ``text[start:end]`` (``end > start``).

        Raises:
            IndexError: ``start``/``end`` are outside the normalised text.
        """
        if not 0 <= start < end <= len(self.text):
            raise IndexError(f"span [{start}, {end}) outside normalised text of {len(self.text)}")
        if self.bidi:  # a right-to-left run was reversed: the span covers its characters
            return int(self.starts[start:end].min()), int(self.ends[start:end].max())
        return int(self.starts[start]), int(self.ends[end - 1])


def _fold(text: str) -> tuple[str, np.ndarray, int]:
    """Fold every character: ``(folded, index into text per folded char, removed count)``.

    Vectorised: each distinct character is folded once (:func:`fold_char`), the text is
    rewritten with ``str.translate`` and the offsets come from ``numpy.repeat`` of the
    per-character output lengths, so 100k characters take milliseconds, not a Python loop.
    """
    if not text:
        return "", np.zeros(0, dtype=np.int64), 0
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    uniq, inverse = np.unique(codes, return_inverse=True)
    folds = [fold_char(chr(int(c))) for c in uniq]
    lengths = np.fromiter((len(f) for f, _ in folds), dtype=np.int64, count=len(folds))
    gone = np.fromiter((g for _, g in folds), dtype=np.int64, count=len(folds))
    table = {int(c): f for c, (f, _) in zip(uniq, folds, strict=True)}
    index = np.repeat(np.arange(len(text), dtype=np.int64), lengths[inverse])
    return text.translate(table), index, int(gone[inverse].sum())


def _decode_entities(text: str) -> tuple[str, np.ndarray, np.ndarray]:
    """Decode HTML entities: ``(decoded, original start, original end)`` per decoded char."""
    n = len(text)
    if "&" not in text:
        base = np.arange(n, dtype=np.int64)
        return text, base, base + 1
    pieces: list[str] = []
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    pos = 0
    for m in _ENTITY.finditer(text):
        decoded = html.unescape(m.group())
        if decoded == m.group():
            continue  # not a known entity: stays plain text
        plain = np.arange(pos, m.start(), dtype=np.int64)
        pieces += [text[pos : m.start()], decoded]
        starts += [plain, np.full(len(decoded), m.start(), dtype=np.int64)]
        ends += [plain + 1, np.full(len(decoded), m.end(), dtype=np.int64)]
        pos = m.end()
    plain = np.arange(pos, n, dtype=np.int64)
    pieces.append(text[pos:])
    starts.append(plain)
    ends.append(plain + 1)
    return "".join(pieces), np.concatenate(starts), np.concatenate(ends)


def normalize(text: str) -> Normalized:
    """Normalise ``text`` for matching (see the module docstring for every step).

    Args:
        text: Any string (lone surrogates become U+FFFD and count as removed characters).

    Returns:
        The :class:`Normalized` text with its offset map.

    Example:
        >>> n = normalize("Ｆ\\u200bυсk!")
        >>> n.text, n.span(0, 4)
        ('fuck!', (0, 5))
    """
    if len(text) <= _CACHED_CHARS:
        return _normalize_cached(text)
    return _normalize(text)


#: Posts up to this length keep their normalisation in a small cache: a post is normalised by
#: the input preparation, the scorer's features and its targeting features (issue 47: p99).
_CACHED_CHARS = 4096


@lru_cache(maxsize=256)
def _normalize_cached(text: str) -> Normalized:
    return _normalize(text)


def _normalize(text: str) -> Normalized:
    decoded, starts, ends = _decode_entities(text)
    shown = reveal(decoded, starts, ends)
    folded, index, removed = _fold(shown.text)
    return Normalized(
        text,
        folded,
        shown.starts[index],
        shown.ends[index],
        removed + shown.bidi + shown.tags,
        shown.bidi,
        shown.emoji,
    )


_SCRIPT_NAMES = (
    ("LATIN", "Latin"),
    ("CJK", "Han"),
    ("CYRILLIC", "Cyrillic"),
    ("GREEK", "Greek"),
    ("ARABIC", "Arabic"),
    ("HEBREW", "Hebrew"),
    ("HIRAGANA", "Kana"),
    ("KATAKANA", "Kana"),
    ("HANGUL", "Hangul"),
    ("DEVANAGARI", "Devanagari"),
    ("THAI", "Thai"),
)


@lru_cache(maxsize=65536)
def script_of(ch: str) -> str | None:
    """Coarse Unicode script of a letter (from its character name), or None for non-letters.

    ``unicodedata`` has no script property; the name prefix is enough for a report.
    """
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    for prefix, script in _SCRIPT_NAMES:
        if name.startswith(prefix):
            return script
    return "Other"


_WORD = re.compile(r"[^\W\d_]+")


def scripts_report(text: str) -> tuple[tuple[str, ...], int]:
    """Scripts of the letters in ``text`` and the number of words mixing Latin with Cyrillic
    or Greek letters (a homoglyph-spoofing sign).

    Returns:
        ``(scripts sorted by name, mixed words)``.
    """
    scripts: set[str] = set()
    mixed = 0
    for word in _WORD.findall(text):
        seen = {s for s in map(script_of, word) if s}
        scripts |= seen
        if "Latin" in seen and seen & {"Cyrillic", "Greek"}:
            mixed += 1
    return tuple(sorted(scripts)), mixed


#: A Latin word that mixes letters with leetspeak digits or symbols ("y0u", "m0r0n", "1d10t").
#: A word that starts with "@" and a letter is a handle ("@user"), kept as written.
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?!@[a-zA-Z_])(?=[\w@$]*[a-zA-Z])(?=[\w@$]*[013457@$])[a-zA-Z0-9@$]+"
)
_LEET_DIGITS = {**LEET, ord("9"): "g"}


def unleet_words(text: str) -> str:
    """``text`` with each word that mixes letters and leetspeak digits read as letters
    (``y0u r a m0r0n`` → ``you r a moron``), same length, so offsets stay valid. A word of
    digits only (``2024``) and punctuation (``!``) stay as written. Used where a pattern reads
    the words around a term (who it is aimed at), which the per-word matcher does not see.

    Example:
        >>> unleet_words("y0u 1d10t, see you at 9pm in room 101")
        'you idiot, see you at 9pm in room 101'
    """
    if not any(c.isdigit() or c in "@$" for c in text):
        return text
    return _LEET_WORD.sub(lambda m: m.group().translate(_LEET_DIGITS), text)
