"""Withdrawn, declined, unneeded, counterfactual and judged-against write asks are not asks.

The gate of every write (``read_asks(m).writes``, which :func:`doubt` vets, and the policy
that re-reads both) must not offer a refund, a cancellation or an address change that the
customer withdrew, declined, called unnecessary, only once meant, or called a mistake. The
sentences below are this file's own (tester4's sentences are a held-out check, not here),
in English, Simplified and Traditional Chinese and Cantonese; plain asks stay asks.
test_asks_gate_kinds' no-write test reads :data:`NOT_ASKS` beside its own kinds (no writes, a
reason why declined); the tests here check the chat and the policy on them.
"""

from __future__ import annotations

import re

import pytest

from tests.unit.case_tables import cases
from tests.unit.test_customer_service_safety import (  # noqa: F401 (store, orch: fixtures)
    _find,
    _say,
    _writes,
    orch,
    store,
)
from workflows.customer_service.asks import doubt, read_asks
from workflows.customer_service.policy import WriteAction, execute_write
from workflows.customer_service.store.tools import ToolError

#: (kind, message): none of them asks for a write.
NOT_ASKS = cases("asks_withdrawn.toml", "not_asks")

#: (intent, message): the customer's own plain ask.
ASKS = cases("asks_withdrawn.toml", "asks")


@pytest.mark.parametrize(("intent", "message"), ASKS)
def test_a_plain_ask_is_still_an_ask(intent: str, message: str) -> None:
    assert intent in read_asks(message).writes, message
    assert doubt(message) is None, message


def test_a_refund_ask_without_an_order_stays_declined_on_the_safe_side() -> None:
    assert read_asks("I need a refund but I don't know the order number").writes == ()


def test_the_set_is_varied_enough() -> None:
    kinds = {kind for kind, _ in NOT_ASKS}
    assert kinds == {"withdrawn", "declined", "unneeded", "counterfactual", "judged"}
    assert len(NOT_ASKS) >= 60 and len(ASKS) >= 30
    chinese = [m for _, m in NOT_ASKS if any("\u4e00" <= ch <= "\u9fff" for ch in m)]
    assert len(chinese) >= 25


#: One message of each kind, in each script: the chat must not offer the write.
CHAT = [NOT_ASKS[i][1] for i in (0, 11, 18, 19, 31, 36, 46, 49, 60, 66, 73)]


@pytest.mark.parametrize("text", CHAT)
async def test_a_withdrawn_ask_then_yes_writes_nothing(store, orch, text: str) -> None:  # noqa: F811
    customer, order = _find(store, want="refundable")
    message = re.sub(r"ORD-\d{6}", order, text)
    before = _writes(store)
    first = await _say(orch, message, customer, thread="w1")
    assert first.result["status"] != "awaiting_confirmation", first.result["reply"]
    await _say(orch, "yes" if text.isascii() else "是", customer, thread="w1")
    assert _writes(store) == before
    action = WriteAction(  # and the policy refuses it even when asked directly
        tool="cancel_order" if "cancel" in message.lower() or "取消" in message else "start_refund",
        customer_id=customer,
        arguments={"order_id": order, "amount_cents": 100},
        key="w1:1",
        ask=message,
        confirmation="yes",
        confirmed_by=customer,
    )
    with pytest.raises(ToolError, match="own words"):
        execute_write(store.tools(customer), action)
