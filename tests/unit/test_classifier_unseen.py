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
from tests.unit.classifier_helpers import assert_share

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


def test_kinds_have_a_dozen_or_more_cases() -> None:
    for name in (
        "MODERATION_OTHER_WORDS",
        "OUT_OF_SCOPE_SERVICE_WORD",
        "NEGATION",
        "TIES",
        "TWO_INTENTS",
        "IDS_NOT_HASHTAGS",
        "LONG_ASKS",
        "MODERATION_OTHER_WORDS_2",
        "OUT_OF_SCOPE_SERVICE_WORD_2",
    ):
        assert len(getattr(unseen, name)) >= 12, name


@pytest.mark.parametrize("cases", ["MODERATION_OTHER_WORDS", "MODERATION_OTHER_WORDS_2"])
def test_moderation_asked_in_other_words(clf: RuleClassifier, cases: str) -> None:
    assert_share(clf, getattr(unseen, cases), 0.75)


@pytest.mark.parametrize(
    "cases",
    [
        "OUT_OF_SCOPE_SERVICE_WORD",
        # was xfail at 9 of 14 (0.64); 10 of 14 since the general-knowledge decisive rules
        "OUT_OF_SCOPE_SERVICE_WORD_2",
    ],
)
def test_out_of_scope_with_a_service_word_falls_back(clf: RuleClassifier, cases: str) -> None:
    assert_share(clf, getattr(unseen, cases), 0.7)


def test_negated_cue_words_count_for_nothing(clf: RuleClassifier) -> None:
    for text, want in unseen.NEGATION:
        got = clf.classify_text(text)
        negated = [s for s in got.signals if s.negated]
        assert negated, f"no signal negated in {text!r}"
        assert all(s.route != Route("customer_service") or want != Route("customer_service")
                   for s in negated) or got.route == want  # fmt: skip
        assert got.route not in {s.route for s in negated} - {want}, (text, got.reason)
    assert_share(clf, unseen.NEGATION, 0.8)


def test_a_tie_never_acts(clf: RuleClassifier) -> None:
    rules_only = RuleClassifier(reload_interval=None, model_path=False)
    for text, _ in unseen.TIES:
        rules = rules_only.classify_text(text).tier("rules")
        assert rules is not None and rules.consulted
        top = sorted(rules.scores.values(), reverse=True)
        assert top[0] == top[1] > 0, (text, rules.scores)  # the case really is a tie in the rules
        got = clf.classify_text(text)
        assert got.route == Route("fallback"), (text, got.reason)
        # the fast tier never routes a few-word text that the rules tie on (SHORT hands texts
        # under 3 words to the rules; FEW makes it check the rules first up to 6); it may find
        # one out of scope, which acts on nothing
        if got.decided_by == "fast":
            assert got.fallback_reason == "out_of_scope", got.reason
        else:
            assert got.fallback_reason == "ambiguous" and "tie" in got.reason, got.reason


def test_two_intents_give_a_secondary_route(clf: RuleClassifier) -> None:
    for text, first, second in unseen.TWO_INTENTS:
        got = clf.classify_text(text)
        assert (got.route, got.secondary_routes) == (first, (second,)), (text, got.reason)


def test_ids_are_not_hashtags(clf: RuleClassifier) -> None:
    rules = RuleClassifier(reload_interval=None, model_path=False)  # the rule's own signals
    for text, want in unseen.IDS_NOT_HASHTAGS:
        assert "mod.tweet.en" not in {s.rule_id for s in rules.classify_text(text).signals}, text
        got = clf.classify_text(text)
        assert got.route == want, (text, got.reason)
    for tag in unseen.HASHTAGS:
        got = rules.classify_text(f"lol this is so true {tag}")
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
        right += got.route == want
    # Over the scan limit the rules decide (the learned tier reads only 2 x 320 characters and
    # never saw a long paste in training); measured 12 of 12 at both lengths.
    assert right / len(unseen.LONG_ASKS) >= 0.75


def test_short_text_is_not_truncated(clf: RuleClassifier) -> None:
    got = clf.classify_text("where is my parcel")
    assert not got.truncated and got.scanned == ((0, 18),)


