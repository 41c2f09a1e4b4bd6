"""A writer who says the account is another person's gets no write, however it is put
(tester12 A, re-test): "Logged in as my wife.", "The buyer was my late father.", "the
account is in the owner's name" wrote after a yes. ``ask_later._NOT_THE_CUSTOMER`` now reads
another person and a word of whose account or login it is in one sentence together, rather
than one more phrasing each. Cases in ``tests/data/cases/cs_not_holder12.toml``."""

from __future__ import annotations

from ask_checks import assert_gate
from case_tables import tables
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.ask_later import not_the_holder
from workflows.customer_service.ask_marks import normalise

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_not_holder12.toml")


def test_another_persons_account_is_no_write_and_is_remembered() -> None:
    assert_gate(CASES["not_holder"], CASES["own"], doubted=True)
    missed = [m for m in CASES["not_holder"] if not not_the_holder(normalise(m))]
    assert not missed, missed  # the conversation remembers it (tester12 I)


async def test_a_plain_ask_after_it_is_no_write_and_a_joint_ask_is_offered(shop: Shop) -> None:
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    for n, first in enumerate(CASES["said_first"]):
        await _turn(orch, first, customer, f"h{n}")
        asked = await _turn(orch, f"refund {order}", customer, f"h{n}")
        assert asked["status"] != "awaiting_confirmation", (first, asked)
        await _turn(orch, "yes", customer, f"h{n}")
    assert store.tools(customer).refund_count(order) == 0
    for n, joint in enumerate(CASES["joint"]):
        asked = await _turn(orch, joint.format(en=order, zh=order), customer, f"j{n}")
        assert asked["status"] == "awaiting_confirmation", (joint, asked)
