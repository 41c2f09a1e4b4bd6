"""A refund of part of an order, and a question about an order (tester5 findings 7 and 6).

"refund USD 10 of ORD-…" was offered, and written after "yes", as the whole amount left. The
amount is read by code from the customer's own words: one amount with its currency is offered
exactly; a part named with no one amount is asked back; more than is left, or another
currency, is refused; no part means the whole."""

from __future__ import annotations

import pytest
from sqlalchemy import select

import tests.unit.test_customer_service_safety as safety
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.textnorm import to_simplified
from tests.unit.test_customer_service_safety import _count_refunds, _find, _say, _writes
from workflows.customer_service.amounts import refund_ask
from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.schema import Refund

orch, store = safety.orch, safety.store  # the fixtures

AMOUNTS = [
    ("refund USD 10 of ORD-100076", 1000, "USD"),
    ("Could you refund $12.50 on ORD-100076? The strap broke", 1250, "USD"),
    ("I only want 7 dollars back for ORD-100076", 700, "USD"),
    ("please reimburse 3.99 USD for the late delivery of ORD-100076", 399, "USD"),
    ("Refund ORD-100076 (it cost $59.99)", 5999, "USD"),
    ("refund EUR 1,204.50 for ORD-100076", 120450, "EUR"),
    ("ORD-100076 请退10元", 1000, "CNY"),
    ("订单 ORD-100076 退 25.5 块", 2550, "CNY"),
    ("帮我退 ￥88 ORD-100076", 8800, "CNY"),
    ("ORD-100076 退 20 美元", 2000, "USD"),
    ("訂單 ORD-100076 請退 30 元", 3000, "CNY"),
    ("refund £5 on ORD-100076", 500, "GBP"),
    ("ORD-100076 退十块钱", 1000, "CNY"),  # a number word is read now (tester7 F8)
]
UNCLEAR = [
    "refund half of ORD-100076",
    "just refund the shipping fee on ORD-100076",
    "refund one of the items in ORD-100076, the other is fine",
    "refund the broken one from ORD-100076",
    "I paid $100 but it's on sale for $80 now, refund the difference on ORD-100076",
    "refund 20% of ORD-100076",
    "refund 2 of ORD-100076",
    "ORD-100076 退一半",
    "ORD-100076 只退运费",
    "ORD-100076 退差价",
    "ORD-100076 其中一件坏了，退那一件的钱",
    "ORD-100076 退部分款",
    "訂單 ORD-100076 退一半",
]
WHOLE = [
    "Please refund ORD-100076, it arrived broken",
    "I want my money back for ORD-100076",
    "refund ORD-100076, shipping took three weeks",
    "ORD-100076 退款",
    "我要退款 ORD-100076，全部退",
    "申请一个退款 ORD-100076",
    "refund all of ORD-100076",
    "Refund ORD-100076 on 2026-11-30 please",
]


@pytest.mark.parametrize(("text", "cents", "currency"), AMOUNTS)
def test_one_amount_with_its_currency_is_read(text: str, cents: int, currency: str) -> None:
    asked = refund_ask(text)
    assert asked is not None and asked.cents == cents and not asked.unclear
    assert asked.fits(currency)


@pytest.mark.parametrize("text", UNCLEAR)
def test_a_part_with_no_one_amount_is_unclear(text: str) -> None:
    asked = refund_ask(text)
    assert asked is not None and asked.unclear and asked.cents is None


@pytest.mark.parametrize("text", WHOLE)
def test_no_part_means_the_whole_amount(text: str) -> None:
    assert refund_ask(text) is None


def test_a_dollar_sign_fits_dollar_currencies_only() -> None:
    asked = refund_ask("refund $10 of ORD-100076")
    assert asked is not None and asked.fits("USD") and asked.fits("CAD")
    assert not asked.fits("EUR") and not asked.fits("CNY")


def _last_refund_cents(store: OrderStore, order: str) -> int:
    with store.sessions() as s:
        rows = s.scalars(select(Refund).where(Refund.order_id == order).order_by(Refund.id))
        return int(rows.all()[-1].amount_cents)


async def test_the_part_asked_is_offered_and_written_exactly(
    store: OrderStore, orch: Orchestrator
) -> None:
    customer, order = _find(store, want="refundable")
    left, currency, _ = store.tools(customer).refundable(order)
    part = min(1000, left - 1)
    shown = f"{currency} {part // 100}.{part % 100:02d}"
    asked = await _say(orch, f"Please refund {shown} of {order}, one strap broke", customer)
    assert asked.result["status"] == "awaiting_confirmation"
    assert asked.result["reply"]["text"].startswith(f"Refund {shown} for order {order}")
    before = _count_refunds(store)
    await _say(orch, "yes", customer)
    assert _count_refunds(store) == before + 1
    assert _last_refund_cents(store, order) == part


