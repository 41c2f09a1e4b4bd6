"""Issue 46 item 9, round 3: a question about a service product *in general* falls back, even
when it holds a service word; the customer's own charge, parcel, refund or booking stays
customer service, whatever the sentence shape.

The inputs are this file's own (none is in tests/data/classifier_oos_families.json). They are
grouped by the cue the round-3 rules read (orchestrator/rules/routes.toml, ``neg.cs.compare``,
``neg.cs.definition``, ``neg.cs.advice``, ``neg.cs.industry_norm``, ``neg.cs.hypothetical``,
``neg.cs.trip_extra``, ``neg.cs.general_cues.zh``), not by topic: each cue has inputs from
several domains (banking, travel, telecom, insurance).
"""

from __future__ import annotations

import pytest

from benchmarks.classifier_oos_families import (
    TARGET_CS_PRECISION,
    TARGET_FALLBACK_RECALL_EN,
    measure,
)
from orchestrator.classifier import RuleClassifier
from orchestrator.routes import Route

CS, FB = Route("customer_service"), Route("fallback")


#: cue -> questions about a product in general (English and Chinese)
IN_GENERAL = {
    "comparison": (
        "prepaid sim versus contract sim for a teenager",
        "are cashback cards really better than miles cards",
        "信用卡和储蓄卡哪个更适合出国用",
    ),
    "definition": (
        "what is a grace period on a loan",
        "what's the meaning of force majeure in travel terms",
        "什么是航班超售",
        "免赔额是什么意思",
    ),
    "advice": (
        "any tips on keeping roaming charges low",
        "should I pay for airport fast track",
        "how should I pick between two health plans",
        "what are the advantages of having a joint account",
        "is a no-fee credit card a good first card",
        "买车险有哪些技巧",
    ),
    "industry_norm": (
        "do budget hotels usually charge for wifi",
        "is it standard for banks to charge for paper statements",
        "what usually happens to miles when an airline merges",
        "how much is a typical hotel deposit",
        "航空公司一般会给延误的乘客补偿吗",
    ),
    "hypothetical": (
        "suppose somebody books a flight with a typo in their name, can it be fixed",
        "if I got a business account would I pay lower fees",
    ),
    "product_in_general": (
        "what's the typical late fee on a credit card",
        "does comprehensive cover include windscreen damage",
    ),
    "trip_extra": (
        "include travel insurance with my train ticket",
        "throw a late checkout onto the hotel reservation",
        "can my ticket come with lounge access",
        "帮我的航班加一份儿童餐",
        "把旅游保险也加进我的行程",
    ),
}

#: The customer's own charge, parcel, refund or booking, in the same shapes (a definition, a
#: norm, a comparison, a hypothetical, an extra on a booking): customer service.
#: Round 5 (5e7e926) sent two of these to fallback (strict xfails until round 6, whose
#: cs.decisive.ours.en and cs.decisive.mine.en name the customer's own thing with us).

OWN = (
    "what does the second charge on my statement mean",
    "is it normal that my refund still says pending after ten days",
    "should I wait for my parcel or ask for a refund now",
    "if my card was declined was the order still placed",
    "my booking shows a breakfast I never added",
    "you added travel insurance to my booking without asking",  # round 6: cs.decisive.ours.en
    "I was charged for seat selection twice on my booking",
    "what happens to my loyalty points if I cancel my order",
    "suppose my package gets lost, who pays",
    "is it normal for a refund to take two weeks",
    "compare my invoice with the order",
    "is a refund a good option if the item is late",
    "what are the benefits of my membership",  # round 6: cs.decisive.mine.en names it
    "我的机票被重复扣款了",
    "如果我的包裹丢了怎么办",
    "我订的房间早餐没包含进去，但是扣了钱",
)


@pytest.mark.parametrize(
    "text", [t for texts in IN_GENERAL.values() for t in texts], ids=lambda t: t[:40]
)
def test_a_question_about_a_product_in_general_falls_back(clf: RuleClassifier, text: str) -> None:
    c = clf.classify_text(text)
    assert c.route == FB, c.reason


@pytest.mark.parametrize("text", OWN, ids=lambda t: str(t)[:40])
def test_the_customers_own_problem_in_the_same_shape_stays_customer_service(
    clf: RuleClassifier, text: str
) -> None:
    c = clf.classify_text(text)
    assert c.route == CS, c.reason


def test_every_train_dev_round_meets_the_targets() -> None:
    """All three rounds' train/dev families (the held-out parts are looked at by the lead)."""
    result = measure("train_dev")
    assert result["fallback_recall_en"] >= TARGET_FALLBACK_RECALL_EN, result["misses"]
    assert result["cs_precision"] >= TARGET_CS_PRECISION, result["misses"]
