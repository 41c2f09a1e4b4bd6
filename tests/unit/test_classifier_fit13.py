"""``fit --examples`` round 13 (issue 49 item 2): the examples tier takes a new route's request
from a built-in decision made with no sure reason (a built-in route, or the fast tier's
fallback) when the request is near the route's examples and nearer them than the built-in
reference requests of that decision by a margin fitted on built-in requests
(:func:`~orchestrator.classifier.fit_lexical.overrule`); a decisive rule, a compound request or
a request nearer its built-in route's requests keeps the built-in decision, and a classifier
without a fit is unchanged."""

from __future__ import annotations

import pytest

from orchestrator.classifier import RuleClassifier, fit_lexical, fit_semantic
from orchestrator.classifier.core import default_model_path
from orchestrator.classifier.fit_lexical import (
    BUILT_IN_FALLBACK,
    LexicalIndex,
    ThresholdFit,
    overrule,
)
from orchestrator.routes import FALLBACK, Route
from tests.unit.test_classifier_fit_new_routes import _row

GIFT = Route("gift_cards")
CS = Route("customer_service")
GIFTS = (
    "how much is left on my gift card|can I pay with two gift cards at once|my gift card has "
    "expired, can it be renewed|do gift cards work online and in store|can I buy a gift card "
    "for a friend|礼品卡余额怎么查|礼品卡过期了还能用吗"
)
NOT_MINE = "what's a good gift for my dad|how do I wrap a present neatly"
MINE = [(t, GIFT) for t in GIFTS.split("|")] + [(t, FALLBACK) for t in NOT_MINE.split("|")]
BUILT_IN = [
    *((f"where is my refund for order {i}", CS) for i in range(40)),
    *((f"my parcel {i} never arrived, please help", CS) for i in range(40)),
    *((f"cancel order {i} please", CS) for i in range(40)),
    *((f"我的订单{i}什么时候到", CS) for i in range(40)),
    *((f"what's the weather in city {i}", FALLBACK) for i in range(40)),
    *((f"tell me fact number {i} about space", FALLBACK) for i in range(40)),
]


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    mine = [_row(i, t, r, f"examples/{r}") for i, (t, r) in enumerate(MINE)]
    base = [_row(i, t, r, f"base/{i % 7}") for i, (t, r) in enumerate(BUILT_IN)]
    with pytest.MonkeyPatch.context() as patch:  # a sample of 60, the rest as reference
        patch.setattr(fit_lexical, "FIT", ThresholdFit(budget=0.002, floor=0.1, sample=60))
        out = fit_lexical.fit_lexical(mine, base, [GIFT])
    assert out is not None
    return out


@pytest.mark.parametrize(
    ("scores", "decided", "route"),
    [
        ({GIFT: 0.6, CS: 0.3, FALLBACK: 0.1}, CS, GIFT),  # near, and nearer than CS by 0.3
        ({GIFT: 0.6, CS: 0.45, FALLBACK: 0.1}, CS, None),  # nearer, but by less than 0.2
        ({GIFT: 0.4, CS: 0.1, FALLBACK: 0.1}, CS, None),  # under its threshold (0.5)
        ({GIFT: 0.6, CS: 0.1, FALLBACK: 0.7}, CS, None),  # the user's fallback rows nearer
        ({GIFT: 0.6, FALLBACK: 0.1}, CS, None),  # no reference requests of CS: never
        ({GIFT: 0.6, BUILT_IN_FALLBACK: 0.2, FALLBACK: 0.1}, FALLBACK, GIFT),  # built-in fallback
        ({GIFT: 0.6, BUILT_IN_FALLBACK: 0.5, FALLBACK: 0.1}, FALLBACK, None),
    ],
)
def test_a_new_route_overrules_only_when_near_and_much_nearer(scores, decided, route) -> None:
    scores = dict(sorted(scores.items(), key=lambda kv: -kv[1]))
    assert overrule(scores, {GIFT: 0.5}, {GIFT: 0.2}, decided) == route


def test_the_index_keeps_built_in_reference_requests_and_fitted_margins(index, tmp_path) -> None:
    assert {CS, BUILT_IN_FALLBACK} <= set(index.labels)  # the requests after the sample
    assert index.labels.count(GIFT) == 7 and index.labels.count(FALLBACK) == 2
    assert GIFT in index.margins and index.margins[GIFT] >= 0.0 and GIFT in index.zh_margins
    index.save(tmp_path / fit_lexical.FILE)
    again = LexicalIndex.load(tmp_path / fit_lexical.FILE)
    assert (again.margins, again.zh_margins) == (index.margins, index.zh_margins)
    text = "is there money left on my gift card"
    assert index.overrule(text, CS)[0] == GIFT  # much nearer the examples than the CS requests
    assert index.overrule("where is my refund for order 7777", CS)[0] is None
    assert index.overrule("my parcel 12 never arrived, gift card", CS)[0] is None
    assert index.overrule("礼品卡还剩多少钱", CS)[0] == GIFT


def test_an_index_written_before_margins_never_overrules(index, tmp_path) -> None:
    old = LexicalIndex(index.texts, index.labels, index.idf, index.thresholds, index.zh_thresholds)
    old.save(tmp_path / fit_lexical.FILE)
    again = LexicalIndex.load(tmp_path / fit_lexical.FILE)
    assert again.margins == {}
    assert again.overrule("is there money left on my gift card", CS)[0] is None


def _classifiers(index: LexicalIndex, tmp_path) -> tuple[RuleClassifier, RuleClassifier]:
    model = tmp_path / "learned.v2.npz"
    model.write_bytes(default_model_path().read_bytes())
    index.save(tmp_path / fit_lexical.FILE)
    return RuleClassifier(reload_interval=None), RuleClassifier(
        model_path=model, reload_interval=None
    )


@pytest.mark.parametrize(
    ("text", "files", "taken"),
    [
        ("is there money left on my gift card", (), True),  # the fast tier said customer service
        ("礼品卡还剩多少钱", (), True),  # Chinese, by characters
        ("where is my refund for order 7777", (), False),  # nearer the built-in route's requests
        ("the gift voucher my aunt gave me doesn't work at checkout", (), False),  # decisive rule
        (
            "check how much is left on my gift card, then total the attached spreadsheet",
            ("sales.xlsx",),
            False,  # a compound request: each of its routes asked in its own clause
        ),
    ],
)
def test_the_classifier_takes_the_request_from_a_built_in_route_only_without_a_sure_reason(
    index, tmp_path, text: str, files: tuple[str, ...], taken: bool
) -> None:
    packaged, fitted = _classifiers(index, tmp_path)
    before = packaged.classify_text(text, attachments=files)
    after = fitted.classify_text(text, attachments=files)
    if taken:
        assert before.route == CS and after.route == GIFT
        record = after.tier("semantic")
        assert record is not None and record.decided and "nearer than built-in" in record.note
        assert after.fallback_reason is None and not after.calibrated
    else:
        assert after.route == before.route and after.tiers == before.tiers


def test_the_built_in_decisions_are_unchanged_without_a_fit() -> None:
    """No ``fit --examples``: no examples tier, so nothing to overrule."""
    clf = RuleClassifier(reload_interval=None)
    assert clf.examples_tier is None
    assert fit_semantic.examples_tier(default_model_path(), None) is None
