"""Issue 14, session 7: decisive rules may overrule the learned tiers, by kind.

Phrasings written for this test, in forms that neither ``labelled_set`` nor the other classifier
tests have; no rule, weight or threshold was chosen by looking at them. Each kind is a list with
a floor on the share routed right. The packaged classifier before decisive rules (main at
c6237da, measured with these lists on a worktree of it) -> after: service desk 2/8 -> 8/8,
store policy 4/8 -> 8/8, own order 6/8 -> 8/8, problem said of an item 4/5 -> 5/5, general
knowledge 8/10 -> 10/10; public-venue moderation 6/7 -> 6/7 (a regression guard: the one miss
falls back, since the learned tier ranks customer service above moderation there and a
decisive rule only settles fallback-or-its-route).
"""

from __future__ import annotations

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.core import overrule
from orchestrator.classifier.models import Rule
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB, MOD, XL
from tests.unit.classifier_helpers import assert_share

#: Asking for the service desk itself: reaching it or a person, a complaint, a review.
SERVICE_DESK: list[tuple[str, Route]] = [
    ("Who do I ring to reach your customer care team?", CS),
    ("I'd like to lodge a formal complaint about the courier", CS),
    ("how can I get through to a live agent", CS),
    ("where do I write a review of the blender I bought", CS),
    ("is there a phone line for client support on weekends", CS),
    ("what's the quickest way to talk to a human about this", CS),
    ("怎么转人工客服", CS),
    ("我想联系客服说一下配送的问题", CS),
]

#: The store's own policies and service terms, asked of it.
STORE_POLICY: list[tuple[str, Route]] = [
    ("what's your exchange policy for sale items", CS),
    ("how long does delivery take to Ireland", CS),
    ("do you ship to New Zealand", CS),
    ("does your app support Apple Watch payments", CS),
    ("Do you deliver on Sundays?", CS),
    ("what are your fees for paying in another currency", CS),
    ("退货政策是什么", CS),
    ("换货流程是怎样的", CS),
]

#: How-to questions about the customer's own order or account.
OWN_ORDER: list[tuple[str, Route]] = [
    ("How do I change the shipping address of my order?", CS),
    ("How can I update the billing address on my account?", CS),
    ("Can I still add an item to my order before it ships?", CS),
    ("I need to switch the delivery address for my parcel", CS),
    ("is it possible to pause my subscription over the summer", CS),
    ("what happens to my voucher if I return the jacket", CS),
    ("我的包裹怎么改地址", CS),
    ("我的订单能不能加一个商品", CS),
]

#: A problem said of an order, parcel or payment, without "my".
PROBLEM_OF_AN_ITEM: list[tuple[str, Route]] = [
    ("the parcel is late again, where is it", CS),
    ("the package never arrived and the tracking stopped", CS),
    ("the transfer is still pending since monday", CS),
    ("this order was damaged in transit", CS),
    ("the booking was cancelled without any email", CS),
]

#: General knowledge and creative asks that name a service word: out of scope.
GENERAL_KNOWLEDGE: list[tuple[str, Route]] = [
    ("write a sonnet about an overdue invoice", FB),
    ("recommend a documentary about container shipping", FB),
    ("what is a synonym for refund", FB),
    ("how do you pronounce courier", FB),
    ("how much protein is in a takeaway burrito", FB),
    ("who invented the credit card", FB),
    ("写一个关于退款的段子", FB),
    ("快递员这个词用日语怎么说", FB),
    ("一杯奶茶的热量是多少", FB),
    ("有没有讲外卖骑手的电视剧", FB),
]

#: Whether a text may appear in a public place: moderation, even when the text itself reads
#: like a customer's message.
PUBLIC_VENUE: list[tuple[str, Route]] = [
    ("Can we keep this on the forum: my refund never came and nobody answers", MOD),
    ("Should this be allowed on our community page? where is my order", MOD),
    ("Publish to the public feed or not: the courier threw my parcel over the fence", MOD),
    ("Is it ok if this goes live on the reviews wall? delivery was quick, thanks", MOD),
    ("这条留言能不能公开：我的快递三天没动了", MOD),
    ("这条评论是否可以置顶：退款一直没到账", MOD),
    ("这段话适不适合放到首页：客服态度很好", MOD),
]


@pytest.mark.parametrize(
    ("cases", "floor"),
    [
        (SERVICE_DESK, 0.85),
        (STORE_POLICY, 0.85),
        (OWN_ORDER, 0.85),
        (PROBLEM_OF_AN_ITEM, 0.9),
        (GENERAL_KNOWLEDGE, 0.85),
        (PUBLIC_VENUE, 0.85),
    ],
    ids=["service-desk", "store-policy", "own-order", "problem", "general-knowledge", "venue"],
)
def test_kind_is_routed_right(clf: RuleClassifier, cases: list, floor: float) -> None:
    assert_share(clf, cases, floor)


