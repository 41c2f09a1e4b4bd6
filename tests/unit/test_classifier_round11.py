"""Issue 46 item 9, round 11: the kinds round 10's look and round 11's dev part missed, fixed as
kinds.

Kinds (``orchestrator/rules/routes.toml``, ``orchestrator/classifier/decide.py``): a card's own
terms (cashback, points, annual fee, APR, 年费, 积分, 循环利息) in any form, also beside "on my
card" (``neg.cs.card_terms.en``/``.zh``); the reader addressed as someone who knows (您知道,
你清不清楚) no longer keeps the Chinese vetoes out; a service veto marked ``elsewhere`` turns an
unsure content-moderation guess with no moderation rule behind it into a fallback; English
provider words after a Chinese possessive (我的 gym); an embassy, a dormitory, a lesson's fee;
"my visa fee" read mid-word (and "to my Visa instead" left a card); goods we sent or sold
("the shoes you send", 你们寄来的). Sentences written for this file, not those of the round-10 or
round-11 families.
"""

from __future__ import annotations

import pytest

from orchestrator.classifier.decide import overrule
from orchestrator.classifier.models import Rule
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB
from tests.unit.classifier_helpers import share_test

MOD = Route("content_moderation")

CASES = [
    # a card's own terms, whatever "on my card" says around them; money through it stays ours
    ("does my visa credit card give cashback on fuel?", FB),
    ("The annual fee on my card went up to $95, is that normal for a gold card?", FB),
    ("how many air miles does my BA Amex card earn per pound", FB),
    ("I was charged a fee on my card for a payment abroad, why?", CS),
    ("where is the cashback for my order 55120?", CS),
    ("我的信用卡年费能不能免掉啊", FB),
    ("工行的信用卡循环利息怎么算的", FB),
    ("我那張信用卡的年費好貴，可以申請免年費嗎？", FB),
    ("花呗分期手续费是多少", CS),
    ("我的信用卡被冻结了，怎么解冻？", CS),
    # the reader asked as someone who knows is not the shop asked about its goods
    ("请问您知道南航行李超重怎么收费吗", FB),
    ("你清不清楚燃气费逾期有没有滞纳金", FB),
    ("请问您知道我的快递到哪了吗", CS),
    ("你们清楚我的退款为什么还没到吗", CS),
    # vocabulary: an embassy, a visa fee, a dormitory, a lesson's fee, a school bus
    ("the consulate kept my passport photos and the visa fee, can I get it back?", FB),
    ("my dorm charged a cleaning fee when I moved out, can they?", FB),
    ("can you refund the phone stand to my Visa instead of a voucher", CS),
    ("舞蹈课的老师突然不教了，已经付的钱能要回来吗", FB),
    ("宿舍押金毕业了还不退，找谁？", FB),
    ("我的订单送到宿舍了但没人收到", CS),
    # English provider words after a Chinese possessive
    ("我的 landlord 不退 deposit 怎么办", FB),
    ("她的 dentist appointment 被 cancel 了还扣钱", FB),
    ("我的 refund 什么时候到账", CS),
    # goods we sent or sold
    ("the jacket you sold me fell apart after one wash", CS),
    ("你们寄来的杯子碎了一个", CS),
]

#: Every case routes right (a floor of 1.0: each is one of a kind that was fixed).
test_round11_kinds = share_test(CASES, 1.0)


def _veto(elsewhere: bool) -> Rule:
    return Rule(
        id="neg.test", route=CS, weight=0.9, regex="x", negative=True, decisive=True,
        elsewhere=elsewhere,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("elsewhere", "p_mod", "mod_evidence", "want"),
    [
        (True, 0.7, 0.0, FB),  # an unsure guess with no moderation rule behind it
        (True, 0.9, 0.0, None),  # the learned tier is sure: it stands
        (True, 0.7, 0.4, None),  # a moderation rule spoke for it: it stands
        (False, 0.7, 0.0, None),  # a veto not marked elsewhere (general knowledge)
    ],
)
def test_an_unsure_route_no_rule_spoke_for_gives_way_to_an_elsewhere_veto(
    elsewhere: bool, p_mod: float, mod_evidence: float, want: Route | None
) -> None:
    probs = {MOD: p_mod, FB: 1 - p_mod, CS: 0.0}
    got = overrule(MOD, probs, [_veto(elsewhere)], [(CS, 1), (MOD, 3)], {MOD: mod_evidence})
    assert (got[0] if got else None) == want


def test_elsewhere_is_for_negative_decisive_rules_only() -> None:
    with pytest.raises(ValueError, match="elsewhere applies to negative decisive rules only"):
        Rule(id="cs.test", route=CS, weight=0.1, regex="x", decisive=True, elsewhere=True)
