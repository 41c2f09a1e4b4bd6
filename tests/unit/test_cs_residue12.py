"""The five residue kinds of session 11 (cs12), all in the safe direction but wrong for users,
through the workflow with the tool-calling test double and a real seeded store:

* (a) a refund asked again after the order was refunded in full is answered with the refund
  made (its amount and date, from the store) and that the order is refunded in full; no offer.
* (b) a question about the delivery address is answered with the address on the order (the
  store's; the customer's own order only).
* (c) sarcasm around a refund ask ("refund …, because that always works") offers nothing to
  confirm and no "reply here to start the refund".
* (d) a question about refunds ("how do refunds work?", 退款流程是怎样的) while a refund waits
  for a person keeps it waiting, as does anything but the customer's own withdrawal or
  change (tester12 D: an account detail, the wait, another thing cancelled, a bare "no").
* (e) the customer and someone close asking together ("My husband and I would like a refund
  for …", 我和我老公想退款…) is the customer's own ask; someone else's ask is still no ask.

Cases in ``tests/data/cases/cs_residue12.toml`` (own inputs: en, zh-Hans, zh-Hant); the
held-out set, looked at once, is ``cs_residue12_heldout.toml`` (:func:`misses` reads either).
"""

from __future__ import annotations

import re
from typing import Any

from case_tables import tables
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _said, _turn, _waiting, shop  # noqa: F401 (shop: the fixture)

from orchestrator import Orchestrator
from workflows.customer_service.asks import read_asks
from workflows.customer_service.store import Order, OrderStore
from workflows.customer_service.withdrawing import waiting_decision

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_residue12.toml")
_REFUND = {"tool": "start_refund", "arguments": {"order_id": "ORD-100200", "amount_cents": 9999}}
#: Words that offer a write: the confirmation question, "reply here to start it", "say …".
_OFFERS = re.compile(
    r"Reply yes|回复“是”|would like me to start the refund|如需办理退款，请在这里回复我|"
    r'say "refund|请直接说“退款|請直接說“退款'
)


def _address(store: OrderStore, order_id: str) -> str:
    with store.sessions() as s:
        order = s.get(Order, order_id)
        assert order is not None
        return order.shipping_address


async def _refunded(orch: Orchestrator, customer: str, order: str) -> dict[str, Any]:
    """Refund ``order`` in full through the workflow; the approved refund's facts."""
    await _turn(orch, f"refund {order}", customer, "full")
    done = await _turn(orch, "yes", customer, "full")
    (result,) = [r for r in done["tool_results"] if r["tool"] == "start_refund"]
    assert result["ok"], done
    return dict(result["facts"])


async def misses(shop: Shop, cases: dict[str, list[Any]]) -> dict[str, list[str]]:
    """Per kind table of ``cases``, the phrasings the workflow gets wrong (empty: all right)."""
    store, orch = shop()
    (c1, o1), (c2, o2), (c3, o3) = refundable_orders(store, 60, 3)
    wrong: dict[str, list[str]] = {}
    made = await _refunded(orch, c1, o1)
    for n, said in enumerate(cases.get("refunded_in_full", [])):
        reply = await _turn(orch, said.format(id=o1), c1, f"a{n}")
        text = _said(reply)
        told = all(w in text for w in (made["refund_amount"], made["refund_id"]))
        full = bool(re.search(r"refunded in full|已全[额額]退款", text))
        if reply["status"] != "succeeded" or not (told and full) or _OFFERS.search(text):
            wrong.setdefault("refunded_in_full", []).append(said)
    where = _address(store, o2)
    for n, said in enumerate(cases.get("address", [])):
        if where not in _said(await _turn(orch, said.format(id=o2), c2, f"b{n}")):
            wrong.setdefault("address", []).append(said)
    for n, said in enumerate(cases.get("address_no_id", [])):
        await _turn(orch, f"where is {o2}?", c2, f"bn{n}")
        if where not in _said(await _turn(orch, said, c2, f"bn{n}")):
            wrong.setdefault("address_no_id", []).append(said)
    for kind, offered in (("sarcasm", False), ("plain", True)):
        for n, said in enumerate(cases.get(kind, [])):
            reply = await _turn(orch, said.format(id=o3), c3, f"{kind}{n}")
            asked = reply["status"] == "awaiting_confirmation"
            if asked != offered or (not offered and _OFFERS.search(_said(reply))):
                wrong.setdefault(kind, []).append(said)
    return _read_misses(cases, o3, wrong)


def _read_misses(
    cases: dict[str, list[Any]], order: str, wrong: dict[str, list[str]]
) -> dict[str, list[str]]:
    """``wrong`` with the phrasings of the tables read without the workflow: the ask reader
    (we-asks) and the reading of a message while a refund waits for a person."""
    for kind, ask in (("we_ask", True), ("not_we", False)):
        for said in cases.get(kind, []):
            if ("refund" in read_asks(said.format(id=order)).writes) != ask:
                wrong.setdefault(kind, []).append(said)
    for kind, kept in (
        ("policy_question", True),
        ("waiting_kept", True),
        ("waiting_changed", False),
    ):
        for said in cases.get(kind, []):
            if (waiting_decision(said, _REFUND) == "kept") != kept:
                wrong.setdefault(kind, []).append(said)
    return wrong


async def test_each_residue_kind_is_answered_as_asked(shop: Shop) -> None:
    wrong = await misses(shop, CASES)
    assert not wrong, wrong


async def test_a_we_ask_is_confirmed_and_written_once(shop: Shop) -> None:
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    asked = await _turn(orch, f"My husband and I would like a refund for {order}", customer, "w")
    assert asked["status"] == "awaiting_confirmation", asked
    await _turn(orch, "yes", customer, "w")
    assert store.tools(customer).refund_count(order) == 1


async def test_a_refund_question_keeps_the_waiting_refund_for_the_person(shop: Shop) -> None:
    store, orch = shop(1)
    ((customer, order),) = refundable_orders(store, 60, 1)
    await _waiting(orch, customer, order, "p")
    picked = ["how do refunds work?", "退款流程是怎样的"]
    for said in picked:
        assert (await _turn(orch, said, customer, "p"))["status"] == "needs_human", said
    (row,) = store.handoffs("waiting")
    assert [m["text"] for m in row["context"]["customer_messages"]] == picked
    await orch.resume("p", approve=True, note="ok", by="olga")
    assert store.tools(customer).refund_count(order) == 1


async def test_another_customers_address_is_not_told(shop: Shop) -> None:
    store, orch = shop()
    (c1, _), (_, other) = refundable_orders(store, 60, 2)
    reply = await _turn(orch, f"which address is {other} going to?", c1, "x")
    assert _address(store, other) not in _said(reply), _said(reply)


async def test_a_thread_whose_writer_is_not_the_holder_offers_no_write(shop: Shop) -> None:
    """tester12 I: the reply gives no plain words, and a plain ask later on the same thread
    is no write either; the customer's own thread still asks to confirm."""
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    wrong = []
    for n, said in enumerate(CASES["not_holder_first"]):
        first = await _turn(orch, said.format(id=order), customer, f"h{n}")
        again = await _turn(orch, f"refund {order}", customer, f"h{n}")
        if _OFFERS.search(_said(first)) or again["status"] == "awaiting_confirmation":
            wrong.append(said)
    assert not wrong, wrong
    own = await _turn(orch, f"refund {order}", customer, "own")
    assert own["status"] == "awaiting_confirmation"
    assert store.tools(customer).refund_count(order) == 0
