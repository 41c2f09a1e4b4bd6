"""A part of a refund asked with "only", "just", "actually", "instead", 只, 仅 or 改成 is a
plain ask (cs13; closing11: "ORD-… 只退1美元" and "actually just refund $5 of it", sent while
the whole refund's question waited, got a status reply and no new question). Sent while a
question waits, it replaces that question with one for the new amount; nothing is written
without a fresh yes. Cases in ``tests/data/cases/cs_part_waiting13.toml``."""

from __future__ import annotations

import pytest
from ask_checks import assert_gate
from case_tables import tables
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_part_waiting13.toml")


def test_a_part_asked_with_only_is_an_ask_and_its_negation_is_not() -> None:
    assert_gate(CASES["no_write"], CASES["own"])


@pytest.mark.parametrize(("part", "amount"), CASES["while_waiting"])
async def test_a_part_sent_while_a_question_waits_is_asked_anew(
    shop: Shop, part: str, amount: str
) -> None:
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    assert store.tools(customer).refundable(order)[1] == "USD"
    await _turn(orch, f"refund {order}", customer, "p")
    asked = await _turn(orch, part.format(en=order), customer, "p")
    assert asked["status"] == "awaiting_confirmation", asked
    assert amount in _said(asked), _said(asked)
    await _turn(orch, "yes", customer, "p")
    assert store.tools(customer).refund_count(order) == 1
