"""Disguises undone before matching and scoring (issue 47), each with its offset map kept:

* **Small capitals and tag characters** read as the letters they imitate or tag, one for one
  (``ᴋɪʟʟ`` → ``kill``; the table comes from the Unicode names, :func:`letter_table`); the
  invisible tags are counted as removed characters (a signal).
* **Bidi controls** (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) are removed and
  counted. A right-to-left override (U+202E) or isolate (U+2067) makes a run of Latin letters
  *display* backwards, so "\\u202eflesruoy llik" shows as "kill yourself": the run up to its
  closing control (or the end of the line) is reversed into the order a reader sees, a nested
  left-to-right override keeping its own order. The stored order (what copy/paste and screen
  readers give) follows on a line of its own, so a term in either reading is found. The count
  is reported (:class:`~.verdict.InputReport` ``bidi_controls``): their presence is a signal.
* **Emoji** that stand for insults, gestures and threats (``emoji_words.toml``) become words:
  English ones in a post that is not Chinese, Chinese ones in a Chinese post. A weapon or
  death emoji in a post addressed to its reader, with no laughter or cooking beside it, takes
  its threat reading (``aimed_en``/``aimed_zh``: "我会来找你的🔪" is a threat). Variation
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
import unicodedata
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
    aimed_en: str = Field("", max_length=40)
    aimed_zh: str = Field("", max_length=40)
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
    """The compiled table: emoji character → ``(en, zh)`` words, the ``(en, zh)`` readings of
    those that threaten when aimed at the reader (``aimed``), and the file's version."""

    words: dict[str, tuple[str, str]]
    version: str
    aimed: dict[str, tuple[str, str]]


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
    aimed = {
        ch: (e.aimed_en or e.en, e.aimed_zh or e.zh)
        for e in loaded.value.emoji
        if e.aimed_en or e.aimed_zh
        for ch in e.chars
    }
    return EmojiWords(words, f"{loaded.value.version}+{content_hash(loaded.text, digits=8)}", aimed)


@dataclass(frozen=True)
class Revealed:
    """A post with its disguises undone.

    Attributes:
        text: The revealed text.
        starts: Original start offset per character (int64).
        ends: Original end offset per character (int64).
        bidi: Bidi control characters removed.
        emoji: Emoji read as words.
        tags: Unicode TAG characters read as the ASCII they tag.
    """

    text: str
    starts: np.ndarray
    ends: np.ndarray
    bidi: int = 0
    emoji: int = 0
    tags: int = 0


#: A run of characters (indices) and nested runs ``(right_to_left, run)``.
_Run = list["int | tuple[bool, _Run]"]
_LTR_START = "\u202d\u2066\u202a\u2068"  # LTR override/isolate, LTR embedding, first-strong isolate
_POP = "\u202c\u2069"  # pop directional formatting, pop isolate


def _display_order(text: str) -> list[int]:
    """Indices of ``text`` in the order a reader sees them, bidi controls left out.

    Nested overrides are honoured: an RTL override/isolate reverses its run, an LTR one
    inside it (``\u202e\u202dkill yourself``) keeps its own letters forwards and only moves
    as a whole; a pop closes the innermost, an end of line closes all. Latin letters under
    an RTL embedding (U+202B) keep their order, as they display.
    """
    root: _Run = []
    stack: list[tuple[bool, _Run]] = [(False, root)]
    for i, ch in enumerate(text):
        if ch in _RTL_START or ch in _LTR_START:
            group: _Run = []
            stack[-1][1].append((ch in _RTL_START, group))
            stack.append((ch in _RTL_START, group))
        elif ch in _POP:
            if len(stack) > 1:
                stack.pop()
        elif ch == "\n":
            del stack[1:]
            root.append(i)
        elif ch not in BIDI_CONTROLS:
            stack[-1][1].append(i)

    return _flatten(root, rtl=False)


def _flatten(items: _Run, *, rtl: bool) -> list[int]:
    """The indices of a run in display order (a nested run moves as one piece)."""
    parts = [[item] if isinstance(item, int) else _flatten(item[1], rtl=item[0]) for item in items]
    if rtl:
        parts.reverse()
    return [i for part in parts for i in part]


