"""``negation.clauses`` splits exactly as its one-pattern reference (``CLAUSE_PATTERN``) does: on
every labelled request, and on random texts made of the joining words, marks, commas and spaces
where the two ways of scanning could part."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.classifier.engine import normalise
from orchestrator.classifier.labelled_set import load_split
from orchestrator.classifier.negation import CLAUSE_PATTERN, clauses
from orchestrator.config import DEFAULT_DATA_DIR

_REFERENCE = re.compile(CLAUSE_PATTERN)


def reference(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = 0
    for m in _REFERENCE.finditer(text):
        if m.start() > start:
            out.append((start, m.start()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out or [(0, len(text))]


PIECES = [
    "and", "also", "and also", "and then", "then", "plus", "as well as", "brand", "sand",
    "andy", "thence", "x", "refund my order", "另外", "然后", "再把", "表格", ",", "，", " ",
    "  ", "\n", "?", "？", "。", ";", "_", "9",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14))
def test_clauses_match_the_reference_pattern(parts: list[str]) -> None:
    text = "".join(parts)
    assert clauses(text) == reference(text)


def test_clauses_match_the_reference_on_every_labelled_request() -> None:
    rows = load_split(DEFAULT_DATA_DIR, "tune") + load_split(DEFAULT_DATA_DIR, "test")
    texts = [normalise(r.text)[:4000] for r in rows]
    assert len(texts) > 5000
    wrong = [t for t in texts if clauses(t) != reference(t)]
    assert not wrong, wrong[:3]


def test_a_joining_word_inside_a_word_does_not_split() -> None:
    assert clauses("brand also") == [(0, 5)]
    assert clauses("the sandwich, thence home") == [(0, 25)]
    text = "refund it, then sum the sheet"
    assert [text[a:b] for a, b in clauses(text)] == ["refund it", "sum the sheet"]
