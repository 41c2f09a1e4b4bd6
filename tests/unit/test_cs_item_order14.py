"""The order a conversation is about is one the customer named, never the model's pick among
several offered (cs14; tester14 I14: "has my desk lamp been delivered?" was answered with
another order's facts, and the next "refund it" refunded that order). After a read that named
no order, "refund it" is asked which order; nothing is written."""

from __future__ import annotations

import pytest
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _people, _said, _turn, shop  # noqa: F401 (shop: the fixture)

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("has my desk lamp been delivered?", "refund it"),
        ("my running shoes arrived damaged", "I want my money back for it"),
        ("我的无线耳机到哪了？", "退款"),
    ],
)
async def test_a_write_after_an_unnamed_read_asks_which_order(
    shop: Shop, first: str, then: str
) -> None:
    store, orch = shop()
    customer, own = next(  # several orders, the newest refundable (the model's first pick)
        (c, store.tools(c).order_ids())
        for c, o in refundable_orders(store, 60, 30)
        if len(store.tools(c).order_ids()) > 1 and store.tools(c).order_ids()[0] == o
    )
    before = [store.tools(customer).refund_count(o) for o in own]
    await _turn(orch, first, customer, "i")
    asked = await _turn(orch, then, customer, "i")
    assert asked["status"] != "awaiting_confirmation", _said(asked)
    await _turn(orch, "是的" if "退" in then else "yes", customer, "i")
    assert [store.tools(customer).refund_count(o) for o in own] == before


async def test_a_named_order_is_still_the_one_the_conversation_is_about(shop: Shop) -> None:
    store, orch = shop()
    customer, own, _ = _people(store)
    await _turn(orch, f"where is {own[-1]}?", customer, "n")
    asked = await _turn(orch, "refund it", customer, "n")
    assert own[-1] in _said(asked), _said(asked)
