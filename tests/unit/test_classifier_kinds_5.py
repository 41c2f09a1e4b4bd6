"""Issue 14, session 7: the packaged classifier on a fifth set of phrasings, of the kinds that a
blind probe found weak (everyday customer requests outside banking and food reviews, long polite
e-mails, angry customers, long pastes with the ask before or after them, out-of-scope asks about
a service topic, a moderation decision asked in a word or two).

Written in this session after the fixes and before the classifier was measured on them, in forms
that neither ``labelled_set`` nor the earlier sets have. Each kind's share of right answers has a
floor below what was measured, so that a refit that loses a kind fails here. Measured with the
shipped model on 2026-12-03: everyday 12/12, polite and angry 9/10, out of scope 10/10, a
decision in a word or two 6/6, long pastes 7/8 (the miss: a Chinese ask glued to the paste with
no break, read as customer service).
"""

from __future__ import annotations

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.parts import ASK_MAX_CHARS, ask_spans
from orchestrator.request import Request
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB, MOD, XL
from tests.unit.classifier_helpers import share_test

EVERYDAY_5: list[tuple[str, Route]] = [
    ("the groceries came without the eggs I paid for", CS),
    ("my takeaway order never turned up and the app says delivered", CS),
    ("the courier keeps trying to deliver while I'm at work, can I pick it up instead", CS),
    # a train ticket, a hotel booking and a flight are another business's (docs/classifier.md,
    # "What the customer-service route covers"; issue 46 item 9, round 9: neg.cs.other_thing)
    ("I need to change the date on my train ticket", FB),
    # a gym is another business (issue 46 item 9, round 7: "my gym membership" falls back)
    ("my gym membership renewed even though I cancelled it", FB),
    ("the seller sent me a used item instead of a new one", CS),
    ("可以帮我把订单改成自提吗", CS),
    ("快递一直显示运输中，一个星期了", CS),
    ("我想取消明天的酒店预订", FB),
    ("会员费被扣了两次", CS),
    ("收到的衣服尺码不对，能换吗", CS),
    ("航班延误了能退票吗", FB),
]


POLITE_AND_ANGRY_5: list[tuple[str, Route]] = [
    (
        "Hello! I hope you're having a lovely week. I wanted to ask whether it is possible to "
        "swap the blue kettle I ordered on Sunday for the white one. Thanks ever so much.",
        CS,
    ),
    (
        "Dear customer care, I am sorry to write again. The replacement phone charger you sent "
        "does not fit my model either. Could you advise what to do next? With thanks, Ruth",
        CS,
    ),
    (
        "Hi, long-time customer here and usually very happy. This month, however, my statement "
        "shows a late fee although I paid on time. Would you mind checking? Best regards.",
        CS,
    ),
    ("What a joke of a company. Two weeks and my parcel is still 'processing'. Fix it!", CS),
    ("I'm furious, you charged my card again after I closed the account. Refund it today.", CS),
    ("Worst experience ever, the driver was rude and my order was wrong. I want compensation.", CS),
    (
        "您好，冒昧打扰。我上个月在贵店订了一套餐具，收到后发现有两个碗裂了，"
        "想问一下可以补寄吗？麻烦您了，谢谢！",
        CS,
    ),
    ("客服您好，我是老会员了。最近积分突然清零了，也没收到任何通知，能帮我查查原因吗？谢谢。", CS),
    ("你们到底管不管？东西坏了找了三次客服都没人理，赶紧给我退钱！", CS),
    ("气死我了，说好的次日达，结果五天都没到，必须给我一个解释", CS),
]


OUT_OF_SCOPE_5: list[tuple[str, Route]] = [
    ("translate 'thank you for your order' into German", FB),
    ("how do I say refund in Japanese", FB),
    ("write a resume summary for a warehouse picker", FB),
    ("is it polite to tip a hotel housekeeper", FB),
    ("how do bees find their way back to the hive", FB),
    ("help me plan a surprise trip for my parents' anniversary", FB),
    ("宫保鸡丁的做法", FB),
    ("怎么炒出好吃的青菜", FB),
    ("快递分拣员这个职业累不累", FB),
    ("银行柜员面试一般问什么", FB),
]


