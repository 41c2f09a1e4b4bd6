"""State claims phrased as events, not as state words: money sent back, a parcel handed to the
courier or leaving a depot, an arrival promised for a day, an order completed, lost or sent
back to the sender. Each is dropped when no tool result supports it, and kept when one does
(workflows.customer_service.claims, the ``state`` check). The sentences are written for this
test; none was used to write the patterns' first version."""

from __future__ import annotations

import pytest

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

#: False while the order is still being prepared and nothing was refunded.
FALSE_WHILE_PROCESSING = {
    "en": [
        "We've sent your money back to your card.",
        "The money has been credited to your account.",
        "Your refund went through this morning.",
        "You will get your money back within a few days.",
        "Your package has been handed over to the carrier.",
        "It left the depot this morning.",
        "The courier collected it an hour ago.",
        "Your parcel was mailed yesterday.",
        "Expect it at your door tomorrow.",
        "It should reach you by Friday.",
        "Your order has been fulfilled.",
        "Your shipment went missing.",
        "The package was sent back to us.",
        "The parcel was returned to the sender.",
        "Your order has been closed.",
        "Your items were packed and labelled yesterday.",
    ],
    "zh": [
        "我们已经把钱退到您的银行卡了。",
        "退款已原路返回。",
        "款项已经打到您的账户。",
        "已给您退了。",
        "您的包裹已被快递员取走。",
        "商品已经出库。",
        "您的货明天就能到。",
        "包裹很快就会送到您手上。",
        "订单已经完结。",
        "交易已完成。",
        "包裹已经丢了。",
        "您的包裹已退回仓库。",
        "快递小哥已经取件。",
        "您的訂單已經寄送。",
        "貨品已送出。",
        "订单已经处理好了。",
    ],
}


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [(lang, s) for lang, group in FALSE_WHILE_PROCESSING.items() for s in group],
)
def test_an_event_no_tool_supports_is_dropped(lang: str, sentence: str) -> None:
    reason = check_sentence(sentence, PROCESSING, lang)  # type: ignore[arg-type]
    assert reason is not None and reason.startswith("state:"), (sentence, reason)


#: True for the facts named: each must be kept.
TRUE = [
    ("en", SHIPPED, "Your package has been handed over to the carrier."),
    ("en", SHIPPED, "It left our warehouse and is on its way."),
    ("en", SHIPPED, "It should reach you soon."),
    ("en", DELIVERED, "Your order has been fulfilled."),
    ("en", REFUND_DONE, "The money has been credited back to your card."),
    ("en", REFUND_DONE, "You will get your money back on the original payment method."),
    ("zh", SHIPPED, "您的包裹已被快递员取走。"),
    ("zh", SHIPPED, "商品已经出库，正在运输中。"),
    ("zh", SHIPPED, "包裹很快就会送到您手上。"),
    ("zh", DELIVERED, "交易已完成。"),
    ("zh", REFUND_DONE, "退款已原路返回。"),
    ("zh", REFUND_DONE, "我们已经把钱退到您的原支付账户。"),
]


@pytest.mark.parametrize(("lang", "facts", "sentence"), TRUE)
def test_the_same_event_is_kept_when_a_tool_supports_it(
    lang: str, facts: TurnFacts, sentence: str
) -> None:
    assert check_sentence(sentence, facts, lang) is None  # type: ignore[arg-type]


#: Prose that states nothing about the order: it stays, whatever the facts.
NEUTRAL = [
    ("en", "Thank you for your patience."),
    ("en", "I'm sorry for the trouble this has caused."),
    ("en", "Let me know if there is anything else you need."),
    ("en", "I understand how frustrating a late parcel is."),
    ("zh", "感谢您的耐心等待。"),
    ("zh", "给您带来不便，非常抱歉。"),
    ("zh", "如有其他问题，请随时告诉我。"),
    ("zh", "我理解包裹迟迟未到让人着急。"),
]


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
