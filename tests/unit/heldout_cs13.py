"""cs13's held-out look (not collected by default: no ``test_`` file prefix). Run once, after
the fixes: ``pytest tests/unit/heldout_cs13.py -q -s -p no:cacheprovider``; prints, per kind,
the phrasings handled right out of all, and the misses. The sets are
``tests/data/cases/cs13_heldout*.toml`` (committed before the fixes)."""

from __future__ import annotations

from typing import Any

from case_tables import tables
from handoff_races import refundable_orders
from test_claims_truth10 import misjudged
from test_cs_residue12 import misses
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.answers import is_yes
from workflows.customer_service.withdrawing import waiting_decision

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

_REFUND = {"tool": "start_refund", "arguments": {"order_id": "ORD-100200", "amount_cents": 9999}}


def _say(kind: str, total: int, wrong: list[Any]) -> None:
    print(f"\n[{kind}] {total - len(wrong)}/{total} right; misses: {wrong}")


def test_sentences_and_answers() -> None:
    one, three = tables("cs13_heldout.toml"), tables("cs13_heldout3.toml")
    for table, drop in (("garbled", "garbled"), ("garbled_kept", "garbled")):
        _say(table, len(one[table]), misjudged("cs13_heldout.toml", table, drop=drop))
    _say("grudging", len(one["grudging"]), [m for m in one["grudging"] if is_yes(m)])
    _say("plain_yes", len(one["plain_yes"]), [m for m in one["plain_yes"] if not is_yes(m)])
    for table, want in (("waiting_kept", "kept"), ("waiting_withdrawn", "withdrawn")):
        got = [(m, waiting_decision(m, _REFUND)) for m in three[table]]
        _say(table, len(got), [(m, d) for m, d in got if d != want])


async def test_workflow_kinds(shop: Shop) -> None:
    one, two = tables("cs13_heldout.toml"), tables("cs13_heldout2.toml")
    wrong = await misses(shop, {k: one[k] for k in ("refunded_in_full", "address", "sarcasm")})
    for kind in ("refunded_in_full", "address", "sarcasm"):
        _say(kind, len(one[kind]), wrong.get(kind, []))
    store, orch = shop()
    orders = [
        (c, o)
        for c, o in refundable_orders(store, 60, 30)
        if store.tools(c).refundable(o)[1] == "USD"
    ]
    part_wrong = []
    for n, said in enumerate(two["part_while_waiting"]):
        customer, order = orders[n]
        await _turn(orch, f"refund {order}", customer, f"p{n}")
        asked = await _turn(orch, said.format(id=order), customer, f"p{n}")
        amount = next(c for c in said if c.isdigit())
        if asked["status"] != "awaiting_confirmation" or f"{amount}.00" not in _said(asked):
            part_wrong.append(said)
    _say("part_while_waiting", len(two["part_while_waiting"]), part_wrong)
    holder_wrong = []
    for n, said in enumerate(two["not_holder_one"]):
        customer, order = orders[n % len(orders)]
        reply = await _turn(orch, said.format(id=order), customer, f"h{n}")
        if reply["status"] == "awaiting_confirmation":
            holder_wrong.append(said)
    _say("not_holder_one", len(two["not_holder_one"]), holder_wrong)
    first_wrong = []
    for n, said in enumerate(two["not_holder_first"]):
        customer, order = orders[n % len(orders)]
        await _turn(orch, said, customer, f"f{n}")
        again = await _turn(orch, f"refund {order}", customer, f"f{n}")
        if again["status"] == "awaiting_confirmation":
            first_wrong.append(said)
    _say("not_holder_first", len(two["not_holder_first"]), first_wrong)
