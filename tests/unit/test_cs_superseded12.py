"""An offer replaced by a new one on the same order is not reported as "nothing was changed"
next to the write the customer then confirms (tester12 G).

"refund USD 10 of X" → "refund USD 20 of X" → "yes" wrote USD 20.00 and its reply began
"Nothing was changed on order X: it was not confirmed" (the first offer's note, held back a
turn). The new question about the same order replaces the first offer, so its note goes
(``deciding.superseded``); the confirmed write is reported alone.
"""

from __future__ import annotations

import pytest
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

#: (first ask, the ask that replaces it, the yes, words of the dropped offer's note)
CASES = [
    ("refund {c} 1.00 of {o}", "refund {c} 2.00 of {o}", "yes", "Nothing was changed"),
    ("请帮我退款{o}", "{o}退2美元就行", "是的", "没有做任何更改"),
]


@pytest.mark.parametrize(("first", "second", "yes", "note"), CASES)
async def test_a_replaced_offer_is_not_reported_beside_the_write(
    shop: Shop, first: str, second: str, yes: str, note: str
) -> None:
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    currency = store.tools(customer).refundable(order)[1]
    await _turn(orch, first.format(o=order, c=currency), customer, "g")
    asked = await _turn(orch, second.format(o=order, c=currency), customer, "g")
    assert asked["status"] == "awaiting_confirmation", asked
    done = await _turn(orch, yes, customer, "g")
    assert store.tools(customer).refund_count(order) == 1
    assert note not in _said(done), _said(done)
