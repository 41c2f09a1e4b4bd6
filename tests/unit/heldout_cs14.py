"""cs14's held-out look (not collected by default: no ``test_`` file prefix). Run once, after
the fixes: ``pytest tests/unit/heldout_cs14.py -q -s -p no:cacheprovider``; prints, per kind,
the phrasings handled right out of all, and the misses. The set is
``tests/data/cases/cs14_heldout.toml`` (committed before the fixes)."""

from __future__ import annotations

import re
from typing import Any

from case_tables import tables
from handoff_races import refundable_orders
from test_cs_question_waits14 import _processing
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.asks import doubt, read_asks
from workflows.customer_service.plain_talk import unusual_reason
from workflows.customer_service.withdrawing import waiting_decision

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

SET = tables("cs14_heldout.toml")
_REFUND = {"tool": "start_refund", "arguments": {"order_id": "ORD-100200", "amount_cents": 9999}}


def _say(kind: str, total: int, wrong: list[Any]) -> None:
    print(f"\n[{kind}] {total - len(wrong)}/{total} right; misses: {wrong}")


def test_readers() -> None:
    for table, want in (("waiting_not_plain", "kept"), ("waiting_plain_withdraw", "withdrawn")):
        got = [(m, waiting_decision(m, _REFUND)) for m in SET[table]]
        _say(table, len(got), [(m, d) for m, d in got if d != want])
    own = [m.format(id="ORD-100076") for m in SET["own_plain"]]
    lost = [m for m in own if not read_asks(m).writes or doubt(m) or unusual_reason(m)]
    _say("own_plain", len(own), lost)
    others = [m.format(id="ORD-100076") for m in SET["not_own"]]
    _say("not_own", len(others), [m for m in others if read_asks(m).writes or not doubt(m)])


async def test_conversations(shop: Shop) -> None:
    store, orch = shop()
    usd = [
        (c, o)
        for c, o in refundable_orders(store, 60, 30)
        if store.tools(c).refundable(o)[1] == "USD"
    ]
    rows = [("amount_only", s) for s in SET["amount_only"]]
    rows += [("amount_not_ask", s) for s in SET["amount_not_ask"]]
    rows += [("shrug", s) for s in SET["shrug"]]
    wrong: dict[str, list[str]] = {k: [] for k in ("amount_only", "amount_not_ask", "shrug")}
    for n, (kind, said) in enumerate(rows):
        customer, order = usd[n % len(usd)]
        thread = f"h{n}"
        first = _said(await _turn(orch, f"refund {order}", customer, thread))
        before = store.tools(customer).refund_count(order)
        reply = await _turn(orch, said, customer, thread)
        text = _said(reply)
        amount = re.search(r"\d+", said)
        shown = f"{amount.group(0)}.00" in text if amount else False
        asked = reply["status"] == "awaiting_confirmation"
        if kind == "amount_only":
            ok = asked and shown
        elif kind == "amount_not_ask":
            ok = not shown
        else:
            ok = asked and first in text
        ok = ok and store.tools(customer).refund_count(order) == before
        if not ok:
            wrong[kind].append(said)
    for kind in wrong:
        _say(kind, len(SET[kind]), wrong[kind])
    processing, missed = _processing(store), []
    for n, (first, said) in enumerate(SET["other_after_no"]):
        customer, order = processing[n]
        question = _said(await _turn(orch, first.format(pid=order), customer, f"o{n}"))
        reply = await _turn(orch, said.format(pid=order), customer, f"o{n}")
        if reply["status"] != "awaiting_confirmation" or question in _said(reply):
            missed.append(said)
    _say("other_after_no", len(SET["other_after_no"]), missed)
