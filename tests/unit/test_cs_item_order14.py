"""The order a conversation is about is one the customer named, never the model's pick among
several offered (cs14; tester14 I14: "has my desk lamp been delivered?" was answered with
another order's facts, and the next "refund it" refunded that order). After a read that named
no order, "refund it" is asked which order; nothing is written."""

from __future__ import annotations

import pytest
from handoff_races import refundable_orders
from sqlalchemy import select
from test_cs_trust9 import Shop, _people, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.store import Customer

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


def _unique_item(store, locale_han: bool) -> tuple[str, str, str]:
    """``(customer, order, product)``: a product in exactly one of a customer's several
    orders, that order not their newest (the one a pick among those offered takes first)."""
    with store.sessions() as session:
        customers = session.scalars(select(Customer.id).order_by(Customer.id)).all()
    for c in customers:
        products = store.tools(c).products()
        orders = list(products)
        for order in orders[1:]:
            for name in products[order]:
                han = any("\u4e00" <= ch <= "\u9fff" for ch in name)
                others = [o for o in orders if o != order and name in products[o]]
                if han == locale_han and not others:
                    return c, order, name
    pytest.skip("no such customer in the seed")


@pytest.mark.parametrize(
    ("asked", "han"),
    [
        ("has my {item} been delivered?", False),
        ("my {head} arrived broken, where is the receipt?", False),
        ("where are my {item}s", False),
        ("我的{item}到哪了？", True),
        ("我買的{head}到哪裡了？", True),
    ],
)
async def test_a_read_naming_goods_reads_the_order_that_holds_them(
    shop: Shop, asked: str, han: bool
) -> None:
    """tester14 I14's read half: the goods name the order, never the model's pick."""
    store, orch = shop()
    customer, order, item = _unique_item(store, han)
    head = item[-2:] if han else item.split()[-1].lower()
    result = await _turn(orch, asked.format(item=item.lower(), head=head), customer, "r")
    read = [r for r in result.get("tool_results", []) if r.get("facts", {}).get("order_id")]
    assert read and {r["facts"]["order_id"] for r in read} == {order}, (order, _said(result))
