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
from tests.unit.ask_checks import assert_no_write, assert_own_ask
from tests.unit.case_tables import cases
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
#: The cases (tests/data/cases/asks_tail8.toml): asks taken back by a later sentence of no
#: kind that goes with an ask; asks with a reason, thanks or a question; asks framed as
#: make-believe or a drill; plain labels and product names that keep the ask.
TAKEN_BACK_ANEW = cases("asks_tail8.toml", "taken_back_anew")
GOES_WITH_ASK = cases("asks_tail8.toml", "goes_with_ask")
FRAMED_ANEW = cases("asks_tail8.toml", "framed_anew")
FRAMED_NOT = cases("asks_tail8.toml", "framed_not")


@pytest.mark.parametrize("text", TAKEN_BACK_ANEW)
def test_an_ask_then_words_that_are_no_kind_of_ask_is_no_write(text: str) -> None:
    assert_no_write(text)


@pytest.mark.parametrize("text", GOES_WITH_ASK)
def test_an_ask_then_a_reason_thanks_or_question_stays_an_ask(text: str) -> None:
    assert_own_ask(text)


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
    [(f"refund {ID}. different order, sorry", "en", f"what you would like me to do about {ID}"),
     (f"取消{ID}。哎呀，看错了", "zh", f"您希望我怎么处理{ID}")],
)  # fmt: skip
def test_the_reply_asks_back_in_plain_words(text: str, lang: Lang, says: str) -> None:
    """An ask with a tail of no kind that goes with it is asked back, never given the words
    that would ask for the write (cs13: they read as if the customer had asked)."""
    hint = how_to_ask(text, lang)
    assert hint is not None and says in hint and 'say "' not in hint and "请直接说" not in hint, (
        hint
    )


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


@pytest.mark.parametrize("text", FRAMED_ANEW)
def test_an_ask_framed_as_make_believe_or_a_drill_is_no_write(text: str) -> None:
    assert read_asks(text).writes == (), text
    assert doubt(text) in ("conditional", "quoted"), text


@pytest.mark.parametrize("text", FRAMED_NOT)
def test_a_plain_label_or_a_product_name_keeps_the_ask(text: str) -> None:
    assert_own_ask(text)


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
