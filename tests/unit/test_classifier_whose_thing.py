"""Issue 46 item 9, round 6: WHOSE thing is asked about decides, not the product noun.

Customer service is this shop's own orders, parcels, refunds, returns, account and address. A
text that names our transaction (an order or parcel number, "the X I ordered", "bought from
you", our checkout, what we did to the customer) is customer service whatever product it names
(a bag fee, an insurance add-on, a phone plan, a courier's name); a question about another
business's product or a shop's rules in general (bank products, card eligibility, extended
warranties, other stores) falls back. Own phrasings, written for this test (none is in the
held-out parts of ``tests/data/classifier_oos_families*.json``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.decide import overrule
from orchestrator.classifier.loader import load_rules
from orchestrator.exceptions import UserError
from orchestrator.routes import Route
from tests.unit.classifier_helpers import routed_to, share_test

FB, CS = Route("fallback"), Route("customer_service")

OURS_EN = routed_to(
    CS,
    "refund the seat upgrade fee on order 6620, I never got the seat",
    "the insurance add-on on order #77310 was charged but I unticked it",
    "the roaming SIM I ordered from you never activated",
    "you charged me for the extended warranty on my blender order and I didn't choose it",
    "your courier dropped my parcel at the wrong flat",
    "the hotel voucher I ordered last week hasn't arrived by email",
    "at checkout it said free shipping but you billed me 4.99",
    "Evri says parcel 559201 was returned to sender, can you resend it",
    "When will the refund for ORD-204417 reach my bank?",
    "I bought a phone case from you and the credit card slot ripped off",
)

OURS_ZH = routed_to(
    CS,
    "订单号553019的航空托运箱少发了一个",
    "我在你们店买的旅行保险卡没收到",
    "你们多扣了我一笔运费",
    "结账的时候没选延保，怎么还收了钱",
    "ORD-300128的退款到银行卡了吗",
    "我订的酒店代金券一直没发给我",
)

OTHER_BUSINESS_EN = routed_to(
    FB,
    "what credit score do I need to qualify for a travel rewards credit card",
    "is a joint account or two separate accounts better for a couple",
    "do most banks pay interest on a current account",
    "are extended warranties on laptops ever worth it",
    "what kind of savings account should a teenager open",
    "can shops charge a restocking fee on opened electronics",
    "do supermarkets have to refund out-of-date food",
    "how do I get a credit card if I just moved to the country",
)

OTHER_BUSINESS_ZH = routed_to(
    FB,
    "大学生怎么申请信用卡",
    "储蓄卡和借记卡是一回事吗",
    "存一年定期能拿多少利息",
    "超市的会员卡过期了积分还能用吗",
    "实体店买的衣服不合适可以退吗",
)

test_our_transaction_stays_customer_service_en = share_test(OURS_EN, 0.9)
test_our_transaction_stays_customer_service_zh = share_test(OURS_ZH, 0.8)
test_another_business_s_product_falls_back_en = share_test(OTHER_BUSINESS_EN, 0.85)
test_another_business_s_product_falls_back_zh = share_test(OTHER_BUSINESS_ZH, 0.8)


def test_the_ours_rule_fires_and_overrides_the_product_veto() -> None:
    """The rules alone: our order named fires cs.decisive.ours.*, which lists the other-business
    vetoes it overrides; the same product asked about in general fires only the veto."""
    rules = RuleClassifier(reload_interval=None, model_path=False)
    for text, ours, veto in (
        ("refund my bag fee for order 1234", "cs.decisive.ours.en", "neg.cs.other_business.en"),
        ("订单号20931的保险费退给我", "cs.decisive.ours.zh", "neg.cs.other_business.zh"),
    ):
        fired = {s.rule_id for s in rules.classify_text(text).signals if not s.negated}
        assert ours in fired, (text, fired)
        rule = next(r for r in rules._state.compiled.rules if r.id == ours)
        assert veto in rule.overrides
    fired = {s.rule_id for s in rules.classify_text("what is a typical bag fee").signals}
    assert "cs.decisive.ours.en" not in fired


def test_overrule_ignores_an_overridden_veto_only() -> None:
    """decide.overrule: a veto that a fired positive rule overrides counts for nothing (the
    learned tier's fallback becomes the route); one it does not override still vetoes."""
    rules = {r.id: r for r in RuleClassifier(reload_interval=None)._state.compiled.rules}
    ours, veto = rules["cs.decisive.ours.en"], rules["neg.cs.other_business.en"]
    other_veto = rules["neg.cs.general_knowledge.en"]
    probs = {FB: 0.6, CS: 0.3, Route("content_moderation"): 0.1}
    ranking = [(CS, 1), (Route("content_moderation"), 3)]
    assert overrule(FB, probs, [ours, veto], ranking) == (CS, ours)
    assert overrule(CS, probs, [ours, veto], ranking) is None
    assert overrule(CS, probs, [ours, other_veto], ranking) is None  # a positive one fired
    assert overrule(CS, probs, [veto], ranking) == (FB, veto)
    assert overrule(FB, probs, [ours, other_veto], ranking) is None


def test_overrides_must_name_a_veto_of_the_same_route(tmp_path: Path) -> None:
    """A rules file whose ``overrides`` names no negative decisive rule of the route is
    refused at load with one line naming the rule and how to fix it."""
    path = tmp_path / "routes.toml"
    path.write_text(
        'version = 1\n\n[[rule]]\nid = "cs.ours"\nroute = "customer_service"\n'
        "weight = 0.1\ndecisive = true\noverrides = [\"cs.other\"]\nregex = 'order [0-9]+'\n\n"
        '[[rule]]\nid = "cs.other"\nroute = "customer_service"\nweight = 0.5\n'
        'keywords = ["bank"]\n',
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=r"overrides 'cs\.other'.*no negative decisive rule"):
        load_rules(path)
