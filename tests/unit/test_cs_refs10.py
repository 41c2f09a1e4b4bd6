"""Refund ids written short or partly are read, within the customer's own data (cs10 item a).

"RF-19", "refund number 000019", "refund 19", 退款编号 000019, 退款單號 19: each is looked up
among the customer's OWN refunds (:func:`~workflows.customer_service.ref_ids.ref_orders`) and
answered for its order; one that is not theirs (another customer's reads exactly like a missing
one) is answered "I could not find RF-… on your account", with no order's facts. An amount
("refund 19 dollars", 退款19元), a count ("refund 2 items") or an order number after "refund" is
not a refund id. Cases in ``tests/data/cases/cs_refs10.toml`` (en, zh-Hans, zh-Hant, typos).
"""

from __future__ import annotations

import sys
from pathlib import Path

from workflows.customer_service.ref_ids import ref_orders

sys.path.insert(0, str(Path(__file__).parent))
from case_tables import tables
from test_reads_ids8 import shop  # noqa: F401  (the seeded store and the workflow over it)
from test_reads_refs9 import _NOT_FOUND, _refund, _reply, _shipped

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_refs10.toml")


async def test_short_refund_ids_resolve_only_within_the_customers_own_refunds(shop) -> None:
    store, orch = shop
    (customer, order, _, own), (_, theirs, _, _), *_ = _shipped(store)
    other = _refund(store, theirs)  # another customer's refund, made first: the smaller number
    n = _refund(store, order)
    wrong = []
    for i, said in enumerate(CASES["own"]):
        said = said.format(n=n, n6=f"{n:06d}")
        await _reply(orch, f"what is the status of {own[0]}?", customer, f"own-{i}")
        text = await _reply(orch, said, customer, f"own-{i}")
        if order not in text or f"RF-{n:06d}" not in text or own[0] in text:
            wrong.append((said, text))
    for i, said in enumerate(CASES["not_theirs"]):
        said = said.format(other=other, other6=f"{other:06d}")
        await _reply(orch, f"what is the status of {own[0]}?", customer, f"not-{i}")
        text = await _reply(orch, said, customer, f"not-{i}")
        if not any(w in text for w in _NOT_FOUND) or [o for o in [*own, theirs] if o in text]:
            wrong.append((said, text))
    total = len(CASES["own"]) + len(CASES["not_theirs"])
    assert not wrong, (f"{len(wrong)} of {total} wrong", wrong)
    assert store.tools(customer).refund_count(own[0]) == 0  # nothing offered, nothing written


def test_amounts_counts_and_order_numbers_are_not_refund_ids(shop) -> None:
    store, _ = shop
    (customer, order, _, _), *_ = _shipped(store)
    _refund(store, order)
    digits = "100129"  # an order id's six digits (any customer's): never a refund id
    read = {s: ref_orders(s.format(order=digits), store, customer) for s in CASES["not_ids"]}
    wrong = [s for s, r in read.items() if r.orders or r.missing or r.refund]
    assert not wrong, (f"{len(wrong)} of {len(read)} read as a refund id", wrong)
