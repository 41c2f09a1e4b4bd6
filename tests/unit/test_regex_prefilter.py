"""The RE2 prefilter never hides a regex match (orchestrator/classifier/prefilter.py)."""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.engine import CompiledRules, normalise, re2_exact
from orchestrator.classifier.labelled_set import load_split
from orchestrator.classifier.loader import REGEX_FLAGS
from orchestrator.classifier.prefilter import RegexPrefilter, relax


@pytest.mark.parametrize(
    ("pattern", "relaxed"),
    [
        (r"\brefund\w*\b", r"refund[\w\x{80}-\x{10FFFF}]*"),
        (r"[\w\-\u3400-\u9fff]+\.csv", r"[\w\x{80}-\x{10FFFF}\-\x{3400}-\x{9fff}]+\.csv"),
        (r"a\sb\d", r"a[\s\x{80}-\x{10FFFF}]b[\d\x{80}-\x{10FFFF}]"),
        (r"[]a]\W", r"[]a]\W"),
        (r"[^\w]x", None),  # widening inside a negated class would narrow it
        (r"\p{Han}+", None),
        (r"(a)\1", None),
    ],
)
def test_relax(pattern: str, relaxed: str | None) -> None:
    assert relax(pattern) == relaxed


def test_unsupported_patterns_are_always_searched() -> None:
    pf = RegexPrefilter([(0, r"refund"), (1, r"(?<=my )card"), (2, r"(a)\1")])
    assert pf.always == (1, 2)
    assert pf.candidates("refund please") == [0, 1, 2]
    assert pf.candidates("hello") == [1, 2]


@lru_cache(maxsize=1)
def _compiled() -> CompiledRules:
    return RuleClassifier(reload_interval=None)._state.compiled


def _labelled_texts(data_dir: Path) -> list[str]:
    """Every labelled request of the tune and test splits, normalised and cut as classified."""
    limit = _compiled().max_scan_chars
    rows = (row for split in ("tune", "test") for row in load_split(data_dir, split))
    return [normalise(row.text[:limit]) for row in rows]


@cache
def _regex_spans(text: str) -> dict[int, tuple[int, int]]:
    """``{rule index: span}`` of every rule that the ``regex`` module matches in ``text``: the
    reference of the prefilter and RE2 tests on labelled requests, searched once per text
    (the three tests below read the same requests)."""
    found = ((i, p.search(text)) for i, p in _compiled().regexes.items())
    return {i: m.span() for i, m in found if m is not None}


def test_candidates_cover_every_real_match(data_dir: Path) -> None:
    """On every labelled request built from ../shared/data (customer-service
    utterances, moderation posts, spreadsheet requests; English and Chinese), each regex rule
    that the ``regex`` module matches is among the prefilter's candidates."""
    compiled = _compiled()
    assert compiled.regexes and not compiled.regex_prefilter.always
    texts = _labelled_texts(data_dir)
    texts += ["déjà-vu refund", "退款please", "ÉRROR on my card", "файл.xlsx", "x\u00a0please"]
    hits = 0
    for text in texts:
        matched = set(_regex_spans(text))
        assert matched <= set(compiled.regex_prefilter.candidates(text)), text
        hits += len(matched)
    assert hits > 1000  # the rules do fire on this data


def test_unicode_word_boundaries_still_decided_by_regex() -> None:
    """RE2's ``\\b`` is ASCII-only; the prefilter drops it and ``regex`` decides."""
    pf = RegexPrefilter([(0, r"\bcafé\b")])
    assert pf.candidates("caféx") == [0]  # candidate, but...
    assert regex.search(r"\bcafé\b", "caféx", REGEX_FLAGS) is None  # ...no match


def test_candidates_cover_every_match_on_texts_at_the_scan_limit(data_dir: Path) -> None:
    """Texts as long as the classifier reads (``max_scan_chars``), stitched from real posts
    and requests: the set's lazily built DFA needs far more states on them than on a short
    request, and an RE2 set whose DFA gives up reports no match at all. Every regex rule the
    ``regex`` module matches must still be among the candidates."""
    compiled = RuleClassifier(reload_interval=None)._state.compiled
    limit = compiled.max_scan_chars
    rows = [normalise(row.text) for row in load_split(data_dir, "test")]
    texts = [" ".join(rows[i::40])[:limit] for i in range(40)]
    assert all(len(t) == limit for t in texts)
    hits = 0
    for text in texts:
        matched = {i for i, p in compiled.regexes.items() if p.search(text)}
        assert matched <= set(compiled.regex_prefilter.candidates(text))
        hits += len(matched)
    assert hits > 100


# ---------------------------------------------------------------- RE2 in place of regex on ASCII


