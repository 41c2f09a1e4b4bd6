"""Facts about the customer's own data, for what they asked (cs9c; tester9's MEDIUM kinds).

1. A refund-status question with no id, as the first message of a conversation ("is my refund
   approved yet?", 我的退款批了吗？, 退款到帳了嗎？) was answered for the customer's newest
   order ("No refund has been made on order ORD-…"), which reads as "you have no refund" when
   they have one on another order. Now it is answered from the customer's OWN refunds: each
   refund (id, order, amount, status) when there are a few, a question back when there are
   many, "no refund on your account" only when there is none.
2. "I don't want my money back, I only want to know about ORD-…" was read as a refund question
   and got the eligibility verdict (and an offer). Now it gets the order's status or tracking.

Through the workflow with the tool-calling test double of the model (it picks the first order
offered) and a real seeded SQLite store. English, Simplified and Traditional Chinese.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from sqlalchemy import select

from workflows.customer_service.store import Order, OrderStore, Refund

sys.path.insert(0, str(Path(__file__).parent))
from case_tables import tables
from test_reads_ids8 import shop  # noqa: F401  (the seeded store and the workflow over it)
from test_reads_refs9 import _refund as _add_refund
from test_reads_refs9 import _reply

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

#: The questions (``no_id_status``, ``waived``).
CASES = tables("cs_facts9c.toml")
_ORDER = re.compile(r"ORD-\d{6}")
_RF = re.compile(r"RF-\d{6}")
_REFUND_WORDS = ("refund", "money back", "退款", "退钱", "退錢", "eligible", "符合")


def _customers(store: OrderStore) -> list[tuple[str, list[str], list[str]]]:
    """``(customer, orders newest first, orders with a refund)`` for every customer."""
    with store.sessions() as s:
        people = sorted(set(s.scalars(select(Order.customer_id)).all()))
        refunded = set(s.scalars(select(Refund.order_id)).all())
    found = []
    for customer in people:
        own = store.tools(customer).order_ids(1000)
        found.append((customer, own, [o for o in own if o in refunded]))
    return found


async def test_a_refund_question_with_no_id_answers_the_customers_own_refunds(shop) -> None:
    store, orch = shop
    people = _customers(store)
    few = next((c, own) for c, own, rf in people if not rf and len(own) >= 3)
    none = next(c for c, own, rf in people if not rf and len(own) >= 2 and c != few[0])
    many = next((c, own) for c, own, rf in people if len(own) >= 5 and c not in (few[0], none))
    customer, own = few
    mine = {o: f"RF-{_add_refund(store, o):06d}" for o in own[1:3]}
    for n in range(5):  # refunds on five orders: asked which one
        _add_refund(store, many[1][n])
    for n, said in enumerate(CASES["no_id_status"]):
        text = await _reply(orch, said, customer, f"few-{n}")
        for order, rf in mine.items():  # each refund: its id and order
            assert order in text and rf in text, (said, text)
        assert own[0] not in text, (said, text)  # not the newest order (no refund on it)
        text = await _reply(orch, said, none, f"none-{n}")
        assert not _ORDER.search(text) and not _RF.search(text), (said, text)
        assert re.search(r"no refund|没有.{0,6}退款|沒有.{0,6}退款", text, re.I), (said, text)
        text = await _reply(orch, said, many[0], f"many-{n}")
        assert not _RF.search(text) and re.search(r"[?？]", text), (said, text)
        assert re.search(r"which|哪", text, re.I), (said, text)
        assert not set(_ORDER.findall(text)) - set(many[1]), (said, text)  # theirs only


async def test_a_waived_refund_gets_the_orders_facts_and_no_offer(shop) -> None:
    store, orch = shop
    with store.sessions() as s:
        shipped = s.scalars(select(Order).where(Order.status == "shipped")).first()
        assert shipped is not None and shipped.shipment is not None
        customer, order = shipped.customer_id, shipped.id
        tracking = shipped.shipment.tracking_number
    for n, said in enumerate(CASES["waived"]):
        said = said.format(id=order)
        text = await _reply(orch, said, customer, f"w-{n}")
        assert order in text and not [w for w in _REFUND_WORDS if w in text.lower()], (said, text)
        if re.search(r"where|到哪", said):
            assert tracking in text, (said, text)
