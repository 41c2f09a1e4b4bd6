"""Two kinds of ask that are not the customer's own plain ask of a whole order (tester7 F29,
F31): an ask framed as a test, an example or a theory, and a cancel or refund of one item or
part of an order ("the lamp from ORD-…, keep the rest"), which was offered as the WHOLE order.
A framed ask gets how to ask; a part cancel is told that only whole orders are cancelled here;
a part refund is asked back for its amount. Plain asks stay asks."""

from __future__ import annotations

import pytest

from tests.unit.case_tables import tables
from tests.unit.test_customer_service_safety import _find, _say, orch, store  # noqa: F401
from workflows.customer_service.amounts import refund_ask
from workflows.customer_service.asks import read_asks

#: The cases by kind (tests/data/cases/asks_framed_part.toml): ``framed`` (an ask framed as a
#: test, an example or make-believe), ``part_cancels`` and ``part_refunds`` (one item or part of
#: an order), ``plain`` (``(message, intent)``: plain asks).
CASES = tables("asks_framed_part.toml")


@pytest.mark.parametrize("message", CASES["framed"])
def test_a_framed_ask_is_no_write(message: str) -> None:
    asks = read_asks(message)
    assert asks.writes == () and asks.declined, asks


@pytest.mark.parametrize("message", CASES["part_cancels"])
def test_a_cancel_of_one_item_is_no_whole_order_cancel(message: str) -> None:
    asks = read_asks(message)
    assert "cancel" not in asks.writes and ("cancel", "part") in asks.declined, asks


@pytest.mark.parametrize("message", CASES["part_refunds"])
def test_a_refund_of_one_item_is_asked_back(message: str) -> None:
    asked = refund_ask(message)
    assert asked is not None and asked.unclear and asked.cents is None, asked


@pytest.mark.parametrize(("message", "write"), CASES["plain"])
def test_a_plain_ask_of_a_whole_order_stays_an_ask(message: str, write: str) -> None:
    assert read_asks(message).writes == (write,)
    assert refund_ask(message) is None


@pytest.mark.parametrize(
    ("ask", "told"),
    [
        ("please cancel the lamp from {}, keep the rest", "only a whole order"),
        ("取消{}里的台灯，其他的保留", "只能取消整个订单"),
        ("test: cancel {}", 'say "cancel'),
    ],
)
async def test_the_chat_offers_no_whole_order_cancel(store, orch, ask: str, told: str) -> None:  # noqa: F811
    customer, order = _find(store, want="processing")
    done = await _say(orch, ask.format(order), customer, thread="part")
    assert done.result["status"] != "awaiting_confirmation", done.result
    assert told in done.result["reply"]["text"], done.result["reply"]["text"]
    yes = await _say(orch, "yes", customer, thread="part")
    assert not any(r.get("tool") == "cancel_order" for r in yes.result["tool_results"])
