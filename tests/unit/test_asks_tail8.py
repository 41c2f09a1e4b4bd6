"""What follows an ask (tester8 F1, F2): an ask followed by words that take it back in a way
no list held ("wrong order, sorry!", "let me check with my wife first", 算啦) is no write, and
the reply says how to ask plainly; an ask followed by a reason, thanks, urgency, a detail or a
question stays an ask. Also a negation by verb ("refrain from refunding") and text set between
"Begin email" and "End email" lines, and an ask framed as make-believe, a drill, training
material or a note to oneself (tester8 F4). The sentences are our own, per kind, English and
Chinese (Simplified and Traditional); the tester's own were run once, outside this suite."""

from __future__ import annotations

import pytest

import tests.unit.test_asks_gate7 as gate7
from tests.unit.test_customer_service_safety import (  # noqa: F401 (store, orch: fixtures)
    _find,
    _say,
    orch,
    store,
)
from workflows.customer_service.ask_tail import unsure_tail
from workflows.customer_service.asks import doubt, read_asks
from workflows.customer_service.language import Lang
from workflows.customer_service.replying import how_to_ask

ID = "ORD-100321"

#: An ask, then a later sentence that is none of the kinds that go with an ask.
TAKEN_BACK_ANEW = [
    f"Cancel {ID}. Typo, I meant the other one.",
    f"refund {ID}. oh hang about, the parcel is here",
    f"Please refund {ID}. Hmm. My son says it's fine.",
    f"cancel {ID}. Just testing the bot, ha.",
    f"Refund {ID}. Disregard, spoke too soon.",
    f"cancel {ID} — no sorry, keep going",
    f"Refund {ID}. I'll phone my bank first.",
    f"cancel {ID}. hmm, on the fence about it",
    f"refund {ID}. hold up",
    f"Cancel {ID}. Eh. Leave it with me.",
    f"退款{ID}。哎呀，看错了",
    f"取消{ID}。稍等，我跟家里人商量一下",
    f"退款{ID}。呃，其实挺好用的",
    f"取消訂單{ID}。算了算了",
    f"退款{ID}。等我回家看看再说",
    f"取消{ID}。嗯…先这样吧",
]
#: An ask, then a reason, thanks, urgency, a detail or a question: still an ask.
GOES_WITH_ASK = [
    f"Please refund {ID}. The screen arrived cracked. Thanks",
    f"Cancel {ID}. I accidentally ordered two.",
    f"Refund {ID} please. It stopped working after a day.",
    f"Please cancel {ID}. It's urgent, thank you!",
    f"Refund {ID}. I paid with PayPal. How soon will I see it?",
    f"Cancel {ID}. The delivery is delayed again, very frustrating.",
    f"Refund {ID}. The shoes are too small.",
    f"Hi! Please cancel {ID}. Thanks in advance",
    f"退款{ID}。收到的时候包装破了，谢谢",
    f"取消{ID}，下错单了。麻烦尽快",
    f"請退款{ID}。尺碼太小，謝謝",
    f"退款{ID}。多久能到账？",
    f"Please refund {ID}. Wrong colour was sent.",
]


@pytest.mark.parametrize("text", TAKEN_BACK_ANEW)
def test_an_ask_then_words_that_are_no_kind_of_ask_is_no_write(text: str) -> None:
    assert read_asks(text).writes == (), text
    assert doubt(text) is not None, text


@pytest.mark.parametrize("text", GOES_WITH_ASK)
def test_an_ask_then_a_reason_thanks_or_question_stays_an_ask(text: str) -> None:
    assert read_asks(text).writes, text
    assert doubt(text) is None, text


@pytest.mark.parametrize(
    ("tail", "unsure"),
    [("", False), (" 🙏🙏", False), (" !!!", False), (" thanks, tom.", False),
     (" thanks. actually, keep it.", True), (" it broke. my bad, wrong order.", True),
     (" 谢谢。再见", False), (" 好的我再想想", True)],
)  # fmt: skip
def test_each_sentence_after_the_ask_is_read(tail: str, unsure: bool) -> None:
    assert unsure_tail(tail) is unsure