def _visual_order(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[Arrays, int]:
    """Drop every bidi control and put right-to-left runs in display order: ``((text, starts,
    ends), controls removed)``. Where the display differs from the stored order, the stored
    reading (controls stripped: what copy/paste, search and screen readers give) follows on a
    line of its own, so a term in either reading is found."""
    count = sum(text.count(c) for c in BIDI_CONTROLS)
    if not count:
        return (text, starts, ends), 0
    order = _display_order(text)
    raw = [i for i, ch in enumerate(text) if ch not in BIDI_CONTROLS]
    if order != raw and raw:
        order = [*order, -1, *raw]
    line = np.asarray([raw[-1] if i < 0 else i for i in order], dtype=np.int64)
    shown = "".join("\n" if i < 0 else text[i] for i in order)
    return (shown, starts[line], ends[line]), count


#: Unicode TAG characters (U+E0000–U+E007F): invisible in most renderers, yet they spell
#: ASCII (U+E0041 is a tag "A"), so they are read as the letters they tag (and counted).
_TAGS = range(0xE0000, 0xE0080)
_SMALL_CAPITAL = re.compile(r"LATIN LETTER SMALL CAPITAL ([A-Z])$")


@lru_cache(maxsize=1)
def letter_table() -> dict[int, str]:
    """One-for-one readings of look-alike letters that NFKC and the confusables table leave:
    small capitals (``ᴋɪʟʟ`` → ``kill``; from their Unicode names, ``LATIN LETTER SMALL
    CAPITAL X`` → ``x``), and the tag characters (U+E0020–U+E007E → the ASCII they tag)."""
    table = {code: chr(code - 0xE0000) for code in _TAGS}
    for code in (*range(0x0250, 0x02B0), *range(0x1D00, 0x1D80), *range(0xA720, 0xA800)):
        if m := _SMALL_CAPITAL.match(unicodedata.name(chr(code), "")):
            table[code] = m.group(1).lower()
    # Not a small capital by name, but the "f" of every small-caps text generator.
    table[0x0493] = "f"  # CYRILLIC SMALL LETTER GHE WITH STROKE
    return table


def tag_count(text: str) -> int:
    """Unicode TAG characters in ``text`` (a disguise signal: they are invisible)."""
    return sum(1 for ch in text if ord(ch) in _TAGS)


#: The reader addressed: second-person words (English), pronouns (Chinese, either script) or an
#: @mention.
SECOND_PERSON = re.compile(
    r"\b(?:you|u|ur|your|yours|youre|you're|you'll|ya|yall|y'all|thee)\b|[你妳您]|(?<!\w)@\w",
    re.IGNORECASE,
)
#: An ordinary reading of a weapon or death emoji: laughter ("I'm dead 💀"), cooking, costumes,
#: games and museums. Such a post keeps the emoji's plain word.
_ORDINARY_EMOJI_USE = re.compile(
    r"\b(?:lol|lmao|lmfao|rofl|haha\w*|hilarious|funny|joke\w*|laugh\w*|dying|recipe\w*|slice"
    r"|chop\w*|cook\w*|onions?|kitchen|carv\w+|halloween|costumes?|museum|fossils?|games?"
    r"|gaming|level|boss)\b|[😂🤣😆😹🎃]|哈哈|笑死|好笑|搞笑|切菜|做饭|做菜|厨房|廚房|菜刀|万圣|萬聖|游戏|遊戲",
    re.IGNORECASE,
)


#: What makes a post a warning to its reader: "watch your back", "I know where you live",
#: "you're next", "你完了", "等着", "小心点", pointing at them (👉). Without one, a weapon
#: or death emoji beside "you" is more often a gift, a knife set or laughter than a threat.
_THREAT_CUE = re.compile(
    r"\b(?:watch your back|know where (?:you|u|ur|your)\b|see (?:you|u|ya) (?:tonight|soon|after"
    r"|later|outside)|(?:you'?re|you are|ur|u r) next|(?:you'?ll|you will|u will|ur gonna) be"
    r"|(?:coming|come) for (?:you|u)|(?:find|get|catch|hunt) (?:you|u)\b|last warning"
    r"|better (?:watch|run|hide)|one eye open|your days are|dead (?:man|men) walking)|👉"
    r"|[🔪🗡🔫💣🪓]\s*[🔪🗡🔫💣🪓]"  # a volley of weapons
    r"|你完了|你死定了|等着|等著|小心点|小心點|给我小心|給我小心|找你|知道你|你家在|你住在|下一个就是你"
    r"|下一個就是你|走着瞧|走著瞧|放学别走|放學別走|晚上见|晚上見",
    re.IGNORECASE,
)


def aimed_at_reader(text: str) -> bool:
    """True when ``text`` warns its reader (a second-person word and a threat cue such as
    "watch your back" or 你完了) with no ordinary reading of a weapon or death emoji nearby
    (laughter, cooking, costumes, games)."""
    return bool(
        SECOND_PERSON.search(text)
        and _THREAT_CUE.search(text)
        and not _ORDINARY_EMOJI_USE.search(text)
    )


def _emoji_words(text: str, starts: np.ndarray, ends: np.ndarray) -> tuple[Arrays, int]:
    """Replace each listed emoji by its word, with a space on a side that has none (the word's
    span stays the emoji's)."""
    emoji = load_emoji_words()
    table = emoji.words
    hits = [i for i, ch in enumerate(text) if ch in table]
    if not hits:
        return (text, starts, ends), 0
    if any(text[i] in emoji.aimed for i in hits) and aimed_at_reader(text):
        table = {**table, **emoji.aimed}
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
        'go kill yourself\\ngo flesruoy llik'
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
    tags = tag_count(text)
    text = text.translate(letter_table())
    (text, starts, ends), bidi = _visual_order(text, starts, ends)
    (text, starts, ends), emoji = _emoji_words(text, starts, ends)
    return Revealed(_simplified(text), starts, ends, bidi, emoji, tags)
