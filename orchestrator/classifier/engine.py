"""The compiled matcher: a rules file turned into hash-table lookups for microsecond matching.

Matching works on the *normalised* text (NFKC, so full-width letters and digits become
half-width, then lower case), split into tokens: runs of ``[a-z0-9]`` and runs of CJK
characters. Then:

* **English keywords** are dictionary lookups of each token, of adjacent token pairs and
  triples joined by a space (phrases) and without one (``log in`` = ``login``,
  ``top-up`` = ``topup``), and of token prefixes for ``stem*`` keywords.
* **Typos** (fuzzy matching): a token that is not a keyword is looked up in a
  deletion-neighbourhood index (every keyword with one letter removed, the SymSpell idea),
  which yields the few keywords within one edit; each candidate is then scored with
  rapidfuzz (``fuzz.ratio``, and ``OSA`` distance <= 1) and the similarity scales the
  rule's weight. Results are memoised per token, so a word is only fuzzy-searched once.
  Scoring every token against every keyword with ``rapidfuzz.process.extractOne`` gave the
  same matches but cost tens of microseconds per token.
* **Chinese keywords** match as character substrings anywhere in a CJK run (Chinese has no
  spaces, so whole-word tokens would miss ``退款`` inside ``我要退款``): for each character
  that starts some keyword, the substrings of the keyword lengths are looked up.
* **Regex rules** are first matched all at once by an RE2 set (:mod:`.prefilter`); only
  those it reports are searched with the ``regex`` module, with a per-search time limit (see
  :mod:`.loader`), for the matched text and span.
* **Attachments** and the **channel** are set lookups.
* **Decisive rules** (``decisive = true``, regex rules only) also get an RE2 set of their
  own (:mod:`.prefilter`: one linear-time pass), so
  the fast tier can tell whether one of them may overrule it
  (:meth:`CompiledRules.decisive_may_fire`); only a rule the set reports is then searched
  with ``regex``. ``python -m benchmarks.classifier_bench`` measures the time per request.
* A reported rule is searched with RE2 itself when its pattern means the same there
  (:func:`re2_exact`) and the text lets it (:meth:`CompiledRules.re2_for`): RE2's ``\\b``,
  ``\\w``, ``\\d`` and ``\\s`` are ASCII-only and Python's are Unicode, which agree on a
  text whose only non-ASCII characters are neither letters, digits nor spaces (« », “ ”, —,
  emoji: most English requests); a pattern without those classes (the Chinese rules) means
  the same on any text. Both take the leftmost match with the first alternative that
  matches (Perl's rule); RE2's byte offsets are turned into character offsets.
  RE2 runs in linear time, so it needs no time limit, and it is faster than ``regex`` on
  the long alternations. ``tests/unit/test_regex_prefilter.py`` checks that both give the
  same span on every labelled request and on generated text.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import re2
import regex
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from orchestrator.classifier.loader import RulesError, compile_rule_regex
from orchestrator.classifier.models import Rule, RulesFile
from orchestrator.classifier.prefilter import RegexPrefilter
from orchestrator.routes import FALLBACK, Route, RouteSpec, the_route
from orchestrator.textnorm import TOKEN, fold_text, tokens

log = logging.getLogger(__name__)

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[a-z0-9]")
_TOKEN_MEMO_MAX = 50_000
#: A non-ASCII letter, digit or space: where Python's Unicode ``\\b\\w\\d\\s`` and RE2's ASCII
#: ones part ways.
_WORDISH_NON_ASCII = re.compile(r"[^\W\x00-\x7f]|[^\S\x00-\x7f]")
#: A class shorthand that means another thing in RE2 than in Python on non-ASCII text.
_UNICODE_CLASS = re.compile(r"\\[bBwWdDsS]")
#: What a pattern may not hold to be searched with RE2 on printable-ASCII text: a group with a
#: flag or a look-around (``(?i)``, ``(?=``; RE2 refuses the look-arounds, and a flag group
#: may mean another thing there), ``{,n}`` (``{0,n}`` in Python, a literal in RE2), or an
#: escaped letter or digit other than ``\b\B\w\W\d\D\s\S`` (a Unicode escape or property,
#: ``\Z``, ``\h``, a back-reference).
_NOT_RE2_EXACT = re.compile(r"\(\?[^:]|\{,|\\[^bBwWdDsS\W]")

#: ``(rule index, keyword)``: one keyword of one rule.
Hit = tuple[int, str]
#: Per fired rule: ``(similarity, matched text, span)``.
Match = tuple[float, str, tuple[int, int] | None]
#: Per token: its hits, the longest phrase (words) starting with it, whether it may join the
#: next word ("log in" -> "login").
TokenEntry = tuple[tuple[tuple[int, float | int, int], ...], int, bool]
#: The memo's entry of a token that fires nothing and starts nothing.
_NOTHING: TokenEntry = ((), 0, False)


def normalise(text: str) -> str:
    """Fold the text as the moderation normaliser does (:func:`orchestrator.textnorm.fold_text`):
    NFKC (full-width to half-width), case, homoglyphs (Cyrillic ``о`` -> ``o``), diacritics,
    zero-width and control characters removed, whitespace to spaces."""
    return fold_text(text)


class _Keywords:
    """The keyword tables of a rules file, filled one keyword at a time (:meth:`add`)."""

    def __init__(self, path: Path | str, fuzzy_min_len: int) -> None:
        self.path, self.fuzzy_min_len = path, fuzzy_min_len
        self.word: dict[str, list[Hit]] = defaultdict(list)
        self.phrase: dict[str, list[Hit]] = defaultdict(list)
        self.phrase_len: dict[str, int] = {}
        self.prefix: dict[str, list[Hit]] = defaultdict(list)
        self.zh: dict[str, list[Hit]] = defaultdict(list)
        self.fuzzy_keys: set[str] = set()

    def add(self, i: int, rule: Rule, raw: str) -> None:
        """Index keyword ``raw`` of rule ``i``: a Chinese substring, a ``stem*`` prefix, or a
        word or phrase (and a fuzzy key when the rule is fuzzy and the word long enough).

        Raises:
            RulesError: The keyword mixes Chinese and Latin letters, or has no letters.
        """
        kw = normalise(raw.strip())
        star = kw.endswith("*")
        kw = kw.rstrip("*").strip()
        has_cjk = bool(_CJK.search(kw))
        if has_cjk and _LATIN.search(kw):
            raise RulesError(
                self.path,
                rule.line,
                f"rule {rule.id!r}: keyword {raw!r} mixes Chinese and Latin letters; "
                "split it into two keywords",
            )
        if has_cjk:
            self.zh[re.sub(r"\s+", "", kw)].append((i, raw))
            return
        words = TOKEN.findall(kw)
        if not words:
            raise RulesError(
                self.path, rule.line, f"rule {rule.id!r}: keyword {raw!r} has no letters or digits"
            )
        compact = "".join(words)
        if star:
            self.prefix[compact].append((i, raw))
            return
        self.word[compact].append((i, raw))
        if len(words) > 1:
            self.phrase[" ".join(words)].append((i, raw))
            self.phrase_len[words[0]] = max(self.phrase_len.get(words[0], 0), len(words))
        if rule.fuzzy and len(compact) >= self.fuzzy_min_len:
            self.fuzzy_keys.add(compact)


@dataclass
class CompiledRules:
    """Lookup tables built from a :class:`RulesFile` (immutable once built)."""

    rules: tuple[Rule, ...]
    routes: tuple[Route, ...]
    ranking: tuple[tuple[Route, int], ...]  # (route, priority), in Route order
    word: dict[str, tuple[Hit, ...]]
    phrase: dict[str, tuple[Hit, ...]]
    phrase_len: dict[str, int]
    #: the word sequences (joined by a space) of two words or more that begin a longer phrase:
    #: a sequence neither a phrase nor in here ends the search for phrases at its first word
    phrase_prefixes: frozenset[str]
    compact_starts: frozenset[str]
    prefix: dict[str, tuple[Hit, ...]]
    prefix_lens: tuple[int, ...]
    fuzzy_del: dict[str, tuple[str, ...]]
    zh: dict[str, tuple[Hit, ...]]
    zh_first: dict[str, tuple[int, ...]]
    regexes: dict[int, regex.Pattern[str]]  # rule index -> compiled pattern
    regex_prefilter: RegexPrefilter
    #: rule index -> the same pattern in RE2 (:func:`re2_exact`), for a text RE2 reads as
    #: Python does (:meth:`re2_for`); and those of them without ``\\b\\w\\d\\s`` classes
    ascii_regexes: dict[int, Re2Search]
    neutral_regexes: dict[int, Re2Search]
    attach: dict[str, tuple[int, ...]]
    channels: dict[str, tuple[tuple[Route, float], ...]]
    max_scan_chars: int
    regex_timeout_s: float
    fuzzy_min_len: int
    fuzzy_min_ratio: float
    #: RE2 set of the decisive rules' patterns (None: there are none)
    decisive_prefilter: RegexPrefilter | None = None
    #: rule indices of the positive decisive rules (any route)
    decisive_positive: frozenset[int] = frozenset()
    #: per route, rule indices of the negative decisive rules against it
    decisive_against: dict[Route, frozenset[int]] = field(default_factory=dict)
    #: ids of the rules a negation cannot cancel (``negatable = false``): evidence in what a
    #: post says (a slur, profanity, a hashtag), not in what the user asks for
    content_ids: frozenset[str] = frozenset()
    #: the route whose declaration says it quotes content under review after its ask
    #: (:attr:`orchestrator.routes.RouteSpec.wraps_content`: a post to moderate), or None
    wraps_content: Route | None = None
    #: the routes with an attachment rule (a request with an attachment for one of these may
    #: still ask for something else in a second clause)
    attachment_routes: frozenset[Route] = frozenset()
    #: the declared routes (``[[route]]`` tables, then routes declared in Python)
    specs: tuple[RouteSpec, ...] = ()
    #: per route, its compiled :attr:`~orchestrator.routes.RouteSpec.own_things` (when declared)
    own_things: dict[Route, regex.Pattern[str]] = field(default_factory=dict)
    #: per route, its compiled :attr:`~orchestrator.routes.RouteSpec.others` (when declared)
    others: dict[Route, regex.Pattern[str]] = field(default_factory=dict)
    token_memo: dict[str, TokenEntry] = field(default_factory=dict)

    @classmethod
    def build(cls, rules_file: RulesFile, path: Path | str = "<rules>") -> CompiledRules:
        """Compile a validated rules file.

        Raises:
            RulesError: A keyword mixes Chinese and Latin letters, or a regex is unsafe.
        """
        rules = rules_file.rule
        s = rules_file.settings
        kw = _Keywords(path, s.fuzzy_min_len)
        regexes: list[tuple[int, regex.Pattern[str]]] = []
        attach: dict[str, list[int]] = defaultdict(list)
        for i, rule in enumerate(rules):
            if rule.regex is not None:
                regexes.append((i, compile_rule_regex(path, rule)))
            for ext in rule.attachments:
                attach[ext.lower().lstrip(".")].append(i)
            for raw in rule.keywords:
                kw.add(i, rule, raw)
        word, phrase, prefix, zh = kw.word, kw.phrase, kw.prefix, kw.zh
        compact_starts = frozenset(k[:j] for k in word for j in range(2, len(k)))
        fuzzy_del: dict[str, set[str]] = defaultdict(set)
        for key in kw.fuzzy_keys:
            for variant in _deletes(key):
                fuzzy_del[variant].add(key)
        zh_first: dict[str, set[int]] = defaultdict(set)
        for key in zh:
            zh_first[key[0]].add(len(key))
        channels: dict[str, list[tuple[Route, float]]] = defaultdict(list)
        for spec in rules_file.route:
            for ch in spec.channels:
                channels[ch.lower()].append((spec.name, spec.channel_weight))
        # the declared routes in file order, then any route only a rule names
        declared = [spec.name for spec in rules_file.route]
        routes = tuple(dict.fromkeys([*declared, *(r.route for r in rules)]))
        priority = {r: 0 for r in routes} | {spec.name: spec.priority for spec in rules_file.route}
        decisive = [(i, p.pattern) for i, p in regexes if rules[i].decisive]
        against: dict[Route, set[int]] = defaultdict(set)
        for i, _ in decisive:
            if rules[i].negative:
                against[rules[i].route].add(i)
        return cls(
            rules=rules,
            routes=routes,
            ranking=tuple((r, priority[r]) for r in routes),
            word={k: tuple(v) for k, v in word.items()},
            phrase={k: tuple(v) for k, v in phrase.items()},
            phrase_len=kw.phrase_len,
            phrase_prefixes=frozenset(
                " ".join(words[:j])
                for words in (k.split(" ") for k in phrase)
                for j in range(2, len(words))
            ),
            compact_starts=compact_starts,
            prefix={k: tuple(v) for k, v in prefix.items()},
            prefix_lens=tuple(sorted({len(k) for k in prefix})),
            fuzzy_del={k: tuple(sorted(v)) for k, v in fuzzy_del.items()},
            zh={k: tuple(v) for k, v in zh.items()},
            zh_first={k: tuple(sorted(v, reverse=True)) for k, v in zh_first.items()},
            regexes=dict(regexes),
            regex_prefilter=RegexPrefilter([(i, p.pattern) for i, p in regexes]),
            ascii_regexes=(
                exact := {i: r for i, p in regexes if (r := re2_exact(p.pattern)) is not None}
            ),
            neutral_regexes={
                i: r for i, r in exact.items() if not _UNICODE_CLASS.search(r.pattern)
            },
            attach={k: tuple(v) for k, v in attach.items()},
            channels={k: tuple(v) for k, v in channels.items()},
            max_scan_chars=s.max_scan_chars,
            regex_timeout_s=s.regex_timeout_ms / 1000,
            fuzzy_min_len=s.fuzzy_min_len,
            fuzzy_min_ratio=s.fuzzy_min_ratio,
            decisive_prefilter=RegexPrefilter(decisive) if decisive else None,
            decisive_positive=frozenset(i for i, _ in decisive if not rules[i].negative),
            decisive_against={r: frozenset(v) for r, v in against.items()},
            content_ids=frozenset(r.id for r in rules if not r.negatable),
            wraps_content=_wraps_content(rules_file, path),
            attachment_routes=frozenset(r.route for r in rules if r.attachments),
            specs=rules_file.route,
            own_things=_declared(rules_file, path, "own_things"),
            others=_declared(rules_file, path, "others"),
        )

    def decisive_may_fire(self, text: str, route: Route) -> bool:
        """Whether a decisive rule matches the *normalised* text that may overrule a
        learned-tier decision for ``route``: for a fallback, a positive decisive rule of any
        route; for a route, a negative decisive rule against it. One RE2 set pass, then a
        search of only the rules it reports (RE2 itself on printable ASCII, as :meth:`match`
        does), so the answer is the rules' own. Negation scopes are not read here (the fast
        tier never decides a text with a negation cue)."""
        wanted = self.decisive_positive if route == FALLBACK else self.decisive_against.get(route)
        if not wanted or self.decisive_prefilter is None:
            return False
        plain = self.re2_for(text)
        for rule in self.decisive_prefilter.candidates(text):
            if rule in wanted:
                try:
                    if self._span(rule, text, plain) is not None:
                        return True
                except TimeoutError:
                    return True  # unsure: the rules read it (their search logs the timeout)
        return False

    # ------------------------------------------------------------------ matching

    def match(
        self, text: str, extensions: tuple[str, ...] = (), channel: str | None = None
    ) -> dict[int, Match]:
        """Fired rules for a *normalised* text: rule index -> (similarity, matched, span).

        Args:
            text: Output of :func:`normalise` (already cut to ``max_scan_chars``).
            extensions: Lower-case attachment extensions without the dot.
            channel: The request's channel, lower case, or None.
        """
        fired: dict[int, Match] = {}
        memo = self.token_memo
        # the tokens, and each one's offset found from where the one before ended: no token
        # character lies between two tokens, so ``find`` lands on the token itself (cheaper
        # than a match object per token: a long request has hundreds)
        toks = tokens(text)
        n = len(toks)
        find = text.find
        end = 0
        for t, tok in enumerate(toks):
            start = find(tok, end)
            end = start + len(tok)
            entry = memo.get(tok)
            if entry is None:
                entry = self._token_entry(tok)
            if entry is _NOTHING:  # no keyword, no phrase or joined word starts here
                continue
            hits, plen, joins = entry
            if tok[0] >= "\u3400":  # a CJK run: (rule, offset, length), first per rule
                _fire_cjk(fired, hits, tok, start)
                continue
            for rule, sim, _ in hits:  # a word: (rule, similarity, 0), best per rule
                if rule not in fired or fired[rule][0] < sim:
                    fired[rule] = (sim, tok, (start, end))
            if t + 1 < n:
                if plen:  # phrases starting here, two or more words
                    self._phrases(text, toks, t, start, min(n, t + plen), fired)
                if joins:  # "log in" -> "login"
                    nxt = toks[t + 1]
                    joined_hits = self.word.get(tok + nxt)
                    if joined_hits:
                        _fire_exact(fired, joined_hits, text, (start, find(nxt, end) + len(nxt)))
        if self.regexes:
            self._match_regexes(text, fired)
        for ext in extensions:
            for rule in self.attach.get(ext, ()):
                fired.setdefault(rule, (1.0, ext, None))
        return fired

    def _phrases(
        self, text: str, toks: list[str], t: int, start: int, stop: int, fired: dict[int, Match]
    ) -> None:
        """Fire the phrases that begin with token ``t`` (at ``start`` in ``text``), of words
        ``t`` to ``stop - 1`` at most; a CJK run or a sequence that begins no longer phrase
        ends the search."""
        key, last = toks[t], start + len(toks[t])
        for k in range(t + 1, stop):
            nxt = toks[k]
            if nxt[0] >= "\u3400":
                break
            last = text.find(nxt, last) + len(nxt)
            key = key + " " + nxt
            phrase_hits = self.phrase.get(key)
            if phrase_hits:
                _fire_exact(fired, phrase_hits, text, (start, last))
            if key not in self.phrase_prefixes:  # no longer phrase begins with these words
                break

    def re2_for(self, text: str) -> dict[int, Re2Search]:
        """The rules that RE2 may search in ``text`` (a normalised text) with the ``regex``
        module's result: all of :attr:`ascii_regexes` when no non-ASCII character of it is a
        letter, digit or space (Unicode and ASCII classes agree there), else the patterns
        without such classes (:attr:`neutral_regexes`)."""
        if text.isascii():
            return self.ascii_regexes if text.isprintable() else {}
        return self.neutral_regexes if _WORDISH_NON_ASCII.search(text) else self.ascii_regexes

    def _match_regexes(self, text: str, fired: dict[int, Match]) -> None:
        candidates = self.regex_prefilter.candidates(text)
        if not candidates:
            return
        plain = self.re2_for(text)
        for rule in candidates:
            try:
                span = self._span(rule, text, plain)
            except TimeoutError:
                log.warning(
                    "regex rule %s exceeded %.0f ms on a %d-character text; skipped",
                    self.rules[rule].id,
                    self.regex_timeout_s * 1000,
                    len(text),
                )
                continue
            if span is not None:
                fired[rule] = (1.0, text[span[0] : span[1]], span)

    def _span(self, rule: int, text: str, plain: dict[int, Re2Search]) -> tuple[int, int] | None:
        """Where regex rule ``rule`` first matches ``text``: with RE2 when ``plain`` (from
        :meth:`re2_for`) holds it (linear time, no time limit), else with the ``regex`` module
        under the rules' time limit.

        Raises:
            TimeoutError: The ``regex`` search ran over ``regex_timeout_s``.
        """
        exact = plain.get(rule)
        if exact is not None:
            return exact.span(text)
        found = self.regexes[rule].search(text, timeout=self.regex_timeout_s)
        return found.span() if found is not None else None

    def _token_entry(self, tok: str) -> TokenEntry:
        """``(hits, longest phrase starting with it, whether it may join the next word)`` of
        one token, or :data:`_NOTHING` when it has none of them; memoised per token."""
        hits = self._token_hits(tok)
        plen = self.phrase_len.get(tok, 0)
        joins = tok in self.compact_starts
        entry = (hits, plen, joins) if hits or plen or joins else _NOTHING
        if len(self.token_memo) >= _TOKEN_MEMO_MAX:
            self.token_memo.clear()
        self.token_memo[tok] = entry
        return entry

    def _token_hits(self, tok: str) -> tuple[tuple[int, float | int, int], ...]:
        """What one token fires on its own, memoised per token (tokens repeat across requests).

        A CJK run gives ``(rule, offset, length)`` for the first keyword of each rule found as a
        substring; a word gives ``(rule, similarity, 0)``, the best of its exact, fuzzy (when
        it is no keyword itself) and ``stem*`` matches per rule.
        """
        out: dict[int, tuple[int, float | int, int]] = {}
        if tok[0] >= "\u3400":
            zh, zh_first, size = self.zh, self.zh_first, len(tok)
            for i in range(size):
                for length in zh_first.get(tok[i], ()):
                    if i + length <= size:
                        for rule, _ in zh.get(tok[i : i + length], ()):
                            out.setdefault(rule, (rule, i, length))
        else:
            exact = self.word.get(tok)
            if exact:
                for rule, _ in exact:
                    out[rule] = (rule, 1.0, 0)
            elif len(tok) >= self.fuzzy_min_len:
                for rule, _kw, sim in self._fuzzy(tok):
                    if rule not in out or out[rule][1] < sim:
                        out[rule] = (rule, sim, 0)
            for length in self.prefix_lens:
                if length > len(tok):
                    break
                for rule, _ in self.prefix.get(tok[:length], ()):
                    out[rule] = (rule, 1.0, 0)
        return tuple(out.values())

    def _fuzzy(self, tok: str) -> tuple[tuple[int, str, float], ...]:
        """Keywords of fuzzy rules within one edit of ``tok`` (``_token_hits`` memoises it)."""
        candidates: set[str] = set()
        fuzzy_del = self.fuzzy_del
        for variant in _deletes(tok):
            found = fuzzy_del.get(variant)
            if found:
                candidates.update(found)
        out: list[tuple[int, str, float]] = []
        for cand in sorted(candidates):  # set order varies with the hash seed
            if OSA.distance(tok, cand, score_cutoff=1) > 1:
                continue
            ratio = fuzz.ratio(tok, cand, score_cutoff=self.fuzzy_min_ratio)
            if ratio:
                for rule, kw in self.word[cand]:
                    if self.rules[rule].fuzzy:
                        out.append((rule, kw, round(ratio / 100, 4)))
        return tuple(out)


class Re2Search:
    """One rule's pattern compiled by RE2, searched in a normalised text (google-re2's public
    API: character offsets for a ``str``)."""

    __slots__ = ("pattern", "regexp")

    def __init__(self, regexp: Any) -> None:  # re2.compile's result (no public type name)
        self.regexp = regexp
        self.pattern: str = regexp.pattern

    def span(self, text: str) -> tuple[int, int] | None:
        """``(start, end)`` (characters) of the leftmost match in ``text``, or None."""
        found = self.regexp.search(text)
        return found.span() if found is not None else None

    def search(self, text: str) -> Any:
        """The RE2 match object of the leftmost match in ``text``, or None."""
        return self.regexp.search(text)


def re2_exact(pattern: str) -> Re2Search | None:
    """``pattern`` compiled by RE2 (case-insensitive, as the rules are), to search a text of
    printable ASCII with the same result as the ``regex`` module's; None when the pattern holds
    something RE2 may read otherwise (:data:`_NOT_RE2_EXACT`) or does not compile there."""
    if _NOT_RE2_EXACT.search(pattern):
        return None
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    options.never_capture = True  # only the whole match's span is read
    try:
        return Re2Search(re2.compile(pattern, options))
    except re2.error:
        return None


def _fire_cjk(
    fired: dict[int, Match], hits: tuple[tuple[int, float | int, int], ...], tok: str, start: int
) -> None:
    """Fire the keywords found in a CJK run ``tok`` (at ``start``): ``hits`` are ``(rule,
    offset, length)``, the first of each rule; a rule fired before keeps its match."""
    for rule, i, length in hits:
        if rule not in fired:
            s = start + i
            fired[rule] = (1.0, tok[i : i + length], (s, s + length))  # type: ignore[assignment, index]  # a CJK hit: ints


def _fire_exact(
    fired: dict[int, Match], hits: tuple[Hit, ...], text: str, span: tuple[int, int]
) -> None:
    """Fire each rule of ``hits`` as an exact match of ``text[span]`` (over a fuzzy one)."""
    for rule, _ in hits:
        if rule not in fired or fired[rule][0] < 1.0:
            fired[rule] = (1.0, text[span[0] : span[1]], span)


def _deletes(word: str) -> set[str]:
    """The word and every string made by removing one character of it."""
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


def _wraps_content(rules_file: RulesFile, path: Path | str) -> Route | None:
    """The route declared ``wraps_content`` (None when none is).

    Raises:
        RulesError: Two routes are.
    """
    try:
        return the_route(rules_file.route, "wraps_content")
    except ValueError as exc:
        raise RulesError(path, None, str(exc)) from exc


def _declared(
    rules_file: RulesFile, path: Path | str, name: Literal["own_things", "others"]
) -> dict[Route, regex.Pattern[str]]:
    """Each declared route's pattern ``name`` (``own_things`` or ``others``), compiled and
    probed as a rule's regex.

    Raises:
        RulesError: A pattern does not compile, matches the empty string or backtracks
            catastrophically.
    """
    return {
        s.name: compile_rule_regex(
            path,
            Rule(id=f"{s.name}.{name}", route=s.name, weight=0.5, regex=pattern).model_copy(
                update={"line": s.line}
            ),
        )
        for s in rules_file.route
        if (pattern := getattr(s, name))
    }


#: :func:`built_once`'s tables, by (rules file, content hash, declared routes); the last 8.
_BUILT: dict[tuple[str, str, tuple[tuple[str, int | None], ...]], CompiledRules] = {}
_BUILT_LOCK = threading.Lock()


def built_once(rules_file: RulesFile, path: Path | str, version: str) -> CompiledRules:
    """:meth:`CompiledRules.build` of the rules file ``path`` whose text hashes to ``version``
    (:func:`~orchestrator.classifier.loader.load_rules`), built once per process.

    ``rules_file`` may hold more declared routes (:func:`~orchestrator.classifier.loader.
    with_routes`): they are part of the key. The tables are immutable once built (the token
    memo holds exact entries), so every classifier of the same rules shares them: building is
    about 0.17 s of a classifier's 0.26 s once the learned tier is shared, and the tests build
    thousands of classifiers. A changed file has another hash and is built anew.

    Raises:
        RulesError: As :meth:`CompiledRules.build` (a failure is not remembered).
    """
    key = (str(path), version, tuple((s.model_dump_json(), s.line) for s in rules_file.route))
    built = _BUILT.get(key)
    if built is None:
        built = CompiledRules.build(rules_file, path)
        with _BUILT_LOCK:
            if len(_BUILT) >= 8:
                del _BUILT[next(iter(_BUILT))]
            _BUILT[key] = built
    return built
