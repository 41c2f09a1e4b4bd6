"""Issue 14, session 2026-12-04 #2: a moderation ask around a quoted customer's text.

A post under review is often a customer's question or complaint ("“配送很快，味道一般”这条点评能留在
小程序里吗", ``Reported content: "i wanna cancel my account" - please assess``). Read as one, the
quoted words speak louder than the ask and the request went to customer service. The
classifier now reads the framing (the text with each quotation's content replaced by an
ellipsis, or the label before a colon) on its own too, and a sure framing of another route
decides (``_frame_of``). Phrasings written for this test, not taken from the labelled set or
the probes: before the change 8 of the 12 framed cases were right (4 of the first 8, whose ask
is in words no moderation rule lists) and 12 of 12 guards; after it 12 of 12 and 12 of 12.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.classifier import RuleClassifier, core
from orchestrator.classifier.labelled_set import load_split
from orchestrator.classifier.parts import framing, keeps, line_framings
from orchestrator.request import Request
from tests.data.classifier_unseen import CS, FB, MOD
from tests.unit.classifier_helpers import share_test

#: Moderation asked about a customer's text that is quoted or labelled; the ask is in few words.
FRAMED = [
    (
        '"I want a refund for my cancelled order, who do I contact?" - can this stay on the page?',
        MOD,
    ),
    (
        'A shopper wrote "my parcel never arrived, where is it?" under our video. fine to leave?',
        MOD,
    ),
    ("“我想退款，怎么申请”这条能留着吗", MOD),
    ("“快递三天都没到，能帮我查一下吗”这种话可以出现在我们的主页上吗", MOD),
    ('Posted on our wall: "how do I reset my password, the link expired" - okay as is?', MOD),
    ("“为什么扣了我两次钱”这条放在商品页下面没问题吧", MOD),
    (
        'Someone left "can I change the delivery address on my order" in the comments.'
        " leave it or not?",
        MOD,
    ),
    ("“客服电话多少，我要投诉”这条评价能公开显示吗", MOD),
    ('Flagged reply: "where is my refund, it has been three weeks" - keep or take down?', MOD),
    ("Comment awaiting approval: my order never arrived and nobody answers the phone", MOD),
    ("待审核留言：快递员态度很差，包裹也破了", MOD),
    ("举报内容：“为什么我的优惠券不能用”", MOD),
]

#: Requests that quote or label something but ask for their own route: the framing must not
#: take them elsewhere.
GUARDS = [
    ('My tracking page says "delivered" but nothing came, where is my parcel?', CS),
    ('I got an email titled "your account has been suspended", what should I do?', CS),
    ("Order 55812: the blender arrived broken, I want a replacement", CS),
    ("页面显示“支付失败”，但是钱已经扣了，怎么办", CS),
    ("Quick question: can I change my delivery address?", CS),
    ('The error says "card declined" every time I try to pay', CS),
    ("客服你好：我的退款什么时候到账", CS),
    ("商家说“已经退款了”，可我一直没收到钱", CS),
    ('what does the idiom "break a leg" mean', FB),
    ("“床前明月光”的下一句是什么", FB),
    ("Fun fact request: how tall is the eiffel tower", FB),
    ('Moderate this: "where is my refund you thieves"', MOD),
]


#: Moderation asked on a line of its own, before or after a post that reads as a customer's.
LINE_FRAMED = [
    (
        "my refund still hasn't come through after two weeks\n"
        "(posted in our reviews tab - keep it?)",
        MOD,
    ),
    (
        "Where is my parcel?? ordered 5 days ago and nothing\n"
        "^ someone wrote this under our ad. hide it?",
        MOD,
    ),
    (
        "I was charged twice for one order and nobody answers the phone\n"
        "\nSaw this on our facebook page, ok to leave up?",
        MOD,
    ),
    (
        "can i cancel my subscription before the renewal\n"
        "-- a visitor left this on the blog. approve?",
        MOD,
    ),
    ("Flag or keep?\ni was charged twice for my order and nobody answers", MOD),
    (
        "Does this belong on our public forum?\n"
        "how do I reset my password, the reset link never arrives",
        MOD,
    ),
    ("我的快递三天了还没到，客服也不回\n——这条是在我们抖音评论区看到的，要删吗", MOD),
    ("退款什么时候到账啊，都一周了\n（这是群里的一条留言，可以留着吗？）", MOD),
    ("这条能放到社区首页吗？\n我想取消订单，怎么操作", MOD),
    ("订单显示已签收但是我根本没收到\n↑ 顾客在直播间发的，要不要屏蔽", MOD),
    (
        "the delivery guy left my package in the rain again\n"
        "(review for the homepage carousel, publish?)",
        MOD,
    ),
    ("请看看能不能发布\n为什么我的优惠券用不了", MOD),
]
#: Requests of a few lines that keep their route.
LINE_GUARDS = [
    ("Hi there,\nmy order #A1234 arrived damaged.\nCan I get a replacement?", CS),
    ("Order 55129\nI'd like to change the delivery address please", CS),
    ("Hello\nwhere is my refund? it has been ten days", CS),
    ("你好\n我的订单显示已签收但我没收到，麻烦查一下", CS),
    ("我想退货\n衣服尺码不合适，怎么寄回去", CS),
    ("Quick question\nwhat's the capital of Australia?", FB),
    ("write me a haiku\nabout autumn leaves", FB),
    ("Is this comment OK to post?\nyou are all idiots and should be fired", MOD),
    ("Please check this post:\nbuy cheap followers here!!! link in bio", MOD),
    ("Thanks for the help yesterday.\nCan you tell me when my new card will arrive?", CS),
    ("my account is locked\nplease unlock it, I need to pay a bill today", CS),
    ("帮我查下物流\n订单号 88231", CS),
]


test_a_moderation_ask_around_a_quoted_customer_text_is_moderation = share_test(FRAMED, 11 / 12)

test_a_request_that_quotes_something_keeps_its_route = share_test(GUARDS, 11 / 12)

# Before the line framings (``line_framings``) 6 of these 12 were right; now 10.
test_a_moderation_ask_on_a_line_of_its_own_is_moderation = share_test(LINE_FRAMED, 10 / 12)

test_a_request_of_a_few_lines_keeps_its_route = share_test(LINE_GUARDS, 11 / 12)


def test_a_line_read_alone_only_asks_to_moderate(clf: RuleClassifier) -> None:
    """A post's own line, read alone, reads as what the post says: it never overrules."""
    got = clf.classify_text("Does this belong on our public forum?\nhow do I reset my password")
    assert got.route == MOD
    assert line_framings("one line only") == []
    assert line_framings("first\n\nlast") == ["…\nlast", "first\n…"]


