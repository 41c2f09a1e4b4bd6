"""An absurd refund amount is read or asked back, never an exception (ui11; tester11 kind A).

"refund $999999999999999999999999999999 on ORD-…" (30 nines) raised ``decimal.InvalidOperation``
in ``amounts.refund_ask`` (the exact-cents check overflowed the default 28-digit precision), so
the turn failed with "internal error" and ``orchestrator chat`` printed a traceback. Now an
amount of up to ``MAX_DIGITS`` digits is read exactly (and refused as more than is left), and
more digits, exponent forms ("1e30", "10^30") and 亿 are asked back. Cases in
``tests/data/cases/cs_amounts11.toml``.
"""

from __future__ import annotations

import random

from case_tables import tables

import tests.unit.test_customer_service_safety as safety
from orchestrator.core.dispatcher import Orchestrator
from tests.unit.test_customer_service_safety import _find, _say, _writes
from workflows.customer_service.amounts import refund_ask
from workflows.customer_service.store import OrderStore

orch, store = safety.orch, safety.store  # the fixtures
CASES = tables("cs_amounts11.toml")


def test_many_digits_are_read_exactly_and_absurd_forms_are_asked_back() -> None:
    read = {m: refund_ask(m.format(id="ORD-100076")) for m, _ in CASES["huge"]}
    wrong = [(m, a) for (m, cents), a in zip(CASES["huge"], read.values(), strict=True)
             if a is None or a.unclear or a.cents != int(cents)]  # fmt: skip
    assert not wrong, wrong
    asks = {m: refund_ask(m.format(id="ORD-100076")) for m in CASES["absurd"]}
    offered = [(m, a) for m, a in asks.items() if a is None or not a.unclear]
    assert not offered, (f"{len(offered)} of {len(asks)} absurd amounts read", offered)


def test_no_amount_made_of_money_pieces_raises() -> None:
    """A seeded fuzz (4,000 strings of 1 to 60 pieces: digits, Chinese numerals, signs,
    separators, exponents): ``refund_ask`` answers each, never raises (before: 万 twice raised
    KeyError, 29+ digits InvalidOperation)."""
    rng, pieces, raised = random.Random(11), CASES["pieces"], []
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 60)))
        try:
            refund_ask(text)
        except Exception as exc:  # any exception is the failure being tested
            raised.append((text, repr(exc)))
    assert not raised, raised[:5]


async def test_a_huge_amount_is_refused_in_one_line_and_yes_writes_nothing(
    store: OrderStore, orch: Orchestrator
) -> None:
    customer, order = _find(store, want="refundable")
    _, currency, _ = store.tools(customer).refundable(order)
    before = _writes(store)
    asked = await _say(orch, f"refund {currency} {'9' * 30} on {order}", customer)
    assert asked.result["status"] != "awaiting_confirmation"
    assert "left to refund" in asked.result["reply"]["text"]
    await _say(orch, "yes", customer)
    assert _writes(store) == before
