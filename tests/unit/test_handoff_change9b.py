"""tester9b F4: while a confirmed write waits for a person, the customer's own change of it (an
item, an amount in words, another remedy, another order instead) makes it stale: it is
withdrawn and the person's approval writes nothing. Own inputs (English, Simplified and
Traditional Chinese), none of the tester's.

Since cs12 (tester12 D) the reading is positive both ways (``withdrawing.waiting_decision``):
a message the change reader does not know (a third language) keeps the write waiting, noted
for the person deciding, instead of withdrawing it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.exceptions import HandoffDecidedError
from workflows.customer_service.withdrawing import waiting_decision

sys.path.insert(0, str(Path(__file__).parent))
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _said, _turn, _waiting, shop  # noqa: F401

#: A refund and a cancel of ORD-100555 that wait for a person.
REFUND, CANCEL = (
    {"tool": tool, "arguments": {"order_id": "ORD-100555"}}
    for tool in ("start_refund", "cancel_order")
)

#: Each changes the waiting refund, in a form the earlier word lists did not know.
CHANGES = [
    "could you send me a voucher for the shop rather than money?",
    "hmm, thinking about it, an exchange for the bigger size would suit me better",
    "just the blender please, we're keeping the toaster",
    "please refund the kettle and leave the rest",
    "a fiver back would do",
    "ten quid would be fair, the box was only dented",
    "I'll take a discount on my next order",
    "scrap the money, send a new one",
    "partial is fine by me",
    "the lamp works after all, only the cable is broken",
    "退个运费就行",
    "给我补发一个新的吧",
    "退到我的余额里",
    "只要退那个杯子的钱",
    "換一個新的給我就好",
    "退一部分運費就可以了",
    "那個杯子不用退，只退盤子",
    "Привет, верните только часть",  # a third language: kept for the person (cs12)
]
#: Benign: thanks, urging, asking for news, a greeting, restating: each keeps it waiting.
BENIGN = [
    "cheers, I'll look out for your reply",
    "hey, any update on my refund?",
    "good morning! is someone reviewing it now?",
    "please approve it soon, thanks a lot",
    "thank you so much for the help",
    "don't drop my refund please",
    "請問審核多久？",
    "谢谢你们，辛苦了",
    "您好，在吗？请尽快处理我的退款",
    "好的，收到，等你们回复",
    "謝謝，不着急",
    "the refund is for the whole order, as I mentioned",
]


def _stale(message: str, action: dict[str, Any]) -> bool:
    """What ``waiting_input`` decides: withdrawn as an amendment."""
    return waiting_decision(message, action) == "amended"


def test_changes_make_the_waiting_write_stale_and_benign_messages_keep_it() -> None:
    assert [m for m in CHANGES if not _stale(m, REFUND)] == [CHANGES[-1]]
    assert waiting_decision(CHANGES[-1], REFUND) == "kept"  # a third language: the person reads
    assert [m for m in BENIGN if waiting_decision(m, REFUND) != "kept"] == []


def test_a_cancel_waiting_is_the_same_kind() -> None:
    assert _stale("cancel just the cups, ship the plates", CANCEL)
    assert _stale("ORD-100999 instead", CANCEL)
    assert not _stale("please cancel it soon, thanks", CANCEL)
    assert not _stale("I'd also like a refund on ORD-100556 too", CANCEL)  # another ask, added
    assert waiting_decision("don't cancel it", CANCEL) == "withdrawn"  # its own verb negated


async def test_an_unrecognised_change_is_withdrawn_and_the_approval_writes_nothing(
    shop: Shop,  # noqa: F811
) -> None:
    store, orch = shop(1)
    customer, order = refundable_orders(store, 60, 1)[0]
    await _waiting(orch, customer, order, "c9b")
    result = await _turn(orch, "退个运费就行", customer, "c9b")
    assert result["status"] == "succeeded" and "已撤回" in _said(result), result
    with pytest.raises(HandoffDecidedError):
        await orch.resume("c9b", approve=True, note="ok", by="olga")
    await _waiting(orch, customer, order, "k9b")
    assert (await _turn(orch, "hey, any update?", customer, "k9b"))["status"] == "needs_human"
    assert store.tools(customer).refund_count(order) == 0