async def test_an_unclear_part_is_asked_back_and_yes_writes_nothing(
    store: OrderStore, orch: Orchestrator
) -> None:
    customer, order = _find(store, want="refundable")
    before = _writes(store)
    asked = await _say(
        orch, f"Please refund half of {order}, one of the two cups is broken", customer
    )
    assert asked.result["status"] != "awaiting_confirmation"
    assert "How much should I refund?" in asked.result["reply"]["text"]
    await _say(orch, "yes", customer)
    assert _writes(store) == before


async def test_more_than_is_left_is_refused_and_nothing_is_asked(
    store: OrderStore, orch: Orchestrator
) -> None:
    customer, order = _find(store, want="refundable")
    left, currency, _ = store.tools(customer).refundable(order)
    over = left + 100
    before = _writes(store)
    text = f"Please refund {currency} {over // 100}.{over % 100:02d} of {order}"
    asked = await _say(orch, text, customer)
    assert asked.result["status"] != "awaiting_confirmation"
    assert "left to refund" in asked.result["reply"]["text"]
    await _say(orch, "yes", customer)
    assert _writes(store) == before


QUESTIONS = [
    "Is {} still coming?",
    "how much was {}?",
    "any news on {}",
    "{}?",
    "what's going on with {}",
    "when is {} arriving? I need it by Friday",
    "what was in {} and what did it cost",
    "{} 到了没",
    "{} 多少钱",
    "{} 买了什么",
    "{} 簽收了嗎",
    "请问一下 {} 怎么样了",
]


@pytest.mark.parametrize("question", QUESTIONS)
async def test_any_question_naming_an_order_gets_its_facts(
    store: OrderStore, orch: Orchestrator, question: str
) -> None:
    """tester5 finding 6: a question about one of the customer's orders with no intent word
    got no tool and no answer; it gets the order's facts now (read only: nothing written)."""
    customer, order = _find(store, want="processing")
    before = _writes(store)
    done = await _say(orch, question.format(order), customer, thread=f"q-{hash(question)}")
    assert order in done.result["reply"]["text"]
    assert any(r["tool"] in ("lookup_order", "track_shipment") for r in done.result["tool_results"])
    assert _writes(store) == before


@pytest.mark.parametrize(
    ("answer", "told"), [("yes?", "Nothing was changed"), ("確定？", "没有做任何更改")]
)
async def test_an_offer_answered_with_a_question_is_told_as_not_confirmed(
    store: OrderStore, orch: Orchestrator, answer: str, told: str
) -> None:
    """e2e7: "yes?" after a refund offer wrote nothing but was told "That is not possible for
    order …", as if the store refused; it is told that nothing was changed, unconfirmed."""
    customer, order = _find(store, want="refundable")
    await _say(orch, f"Please refund {order}, it arrived broken", customer, thread="nc")
    before = _writes(store)
    done = await _say(orch, answer, customer, thread="nc")
    text = to_simplified(done.result["reply"]["text"])  # a Traditional answer reads Traditional
    assert told in text and order in text
    assert "not possible" not in text and "无法办理" not in text
    assert _writes(store) == before


PART_ASKS = [
    "refund half of {}",
    "Refund USD 12.00 of {}",
    "refund $7.50 on {} thanks",
    "{} 退20元就行",
    "{} 退一半就好",
    "请帮我退 15 元 {}",
    "訂單 {} 退一半",
]


@pytest.mark.parametrize("text", PART_ASKS)
async def test_a_bare_ask_for_part_of_an_order_is_asked_or_offered_never_the_whole(
    store: OrderStore, orch: Orchestrator, text: str
) -> None:
    """e2e7: "refund half of ORD-…" and "ORD-… 退20美元就行" were no ask (a status line), and
    the reply told the customer to say "refund ORD-…", which offers the whole amount. A part
    named in a bare ask is an ask: its amount is offered exactly, or asked back."""
    customer, order = _find(store, want="refundable")
    left, currency, _ = store.tools(customer).refundable(order)
    done = await _say(orch, text.format(order), customer, thread=f"p-{hash(text)}")
    reply = done.result["reply"]["text"]
    whole = f"{currency} {left // 100}.{left % 100:02d}"
    assert whole not in reply.split("?")[0] or done.result["status"] != "awaiting_confirmation"
    asked = refund_ask(text)
    assert asked is not None
    if asked.unclear:
        assert "How much should I refund?" in reply or "请问要退多少钱" in to_simplified(reply)
    elif asked.fits(currency):
        assert done.result["status"] == "awaiting_confirmation"
