"""Two kinds of ask that are not the customer's own plain ask of a whole order (tester7 F29,
F31): an ask framed as a test, an example or a theory, and a cancel or refund of one item or
part of an order ("the lamp from ORD-…, keep the rest"), which was offered as the WHOLE order.
A framed ask gets how to ask; a part cancel is told that only whole orders are cancelled here;
a part refund is asked back for its amount. Plain asks stay asks."""

from __future__ import annotations

import pytest

from tests.unit.test_customer_service_safety import _find, _say, orch, store  # noqa: F401
from workflows.customer_service.amounts import refund_ask
from workflows.customer_service.asks import read_asks

FRAMED = [
    "test: cancel ORD-100311",
    "Testing - refund ORD-100311",
    "just a test: please refund ORD-100311",
    "Example request: refund ORD-100311 please",
    "sample message: cancel ORD-100311",
    "demo: cancel ORD-100311 now",
    "In theory, refund ORD-100311",
    "theoretically I could say cancel ORD-100311",
    "举个例子：退款ORD-100311",
    "举例来说，取消ORD-100311",
    "测试一下：取消ORD-100311",
    "测试：退款ORD-100311",
    "理论上退款ORD-100311",
]
PART_CANCELS = [
    "please cancel the desk lamp from ORD-100311, keep the rest",
    "cancel item 3 of ORD-100311",
    "Cancel ORD-100311 except the charger",
    "cancel only the blue mug in ORD-100311",
    "cancel one of the chairs on ORD-100311",
    "取消ORD-100311里的台灯，其他的保留",
    "ORD-100311 除了充电器都取消",
    "請取消ORD-100311裡的檯燈，其餘照常",
]
PART_REFUNDS = [
    "please refund the desk lamp from ORD-100311, keep the rest",
    "refund item 2 of ORD-100311",
    "refund ORD-100311 minus the shipping",
    "refund the cracked vase in ORD-100311",
    "请退ORD-100311里的台灯",
    "ORD-100311 除了运费都退",
]
PLAIN = [
    ("cancel ORD-100311", "cancel"),
    ("Please cancel the order ORD-100311", "cancel"),
    ("Please cancel ORD-100311, the test kit is the wrong size", "cancel"),
    ("refund ORD-100311 please", "refund"),
    ("取消订单ORD-100311", "cancel"),
    ("请给ORD-100311退款", "refund"),
]


@pytest.mark.parametrize("message", FRAMED)
def test_a_framed_ask_is_no_write(message: str) -> None:
    asks = read_asks(message)
    assert asks.writes == () and asks.declined, asks


@pytest.mark.parametrize("message", PART_CANCELS)
def test_a_cancel_of_one_item_is_no_whole_order_cancel(message: str) -> None:
    asks = read_asks(message)
    assert "cancel" not in asks.writes and ("cancel", "part") in asks.declined, asks


@pytest.mark.parametrize("message", PART_REFUNDS)
def test_a_refund_of_one_item_is_asked_back(message: str) -> None:
    asked = refund_ask(message)
    assert asked is not None and asked.unclear and asked.cents is None, asked


@pytest.mark.parametrize(("message", "write"), PLAIN)
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
