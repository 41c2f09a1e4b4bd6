"""Issue 14, session 2026-12-04: requests of a few paragraphs that are mostly material.

A pasted thread, a meeting's notes, a story or a log, with the ask in the first or the last
paragraph. Read as one, the material speaks louder than the ask; the classifier reads the
first and the last paragraph on their own too (``_ask_of``) and a sure ask decides. Phrasings
written for this test, not taken from the labelled set or the probes. The guards are requests
whose every paragraph is of one route (a complaint signed off, a post under review that asks a
question of its readers): the ask reading must leave them alone.
"""

from __future__ import annotations

import re

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.parts import SALUTATION, SIGN_OFF, letter_body
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB, MOD, XL
from tests.unit.classifier_helpers import share_test

_STORY_EN = (
    "The lighthouse keeper's daughter grew up counting ships. Every evening she climbed the "
    "ninety steps with her father, carrying the oil can and a flask of tea, and every evening "
    "he told her the name of each vessel that passed the point.\n\n"
    "By the time she was twelve she knew them all by their lights alone: the ferry with its "
    "crooked mast lamp, the trawlers that ran dark until the harbour, the tall grain ship that "
    "came twice a year from somewhere far to the south and never stayed the night.\n\n"
)
_THREAD_EN = (
    "From: Support <help@shop.example>\nSent: Monday 09:14\n"
    "Thanks for getting in touch. We have passed your case to the warehouse team, who will "
    "reply within 48 hours. Your case number is in the subject line.\n\n"
    "From: me\nSent: Wednesday 17:40\n"
    "It has been 56 hours and nobody has replied. The parcel tracker still says it left the "
    "depot on the 3rd and has not moved since then.\n\n"
)
_NOTES_EN = (
    "- Picking rate in the north depot fell again, roughly 8% below plan for the month\n"
    "- Returns are up in the kitchenware line, mostly kettles and toasters\n"
    "- Two carriers missed their pickup windows on three days in a row\n\n"
    "- Headcount stays flat until the autumn review\n"
    "- Marketing wants the spring promo numbers before the board meeting\n\n"
)
_STORY_ZH = (
    "外婆家门前有一棵很老的桂花树。每年九月，整条巷子都是桂花的香味，外婆会搬一张竹椅坐在树下，"
    "一边择菜一边跟路过的邻居聊天，谁家孩子考上了大学，谁家新添了孙子，她都知道得清清楚楚。\n\n"
    "后来巷子要拆迁，邻居们陆陆续续搬走了，只剩外婆不肯走。她说树在这里，她就在这里。"
    "拆迁办的人来了好几趟，每次都被她用一壶桂花茶客客气气地送出门。\n\n"
)
_THREAD_ZH = (
    "客服：您好，您的售后申请已提交，预计三个工作日内有专人联系您。\n\n"
    "我：已经过去五个工作日了，一直没有人联系我，电话也打不通。\n\n"
    "客服：非常抱歉给您带来不便，我们已加急处理，请您耐心等待。\n\n"
)

MATERIAL: list[tuple[str, Route]] = [
    (_STORY_EN + "Could you write the next scene, where the grain ship finally anchors?", FB),
    (_STORY_EN + "What would be a good title for a story like this?", FB),
    (
        "Here is what support and I have said so far, so you have it all:\n\n"
        + _THREAD_EN
        + "I want a refund for the order now, not another case number.",
        CS,
    ),
    (
        _THREAD_EN + "Please get me a human agent, I am done with the automatic replies.",
        CS,
    ),
    (
        "Our weekly ops notes are below.\n\n"
        + _NOTES_EN
        + "Can you turn the attached ops_week32.xlsx into a short report with the main figures?",
        XL,
    ),
    (
        "Is this notice fine to post on the community board, or does it break any rules?\n\n"
        + _STORY_EN
        + "Signed, the harbour society",
        MOD,
    ),
    (_STORY_ZH + "这是我写的一篇散文，能帮我起一个好听的标题吗？", FB),
    (
        "下面是我和客服的聊天记录：\n\n" + _THREAD_ZH + "我现在只要求退货退款，请尽快处理。",
        CS,
    ),
    (
        "这篇文章能发到我们的公众号上吗？帮我审核一下有没有违规内容：\n\n" + _STORY_ZH + "（完）",
        MOD,
    ),
]

