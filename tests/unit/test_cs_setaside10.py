"""Write asks that are not a present, own ask are set aside (cs10; tester10 kinds A–E).

An excluded write ("anything but a refund", 退款以外的方案), someone else's wish in Chinese
without 说/让 (我老婆想要…退款), a write asked for later or after a wait ("cancel … next
friday", "wait until I confirm, then refund", 明天幫我取消, an address "from next month") and an
advice question ("would you advise cancelling …?") were confirmed and written on "yes". Now the
second reading (``asks.doubt`` → ``ask_later.set_aside``) sets every write of such a message
aside: no confirmation, no write, and the policy path refuses the same words. Look-alikes that
are a present own ask ("refund … today", "by tomorrow", "it arrived broken on Monday") still
are not set aside by these kinds. Cases in ``tests/data/cases/cs_setaside10.toml`` (own
variants, not tester10's).
"""

from __future__ import annotations

from case_tables import tables
from handoff_races import refundable_orders
from sqlalchemy import select
from test_cs_trust9 import Shop, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.ask_later import set_aside
from workflows.customer_service.asks import normalise, read_asks
from workflows.customer_service.store import Order

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_setaside10.toml")
_KINDS = ("excluded", "someone", "later", "advice", "joking")


def _said(message: str) -> str:
    return message.format(a="ORD-100076", b="ORD-102091")


def test_excluded_someone_elses_later_and_advice_asks_are_set_aside() -> None:
    written = [(k, m) for k in _KINDS for m in CASES[k] if read_asks(_said(m)).writes]
    total = sum(len(CASES[k]) for k in _KINDS)
    assert not written, (f"{len(written)} of {total} still a write", written)
    # look-alikes: not set aside by these kinds (the allow-list of plain asks reads them too)
    lost = [m for m in CASES["plain"] if set_aside(normalise(_said(m)))]
    assert not lost, (f"{len(lost)} of {len(CASES['plain'])} own asks set aside", lost)


async def test_yes_after_them_writes_nothing(shop: Shop) -> None:
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    with store.sessions() as s:
        address = s.get(Order, order).shipping_address
    picked = [CASES[k][0] for k in _KINDS] + [CASES["later"][9]]
    for n, said in enumerate(picked):
        await _turn(orch, said.format(a=order, b=order), customer, f"s{n}")
        await _turn(orch, "yes", customer, f"s{n}")
    assert store.tools(customer).refund_count(order) == 0
    with store.sessions() as s:
        row = s.scalars(select(Order).where(Order.id == order)).one()
        assert row.status != "cancelled" and row.shipping_address == address
