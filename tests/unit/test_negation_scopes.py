"""``negation.negated_scopes`` and ``has_negation``: every cue of the docstring is found,
spelt with or without its apostrophe, and the cheap check agrees with the scopes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.classifier.negation import has_negation, negated_scopes


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("don't moderate anything, i only need to track my parcel", "don't moderate anything"),
        ("dont moderate anything, i only need to track my parcel", "dont moderate anything"),
        ("neednt review this, where is my refund", "neednt review this"),
        ("needn't review this, where is my refund", "needn't review this"),
        ("no need to check the post, cancel my order", "no need to check the post"),
        ("不用审核，帮我查一下快递", "不用审核"),
        ("别审核这条了，我的退款呢", "别审核这条了"),
    ],
)
def test_each_cue_opens_a_scope(text: str, scope: str) -> None:
    assert [text[a:b] for a, b in negated_scopes(text)] == [scope]
    assert has_negation(text)


@pytest.mark.parametrize(
    "text",
    [
        "i did not receive my refund",
        "my card is not working",
        "我的快递还没到",
        "where is my order",
    ],
)
def test_a_reported_problem_negates_nothing(text: str) -> None:
    assert negated_scopes(text) == [] and not has_negation(text)


_VOCABULARY = (
    "dont|don't|do not|never|neednt|needn't|no need to|without|instead of|rather than|not a|"
    "moderate|review|check|refund|my order|the post|,|.|不要|别|无需|不用|审核|退款|快递|帮我| "
)
_PIECES = st.sampled_from(_VOCABULARY.split("|"))


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=12).map(" ".join))
def test_the_cheap_check_agrees_with_the_scopes(text: str) -> None:
    assert has_negation(text) == bool(negated_scopes(text))