#: Every paragraph of one route: the ask reading must leave them as they are.
GUARDS: list[tuple[str, Route]] = [
    (
        "Hello,\n\nI ordered a standing desk on the 2nd and it arrived with two legs missing. "
        "The box was intact, so they were never packed. I have photos of the contents and the "
        "packing slip, which lists four legs.\n\nPlease send the missing legs or refund the "
        "order, whichever is quicker, and tell me which you have chosen.\n\nThanks, Anna",
        CS,
    ),
    (
        "Can you check whether this post is okay for our forum?\n\n"
        "Anyone else find the new opening hours confusing? The sign on the door says one thing "
        "and the website says another, and I turned up to a locked shop twice this week.\n\n"
        "Does anyone know who to ask about it? I would hate to miss the Saturday market again.",
        MOD,
    ),
    (
        "您好：\n\n我在贵店买的电饭煲用了三天就不能加热了，插上电指示灯亮，但是锅一直是凉的，"
        "我已经按说明书检查过电源和内胆。\n\n请问可以换一台新的吗？如果不能换，请给我退款。"
        "\n\n谢谢！",
        CS,
    ),
    (
        "Hi there,\n\nMy gym membership renews on Friday and I do not want it to. I tried the "
        "cancel button in the app twice and both times it said something went wrong and to try "
        "again later, and the phone line closes before I finish work.\n\nCan you cancel it for "
        "me and confirm by email that I will not be charged?\n\nBest wishes,\nTom",
        FB,  # a gym is another business (issue 46 item 9, round 7)
    ),
    (
        "Good morning,\n\nThe invoice for last month lists the premium plan, but we downgraded "
        "to the basic plan on the 1st and got an email confirming it. The difference is about "
        "forty pounds.\n\nCould the invoice be corrected and the difference credited to the "
        "account?\n\nKind regards,\nPriya, Accounts",
        CS,
    ),
    (
        "客服你好：\n\n我上周五下单的两箱牛奶，到现在物流信息还停在发货地，已经一个星期没有更新了。"
        "我问了快递公司，他们说没有收到这个包裹，让我找商家。\n\n麻烦帮我查一下包裹到底在哪里，"
        "如果丢了请重新发货或者退款。\n\n谢谢，王女士",
        CS,
    ),
]


test_the_ask_of_a_few_paragraphs_of_material_decides = share_test(MATERIAL, 8 / 9)

test_a_request_of_one_route_throughout_keeps_it = share_test(GUARDS, 1)


def test_the_reason_names_the_paragraph_that_decided(clf: RuleClassifier) -> None:
    text, want = MATERIAL[4]
    got = clf.classify_text(text)
    assert got.route == want
    if "the ask read on its own" in got.reason:  # the whole text may already be right
        assert "the whole text read as" in got.reason
        assert not got.truncated  # within the scan limit: the whole text was read too


@pytest.mark.parametrize(
    ("pattern", "unit", "courtesy"),
    [
        (SALUTATION, "Hello,", True),
        (SALUTATION, "Dear customer support team,", True),
        (SALUTATION, "您好：", True),
        (SALUTATION, "Hi, my order never arrived", False),
        (SALUTATION, "客服一直不回复", False),
        (SIGN_OFF, "Thanks, Anna", True),
        (SIGN_OFF, "Kind regards,\nPriya, Accounts", True),
        (SIGN_OFF, "谢谢，王女士", True),
        (SIGN_OFF, "Thanks for nothing, I want a refund", False),
        (SIGN_OFF, "谢谢你们的帮助，请尽快给我退款处理", False),
    ],
)
def test_a_salutation_or_sign_off_is_told_from_an_ask(
    pattern: re.Pattern[str], unit: str, courtesy: bool
) -> None:
    assert (pattern.fullmatch(unit) is not None) is courtesy


def test_the_letter_body_keeps_one_unit_at_least() -> None:
    text = "Hello,\n\nThanks, Anna"
    spans = [(0, 6), (8, 20)]
    assert letter_body(text, spans) == [(8, 20)]  # never all of them: one unit stays
    assert letter_body(text, spans[:1]) == [(0, 6)]