def test_the_reason_names_the_framing_that_decided(clf: RuleClassifier) -> None:
    got = clf.classify_text(FRAMED[2][0])
    assert got.route == MOD
    assert "the ask read without the text it quotes" in got.reason
    assert "the whole text read as customer_service" in got.reason or "fallback" in got.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("“配送很快，味道一般”这条点评能留在小程序里吗", "“…”这条点评能留在小程序里吗"),
        (
            'Reported content: "i wanna cancel my account" - please assess.',
            'Reported content: "…" - please assess.',
        ),
        ("待审内容：味道还不错", "待审内容:"),
        ("Flagged comment: where is my refund", "Flagged comment:"),
        ("where is my refund", None),  # nothing quoted or labelled
        ("I'm sure it's fine, isn't it", None),  # apostrophes never open a quotation
        ('He said "ok" and left', None),  # too short a quotation to be material
        ('"where is my refund"', None),  # nothing outside the quotation asks
        ("Why? I paid: twice", None),  # no label: the colon follows a question
    ],
)
def test_the_framing_of_a_request(text: str, expected: str | None) -> None:
    assert framing(text) == expected


def test_the_fast_check_of_a_framing_changes_no_decision(
    clf: RuleClassifier, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast view (``_fast_view``, ``keeps``) spares the framing's full read when its fast
    tier would keep the whole text's route; on every framed labelled request the result is
    what the full read gives."""
    framed = [r.to_request() for r in load_split(data_dir, "test") if framing(r.text)]
    framed += [Request(text=text) for text, _ in FRAMED + GUARDS]
    assert len(framed) > 500
    quick = [clf.classify(r) for r in framed]
    kept = sum(
        keeps(seen, c.route)
        for r, c in zip(framed, quick, strict=True)
        if (seen := clf._fast_view(framing(r.text) or "", (), None)) is not None
    )
    assert kept > len(framed) // 4  # the check does spare reads
    monkeypatch.setattr(RuleClassifier, "_fast_view", lambda *_: None)
    fresh = RuleClassifier(reload_interval=None)  # its framing memo is empty
    full = [fresh.classify(r) for r in framed]
    assert [(c.route, c.confidence, c.reason) for c in quick] == [
        (c.route, c.confidence, c.reason) for c in full
    ]


def test_a_remembered_framing_reads_as_a_fresh_one(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Framings repeat across the requests of a template, and their reads are remembered
    (``_State.frame_reads``); on every labelled request (quoted, labelled or line-framed), a
    second pass over a warm memo gives what a classifier that remembers nothing gives."""
    rows = [r.to_request() for r in load_split(data_dir, "tune") + load_split(data_dir, "test")]
    rows += [Request(text=text) for text, _ in FRAMED + GUARDS + LINE_FRAMED + LINE_GUARDS]
    warm = RuleClassifier(reload_interval=None)
    for r in rows:
        warm.classify(r)
    memo = warm._live.get().frame_reads
    assert len(memo) > 50 and sum(read.full is not None for read in memo.values()) > 10
    again = [warm.classify(r).model_dump() for r in rows]
    monkeypatch.setattr(core, "_FRAME_MEMO", 0)  # cleared before every framing's reads
    cold = RuleClassifier(reload_interval=None)
    assert again == [cold.classify(r).model_dump() for r in rows]
    assert len(cold._live.get().frame_reads) <= 2  # it remembered nothing across requests