def _spans_agree(
    compiled: CompiledRules, text: str, reference: dict[int, tuple[int, int]] | None = None
) -> int:
    """Assert that each rule RE2 may search in ``text`` (:meth:`CompiledRules.re2_for`) finds
    what the ``regex`` module finds, span and text (``reference``: the ``regex`` module's spans
    of ``text`` already found, :func:`_regex_spans`); returns how many rules matched."""
    hits = 0
    for i, exact in compiled.re2_for(text).items():
        if reference is None:
            theirs = compiled.regexes[i].search(text)
            want = theirs.span() if theirs else None
        else:
            want = reference.get(i)
        assert exact.span(text) == want, (compiled.rules[i].id, text)
        hits += want is not None
    return hits


def test_re2_exact_refuses_what_it_may_read_otherwise() -> None:
    for pattern in (r"(?i)a", r"(?<=my )card", r"a{,3}", r"end\Z", r"\u3400", r"(a)\1", r"\p{L}"):
        assert re2_exact(pattern) is None, pattern
    for pattern in (r"\brefunds?\b", r"x(?:y|z)+", r"[\w\-]+\.csv", r"^(stop|cancel)[ .!]*$"):
        assert re2_exact(pattern) is not None, pattern


def test_re2_finds_the_same_match_on_every_ascii_request(data_dir: Path) -> None:
    """The rules' regexes that RE2 searches on printable-ASCII text (most English requests)
    match the same span as the ``regex`` module on every such labelled request."""
    compiled = _compiled()
    assert len(compiled.ascii_regexes) >= len(compiled.regexes) // 2
    texts = set(_labelled_texts(data_dir))
    plain = [t for t in texts if t.isascii() and t.isprintable()]
    assert len(plain) > 1000
    assert sum(_spans_agree(compiled, t, _regex_spans(t)) for t in plain) > 1000


#: words of requests and of the rules' patterns, to build texts from
_VOCABULARY = (
    "i my me you refund order card a joke poem how do birds fly is it rude to tip plan "
    "trip in to french the report xlsx sheet cancel that never mind hate kill 's - . ! ? "
    "paycheck oil change remind me shopping list 2024 #a1234 @user rt http www"
)
_WORDS = st.sampled_from(_VOCABULARY.split())
#: Chinese words of the rules, and non-ASCII marks that are no letters: «», “”, —, an emoji
_OTHER = st.sampled_from(
    [
        "我的",
        "订单",
        "退款",
        "笑话",
        "能不能",
        "发布",
        "去死",
        "怎么",
        "吗",
        "«",
        "»",
        "“",
        "”",
        "—",
        "…",
        "😡",
        "é",
        "中",
        "，",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, min_size=1, max_size=30), st.sampled_from([" ", "", "  ", ", "]))
def test_re2_agrees_with_regex_on_generated_ascii(words: list[str], sep: str) -> None:
    compiled = _compiled()
    _spans_agree(compiled, sep.join(words))


def test_re2_finds_the_same_match_on_every_other_request(data_dir: Path) -> None:
    """Requests with non-ASCII text: those whose non-ASCII characters are all marks (RE2
    searches every rule) and Chinese ones (only the rules without Unicode classes)."""
    compiled = _compiled()
    assert compiled.neutral_regexes and set(compiled.neutral_regexes) < set(compiled.ascii_regexes)
    texts = set(_labelled_texts(data_dir))
    other = [t for t in texts if not t.isascii()]
    marks = [t for t in other if compiled.re2_for(t) is compiled.ascii_regexes]
    assert len(other) > 1000 and len(marks) > 50
    assert sum(_spans_agree(compiled, t, _regex_spans(t)) for t in other) > 1000


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS | _OTHER, min_size=1, max_size=30), st.sampled_from([" ", "", ", "]))
def test_re2_agrees_with_regex_on_generated_mixed_text(words: list[str], sep: str) -> None:
    _spans_agree(_compiled(), normalise(sep.join(words)))


def test_a_text_with_letters_beyond_ascii_keeps_unicode_classes_for_regex() -> None:
    """Where a non-ASCII letter touches an ASCII word, RE2's ASCII ``\\b`` sees a boundary that
    Python's Unicode one does not: such a text gets only the patterns without those classes."""
    compiled = _compiled()
    assert compiled.re2_for("退款refund please") is compiled.neutral_regexes
    assert compiled.re2_for("«refund» please") is compiled.ascii_regexes  # marks only
    assert compiled.re2_for("refund\u3000please") is compiled.neutral_regexes  # a wide space
    exact = re2_exact(r"\brefund")
    assert exact is not None and exact.span("退款refund") == (2, 8)
    assert regex.search(r"\brefund", "退款refund", REGEX_FLAGS) is None
