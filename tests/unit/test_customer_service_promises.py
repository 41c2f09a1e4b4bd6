"""Promises and refused asks in the customer-service reply (tester 2's findings on issue 44).

1. A model sentence promising a later action by us or a person ("a colleague will get back to
   you", 我们会尽快联系您) stands only with a handoff or ticket recorded this turn; "nothing
   more will be charged" only with a cancel or refund done; "you want X" only for what the
   customer asked for.
2. Code's answer to a refused ask ("no refund needed for ORD-100076", 别取消) acknowledges it,
   never offers the refused action, and never asks for an order id already given.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator import Orchestrator, Request
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.claims import ReplyChecker, TurnFacts, check_sentence
from workflows.customer_service.replying import intent_answer

sys.path.insert(0, str(Path(__file__).parent))
from case_tables import cases
from customer_service_double import ScriptedToolModel, customer_service_only, stream_turn

NONE = TurnFacts.of([])
HANDED = TurnFacts.of([], handoff=True)
TICKET = TurnFacts.of([{"tool": "open_ticket", "ok": True, "facts": {"ticket": "T-1"}}])
CANCELLED = TurnFacts.of(
    [{"tool": "cancel_order", "ok": True, "facts": {"order_id": "ORD-100001"}}]
)

EN_FOLLOW_UP = [
    "A colleague will look into it and get back to you.",
    "Our support team will review your refund and confirm by email.",
    "Someone from billing is going to call you.",  # "tomorrow": a date no record backs
    "We will look into your card.",
    "We'll reach out to you as soon as we know more.",
    "I have escalated this to a specialist.",
    "A manager shall contact you about the parcel.",
    "We are following up with the courier now.",
]
ZH_FOLLOW_UP = [
    "会有同事跟进并尽快联系您。",
    "我们会尽快核实您的退款。",
    "客服专员稍后会给您回电。",
    "同事会通过邮件确认退款结果。",
    "我们将在核实后通知您。",
    "稍后回复您处理结果。",
]


@pytest.mark.parametrize(
    ("sentence", "lang"), [(s, "en") for s in EN_FOLLOW_UP] + [(s, "zh") for s in ZH_FOLLOW_UP]
)
def test_a_follow_up_promise_needs_a_handoff_or_ticket(sentence: str, lang: str) -> None:
    reason = check_sentence(sentence, NONE, lang)  # type: ignore[arg-type]
    assert reason is not None and reason.startswith("promise:")
    assert check_sentence(sentence, HANDED, lang) is None  # type: ignore[arg-type]
    assert check_sentence(sentence, TICKET, lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sentence", "lang"),
    [
        ("Nothing more will be charged to your card.", "en"),
        ("You won't be charged again for this order.", "en"),
        ("No further payments will be taken.", "en"),
        ("您的卡不会再扣费。", "zh"),
        ("之后不再收费。", "zh"),
    ],
)
def test_nothing_more_charged_needs_a_write_done(sentence: str, lang: str) -> None:
    for facts in (NONE, HANDED):
        reason = check_sentence(sentence, facts, lang)  # type: ignore[arg-type]
        assert reason is not None and reason.startswith("promise:")
    assert check_sentence(sentence, CANCELLED, lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sentence", "lang"),
    [
        ("Let me know if you need anything else about this order.", "en"),
        ("If you would like a refund, reply here.", "en"),
        ("I can check your order.", "en"),
        ("Thank you for your patience.", "en"),
        ("如需退款，请在这里回复。", "zh"),
        ("感谢您的耐心等待。", "zh"),
        ("如果您想取消订单，请告诉我。", "zh"),
    ],
)
def test_offers_and_courtesies_are_no_promise(sentence: str, lang: str) -> None:
    assert check_sentence(sentence, NONE, lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sentence", "lang", "topic"),
    [
        ("I understand you want to cancel.", "en", "cancel"),
        ("You would like a refund for this order.", "en", "refund"),
        ("I see you'd like to change the delivery address.", "en", "change_address"),
        ("我明白您想取消订单。", "zh", "cancel"),
        ("了解，您希望退款。", "zh", "refund"),
    ],
)
def test_what_the_customer_wants_must_be_what_they_asked(
    sentence: str, lang: str, topic: str
) -> None:
    other = "refund" if topic != "refund" else "cancel"
    reason = check_sentence(sentence, TurnFacts.of([], wants={other}), lang)  # type: ignore[arg-type]
    assert reason is not None and reason.startswith("wants:")
    assert check_sentence(sentence, TurnFacts.of([], wants={topic}), lang) is None  # type: ignore[arg-type]


def test_you_do_not_want_needs_a_refusal() -> None:
    sentence = "I understand you don't want a refund."
    assert check_sentence(sentence, TurnFacts.of([], wants={"refund"}), "en") is not None
    assert check_sentence(sentence, TurnFacts.of([], unwanted={"refund"}), "en") is None


def test_the_stream_drops_the_promise_and_keeps_the_rest() -> None:
    checker = ReplyChecker(NONE, "en")
    text = "Thank you for your message. A colleague will get back to you by email. "
    assert checker.feed(text) + checker.flush() == ["Thank you for your message."]
    assert [d["reason"][:8] for d in checker.dropped] == ["promise:"]


OFFERS = ("I can help", "send the order number", "我可以帮您", "请发送订单号", "我可以为")


def _answer(message: str, intent: str, lang: str, order: str) -> str:
    """Code's answer to ``message`` with no tool run; it names ``order``."""
    answer = intent_answer([], None, intent, lang, message)  # type: ignore[arg-type]
    assert answer and order in answer
    return answer