def test_explanation_shows_each_tier(clf: RuleClassifier) -> None:
    order = ["fast", "rules", "learned", "semantic"]
    by_fast = 0
    for text, _ in unseen.MODERATION_OTHER_WORDS + unseen.NEGATION + unseen.TWO_INTENTS_TEXTS:
        got = clf.classify_text(text)
        assert [t.tier for t in got.tiers] == order
        decided = [t for t in got.tiers if t.decided]
        assert len(decided) == 1 and decided[0].consulted, got.tiers
        after = order[order.index(decided[0].tier) + 1 :]
        assert not any(t.consulted for t in got.tiers if t.tier in after)
        by_fast += decided[0].tier == "fast"
    assert by_fast > 0  # the fast tier decides some of them alone
    neg = clf.classify_text("Don't moderate anything, I only need to track my parcel")
    tiers = {t.tier: t for t in neg.tiers}
    assert tiers["fast"].consulted and not tiers["fast"].decided
    assert "negation" in tiers["fast"].note
    assert tiers["rules"].consulted and any(s.negated for s in neg.signals)
    assert tiers["learned"].decided and "came from the fired rules" in tiers["learned"].note
    assert abs(sum(tiers["learned"].scores.values()) - 1) < 1e-3
    assert not tiers["semantic"].consulted and "off" in tiers["semantic"].note


def test_homoglyphs_and_zero_width_are_folded(clf: RuleClassifier) -> None:
    plain = clf.classify_text("I want a refund for my order")
    tricky = clf.classify_text("I want a r\u0435f\u200bund for my оrder")  # Cyrillic e, o; ZWSP
    assert {s.rule_id for s in plain.signals} == {s.rule_id for s in tricky.signals}
    assert tricky.route == plain.route


# ------------------------------------------------ session 5: own phrasings, long/repetitive


def test_out_of_scope_third_set(clf: RuleClassifier) -> None:
    """Session 5's own held-out phrasings (never tuned on): at least 0.7 fall back."""
    assert_share(clf, unseen.OUT_OF_SCOPE_SERVICE_WORD_3, 0.7)


def test_long_and_repetitive_input_gets_a_sensible_result(clf: RuleClassifier) -> None:
    """A huge, repeated or padded text: read head and tail (or without its padding), flagged
    truncated, decided by a tier with a confidence that is not 0 for a route it acts on, and
    right for at least 10 of 12 such inputs (measured 12 of 12)."""
    limit = clf._state.compiled.max_scan_chars
    right, wrong = 0, []
    for text, want in unseen.long_and_repetitive():
        got = clf.classify_text(text)
        assert got.truncated, text[:40]
        assert 1 <= len(got.scanned) <= 2
        assert sum(b - a for a, b in got.scanned) <= limit
        assert all(0 <= a < b <= len(text) for a, b in got.scanned)
        assert "read" in got.reason and "characters" in got.reason
        assert 0.0 <= got.confidence <= 1.0
        if got.route != Route("fallback"):
            assert got.confidence >= 0.5, (text[:40], got.reason)  # "refund " * 50000 had 0.0
        assert sum(t.decided for t in got.tiers) == 1
        right += got.route == want
        if got.route != want:
            wrong.append((text[:40], want, got.route, got.reason))
    assert right >= 10, wrong


def test_repeats_do_not_outweigh_the_rest_of_the_text() -> None:
    """Within the window a token counts at most twice once most tokens are repeats, in the
    features the model is fitted on and in the per-request scorer alike."""
    from orchestrator.classifier import learned

    many = learned.features("refund " * 80 + "tell me a joke")
    assert many.count("wrefund") == learned.REPEAT_KEEP
    assert learned.features("refund my refund please").count("wrefund") == 2  # not repetitive
    assert learned.features("退款" * 100).count("z退") == learned.REPEAT_KEEP
    assert learned.bag_tokens("a b c d e f g h i") == list("abcdefghi")


def test_results_round_trip_through_validation(clf: RuleClassifier) -> None:
    """Each result equals itself dumped and validated again, whichever tier decided."""
    from orchestrator.classifier import Classification

    texts = [t for t, _ in unseen.MODERATION_OTHER_WORDS + unseen.NEGATION + unseen.TIES]
    texts += [t for t, _, _ in unseen.TWO_INTENTS] + ["refund " * 2000, "where is my parcel"]
    tiers = set()
    for text in texts:
        got = clf.classify_text(text, channel="web")
        again = Classification.model_validate(got.model_dump())
        assert again == got, text
        assert again.model_dump() == got.model_dump()
        tiers.add(next(t.tier for t in got.tiers if t.decided))
    assert {"fast", "learned", "rules"} <= tiers
