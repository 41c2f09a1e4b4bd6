"""Word lists the matcher consults (:mod:`.matcher`): pinyin syllables (from ``pypinyin``) and
the ordinary words of several languages (wordfreq, Speer et al.), so a stem, fuzzy or pinyin
match never flags a real word.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Inflections tried on word-mode terms.
INFLECTIONS = ("s", "es", "ed", "ing", "in", "er", "ers", "z")
#: Most Zipf frequency, in every :data:`DICTIONARY_LANGS` list, of a spelled-out pinyin form
#: of five or more letters that counts even inside an English sentence (``shabi``,
#: ``caonima``: words of no language there; ``guinan``, a name, is not one of them).
UNKNOWN_ZIPF = 1.5
#: Languages whose dictionaries (wordfreq) protect ordinary Latin-script words.
DICTIONARY_LANGS = ("en", "nl", "de", "fr", "es", "it", "pt")
#: Zipf frequency (log10 of uses per billion words; wordfreq) from which a word is common.
DICTIONARY_ZIPF = 3.0
#: Endings that keep a stem match even on a common word (the stem inflected).
_ENDINGS = frozenset({*INFLECTIONS, "", "y", "ie", "ies", "ier", "iest", "a", "as", "ah"})


@lru_cache(maxsize=1)
def pinyin_syllables() -> frozenset[str]:
    """The toneless pinyin syllables with a vowel (``ü`` written ``v``), about 420, read from
    ``pypinyin``'s character readings rather than typed by hand."""
    from pypinyin.pinyin_dict import pinyin_dict
    from pypinyin.style._constants import PHONETIC_SYMBOL_DICT

    plain = str.maketrans(
        {k: re.sub(r"\d", "", v) for k, v in PHONETIC_SYMBOL_DICT.items() if len(k) == 1}
    )
    out = set()
    for readings in pinyin_dict.values():
        for reading in readings.split(","):
            syllable = reading.translate(plain).replace("ü", "v")
            # interjections without a vowel (m, n, hm, ng) would make "mn" or "n" pinyin
            if syllable.isascii() and syllable.isalpha() and set(syllable) & set("aeiouv"):
                out.add(syllable)
    return frozenset(out)


@lru_cache(maxsize=65536)
def pinyin_split(word: str) -> int:
    """How many pinyin syllables a lower-case Latin word splits into wholly (fewest), or 0
    when it does not split (``shabi`` → 2, ``caonima`` → 3, ``help`` → 0).

    Example:
        >>> pinyin_split("caonima"), pinyin_split("help")
        (3, 0)
    """
    syllables = pinyin_syllables()
    n = len(word)
    if not n or not word.isalpha():
        return 0
    best = [0] + [0] * n  # best[i]: fewest syllables of word[:i], 0 when it does not split
    for i in range(1, n + 1):
        counts = [best[j] + 1 for j in range(max(0, i - 6), i)
                  if (best[j] or j == 0) and word[j:i] in syllables]  # fmt: skip
        best[i] = min(counts, default=0)
    return best[n]


@lru_cache(maxsize=65536)
def known_word(word: str) -> bool:
    """True when ``word`` is at least rare-but-real in one of :data:`DICTIONARY_LANGS`
    (wordfreq Zipf ≥ :data:`UNKNOWN_ZIPF`): a name or word, not a pinyin insult."""
    from wordfreq import zipf_frequency

    return max(zipf_frequency(word, lang) for lang in DICTIONARY_LANGS) >= UNKNOWN_ZIPF


@lru_cache(maxsize=65536)
def dictionary_word(word: str, term: str | None) -> bool:
    """True when ``word`` is an ordinary word that a stem or fuzzy match must not flag.

    A word is ordinary when it is common in one of :data:`DICTIONARY_LANGS` (wordfreq Zipf
    frequency at least :data:`DICTIONARY_ZIPF`, about one use per million words) and, when it
    contains the stem ``term``, at least a tenth as common as the stem in English (a word
    used that often is a word of its own, not a disguised term: ``night`` for ``nig``,
    ``classic`` for ``ass``, ``cocktail`` for ``cock``; but ``motherfucker`` is far rarer than
    ``fuck``). The term itself, or the term plus an ending (``-s``, ``-ing``, ``-y`` ...), is
    never ordinary here. Source: wordfreq (Speer et al.,
    https://github.com/rspeer/wordfreq), whose word lists ship in its wheel.
    """
    if word == term or (term is not None and word.replace(term, "", 1) in _ENDINGS):
        return False  # the term plus an ending: "niggas", "fucking", "bitchy"
    from wordfreq import zipf_frequency

    common = max(zipf_frequency(word, lang) for lang in DICTIONARY_LANGS)
    if common < DICTIONARY_ZIPF:
        return False
    return term is None or common >= zipf_frequency(term, "en") - 1.0


__all__ = [
    "DICTIONARY_LANGS",
    "DICTIONARY_ZIPF",
    "INFLECTIONS",
    "UNKNOWN_ZIPF",
    "dictionary_word",
    "known_word",
    "pinyin_split",
    "pinyin_syllables",
]
