"""Disguises undone before matching and scoring (issue 47), each with its offset map kept:

* **Bidi controls** (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) are removed and
  counted. A right-to-left override (U+202E) or isolate (U+2067) makes a run of Latin letters
  *display* backwards, so "\\u202eflesruoy llik" shows as "kill yourself": the run up to its
  closing control (or the end of the line) is reversed into the order a reader sees. The count
  is reported (:class:`~.verdict.InputReport` ``bidi_controls``): their presence is a signal.
* **Emoji** that stand for insults, gestures and threats (``emoji_words.toml``) become words:
  English ones in a post that is not Chinese, Chinese ones in a Chinese post. Variation
  selectors and skin-tone modifiers are dropped. The table is data with a test per entry; the
  emoji names come from :mod:`unicodedata` (the ``emoji`` package is not installed here, and
  the standard library has the names).
* **Traditional Chinese** is folded to Simplified (:func:`orchestrator.textnorm.to_simplified`,
  OpenCC ``t2s``), character by character wherever the phrase conversion changes the length.

Every step keeps, per output character, the original ``(start, end)`` it came from, so spans
still index into the post as received.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from orchestrator.textnorm import is_han, to_simplified

DEFAULT_EMOJI_PATH = Path(__file__).resolve().parent / "emoji_words.toml"
#: Explicit bidi formatting characters (Unicode UAX #9): embeddings, overrides, isolates, marks.
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
_RTL_START = "\u202e\u2067"  # right-to-left override, right-to-left isolate
_RTL_END = "\u202c\u2069\n"  # pop directional formatting, pop isolate, end of line
#: Dropped with the emoji they modify: variation selectors, skin tones, zero-width joiner.
_MODIFIERS = re.compile("[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff]")

Arrays = tuple[str, np.ndarray, np.ndarray]


class EmojiEntry(BaseModel):
    """One ``[[emoji]]`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    chars: tuple[str, ...] = Field(min_length=1)
    en: str = Field(min_length=1, max_length=40)
    zh: str = Field(min_length=1, max_length=40)
    note: str = ""


class EmojiFile(BaseModel):
    """``emoji_words.toml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    emoji: tuple[EmojiEntry, ...] = Field(min_length=1)


class EmojiError(DataFileError):
    """The emoji table is invalid (``file:line: reason``)."""


@dataclass(frozen=True)
class EmojiWords:
    """The compiled table: emoji character → ``(en, zh)`` words, and the file's version."""

    words: dict[str, tuple[str, str]]
    version: str


@lru_cache(maxsize=4)
def load_emoji_words(path: Path | str = DEFAULT_EMOJI_PATH) -> EmojiWords:
    """Read the emoji table (cached per path).

    Raises:
        EmojiError: Unreadable, not TOML, fails validation, or a key is not one character.
    """
    loaded = load_toml(Path(path), EmojiFile, error=EmojiError)
    words: dict[str, tuple[str, str]] = {}
    for entry in loaded.value.emoji:
        for ch in entry.chars:
            if len(ch) != 1:
                where = loaded.line_of("emoji")
                raise EmojiError(Path(path), where, f"{ch!r} is not one character")
            words[ch] = (entry.en, entry.zh)
    return EmojiWords(words, f"{loaded.value.version}+{content_hash(loaded.text, digits=8)}")


@dataclass(frozen=True)
class Revealed:
    """A post with its disguises undone.

    Attributes:
        text: The revealed text.
        starts: Original start offset per character (int64).
        ends: Original end offset per character (int64).
        bidi: Bidi control characters removed.
        emoji: Emoji read as words.
    """

    text: str
    starts: np.ndarray
    ends: np.ndarray
    bidi: int = 0
    emoji: int = 0


def _visual_order(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[Arrays, int]:
    """Reverse each right-to-left run and drop every bidi control: ``((text, starts, ends),
    controls removed)``."""
    count = sum(text.count(c) for c in BIDI_CONTROLS)
    if not count:
        return (text, starts, ends), 0
    order: list[int] = []
    run: list[int] | None = None
    for i, ch in enumerate(text):
        if ch in _RTL_START:
            if run:
                order += reversed(run)
            run = []
        elif run is not None and ch in _RTL_END:
            order += reversed(run)
            run = None
            if ch == "\n":
                order.append(i)
        elif ch in BIDI_CONTROLS:
            continue
        elif run is not None:
            run.append(i)
        else:
            order.append(i)
    if run:
        order += reversed(run)
    idx = np.asarray(order, dtype=np.int64)
    return ("".join(text[i] for i in order), starts[idx], ends[idx]), count


def _emoji_words(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[Arrays, int]:
    """Replace each listed emoji by its word, with a space on a side that has none (the word's
    span stays the emoji's)."""
    table = load_emoji_words().words
    hits = [i for i, ch in enumerate(text) if ch in table]
    if not hits:
        return (text, starts, ends), 0
    zh = sum(map(is_han, text)) >= 2
    pieces: list[str] = []
    s_parts: list[np.ndarray] = []
    e_parts: list[np.ndarray] = []
    pos = 0
    for i in hits:
        before = "" if i == 0 or text[i - 1].isspace() else " "
        after = "" if i + 1 >= len(text) or text[i + 1].isspace() else " "
        word = f"{before}{table[text[i]][1 if zh else 0]}{after}"
        pieces += [text[pos:i], word]
        s_parts += [starts[pos:i], np.full(len(word), starts[i], dtype=np.int64)]
        e_parts += [ends[pos:i], np.full(len(word), ends[i], dtype=np.int64)]
        pos = i + 1
    pieces.append(text[pos:])
    s_parts.append(starts[pos:])
    e_parts.append(ends[pos:])
    return ("".join(pieces), np.concatenate(s_parts), np.concatenate(e_parts)), len(hits)


def _simplified(text: str) -> str:
    """Simplified Chinese of ``text`` with the same length (per character where the phrase
    conversion would change it)."""
    out = to_simplified(text)
    if len(out) == len(text):
        return out
    return "".join(c if len(s := to_simplified(c)) != 1 else s for c in text)


def reveal(text: str, starts: np.ndarray | None = None, ends: np.ndarray | None = None) -> Revealed:
    """Undo the disguises of ``text`` (see the module docstring).

    Args:
        text: The post (or its entity-decoded form).
        starts: Original start offset per character of ``text`` (default: its own indices).
        ends: Original end offset per character (default: index + 1).

    Example:
        >>> reveal("go \\u202eflesruoy llik").text
        'go kill yourself'
        >>> reveal("you 🐷 🤡").text
        'you pig clown'
    """
    if starts is None or ends is None:
        starts = np.arange(len(text), dtype=np.int64)
        ends = starts + 1
    if _MODIFIERS.search(text):
        keep = [i for i, ch in enumerate(text) if not _MODIFIERS.match(ch)]
        idx = np.asarray(keep, dtype=np.int64)
        text, starts, ends = "".join(text[i] for i in keep), starts[idx], ends[idx]
    (text, starts, ends), bidi = _visual_order(text, starts, ends)
    (text, starts, ends), emoji = _emoji_words(text, starts, ends)
    return Revealed(_simplified(text), starts, ends, bidi, emoji)