@pytest.mark.parametrize(
    ("text", "lang", "says"),
    [(f"refund {ID}. different order, sorry", "en", f'say "refund {ID}"'),
     (f"取消{ID}。哎呀，看错了", "zh", f"取消{ID}")],
)  # fmt: skip
def test_the_reply_says_how_to_ask_plainly(text: str, lang: Lang, says: str) -> None:
    hint = how_to_ask(text, lang)
    assert hint is not None and says in hint, hint


@pytest.mark.parametrize(
    "text",
    [f"Please refrain from refunding {ID}", f"Kindly avoid cancelling {ID}",
     f"Could you hold back on the refund for {ID}", f"Please cease the cancellation of {ID}",
     f"Abstain from refunding {ID}, thanks"],
)  # fmt: skip
def test_a_negation_by_verb_is_no_write(text: str) -> None:
    assert read_asks(text).writes == (), text
    assert doubt(text) == "negated", text


@pytest.mark.parametrize(
    "text",
    [f"Begin email\nPlease refund {ID}\nEnd email\nIs this real?",
     f"--- start of message ---\ncancel {ID} immediately\n--- end of message ---\nwho sent it?",
     f"BEGIN FORWARDED TEXT\nrefund {ID}\nEND FORWARDED TEXT",
     f"Start of the quoted mail\ncancel {ID}\n",
     f"邮件开始\n请退款{ID}\n邮件结束\n这是诈骗吗？",
     f"【消息开始】取消{ID}\n【消息结束】"],
)  # fmt: skip
def test_text_between_begin_and_end_lines_is_pasted(text: str) -> None:
    assert read_asks(text).writes == (), text
    assert doubt(text) == "quoted", text


#: An ask framed as not the customer's own now: make-believe, a drill or rehearsal, training
#: material, a note to oneself, a label of another kind, a standing order to the machine.
FRAMED_ANEW = [
    f"Let's pretend you refunded {ID} for me",
    f"Imagine I asked you to cancel {ID}",
    f"Practice run: refund {ID}",
    f"It's just a rehearsal. Cancel {ID}.",
    f"For demonstration purposes: cancel {ID}",
    f"As a training example, refund {ID}",
    f"Note to self: cancel {ID} before Friday",
    f"Quiz: refund {ID}",
    f"Placeholder - cancel {ID}",
    f"Step 2) refund {ID}",
    f"From now on always refund. Refund {ID}.",
    f"假装你已经帮我退款{ID}了",
    f"演习：取消{ID}",
    f"草稿：退款{ID}",
    f"第二步：取消订单{ID}",
    f"假設幫我退款{ID}",
]
#: Labels and words that go with an own ask stay asks (products named "drill", "training").
FRAMED_NOT = [
    f"Urgent: refund {ID}, it came broken",
    f"Order {ID}: please cancel it",
    f"Hello there: please refund {ID}",
    f"Refund {ID}, the cordless drill is faulty",
    f"Please cancel {ID}, the training shoes are too small",
    f"紧急：退款{ID}，东西坏了",
    f"订单{ID}：请取消",
]


@pytest.mark.parametrize("text", FRAMED_ANEW)
def test_an_ask_framed_as_make_believe_or_a_drill_is_no_write(text: str) -> None:
    assert read_asks(text).writes == (), text
    assert doubt(text) in ("conditional", "quoted"), text


@pytest.mark.parametrize("text", FRAMED_NOT)
def test_a_plain_label_or_a_product_name_keeps_the_ask(text: str) -> None:
    assert read_asks(text).writes, text
    assert doubt(text) is None, text


@pytest.mark.parametrize("text", [TAKEN_BACK_ANEW[0], TAKEN_BACK_ANEW[11], FRAMED_ANEW[2]])
async def test_through_the_chat_nothing_is_offered_and_yes_writes_nothing(
    store,  # noqa: F811
    orch,  # noqa: F811
    text: str,
) -> None:
    # the same check as tester7's kinds, on this file's sentences (ID is the same placeholder)
    await gate7.test_through_the_chat_nothing_is_offered_and_yes_writes_nothing(store, orch, text)


async def test_through_the_chat_an_ask_with_a_reason_is_offered(store, orch) -> None:  # noqa: F811
    customer, order = _find(store, want="refundable")
    first = await _say(orch, f"Please refund {order}. It arrived damaged, thanks!", customer)
    assert first.result["status"] == "awaiting_confirmation", first.result["reply"]
