"""Text helpers of the lexicon matcher (:mod:`workflows.content_moderation.matcher`): how a
term or a word is spelled for lookup, which characters the Chinese stream keeps, one regex for
many keys, and whether a context phrase covers a span."""

from __future__ import annotations

import itertools
import os
import re
import unicodedata
from collections.abc import Collection
from functools import lru_cache

from workflows.content_moderation.normalize import normalize

#: Separators dropped from the Chinese stream (sentence punctuation , ! ? ; : 。 stays).
CJK_DROP_PUNCT = frozenset(" .-_*~|/\\+=#@&^`'\"()[]{}<>·…")


def squeeze(word: str) -> str:
    """Collapse every run of a repeated character to one (``fuuuck`` → ``fuck``)."""
    return "".join(ch for ch, _ in itertools.groupby(word))


def term_key(text: str) -> str:
    """A term spelled the way the text is normalised (folded, single spaces)."""
    return " ".join(normalize(text).text.split())


@lru_cache(maxsize=4096)
def pinyin_of(text: str) -> tuple[str, ...]:
    """The pinyin syllables of ``text``, one per character (its most common reading)."""
    # pypinyin's phrase dictionary takes seconds to load; per-character readings (the most
    # common reading of each character) are enough to spell lexicon terms.
    os.environ.setdefault("PYPINYIN_NO_PHRASES", "true")
    from pypinyin import lazy_pinyin

    return tuple(lazy_pinyin(text))


def cjk_keep(ch: str) -> bool:
    """Whether the Chinese stream keeps ``ch`` (no separator, symbol, space or control)."""
    if ch in CJK_DROP_PUNCT:
        return False
    return not unicodedata.category(ch).startswith(("S", "Z", "C"))


@lru_cache(maxsize=65536)
def cjk_keep_cached(ch: str) -> bool:
    """:func:`cjk_keep`, remembered per character (the stream asks once per character)."""
    return cjk_keep(ch)


def alternation(keys: Collection[str]) -> re.Pattern[str] | None:
    """One regex matching any key, longest first (None when there are no keys)."""
    if not keys:
        return None
    return re.compile("|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True)))


def covers(stream: str, a: int, b: int, context: str) -> bool:
    """True when an occurrence of ``context`` in ``stream`` covers ``stream[a:b]``."""
    lo = max(0, b - len(context))
    window = stream[lo : a + len(context)]
    k = window.find(context)
    while k != -1:
        if lo + k <= a and lo + k + len(context) >= b:
            return True
        k = window.find(context, k + 1)
    return False
