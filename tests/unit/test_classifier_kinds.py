"""Issue 14, session 6: the packaged classifier on a fourth set of phrasings of each failing kind.

Written in this session before the classifier was measured on them, in forms that neither
``labelled_set`` (the fit's data) nor ``tests/data/classifier_unseen.py`` has; no threshold,
rule or fit was chosen by looking at them (the refit's L2 was chosen on the tune split's
out-of-fold predictions). Each kind's share of right answers has a floor. Measured with the
shipped model (l2 3e-5 refit): moderation 11/12, out of scope 10/12, negation 8/8 (6/8
before the Chinese scope fix: 不要帮我审核 left 审核 outside the scope), compound 5/5, ids
4/5 routed right and 5/5 without the hashtag rule, ties 6/6 never acted on.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.core import default_calibration_path, default_model_path
from orchestrator.routes import Route
from tests.unit.case_tables import tables
from tests.unit.classifier_helpers import assert_share, share_test

#: Each kind's cases, by the table's name (tests/data/cases/classifier_kinds.toml): ``(text,
#: route)`` rows, ``(text, first route, second route)`` for the compounds, bare texts where
#: the test says what they must get.
KINDS = tables("classifier_kinds.toml")


test_moderation_asked_in_a_fourth_set_of_words = share_test(KINDS["moderation_asked_4"], 0.75)

test_out_of_scope_fourth_set_falls_back = share_test(KINDS["out_of_scope_4"], 0.6)


def test_negated_cue_words_fourth_set(clf: RuleClassifier) -> None:
    assert_share(clf, KINDS["negated_4"], 0.75)
    # the rules read the scope: the fast tier never decides these
    for text, _ in KINDS["negated_4"]:
        assert clf.classify_text(text).decided_by != "fast", text


def test_compound_fourth_set_gives_a_secondary_route(clf: RuleClassifier) -> None:
    right = 0
    for text, first, second in KINDS["compound_4"]:
        got = clf.classify_text(text)
        right += (got.route, got.secondary_routes) == (first, (second,))
    assert right / len(KINDS["compound_4"]) >= 0.6


def test_a_request_before_a_moderation_ask_is_kept(clf: RuleClassifier) -> None:
    """Measured 10 of 10 (0 before: any moderation ask made the request a single route)."""
    got = [(t, clf.classify_text(t)) for t, _, _ in KINDS["compound_moderation"]]
    wrong = [
        (t, c.route, c.secondary_routes)
        for (t, first, second), (_, c) in zip(KINDS["compound_moderation"], got, strict=True)
        if (c.route, c.secondary_routes) != (first, (second,))
    ]
    assert len(wrong) <= 2, wrong


def test_a_compound_request_states_its_clauses_evidence(clf: RuleClassifier) -> None:
    """A compound's confidence and scores are each asked route's evidence in its own clause:
    the whole-text tiers read "where is my parcel? also, is it ok to post this: ..." as
    moderation (0.98), which said customer_service with confidence 0.997 beside a score of
    0.01 for it."""
    compounds = 0
    for text, _, _ in [*KINDS["compound_moderation"], *KINDS["compound_4"]]:
        got = clf.classify_text(text)
        if not got.secondary_routes:
            continue
        compounds += 1
        asked = (got.route, *got.secondary_routes)
        assert not got.calibrated, text
        assert got.confidence == got.scores[got.route] > 0.0, (text, got.scores)
        # the first ask reaches secondary_min; a moderation ask may hold less ("... check
        # whether this comment is fine to publish: ok": only "comment", 0.35)
        assert got.scores[got.route] >= clf.thresholds.secondary_min, (text, got.scores)
        assert all(got.scores[r] > 0.0 for r in asked), (text, got.scores)
        assert all(s == 0.0 for r, s in got.scores.items() if r not in asked), got.scores
        assert list(got.scores.values()) == sorted(got.scores.values(), reverse=True)
        assert all(f"{r} (" in got.reason for r in asked), got.reason
    assert compounds >= len(KINDS["compound_moderation"])


def test_a_post_under_review_is_never_split(clf: RuleClassifier) -> None:
    """What follows a moderation ask is the post, however many requests it seems to hold."""
    for text in KINDS["moderation_not_split"]:
        got = clf.classify_text(text)
        assert got.secondary_routes == (), (text, got.reason)
        assert got.route != Route("excel_report"), text


def test_a_post_word_in_a_later_clause_is_no_moderation_ask(clf: RuleClassifier) -> None:
    """Measured 8 of 10 with the model refitted on the channel-free labelled set (2026-12-02):
    "... also, I posted a reply on your forum and nobody answered" and "... and also post the
    chart to our team channel" are routed to moderation by the learned tier (0.99, 0.86); no
    request of the ten gets moderation as a secondary route."""
    wrong = [
        t
        for t in KINDS["no_moderation_asked"]
        if Route("content_moderation") in (got := clf.classify_text(t)).secondary_routes
        or got.route == Route("content_moderation")
    ]
    assert len(wrong) <= 2, wrong
    assert not any(
        Route("content_moderation") in clf.classify_text(t).secondary_routes
        for t in KINDS["no_moderation_asked"]
    )


def test_bare_abuse_goes_to_moderation_and_swearing_customers_stay(clf: RuleClassifier) -> None:
    right = [
        t for t in KINDS["bare_abuse"] if clf.classify_text(t).route == Route("content_moderation")
    ]
    assert len(right) >= 3, right
    for text in KINDS["swearing_customers"]:
        assert clf.classify_text(text).route == Route("customer_service"), text


def test_ids_fourth_set_are_not_hashtags(clf: RuleClassifier) -> None:
    """No id fires the hashtag rule; at least 4 of 5 are routed right (measured 4 of 5: "case
    #C12 is still open" is read as out of scope, which is a handoff, not a wrong route)."""
    rules = RuleClassifier(reload_interval=None, model_path=False)
    for text, _ in KINDS["ids_4"]:
        assert "mod.tweet.en" not in {s.rule_id for s in rules.classify_text(text).signals}
    assert_share(clf, KINDS["ids_4"], 0.8)


def test_a_tie_never_acts_whichever_tier_runs(clf: RuleClassifier, tmp_path: Path) -> None:
    """The packaged classifier, and one whose fast tier would decide every request
    (``fast_min = 0``): a text of a few words that the rules tie on is never acted on. The fast
    tier either finds it out of scope (a fallback, which acts on nothing) or, when its best
    class is a route, checks the rules first and hands the tie to them."""
    eager_cal = tmp_path / "calibration.toml"
    text = default_calibration_path().read_text(encoding="utf-8")
    assert "fast_min = " in text
    eager_cal.write_text(
        "\n".join(
            "fast_min = 0.0" if line.startswith("fast_min = ") else line
            for line in text.splitlines()
        ),
        encoding="utf-8",
    )
    eager = RuleClassifier(
        reload_interval=None, model_path=default_model_path(), calibration_path=eager_cal
    )
    assert eager.thresholds.fast_min == 0.0
    # a text that no decisive rule could overrule (those hand even an eager fast tier's
    # decision to the rules: tests/unit/test_classifier_decisive.py)
    assert eager.classify_text("the card was declined at the shop").decided_by == "fast"
    rules_only = RuleClassifier(reload_interval=None, model_path=False)
    for text in KINDS["ties_4"]:
        scores = rules_only.classify_text(text).scores
        top = sorted(scores.values(), reverse=True)
        assert top[0] == top[1] > 0, (text, scores)  # really a tie in the rules
        for c in (clf, eager):
            got = c.classify_text(text)
            assert got.route == Route("fallback"), (text, got.reason)
            if got.decided_by == "fast":  # out of scope for the n-grams: acts on nothing
                assert got.fallback_reason == "out_of_scope", got.reason
            else:  # the fast tier handed it on: the rules call the tie
                assert got.fallback_reason == "ambiguous" and "tie" in got.reason, got.reason
        # the eager fast tier would route it (its best class is a route) but checked the rules
        eager_fast = eager.classify_text(text).tier("fast")
        assert eager_fast is not None
        if not eager_fast.decided:
            assert "tie" in eager_fast.note or "short" in eager_fast.note, eager_fast.note


def test_a_few_words_naming_another_business_fall_back(clf: RuleClassifier) -> None:
    for text in KINDS["once_ties_now_vetoed"]:
        got = clf.classify_text(text)
        assert got.route == Route("fallback"), (text, got.reason)
