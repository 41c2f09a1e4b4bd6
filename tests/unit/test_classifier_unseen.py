"""Issue 14: the packaged classifier (rules + learned tier) on phrasings it never saw.

The requests are in ``tests/data/classifier_unseen.py``, written for this test, one list per
failing kind of the issue; none of them is in the labelled set the learned tier was fitted on.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.core import default_model_path
from orchestrator.routes import Route

_spec = importlib.util.spec_from_file_location(
    "classifier_unseen", Path(__file__).parents[1] / "data" / "classifier_unseen.py"
)
assert _spec is not None and _spec.loader is not None
unseen = importlib.util.module_from_spec(_spec)
sys.modules["classifier_unseen"] = unseen
_spec.loader.exec_module(unseen)


@pytest.fixture(scope="module")
def clf() -> RuleClassifier:
    assert default_model_path().exists(), "run `orchestrator classifier fit` to ship the model"
    c = RuleClassifier(reload_interval=None)
    assert c.model is not None
    return c


def _share_right(clf: RuleClassifier, cases: list[tuple[str, Route]]) -> tuple[float, list]:
    wrong = []
    for text, want in cases:
        got = clf.classify_text(text)
        if got.route is not want:
            wrong.append((text, want.value, got.route.value, got.reason))
    return 1 - len(wrong) / len(cases), wrong


def test_kinds_have_a_dozen_or_more_cases() -> None:
    for name in (
        "MODERATION_OTHER_WORDS",
        "OUT_OF_SCOPE_SERVICE_WORD",
        "NEGATION",
        "TIES",
        "TWO_INTENTS",
        "IDS_NOT_HASHTAGS",
        "LONG_ASKS",
    ):
        assert len(getattr(unseen, name)) >= 12, name


@pytest.mark.xfail(reason="issue 14 open: 0.50 of these on the shipped model (target 0.75)")
def test_moderation_asked_in_other_words(clf: RuleClassifier) -> None:
    share, wrong = _share_right(clf, unseen.MODERATION_OTHER_WORDS)
    assert share >= 0.75, wrong


@pytest.mark.xfail(reason="issue 14 open: 0.20 of these on the shipped model (target 0.7)")
def test_out_of_scope_with_a_service_word_falls_back(clf: RuleClassifier) -> None:
    share, wrong = _share_right(clf, unseen.OUT_OF_SCOPE_SERVICE_WORD)
    assert share >= 0.7, wrong


def test_negated_cue_words_count_for_nothing(clf: RuleClassifier) -> None:
    for text, want in unseen.NEGATION:
        got = clf.classify_text(text)
        negated = [s for s in got.signals if s.negated]
        assert negated, f"no signal negated in {text!r}"
        assert all(s.route is not Route.CUSTOMER_SERVICE or want is not Route.CUSTOMER_SERVICE
                   for s in negated) or got.route is want  # fmt: skip
        assert got.route not in {s.route for s in negated} - {want}, (text, got.reason)
    share, wrong = _share_right(clf, unseen.NEGATION)
    assert share >= 0.8, wrong


def test_a_tie_never_acts(clf: RuleClassifier) -> None:
    for text, _ in unseen.TIES:
        got = clf.classify_text(text)
        rules = got.tiers[0].scores
        top = sorted(rules.values(), reverse=True)
        assert top[0] == top[1] > 0, (text, rules)  # the case really is a tie in the rules
        assert got.route is Route.FALLBACK and got.fallback_reason == "ambiguous", got.reason
        assert "tie" in got.reason


def test_two_intents_give_a_secondary_route(clf: RuleClassifier) -> None:
    for text, first, second in unseen.TWO_INTENTS:
        got = clf.classify_text(text)
        assert (got.route, got.secondary_routes) == (first, (second,)), (text, got.reason)


def test_ids_are_not_hashtags(clf: RuleClassifier) -> None:
    for text, want in unseen.IDS_NOT_HASHTAGS:
        got = clf.classify_text(text)
        assert "mod.tweet.en" not in {s.rule_id for s in got.signals}, text
        assert got.route is want, (text, got.reason)
    for tag in unseen.HASHTAGS:
        got = clf.classify_text(f"lol this is so true {tag}")
        assert "mod.tweet.en" in {s.rule_id for s in got.signals}, tag


@pytest.mark.parametrize("chars", [10_000, 200_000])
def test_a_long_request_is_read_head_and_tail(clf: RuleClassifier, chars: int) -> None:
    right = 0
    for ask, want in unseen.LONG_ASKS:
        filler = unseen.FILLER * (chars // len(unseen.FILLER) + 1)
        text = filler[:chars] + "\n\n" + ask
        got = clf.classify_text(text)
        assert got.truncated
        limit = clf._state.compiled.max_scan_chars
        (a0, a1), (b0, b1) = got.scanned
        assert a0 == 0 and b1 == len(text) and (a1 - a0) + (b1 - b0) == limit
        assert "read" in got.reason and "characters" in got.reason
        right += got.route is want
    # Measured: 9 of 12. The misses are spreadsheet asks after prose filler: the learned tier
    # reads the filler as out of scope (a known gap of issue 14, not yet fixed).
    assert right / len(unseen.LONG_ASKS) >= 0.75


def test_short_text_is_not_truncated(clf: RuleClassifier) -> None:
    got = clf.classify_text("where is my parcel")
    assert not got.truncated and got.scanned == ((0, 18),)


def test_explanation_shows_each_tier(clf: RuleClassifier) -> None:
    unsure = clf.classify_text("Would you let this comment through: the new update broke my save")
    tiers = {t.tier: t for t in unsure.tiers}
    assert tiers["rules"].consulted and tiers["learned"].consulted
    assert tiers["learned"].decided and not tiers["rules"].decided
    assert "came from the fired rules" in tiers["learned"].note
    assert abs(sum(tiers["learned"].scores.values()) - 1) < 1e-3


def test_homoglyphs_and_zero_width_are_folded(clf: RuleClassifier) -> None:
    plain = clf.classify_text("I want a refund for my order")
    tricky = clf.classify_text("I want a r\u0435f\u200bund for my оrder")  # Cyrillic e, o; ZWSP
    assert {s.rule_id for s in plain.signals} == {s.rule_id for s in tricky.signals}
    assert tricky.route is plain.route
