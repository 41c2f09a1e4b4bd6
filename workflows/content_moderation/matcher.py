"""Term matching on normalised text: whole words, stems, leetspeak, masks, spacing, repeats,
fuzzy spellings (rapidfuzz), pinyin and abbreviations; Chinese terms as substrings.

Every hit reports its span in the *original* post (via the offset map of
:func:`~workflows.content_moderation.normalize.normalize`).

English (and other Latin-script) terms match on words, never inside other words unless the
term says so (``match = "prefix" | "suffix" | "infix"``), so ``class`` never matches ``ass``.
On each word (letters, digits and the symbols ``@ $ ! | * #``) the matcher tries, in order:

1. the word itself (``exact``), and the term plus an English inflection (``inflected``);
2. leetspeak undone, ``0→o 1→i 3→e 4→a 5→s 7→t @→a $→s !→i |→l`` (``leet``);
3. masks: ``*`` or ``#`` stand for one letter each (``f*ck``, ``n***a``; ``masked``); at least
   two letters must be visible and the lowest-severity candidate wins when several fit;
4. runs of three or more repeated letters collapsed, compared with the collapsed terms
   (``fuuuuck``; ``repeated``) — only for words that have such a run, so ``as`` never
   matches the collapsed ``ass``;
5. stems: ``prefix``/``suffix``/``infix`` terms of at least :data:`MIN_STEM_LETTERS` letters
   (shorter ones match as whole words only); allow-listed words are skipped, and so is a
   word of the dictionary (:func:`dictionary_word`: ``night`` never matches the stem ``nig``,
   ``classic`` never ``ass``);
6. rapidfuzz ``ratio`` against terms of 5+ letters (``fuzzy``), at or above the term's cutoff
   (88 by default: one inserted or deleted letter, not a substituted one, in a 5-letter word),
   never on a dictionary word.

A term may list ``context_exclude`` phrases: a hit with one of them within
:data:`CONTEXT_WINDOW` words is dropped (``tranny`` beside ``transmission``, Dutch
``hoe is het``).

Across words: single letters separated by spaces or symbols are joined (``f u c k``,
``f.u.c.k``; ``spaced``), two pieces around one symbol are joined (``fu.ck``; ``joined``), and
multi-word terms match on word sequences (``kill yourself``).

Chinese terms match as substrings of a stream where spaces, symbols and emoji are removed
(``傻 逼``, ``傻*逼``, ``傻😀逼`` → ``傻逼``; ``spaced``) but sentence punctuation stays, so a
match never joins two sentences. Their pinyin (``shabi``, ``sha bi``), Latin variants (``jb``)
and listed abbreviations (``sb``, ``nmsl``) match as words **only in Chinese context**
(:meth:`Matcher.chinese_context`), because the same letters are ordinary in English ("SB 1047
bill", "JB Hi-Fi", "NC State", "the gang can" → *gang can*, 港灿):

* in a post with Chinese characters, the Latin word must stand alone — its neighbouring words
  (across spaces, ``-``, ``_``, ``/``, ``.``) are Chinese characters, other Chinese-style words,
  or nothing (``你就是个SB吧``, but not ``我在JB Hi-Fi买的``);
* in a post without Chinese characters, at least :data:`MIN_PINYIN_SHARE` of its Latin words
  must be Chinese-style (pinyin syllables or Chinese-term abbreviations: ``ni shi sha bi``,
  ``cnm``, ``wcnm sb``), so one such word inside an English sentence is not enough;
* either way, a word followed or preceded by a number is a code or model number (``SB 1047``,
  ``TMD-200``, ``NB3``) and never a term.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz, process

from orchestrator.datafiles import HotReloaded, HotReloader
from orchestrator.textnorm import LEET as _LEET
from orchestrator.textnorm import unleet
from workflows.content_moderation.addressed import addressed_insults, load_addressed_rules
from workflows.content_moderation.constructions import constructions
from workflows.content_moderation.generalised import generalisations, load_generalised_rules
from workflows.content_moderation.lexicon import (
    DEFAULT_LEXICON_DIR,
    LexiconData,
    Term,
    lexicon_files,
    load_lexicon,
)
from workflows.content_moderation.matcher_text import (
    alternation,
    cjk_keep,
    cjk_keep_cached,
    covers,
    pinyin_of,
    squeeze,
    term_key,
)
from workflows.content_moderation.normalize import Normalized, is_han, normalize, unleet_words
from workflows.content_moderation.verdict import Category, MatchKind, Severity
from workflows.content_moderation.wordlists import (
    DICTIONARY_ZIPF,
    INFLECTIONS,
    dictionary_word,
    known_word,
    pinyin_split,
)

log = logging.getLogger(__name__)

#: Least letters of a pinyin spelling that is matched (``nima`` is too short to be safe).
MIN_PINYIN_LETTERS = 5
#: Least share of a post's Latin words that must be Chinese-style (pinyin syllables or
#: abbreviations of Chinese terms) for a post without Chinese characters to be Chinese context.
MIN_PINYIN_SHARE = 0.75
#: English Zipf frequency from which a pinyin-shaped word counts as English (``you``, ``are``,
#: ``can`` split into syllables too), not as Chinese style.
ENGLISH_ZIPF = 5.5
#: Leetspeak digits and symbols, and the letters they stand for (the request classifier's
#: :data:`orchestrator.textnorm.LEET`), plus ``9`` for ``g`` (``ni99er``): moderation only,
#: so the classifier keeps reading ``9am`` as written. A word of digits only still reads as
#: itself (:func:`_unleet`), so numbers in ordinary text match nothing.
LEET = {**_LEET, ord("9"): "g"}


def _unleet(word: str) -> tuple[str, ...]:
    """:func:`orchestrator.textnorm.unleet`, also reading ``9`` as ``g`` in a word that holds
    a letter (``ni99a`` → ``nigga``; ``2019`` gives nothing)."""
    readings = unleet(word)
    if "9" not in word or not any(c.isalpha() for c in word):
        return readings
    as_g = word.replace("9", "g")
    extra = (as_g,) if as_g.isalpha() else unleet(as_g)
    return tuple(dict.fromkeys((*readings, *extra)))


#: Least letters of a multi-word term written as one word (``killyourself``, ``k i l l y o u``)
#: that is matched.
MIN_JOINED_PHRASE = 6
#: A word matched fuzzily to a listed *variant* (not the term's own text: "stupd" for
#: "stupid") must be rarer in English than this Zipf frequency (wordfreq; 2.5 is about one use
#: in three million words): variants are common words, and a near-miss of one is often another
#: word ("looser", Zipf 2.99, for "loser").
VARIANT_FUZZY_ZIPF = 2.5
#: Most word pieces joined into one spaced-out word.
MAX_SPACED = 24
#: Least letters of a prefix/suffix/infix stem (``nig``, ``fag`` match as whole words only).
MIN_STEM_LETTERS = 4
#: Least letters of a word that gets inflections (``v`` + ``s`` would make ``vs``).
MIN_INFLECT_LETTERS = 3
#: Words around a hit searched for its ``context_exclude`` phrases.
CONTEXT_WINDOW = 4

_TOKEN = re.compile(r"[a-z0-9@$!|*]+")
_EDGE_JUNK = "!|*."
_SPACED_GAP = re.compile(r"[ .\-_*~|/\\,+:;'\"]{1,3}")
_JOIN_GAP = re.compile(r"[.\-_*~|/\\']")
_RUN3 = re.compile(r"(.)\1\1")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
#: The Latin word right before / after a span, across spaces and joiners (original text).
_WORD_BEFORE = re.compile(r"([A-Za-z0-9]+)[\s\-_/.]*$")
_WORD_AFTER = re.compile(r"^[\s\-_/.]*([A-Za-z0-9]+)")
_LATIN_WORD = re.compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class TermRef:
    """A lexicon term as the matcher uses it."""

    term: str
    category: Category
    severity: Severity
    exclude: frozenset[str]
    cutoff: float


@dataclass(frozen=True, slots=True)
class Hit:
    """One lexicon match.

    Attributes:
        start: Offset in the original text.
        end: One past the last original character.
        text: ``original[start:end]``.
        term: Canonical term.
        category: Term category.
        severity: Term severity.
        how: How it matched.
        score: 1.0, or the fuzzy ratio / 100, or 0.8 for a masked guess.
    """

    start: int
    end: int
    text: str
    term: str
    category: Category
    severity: Severity
    how: MatchKind
    score: float


@dataclass(frozen=True)
class ScanResult:
    """Hits of one scan, in text order, one per (span, term)."""

    hits: tuple[Hit, ...]
    normalized: Normalized

    @property
    def severity(self) -> Severity:
        """Highest severity among the hits."""
        return Severity.highest([h.severity for h in self.hits])


def _lists() -> defaultdict:
    return defaultdict(list)


Refs = list[tuple[TermRef, MatchKind]]


@dataclass
class _Index:
    exact: dict[str, Refs] = field(default_factory=_lists)
    squeezed: dict[str, Refs] = field(default_factory=_lists)
    prefix: dict[str, list[TermRef]] = field(default_factory=_lists)
    suffix: dict[str, list[TermRef]] = field(default_factory=_lists)
    infix: dict[str, list[TermRef]] = field(default_factory=_lists)
    phrases: dict[tuple[str, ...], Refs] = field(default_factory=_lists)
    #: Multi-word terms by their words with repeated letters collapsed ("kil yourself"), with
    #: the words as written: a doubled letter dropped or stretched ("kil", "kiiill yourself").
    squeezed_phrases: dict[tuple[str, ...], list[tuple[TermRef, tuple[str, ...]]]] = field(
        default_factory=_lists
    )
    #: Latin multi-word terms written as one word ("killyourself").
    joined: dict[str, Refs] = field(default_factory=_lists)
    #: Words that count only when disguised (lexicon ``obfuscated_only``: "d!e", "k i l l").
    obfuscated: dict[str, Refs] = field(default_factory=_lists)
    fuzzy: dict[str, list[TermRef]] = field(default_factory=_lists)
    #: Fuzzy keys that are a listed variant only (:data:`VARIANT_FUZZY_ZIPF`).
    fuzzy_variants: set[str] = field(default_factory=set)
    cjk: dict[str, list[TermRef]] = field(default_factory=_lists)


class Matcher:
    """A compiled lexicon. Build it once (:class:`Lexicon` does), then :meth:`scan` any number
    of texts; it holds no per-scan state (thread-safe).

    Args:
        data: The validated lexicon.
    """

    def __init__(self, data: LexiconData) -> None:
        self.version = data.version
        self.allow = data.allow
        self._ix = _Index()
        for category, term in data.terms:
            self._add(category, term)
        self._prefix_lens = sorted({len(k) for k in self._ix.prefix}, reverse=True)
        self._suffix_lens = sorted({len(k) for k in self._ix.suffix}, reverse=True)
        self._infix_re = alternation(self._ix.infix)
        self._fuzzy_keys = list(self._ix.fuzzy)
        cutoffs = [r.cutoff for refs in self._ix.fuzzy.values() for r in refs]
        self._fuzzy_min = min(cutoffs, default=100.0)
        self._by_length: dict[int, list[str]] = defaultdict(list)
        for key in self._ix.exact:
            self._by_length[len(key)].append(key)
        self._max_phrase = max((len(k) for k in self._ix.phrases), default=1)
        self._max_squeezed = max((len(k) for k in self._ix.squeezed_phrases), default=1)
        self._squeezed_firsts = frozenset(k[0] for k in self._ix.squeezed_phrases)
        self._cjk_re = alternation(self._ix.cjk)
        self.term_count = len(data.terms)
        #: Chinese terms: their Latin forms (pinyin, variants, abbreviations) need Chinese
        #: context (:meth:`chinese_context`).
        self._chinese = frozenset(t.text for _, t in data.terms if t.is_chinese)
        #: Latin forms of Chinese terms (abbreviations, Latin variants): Chinese-style words.
        self._chinese_latin = frozenset(
            form.lower()
            for _, t in data.terms
            if t.is_chinese
            for form in (*t.abbreviations, *t.variants)
            if not any(is_han(c) for c in form)
        )
        #: Terms that name a harm (lexicon ``names_harm``): candidates for a mention.
        self.names_harm = frozenset(t.text for _, t in data.terms if t.names_harm)
        self._context = {
            term.text: (
                tuple(w for c in term.context_exclude if (w := tuple(_TOKEN.findall(term_key(c))))),
                term.context_window,
            )
            for _, term in data.terms
            if term.context_exclude
        }

    # ------------------------------------------------------------------ building

    def _add(self, category: Category, term: Term) -> None:
        ref = TermRef(
            term=term.text,
            category=category,
            severity=term.severity,
            exclude=frozenset(term_key(e) for e in term.exclude),
            cutoff=term.cutoff,
        )
        ix = self._ix
        if term.is_chinese:
            for form in (term.text, *term.variants):
                key = term_key(form)
                if any(is_han(c) for c in key):
                    ix.cjk["".join(c for c in key if cjk_keep(c))].append(ref)
                else:
                    self._add_latin(ref, key, term, "exact", canonical=False)
            for abbr in term.abbreviations:
                ix.exact[abbr.lower()].append((ref, "abbreviation"))
            if term.pinyin and all(is_han(c) for c in term.text):
                syllables = pinyin_of(term.text)
                if len("".join(syllables)) >= MIN_PINYIN_LETTERS:
                    ix.exact["".join(syllables)].append((ref, "pinyin"))
                    ix.phrases[syllables].append((ref, "pinyin"))
            return
        if term.obfuscated_only:
            for form in (term.text, *term.variants):
                ix.obfuscated[term_key(form)].append((ref, "leet"))
            return
        for k, form in enumerate((term.text, *term.variants)):
            self._add_latin(ref, term_key(form), term, "exact", canonical=k == 0)
        for abbr in term.abbreviations:
            ix.exact[abbr.lower()].append((ref, "abbreviation"))

    def _add_latin(
        self, ref: TermRef, key: str, term: Term, how: MatchKind, *, canonical: bool
    ) -> None:
        ix = self._ix
        words = tuple(_TOKEN.findall(key))
        if not words:
            return
        if len(words) > 1:
            ix.phrases[words].append((ref, how))
            squeezed = tuple(squeeze(w) for w in words)
            if squeezed != words and how == "exact" and all(w.isalpha() for w in words):
                ix.squeezed_phrases[squeezed].append((ref, words))
            glued = "".join(words)
            if len(glued) >= MIN_JOINED_PHRASE and glued.isalpha():
                ix.joined[glued].append((ref, how))
            return
        word = words[0]
        if len(word) < 2:
            return  # a single letter ("+v" -> "v") would flag ordinary text
        if term.match == "word" or len(word) < MIN_STEM_LETTERS:
            ix.exact[word].append((ref, how))
            ix.squeezed[squeeze(word)].append((ref, "repeated"))
            if term.inflect and len(word) >= MIN_INFLECT_LETTERS:
                for ending in INFLECTIONS:
                    ix.exact.setdefault(word + ending, []).append((ref, "inflected"))
        else:
            getattr(ix, term.match)[word].append(ref)
            ix.exact[word].append((ref, how))
            ix.squeezed[squeeze(word)].append((ref, "repeated"))
        fuzzy = term.fuzzy if term.fuzzy is not None else len(word) >= 5
        if fuzzy and len(word) >= 5 and word.isalpha() and (canonical or not term.is_chinese):
            ix.fuzzy[word].append(ref)
            if not canonical:
                ix.fuzzy_variants.add(word)

    # ------------------------------------------------------------------ matching one word

    def _lookup(self, form: str, how: MatchKind) -> list[tuple[TermRef, MatchKind, float]]:
        """Exact, inflected and stem matches of one word form."""
        ix = self._ix
        out = [(r, how if h in ("exact",) else h, 1.0) for r, h in ix.exact.get(form, ())]
        if form in self.allow:
            return out
        for n in self._prefix_lens:
            if n < len(form) and form[:n] in ix.prefix and not dictionary_word(form, form[:n]):
                out += [(r, "prefix", 1.0) for r in ix.prefix[form[:n]]]
        for n in self._suffix_lens:
            if n < len(form) and form[-n:] in ix.suffix and not dictionary_word(form, form[-n:]):
                out += [(r, "suffix", 1.0) for r in ix.suffix[form[-n:]]]
        if self._infix_re is not None:
            m = self._infix_re.search(form)
            if m is not None and m.group() != form and not dictionary_word(form, m.group()):
                out += [(r, "infix", 1.0) for r in ix.infix[m.group()]]
        return out

    def _masked(self, form: str) -> list[tuple[TermRef, MatchKind, float]]:
        """``*``/``#`` as one letter each: whole words, then stems at the word's start
        (``f*cking`` → ``fuck``); the lowest-severity candidate wins when several fit."""

        def pattern(text: str) -> re.Pattern[str] | None:
            if sum(c.isalpha() for c in text) < 2:
                return None
            return re.compile("".join("[a-z]" if c == "*" else re.escape(c) for c in text))

        found: list[tuple[TermRef, str]] = []
        whole = pattern(form)
        if whole is not None:
            found = [
                (ref, key)
                for key in self._by_length.get(len(form), ())
                if whole.fullmatch(key)
                for ref, _ in self._ix.exact[key]
            ]
        if not found:
            stems = {**self._ix.prefix, **self._ix.infix}
            for key, refs in stems.items():
                head = form[: len(key)]
                if len(key) < len(form) and "*" in head and form[len(key) :].isalpha():
                    p = pattern(head)
                    if p is not None and p.fullmatch(key):
                        found += [(ref, key) for ref in refs]
        if not found:
            return []
        ref, _ = min(found, key=lambda rk: (rk[0].severity.rank, rk[1]))
        return [(ref, "masked", 0.8)]

    @lru_cache(maxsize=8192)  # noqa: B019 - matchers live as long as their lexicon
    def _word(self, token: str) -> tuple[tuple[TermRef, MatchKind, float], ...]:
        """Every match of one word (results cached per word)."""
        token = token.strip(_EDGE_JUNK)
        if not token or not any(c.isalpha() for c in token):
            return ()
        out: list[tuple[TermRef, MatchKind, float]] = []
        forms: list[tuple[str, MatchKind]] = []
        if token.isalnum():
            forms.append((token, "exact"))
        leet = token.translate(LEET)
        if "*" in leet:
            out += self._masked(leet)
        elif leet != token:  # every reading: "ki11" is "kiii" or "kill"
            forms += [(form, "leet") for form in _unleet(token) or (leet,)]
        for form, how in forms:
            if not form.isalnum():
                continue
            if how == "leet":  # a disguised ordinary word ("d!e"): lexicon obfuscated_only
                out += [(r, "leet", 1.0) for r, _ in self._ix.obfuscated.get(form, ())]
            out += self._lookup(form, how)
            if _RUN3.search(form):
                out += [(r, "repeated", 1.0) for r, _ in self._ix.squeezed.get(squeeze(form), ())]
                out += [(r, "repeated", 1.0) for r, _, _ in self._lookup(squeeze(form), how)]
        if not out and self._fuzzy_keys:
            out += self._fuzzy(forms[-1][0] if forms else "")
        seen: set[str] = set()
        unique = []
        for ref, how, score in out:
            if ref.term in seen or token in ref.exclude or token.translate(LEET) in ref.exclude:
                continue
            seen.add(ref.term)
            unique.append((ref, how, score))
        return tuple(unique)

    def _fuzzy(self, form: str) -> list[tuple[TermRef, MatchKind, float]]:
        """Fuzzy matches of a word of 5+ letters that is no ordinary or allowed word."""
        if len(form) < 5 or not form.isalpha() or form in self.allow:
            return []
        if dictionary_word(form, None):
            return []
        from wordfreq import zipf_frequency

        out: list[tuple[TermRef, MatchKind, float]] = []
        for key, score, _ in process.extract(
            form, self._fuzzy_keys, scorer=fuzz.ratio, score_cutoff=self._fuzzy_min, limit=3
        ):
            if key in self._ix.fuzzy_variants and zipf_frequency(form, "en") >= VARIANT_FUZZY_ZIPF:
                continue
            for ref in self._ix.fuzzy[key]:
                if score >= ref.cutoff and abs(len(key) - len(form)) <= 2:
                    out.append((ref, "fuzzy", round(score / 100.0, 4)))
        return out

    # ------------------------------------------------------------------ scanning

    def scan(self, text: str, normalized: Normalized | None = None) -> ScanResult:
        """Find every lexicon term in ``text``.

        Args:
            text: The post (any length; the caller bounds it).
            normalized: ``normalize(text)`` when the caller already has it.

        Returns:
            The hits, in order of their start offset.
        """
        norm = normalized if normalized is not None else normalize(text)
        s = norm.text
        hits: dict[tuple[int, int, str], Hit] = {}

        def add(a: int, b: int, ref: TermRef, how: MatchKind, score: float) -> None:
            start, end = norm.span(a, b)
            key = (start, end, ref.term)
            if key not in hits:
                hits[key] = Hit(start, end, norm.original[start:end][:200], ref.term,
                                ref.category, ref.severity, how, score)  # fmt: skip

        tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(s)]
        for a, b, tok in tokens:
            for ref, how, score in self._word(tok):
                add(a, b, ref, how, score)
        self._across_words(s, tokens, add)
        rules = load_addressed_rules()  # insults aimed at the reader, as a kind (addressed.py)
        for a, b, term in addressed_insults(unleet_words(s), rules):  # "y0u r a m0r0n" too
            ref = TermRef(term, Category.HARASSMENT, rules.severity, frozenset(), 100.0)
            add(a, b, ref, "addressed", 1.0)
        general = load_generalised_rules()  # contempt for a whole group (generalised.py)
        for a, b, term in generalisations(s, general):
            add(a, b, TermRef(term, Category.HATE, general.severity, frozenset(), 100.0),
                "generalised", 1.0)  # fmt: skip
        for a, b, c in constructions(unleet_words(s)):  # who + what + whom (constructions.py)
            ref = TermRef(c.term, c.category, c.severity, frozenset(), 100.0)
            add(a, b, ref, "construction", 1.0)
        if self._cjk_re is not None and _HAN.search(s):
            self._cjk(norm, add)
        kept = [h for h in hits.values() if not self._in_excluded_context(h, norm, tokens)]
        latin_cn = [h for h in kept if h.term in self._chinese and not _HAN.search(h.text)]
        if latin_cn:
            has_han = _HAN.search(s) is not None
            pinyin_post = not has_han and self.pinyin_post(s)  # once per scan, not per hit
            context = self.chinese_context
            drop = {id(h) for h in latin_cn if not context(h, norm.original, has_han, pinyin_post)}
            kept = [h for h in kept if id(h) not in drop]
        # a construction never hides the listed term it spans ("unalive myself" stays named)
        built = [h for h in kept if h.how == "construction"]
        listed = _drop_nested(h for h in kept if h.how != "construction")
        return ScanResult(tuple(sorted((*listed, *built), key=lambda h: h.start)), norm)

    def chinese_style(self, word: str) -> bool:
        """True for a Latin word written the Chinese-internet way: an abbreviation or Latin
        variant of a Chinese term (``sb``, ``nmsl``, ``jb``), or pinyin that is not ordinary
        English — one syllable under :data:`ENGLISH_ZIPF` (``ni``, ``ta``, ``gang``; not
        ``you``, ``can``) or several under Zipf 3 (``shabi``, ``nihao``; not ``cute`` = cu+te).
        Lower-case input."""
        if word in self._chinese_latin:
            return True
        n = pinyin_split(word)
        if not n:
            return False
        from wordfreq import zipf_frequency

        return zipf_frequency(word, "en") < (ENGLISH_ZIPF if n == 1 else 3.0)

    def pinyin_post(self, normalized: str) -> bool:
        """True when at least :data:`MIN_PINYIN_SHARE` of the Latin words of a normalised
        post are Chinese-style (:meth:`chinese_style`): a post written in pinyin."""
        words = _LATIN_WORD.findall(normalized)
        return bool(words) and sum(map(self.chinese_style, words)) >= MIN_PINYIN_SHARE * len(words)

    def chinese_context(self, hit: Hit, original: str, has_han: bool, pinyin_post: bool) -> bool:
        """Whether a Latin-script hit of a Chinese term (pinyin, abbreviation, Latin variant)
        counts: see the module docstring (Chinese context).

        Args:
            hit: The hit (its span in ``original``).
            original: The post as given.
            has_han: Whether the post holds a Chinese character.
            pinyin_post: Whether the post is written in pinyin (:meth:`pinyin_post`).
        """
        before = _WORD_BEFORE.search(original, max(0, hit.start - 40), hit.start)
        after = _WORD_AFTER.search(original[hit.end : hit.end + 40])
        neighbours = [m.group(1) for m in (before, after) if m is not None]
        neighbours = [w for w in neighbours if not any(is_han(c) for c in w)]
        if any(any(c.isdigit() for c in w) for w in neighbours):
            return False  # a code or model number: "SB 1047", "TMD-200"
        if any(c.isdigit() for c in hit.text):
            return False
        if has_han:
            return all(self.chinese_style(w.lower()) for w in neighbours)
        if pinyin_post:
            return True
        # one spelled-out pinyin word that no language's word list knows ("you are shabi");
        # syllables written apart ("gang can") need the share above
        form = _LATIN_WORD.findall(normalize(hit.text).text)
        return len(form) == 1 and len(form[0]) >= MIN_PINYIN_LETTERS and not known_word(form[0])

    def _in_excluded_context(
        self, hit: Hit, norm: Normalized, tokens: list[tuple[int, int, str]]
    ) -> bool:
        """True when a ``context_exclude`` phrase of the hit's term lies within its
        ``context_window`` words (default :data:`CONTEXT_WINDOW`) of it."""
        contexts, reach = self._context.get(hit.term, ((), CONTEXT_WINDOW))
        if not contexts:
            return False
        starts = [norm.span(a, b)[0] for a, b, _ in tokens]
        first = next((i for i, a in enumerate(starts) if a >= hit.start), len(tokens))
        last = max(first, next((i for i in range(len(starts) - 1, -1, -1)
                                if starts[i] < hit.end), first))  # fmt: skip
        lo, hi = max(0, first - reach), min(len(tokens), last + reach + 1)
        window = [t.strip(_EDGE_JUNK) for _, _, t in tokens[lo:hi]]
        for phrase in contexts:
            n = len(phrase)
            if any(tuple(window[i : i + n]) == phrase for i in range(len(window) - n + 1)):
                return True
        return False

    def _across_words(self, s: str, tokens: list[tuple[int, int, str]], add) -> None:
        """Terms over several tokens: spaced-out letters, multi-word terms, a multi-word term
        written as one word, and two pieces around one symbol."""
        plain = [t.strip(_EDGE_JUNK) for _, _, t in tokens]
        runs = self._spaced_runs(s, tokens, plain, add)
        if self._ix.phrases:
            self._phrases(tokens, plain, runs, add)
        # a multi-word term written as one word: "killyourself", "k1llyourself"
        if self._ix.joined:
            for (a, b, _), word in zip(tokens, plain, strict=True):
                for ref, how in self._joined(word):
                    add(a, b, ref, "joined" if how == "exact" else how, 1.0)
        # two pieces around one symbol: "fu.ck", "ass-hole"
        for (a, b, _), (c, d, _), p, q in zip(tokens, tokens[1:], plain, plain[1:], strict=False):
            if c - b == 1 and _JOIN_GAP.fullmatch(s, b, c) and p and q:
                for ref, how in self._ix.exact.get((p + q).translate(LEET), ()):
                    if how in ("exact", "inflected"):
                        add(a, d, ref, "joined", 1.0)

    def _spaced_runs(
        self, s: str, tokens: list[tuple[int, int, str]], plain: list[str], add
    ) -> list[tuple[int, int, str]]:
        """Spaced-out single letters ("f u c k", "f.u.c.k") matched as one word over tokens
        i..j; returns the runs ``(i, j, word)``."""
        runs: list[tuple[int, int, str]] = []
        i = 0
        while i < len(tokens):
            j = i
            while (
                j + 1 < len(tokens)
                and j - i < MAX_SPACED
                and len(plain[j]) == 1
                and len(plain[j + 1]) == 1
                and _SPACED_GAP.fullmatch(s, tokens[j][1], tokens[j + 1][0]) is not None
            ):
                j += 1
            if j - i >= 2 and len(plain[i]) == 1:
                word = "".join(plain[i : j + 1]).translate(LEET)
                runs.append((i, j, word))
                a, b = tokens[i][0], tokens[j][1]
                for ref, _, score in self._word(word):
                    add(a, b, ref, "spaced", score)
                for ref, _ in [*self._ix.obfuscated.get(word, ()), *self._joined(word)]:
                    add(a, b, ref, "spaced", 1.0)
            i = j + 1
        return runs

    def _phrases(
        self, tokens: list[tuple[int, int, str]], plain: list[str],
        runs: list[tuple[int, int, str]], add,
    ) -> None:  # fmt: skip
        """Multi-word terms over the words, leetspeak read as letters ("k1ll yourself",
        "go d!e") and spaced-out letters joined ("k i l l yourself")."""
        words: list[tuple[int, int, tuple[str, ...], MatchKind]] = []
        starts = {r[0]: r for r in runs}
        i = 0
        while i < len(tokens):
            if i in starts:
                _, j, word = starts[i]
                words.append((tokens[i][0], tokens[j][1], (word,), "spaced"))
                i = j + 1
                continue
            read = _unleet(plain[i])
            forms = (plain[i], *read) if plain[i].isalpha() else read or (plain[i],)
            words.append((tokens[i][0], tokens[i][1], forms, "leet" if read else "exact"))
            i += 1
        self._squeezed_phrases(words, add)
        for k in range(len(words)):
            for n in range(2, min(self._max_phrase, len(words) - k) + 1):
                span = words[k : k + n]
                kinds = {w[3] for w in span} - {"exact"}
                for combo in itertools.product(*(w[2] for w in span)):
                    for ref, how in self._ix.phrases.get(combo, ()):
                        kind = how if not kinds or how != "exact" else min(kinds)
                        add(span[0][0], span[-1][1], ref, kind, 1.0)

    def _squeezed_phrases(
        self, words: list[tuple[int, int, tuple[str, ...], MatchKind]], add
    ) -> None:
        """Multi-word terms written with a doubled letter dropped or a letter stretched
        ("kil yourself", "kiiiill urself"): the words match with repeats collapsed, and each
        word that differs from the term's is no common English word (wordfreq Zipf under
        :data:`DICTIONARY_ZIPF`), so "shot you" never reads as "shoot you"."""
        from wordfreq import zipf_frequency

        ix = self._ix
        said = [w[2][0] for w in words]
        squeezed = [squeeze(w) for w in said]
        for k, first in enumerate(squeezed):
            if first not in self._squeezed_firsts:
                continue
            for n in range(2, min(self._max_squeezed, len(words) - k) + 1):
                here = said[k : k + n]
                for ref, term in ix.squeezed_phrases.get(tuple(squeezed[k : k + n]), ()):
                    if tuple(here) != term and all(
                        a == b or zipf_frequency(a, "en") < DICTIONARY_ZIPF
                        for a, b in zip(here, term, strict=True)
                    ):
                        add(words[k][0], words[k + n - 1][1], ref, "repeated", 1.0)

    def _joined(self, word: str) -> Refs:
        """Multi-word terms written as the one word ``word`` (leetspeak read as letters)."""
        if len(word) < MIN_JOINED_PHRASE or not self._ix.joined:
            return []
        forms = (word, *_unleet(word)) if word.isalpha() else _unleet(word)
        found: Refs = []
        for form in forms:
            found += self._ix.joined.get(form, ())
        return found

    def _cjk(self, norm: Normalized, add) -> None:
        s = norm.text
        keep = np.fromiter((cjk_keep_cached(c) for c in s), dtype=bool, count=len(s))
        index = np.nonzero(keep)[0]
        stream = "".join(itertools.compress(s, keep))
        assert self._cjk_re is not None
        pos = 0
        while True:
            m = self._cjk_re.search(stream, pos)
            if m is None:
                break
            a, b = m.start(), m.end()
            spaced = int(index[b - 1] - index[a]) != b - a - 1
            for ref in self._ix.cjk[m.group()]:
                if any(covers(stream, a, b, e) for e in ref.exclude):
                    continue
                add(int(index[a]), int(index[b - 1]) + 1, ref, "spaced" if spaced else "exact", 1.0)
            # also try terms that start inside this match (overlaps such as 大傻逼 / 傻逼)
            pos = a + 1


class Lexicon(HotReloaded[Matcher]):
    """A live lexicon folder: compiled once into a :class:`Matcher`, re-read when a file changes.

    The folder's ``*.toml`` files are checked (one ``stat`` each) at most once per
    ``reload_interval`` seconds, on the next :meth:`matcher` call; a changed folder is loaded
    and compiled aside and swapped in whole. A broken edit is logged at ERROR level, kept in
    :attr:`last_error`, and the last good matcher stays live
    (:class:`orchestrator.datafiles.HotReloader`).

    Args:
        directory: The folder (the packaged one by default).
        reload_interval: Seconds between checks for changed files; 0 checks on every
            :meth:`matcher` call, None never.

    Raises:
        LexiconError: The initial folder is invalid.

    Example:
        >>> lex = Lexicon()
        >>> [h.term for h in lex.matcher().scan("what the f*ck").hits]
        ['fuck']
    """

    def __init__(
        self, directory: Path | str = DEFAULT_LEXICON_DIR, *, reload_interval: float | None = 1.0
    ) -> None:
        self.directory = Path(directory)
        self._live = HotReloader(
            lambda: Matcher(load_lexicon(self.directory)),
            lambda: lexicon_files(self.directory),
            interval_s=reload_interval,
            what="lexicon",
            version=lambda matcher: matcher.version,
            logger=log,
        )

    @property
    def version(self) -> str:
        """Version hash of the live lexicon."""
        return self._live.value.version

    def matcher(self) -> Matcher:
        """The live compiled matcher (checks the files first, at most every interval)."""
        return self._live.get()


def _drop_nested(hits: Iterable[Hit]) -> tuple[Hit, ...]:
    """Hits in text order, without a hit whose span lies inside another hit's span and whose
    severity is not higher (``逼`` inside ``傻逼``, ``fuck`` inside ``motherfucker``)."""
    ordered = sorted(hits, key=lambda h: (h.start, -h.end, -h.severity.rank, -len(h.term), h.term))
    kept: list[Hit] = []
    for hit in ordered:
        if any(
            k.start <= hit.start and hit.end <= k.end and k.severity.rank >= hit.severity.rank
            for k in kept[-8:]
        ):
            continue
        kept.append(hit)
    return tuple(kept)
