"""A yes said twice or more is no decision (tester12 F).

"yeah yeah", "yes yes yes", "ok ok", 是是是, 行行行, 得得得, 对啦对啦 confirmed a refund: each
phrase of the run was a yes, so the run was one. Now a phrase said twice in one answer ("ok ok",
好的好的) makes no plain yes (``answers.is_yes``): the customer is asked once more. Different
yes-phrases together ("yes, go ahead", 是的，确认) still confirm. Cases in
``tests/data/cases/cs_yes_repeated12.toml``.
"""

from __future__ import annotations

import pytest
from ask_checks import assert_yes_table
from case_tables import tables
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _turn, shop  # noqa: F401 (shop: the fixture)

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_yes_repeated12.toml")


def test_a_repeated_yes_is_no_yes() -> None:
    assert_yes_table(CASES["not_yes"], CASES["yes"])


@pytest.mark.parametrize("answer", ["yeah yeah", "是是是", "ok ok"])
async def test_it_writes_nothing_end_to_end(shop: Shop, answer: str) -> None:
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    asked = await _turn(orch, f"please refund {order}", customer, "r")
    assert asked["status"] == "awaiting_confirmation", asked
    await _turn(orch, answer, customer, "r")
    assert store.tools(customer).refund_count(order) == 0
