"""Issue 46 item 9, round 7: a thing held ELSEWHERE is not this desk's, whatever service word
it carries; the customer's own goods and money with us stay customer service.

Three kinds fall back: a provider of the customer's own that is no shop and no bank ("my
landlord", "my gym", "my dentist", 房东, 健身卡), a public body's service (taxes, papers, benefits,
fines, 社保, 公积金) and another business NAMED (a marketplace, a ride app, a streaming service,
京东, 闲鱼). Each is a veto that wins over the customer's "my card" / "我的会员", and loses to the
customer's own goods ("where is my order") and to money that moved through the customer's own
card or account with us (the desk is a bank too: "a charge from Netflix on my card").
Own phrasings, written for this test: none is in ``tests/data/classifier_oos_families*.json``.
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

PROVIDER_OF_MINE = routed_to(
    FB,
    "my gym won't let me freeze my membership while I'm injured",
    "my optician sold me lenses with the wrong prescription",
    "my water company estimated my usage way too high",
    "my pension provider lost track of my old contributions",
    "my local council hasn't collected the bins for two weeks",
    "my car dealer is charging for a repair that should be under recall",
    "my kids' daycare wants a deposit for the summer",
    "my mortgage lender added a fee when I overpaid",
    "我的健身卡到期了还能退吗",
    "房东要涨房租合理吗",
    "孩子幼儿园的学费能分期吗",
    "醫院的掛號費怎麼這麼貴",
)

PUBLIC_SERVICE = routed_to(
    FB,
    "how do I file my self assessment if I was freelancing",
    "my universal credit payment is lower this month, why",
    "what's the fine for a late council tax payment",
    "how do I get a death certificate for my grandfather",
    "can I register to vote online after moving",
    "how long is a schengen visa valid for",
    "where do I send the form to renew my driving licence",
    "I have a parking ticket from a private car park, do I have to pay it",
    "公积金贷款的额度怎么算",
    "社保断缴了一个月有影响吗",
    "補辦身份證要多久",
    "车辆年检过期了会被罚款吗",
)

NAMED_BUSINESS = routed_to(
    FB,
    "my Etsy seller sent the wrong colour and won't answer",
    "how do I get a refund from Airbnb if the host cancelled",
    "Hulu keeps charging me after I cancelled my plan",
    "my Instacart shopper swapped half my groceries",
    "can I pause my Spotify subscription for a month",
    "Expedia changed my hotel without asking",
    "my Best Buy order says ready for pickup but the store says no",
    "t-mobile added an international fee I never agreed to",
    "闲鱼上的卖家不发货怎么办",
    "拼多多的仅退款怎么申请",
    "爱奇艺的会员被别人改了密码",
    "滴滴打车多扣了我一块钱",
)

OURS_WITH_THIRD_PARTY_WORDS = routed_to(
    CS,
    "my landlord signed for my parcel, but the box was empty",
    "please send my order to my office, I'm never home",
    "my dentist said the toothbrush I bought is fine, but where is my refund for the heads",
    "a payment to Hulu was taken from my account twice",
    "my card was declined at IKEA even though I have money",
    "the refund from Zara still isn't on my statement",
    "how much have I spent at Deliveroo this month",
    "can I send 50 dollars to my son's school from my account",
    "I was charged customs on my parcel, is that from your side",
    "the courier left my package at the post office",
)

OURS_WITH_THIRD_PARTY_WORDS_ZH = routed_to(
    CS,
    "我的快递被房东签收了但我没拿到",
    "我的订单能不能送到公司",
    "你们发的包裹被物业弄丢了",
    "我在你们店买的体检套餐怎么预约",
)

test_own_provider_falls_back = share_test(PROVIDER_OF_MINE, 0.85)
test_public_service_falls_back = share_test(PUBLIC_SERVICE, 0.85)
test_named_business_falls_back = share_test(NAMED_BUSINESS, 0.85)
test_our_goods_and_money_stay_customer_service = share_test(OURS_WITH_THIRD_PARTY_WORDS, 0.9)
test_our_goods_stay_customer_service_zh = share_test(OURS_WITH_THIRD_PARTY_WORDS_ZH, 0.75)


def _rules() -> dict[str, object]:
    return {r.id: r for r in RuleClassifier(reload_interval=None)._state.compiled.rules}


def test_a_veto_overrides_the_weaker_mine_and_loses_to_our_goods() -> None:
    """decide.overrule: a round-7 veto that overrides cs.decisive.mine.en turns a customer
    service decision into a fallback although "my card" fired; the customer's goods
    (cs.decisive.my_goods.en) or money on the customer's card (card_use) override the veto."""
    rules = _rules()
    mine, goods, card = (
        rules["cs.decisive.mine.en"],
        rules["cs.decisive.my_goods.en"],
        rules["cs.decisive.card_use.en"],
    )
    provider, named = rules["neg.cs.provider_of_mine.en"], rules["neg.cs.named_business.en"]
    probs = {FB: 0.3, CS: 0.6, Route("content_moderation"): 0.1}
    ranking = [(CS, 1), (Route("content_moderation"), 3)]
    assert overrule(CS, probs, [mine, provider], ranking) == (FB, provider)  # type: ignore[list-item]
    assert overrule(CS, probs, [mine, goods, provider], ranking) is None  # type: ignore[list-item]
    assert overrule(CS, probs, [mine, named], ranking) == (FB, named)  # type: ignore[list-item]
    assert overrule(CS, probs, [card, named], ranking) is None  # type: ignore[list-item]
    fb = {FB: 0.6, CS: 0.3, Route("content_moderation"): 0.1}
    assert overrule(FB, fb, [goods, provider], ranking) == (CS, goods)  # type: ignore[list-item]