def _fast_probs(clf: RuleClassifier, text: str) -> list[float]:
    """The fast tier's route probabilities for ``text`` (route order of ``Route``), after
    checking that the fast tier is loaded and raised no flag on it."""
    scorer = clf._state.scorer
    assert scorer is not None
    probs, flag = scorer.fast(clf.normalise(text))
    assert flag == 0
    return list(probs)


def test_a_decisive_rule_hands_a_fast_fallback_to_the_rules(clf: RuleClassifier) -> None:
    """The fast tier would send this to fallback on its own (p >= fast_min); a decisive rule
    matches, so the rules read it and the rule overrules the learned tier's fallback."""
    text = "the parcel is late again, where is it"
    probs = _fast_probs(clf, text)
    assert max(probs) == probs[3] >= clf.thresholds.fast_min  # fast: fallback
    got = clf.classify_text(text)
    assert got.route == CS and got.decided_by == "learned", got.reason
    fast = got.tier("fast")
    assert fast is not None and not fast.decided and "decisive" in fast.note
    assert "decisive rule cs.decisive.problem.en" in got.reason
    assert 0.0 < got.confidence <= 1.0 and not got.calibrated


def test_a_veto_hands_a_confident_fast_route_to_the_rules(clf: RuleClassifier) -> None:
    """The fast tier is sure this is customer service; a negative decisive rule (general
    knowledge) matches, so it hands the text on, and the request falls back. (The text was
    "what is the history of the credit card payment" until the round-5 refit of issue 46 item 9,
    whose fast tier is no longer sure of it: 0.71.)"""
    text = "the history of the card payment refund"
    probs = _fast_probs(clf, text)
    assert max(probs) == probs[0] >= clf.thresholds.fast_min  # fast: CS
    got = clf.classify_text(text)
    assert got.route == FB, got.reason
    fast = got.tier("fast")
    assert fast is not None and not fast.decided and "decisive" in fast.note
    vetoes = [s for s in got.signals if s.rule_id == "neg.cs.general_knowledge.en"]
    assert vetoes and vetoes[0].negative


def _rule(route: Route, *, negative: bool = False, rid: str = "r") -> Rule:
    return Rule(
        id=rid, route=route, weight=0.9 if negative else 0.1, regex="x", negative=negative,
        decisive=True,
    )  # fmt: skip


RANKING = ((CS, 1), (MOD, 3), (XL, 2))


def test_overrule_rescues_a_fallback_only_for_the_most_probable_route() -> None:
    probs = {FB: 0.6, CS: 0.3, MOD: 0.08, XL: 0.02}
    got = overrule(FB, probs, [_rule(CS)], RANKING)
    assert got is not None and got[0] == CS
    # the rule settles fallback-or-CS, never CS-or-moderation
    assert overrule(FB, {FB: 0.5, MOD: 0.3, CS: 0.2, XL: 0.0}, [_rule(CS)], RANKING) is None
    # a veto of the same route cancels it
    assert overrule(FB, probs, [_rule(CS), _rule(CS, negative=True)], RANKING) is None
    # two routes: the higher priority wins (a post under review may mention anything)
    got = overrule(FB, probs, [_rule(CS, rid="a"), _rule(MOD, rid="b")], RANKING)
    assert got is not None and got[0] == MOD and got[1].id == "b"
    # a route decision is left alone by a positive rule
    assert overrule(CS, probs, [_rule(MOD)], RANKING) is None


def test_overrule_vetoes_a_route_unless_its_own_decisive_rule_fired() -> None:
    probs = {CS: 0.9, FB: 0.05, MOD: 0.03, XL: 0.02}
    got = overrule(CS, probs, [_rule(CS, negative=True, rid="veto")], RANKING)
    assert got is not None and got[0] == FB and got[1].id == "veto"
    assert overrule(CS, probs, [_rule(CS, negative=True), _rule(CS)], RANKING) is None
    assert overrule(MOD, probs, [_rule(CS, negative=True)], RANKING) is None


def test_decisive_rules_must_be_regex_rules() -> None:
    with pytest.raises(ValueError, match="decisive rules must be regex rules"):
        Rule(id="cs.x", route=CS, weight=0.1, keywords=("refund",), decisive=True)


def test_decisive_union_agrees_with_the_rules(clf: RuleClassifier) -> None:
    """The fast tier's check (an RE2 set pass, then the reported rules' own search) says yes
    exactly when a decisive rule fires."""
    compiled = clf._state.compiled
    rules_only = RuleClassifier(reload_interval=None, model_path=False)
    positive = {r.id for r in compiled.rules if r.decisive and not r.negative}
    against_cs = {r.id for r in compiled.rules if r.decisive and r.negative and r.route == CS}
    assert positive and against_cs
    for text, _ in SERVICE_DESK + STORE_POLICY + GENERAL_KNOWLEDGE + PUBLIC_VENUE:
        fired = {s.rule_id for s in rules_only.classify_text(text).signals}
        norm = clf.normalise(text)
        assert compiled.decisive_may_fire(norm, FB) == bool(fired & positive), text
        assert compiled.decisive_may_fire(norm, CS) == bool(fired & against_cs), text
        assert not compiled.decisive_may_fire(norm, XL), text  # no veto against reports
