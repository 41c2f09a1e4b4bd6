"""A message sent while a confirmation question waits that is neither a yes nor a no (cs14;
tester13 G2's other half, the shrug): a new amount alone for the waiting refund, or another
write after a plain no, is offered as a new question (nothing written until yes); a shrug is
asked the same question again; anything else drops the offer as before. Cases in
``tests/data/cases/cs_question_waits14.toml``."""

from __future__ import annotations

import pytest
from case_tables import tables
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.policy import WriteAction, denial
from workflows.customer_service.question_waits import after_no, new_amount, shrug
from workflows.customer_service.store import OrderStore

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_question_waits14.toml")


def test_an_amount_alone_is_read_and_nothing_else_is() -> None:
    got = {said: new_amount(after_no(said) or said) for said, _ in CASES["amount_only"]}
    assert {s: a.cents if a else None for s, a in got.items()} == dict(CASES["amount_only"])
    assert [s for s in CASES["not_amount_only"] if new_amount(s) is not None] == []


def test_a_shrug_is_read_and_nothing_else_is() -> None:
    assert [s for s in CASES["shrug"] if not shrug(s)] == []
    assert [s for s in CASES["not_shrug"] if shrug(s)] == []


def _processing(store: OrderStore) -> list[tuple[str, str]]:
    found = []
    for customer in (f"C{n:05d}" for n in range(1, 61)):
        tools = store.tools(customer)
        for order in tools.order_ids(50):
            if tools.run("lookup_order", {"order_id": order}).facts.get("status") == "processing":
                found.append((customer, order))
                break
    return found


async def test_a_changed_ask_is_asked_anew_and_a_shrug_again(shop: Shop) -> None:
    store, orch = shop()
    orders = refundable_orders(store, 60, 30)
    usd = [(c, o) for c, o in orders if store.tools(c).refundable(o)[1] == "USD"]
    for n, (said, cents) in enumerate(CASES["amount_only"][:4]):
        customer, order = usd[n]
        await _turn(orch, f"refund {order}", customer, f"a{n}")
        asked = await _turn(orch, said, customer, f"a{n}")
        assert asked["status"] == "awaiting_confirmation", (said, asked)
        assert f"{cents // 100}.{cents % 100:02d}" in _said(asked), (said, _said(asked))
        assert store.tools(customer).refund_count(order) == 0
        await _turn(orch, "yes", customer, f"a{n}")
        assert store.tools(customer).refund_count(order) == 1, said
    customer, order = usd[5]
    await _turn(orch, f"refund {order}", customer, "s")
    for said in ("fine", "随便", "👍"):
        again = await _turn(orch, said, customer, "s")
        assert again["status"] == "awaiting_confirmation" and order in _said(again), said
    assert store.tools(customer).refund_count(order) == 0
    customer, order = usd[6]
    await _turn(orch, f"refund {order}", customer, "n")
    dropped = await _turn(orch, "don't make it USD 25", customer, "n")
    assert dropped["status"] == "succeeded", dropped


@pytest.mark.parametrize(("table", "offered"), [("after_no", True), ("after_no_not", False)])
async def test_another_write_after_a_no(shop: Shop, table: str, offered: bool) -> None:
    store, orch = shop()
    for n, (first, said) in enumerate(CASES[table]):
        customer, order = _processing(store)[n]
        first_question = _said(await _turn(orch, first.format(pid=order), customer, f"w{n}"))
        reply = await _turn(orch, said.format(pid=order), customer, f"w{n}")
        new = reply["status"] == "awaiting_confirmation" and first_question not in _said(reply)
        assert new == offered, (said, _said(reply))


def test_the_policy_reads_an_amendment_again() -> None:
    base = {
        "tool": "start_refund",
        "customer_id": "C1",
        "arguments": {"order_id": "ORD-100200", "amount_cents": 2500},
        "key": "t:1",
        "ask": "refund ORD-100200",
        "confirmation": "yes",
        "confirmed_by": "C1",
    }

    class _Tools:
        customer_id = "C1"

    tools = _Tools()
    assert denial(WriteAction(**base, amended="make it USD 25"), tools, None) is None  # type: ignore[arg-type]
    for amended in ("make it USD 30", "my wife says make it USD 25", "make it USD 25?"):
        assert denial(WriteAction(**base, amended=amended), tools, None), amended  # type: ignore[arg-type]
    other = {**base, "tool": "cancel_order", "ask": "cancel ORD-100200"}
    assert denial(WriteAction(**other, amended="make it USD 25"), tools, None)  # type: ignore[arg-type]