def test_the_rules_fire_on_their_kind_only() -> None:
    """The rules alone: each veto fires on its kind, not on the same word used for us."""
    clf = RuleClassifier(reload_interval=None, model_path=False)

    def fired(text: str) -> set[str]:
        return {s.rule_id for s in clf.classify_text(text).signals if not s.negated}

    assert "neg.cs.provider_of_mine.en" in fired("my new landlord wants six months upfront")
    assert "neg.cs.public_service.en" in fired("how do I apply for a work permit")
    assert "neg.cs.public_service.en" not in fired("can I apply for a visa card")
    assert "neg.cs.public_service.en" not in fired("can I verify my account with my passport")
    assert "neg.cs.named_business.en" in fired("my Walmart order is late")
    assert "neg.cs.named_business.en" not in fired("the Nike trainers I ordered are too small")
    assert "neg.cs.named_business.zh" in fired("京东的退货运费谁出")
    assert "neg.cs.named_business.zh" not in fired("你们和京东比哪个便宜")
    assert "neg.cs.public_service.zh" in fired("户口本丢了怎么补办")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('overrides = ["neg.other"]', r"overrides 'neg\.other'.*no positive decisive rule"),
        (
            'overrides = ["cs.mine"]',
            r"rules '(cs|neg)\.mine' and '(cs|neg)\.mine' override each other",
        ),
    ],
)
def test_a_veto_s_overrides_are_checked(tmp_path: Path, extra: str, message: str) -> None:
    """A veto may override only a positive decisive rule of its route, and two rules never
    override each other: a broken file is refused at load with one line naming the rules."""
    path = tmp_path / "routes.toml"
    path.write_text(
        'version = 1\n\n[[rule]]\nid = "cs.mine"\nroute = "customer_service"\nweight = 0.1\n'
        "decisive = true\noverrides = [\"neg.mine\"]\nregex = 'my card'\n\n"
        '[[rule]]\nid = "neg.mine"\nroute = "customer_service"\nweight = 0.5\nnegative = true\n'
        f"decisive = true\n{extra}\nregex = 'my gym'\n\n"
        '[[rule]]\nid = "neg.other"\nroute = "customer_service"\nweight = 0.5\n'
        "negative = true\ndecisive = true\nregex = 'landlord'\n",
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=message):
        load_rules(path)
