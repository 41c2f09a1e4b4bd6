"""Sentence kinds the model may not say on its own (tester9 F3: the Air Canada invented policy,
the Chevrolet "legally binding" offer, the DPD swearing bot): a model sentence that states a
policy or a rule of money, guarantees, gives a legal status or a final deal, says the matter is
handled when nothing was written, insults or swears, runs down the shop or sends the customer
to a rival, tells a parcel's nearness, or (Chinese) a relative day, is dropped unless a tool
fact backs it (workflows.customer_service.claim_kinds via claims.check_sentence).

Written for the kind, not the tester's sentences (none of those is here): English, Simplified
and Traditional Chinese, in ``tests/data/cases/claims_kinds9.toml``. Table-driven, one test
per table (CI time).
"""

from __future__ import annotations

from typing import Any

from tests.unit.case_tables import cases
from workflows.customer_service.claims import TurnFacts, check_sentence


def _result(tool: str, **facts: str) -> dict[str, Any]:
    return {"tool": tool, "ok": True, "facts": {"order_id": "ORD-104233", **facts}}


_TRACK = dict(carrier="UPS", tracking_number="1Z0000000450", shipped_on="2026-11-30")
#: A delivered order looked up: nothing written this turn.
LOOK = TurnFacts.of(
    [_result("lookup_order", status="delivered", total="USD 41.50", items="1 x Desk lamp")]
)
#: A parcel in transit.
TRACK = TurnFacts.of([_result("track_shipment", shipment_status="in_transit", **_TRACK)])
#: A parcel out for delivery.
OUT = TurnFacts.of([_result("track_shipment", shipment_status="out_for_delivery", **_TRACK)])
#: A refund started this turn (a write).
REFUND = TurnFacts.of([_result("start_refund", refund_id="RF-000077", refund_amount="USD 41.50")])

#: The facts a case names.
FACTS = {"look": LOOK, "track": TRACK, "out": OUT, "refund": REFUND}


def _wrong(table: str, dropped: bool) -> list[tuple[str, str | None]]:
    """The cases of ``table`` (``tests/data/cases/claims_kinds9.toml``) the checker gets wrong:
    a ``dropped`` case kept or dropped for another reason, a kept case dropped."""
    wrong = []
    for facts, lang, sentence in cases("claims_kinds9.toml", table):
        reason = check_sentence(sentence, FACTS[facts], lang)
        right = bool(reason and reason.startswith("kind:")) if dropped else reason is None
        if not right:
            wrong.append((sentence, reason))
    return wrong


def test_each_kind_the_model_may_not_say_is_dropped() -> None:
    wrong = _wrong("dropped", dropped=True)
    assert not wrong, wrong


def test_courtesy_next_steps_and_backed_facts_are_kept() -> None:
    wrong = _wrong("kept", dropped=False)
    assert not wrong, wrong