@pytest.mark.parametrize(
    ("message", "intent", "lang", "order"),
    cases("customer_service8.toml", "refused_asks"),
)
def test_a_refused_ask_is_acknowledged_not_offered(
    message: str, intent: str, lang: str, order: str
) -> None:
    answer = _answer(message, intent, lang, order)
    assert not any(offer in answer for offer in OFFERS)
    assert answer.startswith("好的" if lang == "zh" else "Understood")


@pytest.mark.parametrize("case", cases("customer_service8.toml", "ids_given"))
def test_an_order_id_already_given_is_not_asked_for(case: tuple[str, str, str, str]) -> None:
    answer = _answer(*case)
    assert "order number" not in answer and "订单号。" not in answer
    if case[1] == "cancel":  # not asked for: never offered
        assert "cancel" not in answer and "取消" not in answer


@pytest.mark.parametrize(
    ("text", "model_says", "ack"),
    [
        ("No refund needed for ORD-100076", "A colleague will look into it and get back to you.",
         "Understood: no refund for ORD-100076."),
        ("Please don't cancel ORD-100321.", "I understand you want to cancel. We will email you.",
         "Understood: ORD-100321 stays as it is, nothing is cancelled."),
        ("别取消 ORD-109846", "会有同事跟进并尽快联系您。", "好的，ORD-109846不取消。"),
    ],
)  # fmt: skip
async def test_the_workflow_reply_keeps_no_promise_and_no_offer(
    text: str, model_says: str, ack: str, telemetry
) -> None:
    model = ScriptedToolModel(replies=[model_says])
    orch = customer_service_only(model, telemetry)
    events, done = await stream_turn(orch, text, thread=None)
    assert done.status == "succeeded"
    reply = done.result["reply"]["text"]
    assert reply.startswith(ack)
    assert model_says not in reply
    assert not any(offer in reply for offer in OFFERS)
    dropped = [e.reason for e in events if e.kind == "sentence_dropped"]
    assert dropped and all(r.startswith(("promise:", "wants:")) for r in dropped)


async def test_a_promise_stands_once_a_handoff_is_recorded(orders_url, telemetry) -> None:
    from sqlalchemy import select

    from workflows.customer_service.store import Order, OrderStore, RefundPolicy

    store = OrderStore(orders_url(40, 5), policy=RefundPolicy(auto_limit_cents=20_000))
    promise = "A colleague will follow up with you by email."
    orch = Orchestrator(
        ScriptedToolModel(replies=[promise]), telemetry, [CustomerServiceWorkflow(store)]
    )
    with store.sessions() as session:
        orders = session.scalars(select(Order).where(Order.status == "delivered")).all()
    over = [
        o
        for o in orders
        if store.tools(o.customer_id)
        .run("check_refund_eligibility", {"order_id": o.id})
        .facts.get("needs_approval")
        == "yes"
    ]
    if not over:
        pytest.skip("no refund over the automatic limit in the seed")
    order = over[0]
    for text in (f"Please refund order {order.id}", "yes"):
        request = Request(text=text, thread_id="h", customer_id=order.customer_id)
        events = [e async for e in orch.stream(request)]
    assert events[-1].status == "needs_human"
    assert [h["thread_id"] for h in store.handoffs()] == ["h"]  # the row that backs it
    outcome = await orch.resume("h", approve=False, note="outside policy")
    assert promise in outcome.result["reply"]["text"]


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("I don't know the order number but I need a refund", "en"),
        ("Not sure of the order id, however I do want a refund", "en"),
        ("我不知道订单号，但是我要退款", "zh"),
        ("订单号找不到了，不过我想退款", "zh"),
    ],
)
def test_a_negation_in_another_clause_is_no_refusal(message: str, lang: str) -> None:
    """The customer asks for the refund in a clause of its own: the reply never says "no
    refund" (nothing is written on such a message either way)."""
    answer = intent_answer([], None, "refund", lang, message)  # type: ignore[arg-type]
    assert answer
    assert not answer.startswith("好的" if lang == "zh" else "Understood")
    assert "退款" in answer if lang == "zh" else "refund" in answer