MODERATION_FRAMING_5: list[tuple[str, Route]] = [
    ("Keep or delete? 'Loved the concert last night'", MOD),
    ("Approve or not? 'Anyone selling a used bike nearby?'", MOD),
    ("Allow? 'Great photos, thanks for sharing'", MOD),
    ("这个签名合不合适：每天都要开开心心", MOD),
    ("这条回复能不能留：谢谢楼主分享", MOD),
    ("这个群公告妥不妥：周六下午两点开会", MOD),
]


_FILLER_EN = (
    "The tide went out early that morning and the gulls argued over the harbour wall. "
    "My aunt kept bees behind the chapel and sold the honey at the Saturday market. "
)
_FILLER_ZH = "那年夏天雨水特别多，院子里的葡萄藤爬满了整面墙。外婆每天傍晚都坐在门口剥豆子。"


def _long(filler: str, ask: str, *, sep: str, at_end: bool, n: int = 60_000) -> str:
    body = (filler * (n // len(filler) + 1))[:n]
    return body + sep + ask if at_end else ask + sep + body


#: (filler, ask, separator, ask at the end, route): each a 60,000-character paste with its ask.
_LONG_ASK_PARTS: list[tuple[str, str, str, bool, Route]] = [
    (_FILLER_EN, "Sorry, wrong paste. Where is my refund for order 5531?", "\n\n", True, CS),
    (_FILLER_EN, "Can you summarise the attached sheet by region?", "\n", True, XL),
    (_FILLER_EN, "A member posted the text below. Can it stay on the forum?", "\n\n", False, MOD),
    (_FILLER_EN, "Anyway. My card was charged twice, please help.", " ", True, CS),
    (_FILLER_EN, "Ignore all that, tell me a joke about pirates.", "\n\n", True, FB),
    (_FILLER_ZH, "上面是我随手写的，我的退款什么时候到账？", "\n\n", True, CS),
    (_FILLER_ZH, "这是网友发的长帖，能不能保留在论坛上？", "\n", False, MOD),
    (_FILLER_ZH, "请把附件表格按月汇总。", "", True, XL),
]
LONG_ASKS_5: list[tuple[str, Route]] = [
    (_long(filler, ask, sep=sep, at_end=at_end), route)
    for filler, ask, sep, at_end, route in _LONG_ASK_PARTS
]


def test_a_long_paste_is_routed_by_its_ask(clf: RuleClassifier) -> None:
    wrong = []
    for text, want in LONG_ASKS_5:
        got = clf.classify(
            Request(
                text=text,
                attachments=({"filename": "sales.xlsx"},)
                if want == XL and "附件" not in text and "attached" not in text
                else (),
            )
        )
        assert got.truncated and len(got.scanned) == 2  # the cut is said
        if got.route != want:
            wrong.append((text[-80:], want, got.route, got.reason))
    assert len(wrong) <= 1, wrong


def test_ask_spans_are_short_and_inside_the_read_windows() -> None:
    text = _long(_FILLER_EN, "Where is my parcel?", sep="\n\n", at_end=True, n=200_000)
    spans = ask_spans(text)
    # the first sentence and the first two (issue 46: an ask is often one sentence), the last
    # paragraph
    assert [w for _, w in spans] == ["first sentences", "first sentences", "last paragraph"]
    (a, b), _ = spans[-1]
    assert text[a:b] == "Where is my parcel?"
    for (a, b), _ in spans:
        assert 0 < b - a <= ASK_MAX_CHARS
        assert b <= 2 * ASK_MAX_CHARS or a >= len(text) - 2 * ASK_MAX_CHARS
    # one unbroken line: no unit is short enough, so nothing is read on its own
    assert ask_spans("x" * 50_000) == []


def test_a_long_paste_with_a_plain_ask_paragraph_says_where_it_read(clf: RuleClassifier) -> None:
    text = _long(_FILLER_EN, "Please cancel my subscription.", sep="\n\n", at_end=True)
    got = clf.classify_text(text)
    assert got.route == CS
    assert "last paragraph" in got.reason and "of 60,0" in got.reason


test_everyday_customer_requests = share_test(EVERYDAY_5, 10 / 12)

test_polite_and_angry_customers = share_test(POLITE_AND_ANGRY_5, 8 / 10)

test_out_of_scope_fifth_set_falls_back = share_test(OUT_OF_SCOPE_5, 8 / 10)

test_a_decision_asked_in_a_word_or_two = share_test(MODERATION_FRAMING_5, 5 / 6)
