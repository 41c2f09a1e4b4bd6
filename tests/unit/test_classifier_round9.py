"""Issue 46 item 9, round 9: another business's own thing, named as what is asked about.

Kinds (rules ``neg.cs.other_thing.en/.zh``, the wider ``neg.cs.provider_of_mine.en``, the
round-9 additions to ``neg.cs.other_business.en``, ``neg.cs.named_business.en`` and
``neg.cs.public_service.en``, and the framing read alone that may not undo a veto): a ticket,
stay, policy or booking reference of a train, a show, a hotel or an insurer; a provider of a
service who acted ("the clinic", "the movers"); a ticketing site, a marketplace, a game store or a
social network by name. Controls: this shop's orders, the bank card and wallet the desk serves,
food delivery. Sentences written for this file (not those of the round-9 families).
"""

from __future__ import annotations

from orchestrator.classifier import RuleClassifier
from tests.data.classifier_unseen import CS, FB

CASES = [
    # a label before a colon read alone may not undo the whole text's veto
    ("ref 7HQ2LM: please swap me onto the evening flight", FB),
    ("claim no. 55120: the insurer still hasn't paid for the flood damage", FB),
    ("order 66120: the travel adapter you sent has a UK plug", CS),
    # another business's ticket, stay, policy or reference
    ("is a refund on my coach ticket possible if the driver strikes", FB),
    ("can my season ticket for the football club be paused", FB),
    ("my hotel room booking shows two guests instead of three", FB),
    ("what's my policy number for the contents cover", FB),
    ("my Oyster card charged me twice at the barrier", FB),
    ("can I drop the module and get part of the fee back", FB),
    # a provider of a service who acted, named as "the ..."
    ("the clinic charged a cancellation fee for my blood test", FB),
    ("the removals firm scratched our wardrobe, can I claim", FB),
    ("the dog groomer overcharged me", FB),
    # another business by name
    ("Eventbrite won't refund the workshop I signed up for", FB),
    ("a Vinted seller sent me a fake bag", FB),
    ("my Instagram got locked after a password reset", FB),
    # Chinese: another business's ticket, stay, policy, registration; a provider who acted
    ("保单号 H55120 续保以后保费涨了", FB),
    ("航班号 CZ3101 的机票退票要扣多少", FB),
    ("车次 D301 的票能改签吗", FB),
    ("挂号单 3301 退号怎么退", FB),
    ("网约车司机把我的东西拿走了，平台扣了我车费", FB),
    ("家政公司的保洁阿姨打碎了花瓶", FB),
    # controls: this shop, the bank card and wallet the desk serves, food delivery
    ("the concert T-shirt I ordered from you came in the wrong size", CS),
    ("my card was declined at the cinema last night", CS),
    ("I returned the hotel-style towels, where is my refund", CS),
    ("订单号 55120 的旅行箱轮子坏了，能换吗", CS),
    ("我在你们店买的门票夹还没发货", CS),
    ("花呗还款扣了两次钱", CS),
    ("外卖送错了，我点的不是这个", CS),
    ("我订的酒店被扣了两次钱", CS),
]


def test_round9_kinds(clf: RuleClassifier) -> None:
    wrong = [
        (text, want, got.route, got.reason)
        for text, want in CASES
        if (got := clf.classify_text(text)).route != want
    ]
    assert not wrong, "\n".join(f"{t!r}: want {w}, got {g} ({r})" for t, w, g, r in wrong)
