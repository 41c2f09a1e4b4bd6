"""The RE2 prefilter never hides a regex match (orchestrator/classifier/prefilter.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.engine import normalise
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


def test_candidates_cover_every_real_match(data_dir: Path) -> None:
    """On every labelled request built from ../shared/data (customer-service
    utterances, moderation posts, spreadsheet requests; English and Chinese), each regex rule
    that the ``regex`` module matches is among the prefilter's candidates."""
    compiled = RuleClassifier(reload_interval=None)._state.compiled
    assert compiled.regexes and not compiled.regex_prefilter.always
    texts = [
        normalise(row.text[: compiled.max_scan_chars])
        for split in ("tune", "test")
        for row in load_split(data_dir, split)
    ]
    texts += ["déjà-vu refund", "退款please", "ÉRROR on my card", "файл.xlsx", "x\u00a0please"]
    hits = 0
    for text in texts:
        matched = {i for i, p in compiled.regexes.items() if p.search(text)}
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
