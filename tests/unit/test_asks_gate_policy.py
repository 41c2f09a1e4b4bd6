"""The fail-safe write gate end to end: a mention of each kind (tests/unit/test_asks_gate_kinds)
then "yes" writes nothing through the chat, and the one policy path refuses it when asked
directly; a genuine ask still reaches the confirmation question."""

from __future__ import annotations

import re

import pytest

import tests.unit.test_customer_service_safety as safety
from tests.unit.test_asks_gate_kinds import NOT_ASKS
from tests.unit.test_customer_service_safety import _action, _find, _say, _writes
from workflows.customer_service.policy import execute_write
from workflows.customer_service.store.tools import ToolError

orch, store = safety.orch, safety.store  # the fixtures

#: Two messages of each kind: one English (or Cantonese), one Chinese.
CHAT = [
    m
    for ms in NOT_ASKS.values()
    for m in (
        next(x for x in ms if x.isascii() or "咪" in x),
        next(x for x in ms if not x.isascii()),
    )
]


def _tool(message: str) -> str:
    return "cancel_order" if re.search(r"cancel|取消", message, re.I) else "start_refund"


@pytest.mark.parametrize("text", CHAT)
async def test_a_mention_then_yes_writes_nothing(store, orch, text: str) -> None:
    customer, order = _find(store, want="refundable")
    message = text.replace("ORD-100200", order)
    before = _writes(store)
    first = await _say(orch, message, customer, thread="g1")
    assert first.result["status"] != "awaiting_confirmation", first.result["reply"]
    await _say(orch, "yes" if message.isascii() else "是", customer, thread="g1")
    assert _writes(store) == before
    arguments = {"order_id": order, "amount_cents": 100}
    action = _action(customer, order, tool=_tool(message), arguments=arguments, ask=message)
    with pytest.raises(ToolError, match="own words"):
        execute_write(store.tools(customer), action)


@pytest.mark.parametrize("text", ["Refund ORD-100200, it arrived broken", "订单ORD-100200退款"])
async def test_a_genuine_ask_still_reaches_the_confirmation(store, orch, text: str) -> None:
    customer, order = _find(store, want="refundable")
    first = await _say(orch, text.replace("ORD-100200", order), customer, thread="g2")
    assert first.result["status"] == "awaiting_confirmation", first.result["reply"]
