"""The claim checker (issue 44 items 1, 2, 6): every failing kind, in English and Chinese, with
sentences written for these tests (the truth benchmark's inputs are kept out of them); a
hypothesis property that nothing it lets through contradicts a generated fact set; streaming
one whole sentence at a time; and code's templates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workflows.customer_service.claims import (
    ReplyChecker,
    TurnFacts,
    check_sentence,
    code_reply,
    cut_reply,
    message_topic,
    outcome_key,
    reply_intent,
)
from workflows.customer_service.language import reply_language

DELIVERED = [
    {
        "tool": "track_shipment",
        "ok": True,
        "facts": {
            "order_id": "ORD-314159",
            "carrier": "DHL",
            "tracking_number": "TRK0003141599",
            "shipment_status": "delivered",
            "shipped_on": "2026-09-01",
            "delivered_on": "2026-09-05",
        },
    }
]
PROCESSING_ZH = [
    {
        "tool": "lookup_order",
        "ok": True,
        "facts": {
            "order_id": "ORD-271828",
            "status": "processing",
            "total": "CNY 75.50",
            "placed_on": "2026-12-01",
            "refunded": "CNY 0.00",
        },
    }
]
REFUSED_CANCEL = [
    {
        "tool": "cancel_order",
        "ok": False,
        "error_code": "policy",
        "facts": {"order_id": "ORD-161803", "reason": "order ORD-161803 is shipped; only "},
    }
]
EN = TurnFacts.of(DELIVERED)
ZH = TurnFacts.of(PROCESSING_ZH)


FACTS = {"en": EN, "zh": ZH}

#: Sentences the tool results (DELIVERED in English, PROCESSING_ZH in Chinese) contradict.
CONTRADICTED = {
    "en": [
        "Your parcel is on its way to you.",
        "It has not shipped yet, sorry.",
        "The order hasn't been delivered.",
        "Your order was cancelled at your request.",
        "We refunded the full amount.",
        "The shipment is in transit.",
        "Your order is still being processed.",
    ],
    "zh": [
        "您的订单已发货。",
        "包裹已经送达，请查收。",
        "您的包裹正在配送中。",
        "订单已取消。",
        "已为您退款，请注意查收。",
        "您的訂單已發貨。",  # Traditional Chinese is read too
    ],
}
#: Sentences the same tool results back.
TRUE = {
    "en": [
        "The parcel was delivered by DHL.",
        "Your parcel has not been cancelled.",
        "It shipped on 2026-09-01 and arrived on 2026-09-05.",
        "Tracking number TRK0003141599 shows it was delivered.",
    ],
    "zh": [
        "您的订单正在处理中，还没有发货。",
        "订单金额为 CNY 75.50。",
        "如有其他问题，欢迎随时联系。",
    ],
}


def _each(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    """``(sentence, lang)`` of every sentence of ``table``."""
    return [(sentence, lang) for lang, sentences in table.items() for sentence in sentences]


@pytest.mark.parametrize(("sentence", "lang"), _each(CONTRADICTED))
def test_a_state_the_tools_contradict_is_dropped(sentence: str, lang: str) -> None:
    assert (check_sentence(sentence, FACTS[lang], lang) or "").startswith("state:")  # type: ignore[arg-type]


@pytest.mark.parametrize(("sentence", "lang"), _each(TRUE))
def test_a_true_sentence_passes(sentence: str, lang: str) -> None:
    assert check_sentence(sentence, FACTS[lang], lang) is None  # type: ignore[arg-type]


def test_a_state_nothing_supports_is_dropped() -> None:
    unknown = TurnFacts.of([])
    assert check_sentence("Your order has shipped.", unknown, "en")
    assert check_sentence("It has not shipped yet.", unknown, "en")  # nothing known either way
    assert check_sentence("您的订单未发货。", unknown, "zh")


def test_a_refusal_allows_declined_and_the_status_in_its_reason() -> None:
    facts = TurnFacts.of(REFUSED_CANCEL)
    assert check_sentence("Sorry, this order cannot be cancelled now.", facts, "en") is None
    assert check_sentence("The order is already on its way.", facts, "en") is None
    assert check_sentence("Your order has been cancelled.", facts, "en")
    assert check_sentence("It has not shipped yet.", facts, "en")


def test_a_persons_decision_is_a_fact() -> None:
    rejected = TurnFacts.of([], "rejected")
    assert check_sentence("I am sorry, the request was declined.", rejected, "en") is None
    assert check_sentence("Your refund is approved.", rejected, "en")
    assert check_sentence("很抱歉，您的申请被拒绝了。", rejected, "zh") is None
    assert check_sentence("您的申请已批准。", rejected, "zh")


def _why_dropped(sentence: str, lang: str) -> str:
    """Why the checker drops ``sentence`` (``"figure: ..."``, ``"broken: ..."``,
    ``"language: ..."``) with the facts of ``lang``; ``""`` when it keeps it."""
    facts = EN if lang == "en" else ZH
    return check_sentence(sentence, facts, lang) or ""  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sentence", "lang"),
    [
        ("Your parcel ORD-999999 was delivered.", "en"),  # an id
        ("The parcel was delivered and cost USD 12.00.", "en"),  # an amount
        ("It was delivered on 2026-09-07.", "en"),  # a date
        ("Use tracking number TRK0000000001 to follow it.", "en"),  # a tracking number
        ("You will hear from us within three days.", "en"),  # a count in words
        ("The refund takes 5 days.", "en"),
        ("订单金额为 CNY 57.50。", "zh"),
        ("我们会在三天内联系您。", "zh"),
        ("您的订单 ORD-100001 正在处理中。", "zh"),
        ("预计１２月５日发货。", "zh"),  # full-width digits
    ],
)
def test_a_figure_no_tool_returned_drops_the_whole_sentence(sentence: str, lang: str) -> None:
    assert _why_dropped(sentence, lang).startswith("figure:")


#: Sentences of a broken form (JSON, markup, a hole, a fragment...), in their language.
BROKEN = [
    ("Your order_id is ready for you.", "en"),  # a field name
    ("We shipped it to {shipping_address} already.", "en"),  # a placeholder left
    ('{"status": "delivered"}', "en"),  # JSON
    ('It says "delivered on time.', "en"),  # an unbalanced quote
    ("See **your order** for details.", "en"),  # markup
    ("Please visit https://example.test for help.", "en"),  # a link
    ("The tracking number is  and you can check it.", "en"),  # a hole
    ("Thank you for waiting for us, thank you for waiting for us.", "en"),  # repeated
    ("and you can look at the other one.", "en"),  # a fragment
    ("We will let you know when", "en"),  # unfinished
    ("订单 order_id 正在处理中。", "zh"),
    ("您的订单「正在处理中。", "zh"),
    ("感谢您的耐心等待感谢您的耐心等待。", "zh"),
    ("，我们会尽快处理。", "zh"),
    ("<b>您好</b>，我们会尽快处理。", "zh"),
]
#: Sentences in another language than the customer's.
FOREIGN = [
    ("您的包裹已经送达。", "en"),
    ("Your order is being processed now.", "zh"),
    ("Su paquete ya fue entregado ayer por la tarde.", "en"),
    ("Ваша посылка уже доставлена.", "en"),
    ("ご注文は処理中です。", "zh"),
]


@pytest.mark.parametrize(
    ("sentence", "lang", "why"),
    [(*case, "broken:") for case in BROKEN] + [(*case, "language:") for case in FOREIGN],
)
def test_a_broken_or_foreign_sentence_is_dropped(sentence: str, lang: str, why: str) -> None:
    assert _why_dropped(sentence, lang).startswith(why)


def test_an_overlong_sentence_is_dropped_whole() -> None:
    assert check_sentence("We " + "really " * 60 + "care.", EN, "en")


def test_the_stream_releases_whole_checked_sentences_and_never_trims_one() -> None:
    checker = ReplyChecker(EN, "en", {"tracking_number": "TRK0003141599"})
    pieces = ["It was deli", "vered by DHL.", " Track it with {tracking", "_number}. It is on",
              " its way now. Thanks for your patience", "."]  # fmt: skip
    released = [checker.feed(p) for p in pieces] + [checker.flush()]
    assert released == [
        [],
        [],
        ["It was delivered by DHL."],
        ["Track it with TRK0003141599."],
        [],
        [],
        ["Thanks for your patience."],
    ]
    assert [d["reason"].split(":")[0] for d in checker.dropped] == ["state"]
    assert checker.dropped[0]["sentence"] == "It is on its way now."


def test_a_decimal_point_does_not_end_a_sentence() -> None:
    facts = TurnFacts.of(PROCESSING_ZH)
    checker = ReplyChecker(facts, "en")
    assert checker.feed("The total is CNY 75.50 for this order. ") == [
        "The total is CNY 75.50 for this order."
    ]


def test_chinese_sentences_are_released_at_their_own_stops() -> None:
    checker = ReplyChecker(ZH, "zh")
    assert checker.feed("您的订单正在处理中。感谢您的耐") == ["您的订单正在处理中。"]
    assert checker.feed("心等待！") == ["感谢您的耐心等待！"]


def test_a_repeated_sentence_and_too_many_sentences_are_dropped() -> None:
    checker = ReplyChecker(EN, "en")
    text = "Thanks for asking. Thanks for asking. We are glad to help. Have a nice day. Bye now."
    assert checker.feed(text) + checker.flush() == [
        "Thanks for asking.",
        "We are glad to help.",
        "Have a nice day.",
    ]
    assert [d["reason"] for d in checker.dropped] == [
        "broken: a repeated sentence",
        "broken: over 3 sentences",
    ]


def test_a_no_tool_reply_must_answer_the_intent() -> None:
    fee = ReplyChecker(TurnFacts.of([]), "en", intent="billing", require_topic=True)
    out = fee.feed("Thank you for your review! We are here to help. ")
    out += fee.feed("Please send the date of the charge. ") + fee.flush()
    assert out == ["We are here to help.", "Please send the date of the charge."]
    assert fee.dropped[0]["reason"].startswith("intent:")
    repay = ReplyChecker(TurnFacts.of([]), "zh", intent="payment", require_topic=True)
    assert repay.feed("很抱歉给您带来不便。") == []  # held: not yet on the topic
    assert repay.flush() == []
    assert repay.dropped[0]["reason"].startswith("intent:")


def test_the_reply_intent_comes_from_code_before_the_triage() -> None:
    assert message_topic("Why is there a fee on my bill?") == "billing"
    assert message_topic("我想提前还款") == "payment"
    assert message_topic("Can I speak with a human?") == "human"
    assert reply_intent(None, "Why is there a fee on my bill?", "product_feedback") == "billing"
    assert reply_intent("track", "Why is there a fee?", "other") == "track"
    assert reply_intent(None, "hello there", "delivery") == "track"
    assert reply_intent(None, "hello there", "other") is None


def test_the_customers_language() -> None:
    assert reply_language("Where is ORD-100001?", "zh_CN") == "en"
    assert reply_language("我的订单 ORD-100001 到哪了", "en_US") == "zh"
    assert reply_language("👍👍", "zh_CN") == "zh"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("outcome", "intent"),
    [
        *((f"tool:{t}", None) for t in ("lookup_order", "track_shipment", "start_refund")),
        *((f"tool:{t}", None) for t in ("check_refund_eligibility", "cancel_order")),
        *((f"tool:{t}", None) for t in ("change_address", "open_ticket")),
        ("refused", None),
        ("not_found", None),
        ("decided", None),
        *((None, i) for i in ("billing", "payment", "account_access", "card", "refund")),
        *((None, i) for i in ("track", "status", "cancel", "change_address", "human")),
        *((None, i) for i in ("complaint", "product_feedback", None)),
    ],
)
def test_every_template_is_whole_and_in_the_language(
    outcome: str | None, intent: str | None, lang: str
) -> None:
    text = code_reply(outcome, intent, lang)  # type: ignore[arg-type]
    assert text and text[-1] in ".!?。！？"
    assert (reply_language(text) == "zh") == (lang == "zh")
    if intent not in (None, "human"):  # a no-tool template answers its own intent
        checker = ReplyChecker(TurnFacts.of([]), lang, intent=intent, require_topic=True)  # type: ignore[arg-type]
        assert checker.feed(text + " ") + checker.flush()
    assert cut_reply(lang) != text  # type: ignore[arg-type]


def test_the_outcome_of_a_turn() -> None:
    assert outcome_key(DELIVERED, False) == "tool:track_shipment"
    assert outcome_key(REFUSED_CANCEL, False) == "refused"
    assert outcome_key([{"tool": "lookup_order", "ok": False, "error_code": "not_found"}], False)
    assert outcome_key([], True) == "decided" and outcome_key([], False) is None


# --- the property -----------------------------------------------------------------------------

#: The states each order status makes true, written out here independently of the checker.
TRUE_STATES = {
    "processing": {"processing", "not_shipped", "not_delivered", "not_cancelled"},
    "shipped": {"shipped", "in_transit", "not_delivered", "not_cancelled"},
    "delivered": {"shipped", "delivered", "not_cancelled"},
    "cancelled": {"cancelled", "not_shipped", "not_delivered"},
}
EN_CLAIM = {
    "shipped": "Your order {id} has shipped.",
    "not_shipped": "Your order {id} has not shipped yet.",
    "delivered": "Your order {id} was delivered.",
    "not_delivered": "Your order {id} has not been delivered yet.",
    "in_transit": "Your order {id} is on its way.",
    "processing": "Your order {id} is being prepared.",
    "cancelled": "Your order {id} was cancelled.",
    "not_cancelled": "Your order {id} was not cancelled.",
}
ZH_CLAIM = {
    "shipped": "您的订单 {id} 已发货。",
    "not_shipped": "您的订单 {id} 尚未发货。",
    "delivered": "您的订单 {id} 已送达。",
    "not_delivered": "您的订单 {id} 还没有送达。",
    "in_transit": "您的订单 {id} 正在运输中。",
    "processing": "您的订单 {id} 正在处理中。",
    "cancelled": "您的订单 {id} 已取消。",
    "not_cancelled": "您的订单 {id} 未取消。",
}


@settings(max_examples=300, deadline=None)
@given(
    status=st.sampled_from(sorted(TRUE_STATES)),
    claim=st.sampled_from(sorted(EN_CLAIM)),
    number=st.integers(100000, 999999),
    other=st.integers(100000, 999999),
    lang=st.sampled_from(["en", "zh"]),
    named=st.booleans(),
)
def test_nothing_let_through_contradicts_a_generated_fact_set(
    status: str, claim: str, number: int, other: int, lang: str, named: bool
) -> None:
    order = f"ORD-{number}"
    facts = TurnFacts.of(
        [
            {
                "tool": "lookup_order",
                "ok": True,
                "facts": {"order_id": order, "status": status, "total": "USD 10.00"},
            }
        ]
    )
    said = order if named else f"ORD-{other}"
    sentence = (EN_CLAIM if lang == "en" else ZH_CLAIM)[claim].format(id=said)
    if check_sentence(sentence, facts, lang) is None:  # type: ignore[arg-type]
        assert said == order  # no id it was not given
        assert claim in TRUE_STATES[status]  # no state the facts contradict


@pytest.mark.parametrize(
    "sentence",
    [
        "Votre commande est en route et arrivera bientôt.",
        "Ihre Bestellung ist unterwegs und kommt bald an.",
        "Il suo ordine è stato spedito ieri con il corriere.",
        "O seu pedido foi enviado e não pode ser alterado.",
    ],
)
def test_another_latin_script_language_is_not_english(sentence: str) -> None:
    assert (check_sentence(sentence, EN, "en") or "").startswith("language:")


CANCELLED = TurnFacts.of(
    [
        {
            "tool": "cancel_order",
            "ok": True,
            "facts": {"order_id": "ORD-141421", "status": "cancelled"},
        }
    ]
)


@pytest.mark.parametrize(
    ("sentence", "lang"),
    [
        ("Sorry, we were unable to cancel it.", "en"),
        ("I couldn't process that change for you.", "en"),
        ("Unfortunately the request did not go through and we failed to cancel it.", "en"),
        ("很抱歉，未能为您取消订单。", "zh"),
        ("我们没有办法处理这个请求。", "zh"),
    ],
)
def test_saying_an_action_failed_after_it_succeeded_is_dropped(sentence: str, lang: str) -> None:
    assert (check_sentence(sentence, CANCELLED, lang) or "").startswith("state:")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sentence", "lang"),
    [
        ("I am sorry, but I cannot help with that order.", "en"),
        ("We are unable to do this for you.", "en"),
        ("I'm not able to go ahead with it.", "en"),
        ("很抱歉，我们没办法帮您处理。", "zh"),
    ],
)
def test_an_agent_refusal_is_a_declined_claim(sentence: str, lang: str) -> None:
    waiting = TurnFacts.of(
        [{"tool": "start_refund", "ok": False, "error_code": "needs_approval",
          "facts": {"order_id": "ORD-173205"}}]
    )  # fmt: skip
    assert (check_sentence(sentence, waiting, lang) or "").startswith("state:")  # type: ignore[arg-type]
    refused = TurnFacts.of(REFUSED_CANCEL)
    assert check_sentence(sentence, refused, lang) is None  # type: ignore[arg-type]


def test_the_customers_own_inability_is_not_a_refusal() -> None:
    assert check_sentence("I am sorry you cannot sign in right now.", EN, "en") is None
