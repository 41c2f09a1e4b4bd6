"""Issue 46 item 9, as a kind: another business's product or service falls back, however it is
asked; the customer's own order, charge or booking with us stays customer service.

The kind: a question or an ask about what a bank, an airline, a hotel, an insurer, a telecom
operator or a utility sells (its rates, fees, rules, extras, sign-up, how it works), which
merely shares a service word with this desk's business (a card, a booking, a bill, a plan).
Written on 2026-12-05 for this test BEFORE the rules ``neg.cs.other_business.en`` and
``neg.cs.other_business.zh`` were run on them, in shapes the families of
``tests/data/classifier_oos_families*.json`` do not use (a bare noun phrase, a request to sign
up, an instruction to a travel agent, a worry, a sum); the controls name the same nouns about
something the customer already bought from us.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.labelled_set import build_labelled_set
from orchestrator.routes import Route
from tests.unit.classifier_helpers import routed_to, share_test

FB, CS = Route("fallback"), Route("customer_service")

OTHER_BUSINESS_EN = routed_to(
    FB,
    "sign me up for a frequent flyer account with the airline",
    "I need a quote for home insurance on a two bedroom flat",
    "get me on an earlier flight to Madrid tomorrow",
    "my mortgage fixed rate ends in May, what now",
    "which energy tariff should a family of four pick",
    "reserve a double room at a hotel near the station for Friday",
    "open a savings account for my daughter",
    "checked baggage allowance for a long haul economy ticket",
    "I keep going over my mobile data every month, which plan fits me",
    "book a rental car at the airport for next week",
    "my credit score dropped 40 points, why would that happen",
    "how much life insurance cover does a new parent need",
    "put me on the waiting list for a cabin upgrade on the cruise",
    "is my pension pot enough to retire at sixty",
    "I'd like to increase the excess on my car insurance policy",
    "what roaming charges apply in Japan on a contract phone",
)

OTHER_BUSINESS_ZH = routed_to(
    FB,
    "帮我预订一张下周去成都的机票",
    "我想办一张能攒航空里程的信用卡",
    "车险每年续保多少钱合适",
    "房贷还了五年了，提前还一部分划算吗",
    "帮我在酒店加一晚住宿",
    "手机流量老是不够用，换个什么套餐好",
    "征信查询次数多了会影响贷款吗",
    "给我的高铁票选个靠窗的座位",
    "重疾险和医疗险要不要都买",
    "家里电费越来越贵，有什么办法",
)

OWN_WITH_US = routed_to(
    CS,
    "I was charged twice for my order and the bank shows both payments",
    "the insurance you sold me with the laptop order was never added to my invoice",
    "please cancel my order, I booked the wrong hotel voucher",
    "my refund for the cancelled order still hasn't reached my credit card",
    "the delivery fee on my order is wrong",
    "where is my parcel, the tracking has not moved since Monday",
    "我的订单被重复扣款了",
    "退款到现在还没到我的信用卡上",
    "我买的机票订单显示已取消，钱什么时候退",
    "快递一直不更新，帮我查一下我的包裹",
)

test_another_business_s_product_falls_back_en = share_test(OTHER_BUSINESS_EN, 0.9)

test_another_business_s_product_falls_back_zh = share_test(OTHER_BUSINESS_ZH, 0.9)

test_the_customer_s_own_order_with_us_stays_customer_service = share_test(OWN_WITH_US, 0.9)


def test_the_rules_name_another_business_and_the_customer_s_own_deal() -> None:
    """The rules alone: the veto fires on another business's product (en and zh), and a
    positive decisive rule on the customer's own trip or money with us, which wins over it."""
    rules = RuleClassifier(reload_interval=None, model_path=False)
    for text in (
        "what is the usual excess on a travel insurance policy for skiing",
        "sign me up for the hotel's loyalty scheme",
        "出国漫游包要不要提前开",
        "定期存款三年期的利率高吗",
    ):
        fired = {s.rule_id for s in rules.classify_text(text).signals if not s.negated}
        assert fired & {"neg.cs.other_business.en", "neg.cs.other_business.zh"}, (text, fired)
    for text in (
        "my cruise was cancelled last night and nobody told me",
        "you billed me twice for the airport parking",
    ):
        fired = {s.rule_id for s in rules.classify_text(text).signals if not s.negated}
        assert "cs.decisive.mine_trip.en" in fired, (text, fired)


def test_clinc_intents_of_other_businesses_are_labelled_fallback(data_dir: Path) -> None:
    """The labelled set: CLINC150's asks for another business's product (a hotel, carry-on
    rules, an insurance change, a credit score) fall back; its order status and the customer's
    own card stay customer service."""
    rows = build_labelled_set(data_dir)
    by_family: dict[str, set[Route]] = {}
    for row in rows:
        if row.source.startswith("clinc150"):
            by_family.setdefault(row.family.split(":")[-1], set()).add(row.route)
    for intent in ("book_hotel", "carry_on", "insurance_change", "credit_score", "apr"):
        assert by_family[intent] == {FB}, intent
    for intent in ("order_status", "report_lost_card", "card_declined"):
        assert by_family[intent] == {CS}, intent


#: Kinds that a refit for item 9 once weakened (round 4, round 5): a review-queue framing whose
#: object follows both decisions, a parcel or an order named with its number before what went
#: wrong, a return label asked for. Own phrasings, written for this test after the unit tests
#: of those kinds (test_classifier_issue46, test_classifier_kinds, test_classifier_unseen)
#: failed on the refit and their rules were widened.
FRAMING_OBJECT_LAST = routed_to(
    Route("content_moderation"),
    "Approve or flag this: where is my order",
    "keep or remove this comment: the courier never came",
    "allow or block this: refund me now you clowns",
    "publish or reject it: best pizza in town",
)

NUMBERED_PARCEL_PROBLEMS = routed_to(
    CS,
    "parcel #QX40021 has not moved for a week",
    "return label for #R77001 please",
    "can you email me a returns slip for order 5120",
    "order 77120 is still pending after ten days",
    "package ZX-5531 never arrived",
    "shipment #88ab2 was damaged in transit",
)

test_a_framing_with_its_object_last_goes_to_moderation = share_test(FRAMING_OBJECT_LAST, 1.0)

test_a_numbered_parcel_s_problem_stays_customer_service = share_test(NUMBERED_PARCEL_PROBLEMS, 1.0)
