"""A question naming a refund id or a tracking number is about ITS order (tester9 F5).

"What is the status of my refund RF-000132?" and "where is my parcel 1Z…?" were answered with
the customer's newest order's facts. Now the id is looked up among the customer's own refunds
and shipments and answered for its order; one not on their account (another customer's, or
none at all) is answered "I could not find … on your account", with no order's facts.
Through the workflow with the tool-calling test double of the model (it picks the first order
offered, so the old offer of the customer's newest order shows) and a real seeded SQLite store.
English, Simplified and Traditional Chinese.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from orchestrator import Orchestrator
from workflows.customer_service.ref_ids import ref_orders
from workflows.customer_service.store import Order, OrderStore, Refund, Shipment

sys.path.insert(0, str(Path(__file__).parent))
from case_tables import tables
from customer_service_double import stream_turn
from test_reads_ids8 import shop  # noqa: F401  (the seeded store and the workflow over it)

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

#: The questions (``refund_asked``, ``parcel_asked``, ``not_theirs``).
CASES = tables("reads_refs9.toml")
_NOT_FOUND = ("could not find", "找不到")


def _shipped(store: OrderStore) -> list[tuple[str, str, str, list[str]]]:
    """``(customer, order, tracking number, the customer's orders newest first)`` for each
    customer whose shipped order is not their newest one."""
    found = []
    with store.sessions() as s:
        rows = s.execute(
            select(Order.customer_id, Order.id, Shipment.tracking_number)
            .join(Shipment, Shipment.order_id == Order.id)
            .order_by(Order.placed_at)
        ).all()
    seen = set()
    for customer, order, tracking in rows:
        own = store.tools(customer).order_ids()
        if customer not in seen and order != own[0]:
            seen.add(customer)
            found.append((customer, order, tracking, own))
    return found


def _refund(store: OrderStore, order: str) -> int:
    """A refund row of ``order`` (as a person's approval writes it); its id."""
    with store.sessions() as s:
        refund = Refund(
            order_id=order,
            amount_cents=1234,
            reason="broken",
            status="approved",
            approved_by="olga",
            idempotency_key=f"test-{order}",
            created_at=datetime.now(UTC),
        )
        s.add(refund)
        s.commit()
        return refund.id


async def _reply(orch: Orchestrator, text: str, customer: str, thread: str) -> str:
    _, done = await stream_turn(orch, text, customer, thread)
    assert done.status != "failed" and done.result is not None, done
    return str(done.result["reply"]["text"])


async def test_a_refund_id_or_tracking_number_is_answered_for_its_order(shop) -> None:
    store, orch = shop
    (customer, order, tracking, own), *_ = _shipped(store)
    number = _refund(store, order)
    rf = f"RF-{number:06d}"
    asked = [(q.format(rf=rf, n=number), rf) for q in CASES["refund_asked"]]
    asked += [
        (q.format(trk=tracking, trk_lower=tracking.lower()), tracking)
        for q in CASES["parcel_asked"]
    ]
    for n, (said, ref) in enumerate(asked):
        text = await _reply(orch, said, customer, f"ref-{n}")
        assert order in text and ref in text, (said, text)
        assert not [o for o in own if o != order and o in text], (said, text)


async def test_an_id_not_on_the_account_is_said_so_with_no_order(shop) -> None:
    store, orch = shop
    (customer, order, _, own), (other, theirs, tracking, _), *_ = _shipped(store)
    rf = f"RF-{_refund(store, theirs):06d}"  # another customer's refund and parcel
    _refund(store, order)
    for n, said in enumerate(CASES["not_theirs"]):
        # a conversation about one of their orders first: never answered with it instead
        await _reply(orch, f"what is the status of {own[0]}?", customer, f"not-{n}")
        said = said.format(rf=rf, trk=tracking)
        text = await _reply(orch, said, customer, f"not-{n}")
        assert any(w in text for w in _NOT_FOUND), (said, text)
        assert not [o for o in [*own, theirs] if o in text], (said, text)
    assert store.tools(customer).refund_count(own[0]) == 0  # nothing offered, nothing written
    assert store.tools(other).order_of(tracking=tracking) == theirs


def test_ids_are_read_in_their_forms_and_blanked(shop) -> None:
    store, _ = shop
    (customer, order, tracking, _), *_ = _shipped(store)
    number = _refund(store, order)
    found = ref_orders(f"refund rf {number:06d} and parcel {tracking.lower()}", store, customer)
    assert (found.orders, found.missing, found.refund) == ([order], [], True)
    assert f"{number:06d}" not in found.rest and tracking.lower() not in found.rest
    none = ref_orders("where is ORD-100200? I paid USD 120000", store, customer)
    assert (none.orders, none.missing) == ([], [])
    assert ref_orders("运单号 SF123456789012 到哪了", store, customer).missing == ["SF123456789012"]
