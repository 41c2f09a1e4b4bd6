"""Refund-status questions in words other than "where is my refund" ("has my money come back
yet", "did you pay me back", "any news on the money?", 退了多少钱？, 錢退回來了沒有, 退咗未) are a
read of the order's refunds: the reply states the refund's id, amount and date from the store
(code's fact sentence), or plainly that none was made. On an order never refunded that cannot
be refunded, a status question gets "no refund has been made" and why none can be, never the
refusal wording of a refund nobody asked for (closing6 "Refund status questions"). The model's
prose is scripted (ScriptedToolModel); the store is a real seeded SQLite file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workflows.customer_service.asks import read_asks
from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.schema import Order

sys.path.insert(0, str(Path(__file__).parent))
import test_refund_status24 as status24
from case_tables import cases
from test_refund_status24 import REFUSALS, _ask, _eligible, _money, _refund

store = status24.store  # the fixture

QUESTIONS = cases("customer_service8.toml", "refund_status_questions")
NONE_MADE = cases("customer_service8.toml", "refund_status_none_made")


def _unrefundable(store: OrderStore) -> tuple[str, str]:
    """``(customer, order id)`` of an order with no refund that cannot be refunded."""
    with store.sessions() as session:
        for order in session.query(Order).order_by(Order.id).all():
            facts = store.tools(order.customer_id).run(
                "check_refund_eligibility", {"order_id": order.id}
            )
            if facts.facts["eligible"] == "no" and not order.refunds:
                return order.customer_id, order.id
    pytest.skip("no unrefundable order in the seed")


@pytest.mark.parametrize(("question", "lang"), QUESTIONS)
async def test_a_status_question_states_the_refund_made(store, telemetry, question, lang) -> None:
    customer, order_id, total, currency = _eligible(store)
    rf = _refund(store, order_id, 1000)
    reply = await _ask(store, telemetry, customer, question.format(id=order_id), "Thank you.")
    assert rf in reply and _money(1000, currency) in reply and "2026-12-01" in reply, reply
    assert ("已批准" if lang == "zh" else "approved") in reply
    assert _money(total - 1000, currency) in reply  # and what is left
    assert not any(word in reply for word in REFUSALS), reply


@pytest.mark.parametrize(("question", "lang"), NONE_MADE)
async def test_no_refund_on_an_unrefundable_order_is_said_plainly(
    store, telemetry, question, lang
) -> None:
    customer, order_id = _unrefundable(store)
    reply = await _ask(store, telemetry, customer, question.format(id=order_id), "Thank you.")
    assert ("目前没有退款记录" if lang == "zh" else "No refund has been made") in reply, reply
    assert ("不符合退款条件" if lang == "zh" else "is not eligible for a refund") in reply
    assert "RF-" not in reply
    assert not any(word in reply for word in REFUSALS), reply


async def test_a_question_whether_a_refund_can_be_had_is_still_refused(store, telemetry) -> None:
    customer, order_id = _unrefundable(store)
    reply = await _ask(store, telemetry, customer, f"can I get a refund for {order_id}?", "Ok.")
    assert "not possible" in reply  # eligibility, not status: the policy's answer stands


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("退了多少钱？", True),
        ("any news on the money?", True),
        ("has my money come back yet", True),
        ("did you pay me back", True),
        ("錢退回來了沒有", True),
        ("where is my refund?", True),
        ("can I get a refund for ORD-100001?", False),
        ("is ORD-100001 refundable?", False),
        ("能退款吗？", False),
    ],
)
def test_status_questions_are_refund_reads_and_no_write(text: str, status: bool) -> None:
    asks = read_asks(text)
    assert asks.writes == () and asks.reads[0] == "eligibility", asks
    assert asks.refund_status is status


@pytest.mark.parametrize(
    "text",
    [
        "I want my money back for ORD-100001",
        "please give me my money back for ORD-100001, it broke",
    ],
)
def test_an_ask_for_the_money_stays_a_refund_ask(text: str) -> None:
    assert read_asks(text).writes == ("refund",)
