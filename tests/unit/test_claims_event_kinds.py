"""State claims phrased as events, not as state words: money sent back, a parcel handed to the
courier or leaving a depot, an arrival promised for a day, an order completed, lost or sent
back to the sender. Each is dropped when no tool result supports it, and kept when one does
(workflows.customer_service.claims, the ``state`` check). The sentences are written for this
test; none was used to write the patterns' first version."""

from __future__ import annotations

import pytest

from tests.unit.case_tables import cases
from workflows.customer_service.claims import TurnFacts, check_sentence


def _order(status: str, refunded: str = "0.00") -> TurnFacts:
    return TurnFacts.of(
        [
            {
                "tool": "lookup_order",
                "ok": True,
                "facts": {
                    "order_id": "ORD-104233",
                    "status": status,
                    "total": "USD 41.50",
                    "placed_on": "2026-11-02",
                    "refunded": refunded,
                },
            }
        ]
    )


PROCESSING = _order("processing")
SHIPPED = _order("shipped")
DELIVERED = _order("delivered")
REFUND_DONE = TurnFacts.of(
    [
        {
            "tool": "start_refund",
            "ok": True,
            "facts": {
                "order_id": "ORD-104233",
                "refund_id": "RF-000077",
                "refund_amount": "USD 41.50",
                "refund_status": "approved",
            },
        }
    ]
)

#: The facts a case of :data:`TRUE` names.
FACTS = {"shipped": SHIPPED, "delivered": DELIVERED, "refund_done": REFUND_DONE}

#: False while the order is still being prepared and nothing was refunded: ``(lang, sentence)``.
FALSE_WHILE_PROCESSING = cases("claims_event_kinds.toml", "false_while_processing")


@pytest.mark.parametrize(("lang", "sentence"), FALSE_WHILE_PROCESSING)
def test_an_event_no_tool_supports_is_dropped(lang: str, sentence: str) -> None:
    reason = check_sentence(sentence, PROCESSING, lang)  # type: ignore[arg-type]
    assert reason is not None and reason.startswith("state:"), (sentence, reason)


#: True for the facts named: each must be kept.
TRUE = [
    (lang, FACTS[facts], sentence)
    for lang, facts, sentence in cases("claims_event_kinds.toml", "true")
]


@pytest.mark.parametrize(("lang", "facts", "sentence"), TRUE)
def test_the_same_event_is_kept_when_a_tool_supports_it(
    lang: str, facts: TurnFacts, sentence: str
) -> None:
    assert check_sentence(sentence, facts, lang) is None  # type: ignore[arg-type]


#: Prose that states nothing about the order: it stays, whatever the facts.
NEUTRAL = cases("claims_event_kinds.toml", "neutral")


@pytest.mark.parametrize(("lang", "sentence"), NEUTRAL)
def test_prose_that_states_nothing_stays(lang: str, sentence: str) -> None:
    assert check_sentence(sentence, PROCESSING, lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("zh", "订单已发货，退款也已经办好了。"),
        ("zh", "包裹已经在路上，钱款已经安排好。"),
        ("en", "Your order has shipped, and your refund was arranged."),
    ],
)
def test_a_true_clause_does_not_carry_an_unverified_one(lang: str, sentence: str) -> None:
    reason = check_sentence(sentence, SHIPPED, lang)  # type: ignore[arg-type]
    assert reason is not None and reason.startswith("state:"), (sentence, reason)


@pytest.mark.parametrize(
    ("lang", "facts", "sentence"),
    [
        ("zh", PROCESSING, "您的订单已经在处理中。"),
        ("zh", SHIPPED, "您的订单已经发货了，正在运输中。"),
        ("en", SHIPPED, "Your order has been shipped and is on its way."),
    ],
)
def test_a_true_state_with_a_perfect_marker_stays(
    lang: str, facts: TurnFacts, sentence: str
) -> None:
    assert check_sentence(sentence, facts, lang) is None  # type: ignore[arg-type]
