"""A model sentence that doubts an order a tool found (tester7 F12, F14): "Could you check the
order number?", "I couldn't find that order", 请核对订单号, 查不到该订单, or that says the order
cannot be handled here, is dropped when a tool found the order this turn (a look-up, a tracking
answer of an order not shipped yet, a write, a policy refusal of it); it stays allowed when the
tool answered ``not_found``. A request for a fact a tool result already holds (the tracking
number, the new address) is dropped too. Sentences written for these tests (English, Simplified
and Traditional Chinese); the tester's recorded sentences are kept out of them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.claims import (
    ReplyChecker,
    TurnFacts,
    check_sentence,
    code_reply,
    outcome_key,
)
from workflows.customer_service.store import Order, OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel, stream_turn

ORDER = "ORD-424242"
OTHER = "ORD-999999"


def _result(tool: str, ok: bool = True, code: str | None = None, **facts: str) -> dict[str, Any]:
    return {"tool": tool, "ok": ok, "error_code": code, "facts": {"order_id": ORDER, **facts}}


LOOKED = _result("lookup_order", status="shipped", total="USD 12.00", placed_on="2026-11-02")
NOT_SHIPPED = _result("track_shipment", False, "policy", status="processing")
TRACKED = _result(
    "track_shipment", carrier="UPS", tracking_number="1Z77", shipment_status="in_transit"
)
MOVED = _result("change_address", shipping_address="7 Rose Lane, York YO1 2AB")
REFUNDED = _result("start_refund", refund_id="RF-000009", refund_amount="USD 12.00")
CANCEL_REFUSED = _result("cancel_order", False, "policy", reason="order is shipped; only ...")
MISSING = {
    "tool": "lookup_order",
    "ok": False,
    "error_code": "not_found",
    "facts": {"order_id": OTHER},
}
FOUND = {
    "looked up": [LOOKED],
    "not shipped yet": [NOT_SHIPPED],
    "tracked": [TRACKED],
    "address changed": [MOVED],
    "refund started": [REFUNDED],
    "cancel refused": [CANCEL_REFUSED],
}

DOUBT_EN = [
    "Could you check the order number?",
    "Can you double-check your order ID for me?",
    "Please verify the order number you sent.",
    "Would you mind re-sending the order reference?",
    "Could you please confirm that your order number is correct?",
    "What is your order number?",
    "Please send me the order number so I can look into it.",
    "Kindly make sure the order number is right.",
    "I wasn't able to locate that order.",
    "Unfortunately, we were unable to find your order.",
    "There is no order with that number on your account.",
    "That order number doesn't seem to exist in our system.",
    "It seems the order number may be incorrect.",
    f"Is {ORDER} the right order number?",
    f"{ORDER} could not be found.",
]
DOUBT_ZH = [
    "请核对一下订单号。",
    "麻烦您再确认一下订单号是否正确。",
    "抱歉，我没有找到该订单。",
    "系统中查不到您的订单。",
    "您提供的订单号有误，请重新发送。",
    "您的订单号是多少？",
    "请提供您的订单号，以便我为您查询。",
    "請核對您的訂單號碼。",
    "抱歉，查無此訂單。",
    "這個訂單號碼似乎不正確。",
    "能否再提供一次訂單編號？",
]
#: Saying the order cannot be handled here, where the tools refused nothing.
CANNOT = [
    ("en", "Sorry, this order can't be handled here."),
    ("en", "Sorry, there is nothing more I can do for this order."),
    ("zh", "很抱歉，这个订单我在这里无法进一步处理。"),
    ("zh", "這個訂單我這邊無法再處理。"),
]
#: Kept whatever was found: thanks, offers, another order, a true state.
HARMLESS = [
    ("en", "Thank you for your patience."),
    ("en", "Is there another order you would like me to check?"),
    ("en", "Please keep your order number for reference."),
    ("en", "Would you like me to check the delivery address?"),
    ("zh", "感谢您的耐心等待。"),
    ("zh", "如有其他订单需要查询，请发送其订单号。"),
    ("zh", "请问还有什么可以帮您？"),
    ("zh", "謝謝您的耐心。"),
]


@pytest.mark.parametrize("kind", sorted(FOUND))
@pytest.mark.parametrize(
    ("lang", "sentence"), [("en", s) for s in DOUBT_EN] + [("zh", s) for s in DOUBT_ZH]
)
def test_doubt_of_a_found_order_is_dropped(kind: str, lang: str, sentence: str) -> None:
    reason = check_sentence(sentence, TurnFacts.of(FOUND[kind]), lang)  # type: ignore[arg-type]
    assert reason is not None


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [("en", s) for s in DOUBT_EN if ORDER not in s] + [("zh", s) for s in DOUBT_ZH],
)
def test_doubt_is_not_dropped_as_such_after_not_found(lang: str, sentence: str) -> None:
    """After ``not_found`` the doubt is true: no ``found:`` reason (another check may still
    drop a sentence, e.g. an unbacked past event)."""
    reason = check_sentence(sentence, TurnFacts.of([MISSING]), lang)  # type: ignore[arg-type]
    assert reason is None or not reason.startswith("found:")


def test_the_doubt_follows_the_order_it_names() -> None:
    facts = TurnFacts.of([LOOKED, MISSING])
    assert check_sentence(f"{OTHER} does not seem to exist.", facts, "en") is None
    assert check_sentence(f"{ORDER} does not seem to exist.", facts, "en") is not None
    # no id named, one order found and one not: the doubt may be about the missing one
    assert check_sentence("Could you check the order number?", facts, "en") is None


@pytest.mark.parametrize(("lang", "sentence"), CANNOT)
def test_cannot_handle_is_dropped_when_nothing_was_refused(lang: str, sentence: str) -> None:
    for results in ([LOOKED], [NOT_SHIPPED], [MOVED]):
        assert check_sentence(sentence, TurnFacts.of(results), lang) is not None  # type: ignore[arg-type]
    # after a real refusal it may stand
    assert check_sentence(sentence, TurnFacts.of([CANCEL_REFUSED]), lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(("lang", "sentence"), HARMLESS)
@pytest.mark.parametrize("kind", sorted(FOUND))
def test_harmless_sentences_stay(kind: str, lang: str, sentence: str) -> None:
    assert check_sentence(sentence, TurnFacts.of(FOUND[kind]), lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("results", "lang", "sentence"),
    [
        ([TRACKED], "en", "Could you send me the tracking number?"),
        ([TRACKED], "zh", "请提供运单号。"),
        ([MOVED], "en", "Please tell me the new delivery address."),
        ([MOVED], "zh", "请告诉我新的收货地址。"),
    ],
)
def test_asking_for_a_fact_a_tool_holds_is_dropped(results, lang: str, sentence: str) -> None:
    assert check_sentence(sentence, TurnFacts.of(results), lang) is not None
    # asked where no tool holds it (only a look-up ran), the request may stand
    assert check_sentence(sentence, TurnFacts.of([MISSING]), lang) is None


def test_streamed_prose_keeps_the_rest() -> None:
    checker = ReplyChecker(TurnFacts.of([NOT_SHIPPED]), "en")
    shown = checker.feed("Thank you for your patience. Could you check the order ")
    shown += checker.feed("number?") + checker.flush()
    assert shown == ["Thank you for your patience."]
    assert checker.dropped[0]["reason"].startswith("found:")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_order_not_shipped_yet_is_answered_not_refused(lang: str) -> None:
    outcome = outcome_key([NOT_SHIPPED], False)
    assert outcome != "refused"
    text = code_reply(outcome, "track", lang)  # type: ignore[arg-type]
    assert text != code_reply("refused", "track", lang)  # type: ignore[arg-type]
    assert "无法" not in text and "cannot" not in text


# --- through the workflow, with a scripted model ------------------------------------------


@pytest.fixture
def store(orders_url: Callable[[int, int], str]) -> OrderStore:
    return OrderStore(orders_url(30, 8))


def _processing(store: OrderStore) -> Order:
    with store.sessions() as session:
        return session.scalars(select(Order).where(Order.status == "processing").limit(1)).one()


@pytest.mark.parametrize(
    ("message", "prose", "lang"),
    [
        ("Where is {id}?", "Thank you for waiting. Could you check the order number?", "en"),
        (
            "When will {id} arrive?",
            "I couldn't find that order. Please double-check the order ID.",
            "en",
        ),
        ("{id} 到哪了？", "请核对订单号。", "zh"),
        ("{id} 到哪裡了？", "抱歉，查不到這個訂單。", "zh"),
    ],
)
async def test_a_found_order_is_never_doubted_in_the_reply(
    message: str, prose: str, lang: str, store: OrderStore, telemetry
) -> None:
    order = _processing(store)
    orch = Orchestrator(
        ScriptedToolModel(replies=[prose]), telemetry, [CustomerServiceWorkflow(store)]
    )
    events, done = await stream_turn(orch, message.format(id=order.id), order.customer_id)
    assert done.status == "succeeded"
    reply = done.result["reply"]["text"]
    assert order.id in reply  # code's fact sentence: found, not shipped yet
    for doubt in (
        "check the order",
        "double-check",
        "couldn't find",
        "核对",
        "查不到",
        "無法",
        "无法",
    ):
        assert doubt not in reply, reply
    assert any(e.kind == "sentence_dropped" for e in events)


# --- a verbless fragment (F12: "Your order ORD-… on your account.") --------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        f"Your order {ORDER} on your account.",
        f"The order {ORDER} for you today.",
        "Your parcel with UPS at your door.",
        "Your new address in the system.",
    ],
)
def test_a_verbless_fragment_is_dropped(sentence: str) -> None:
    for results in ([LOOKED], [MOVED], [REFUNDED]):
        reason = check_sentence(sentence, TurnFacts.of(results), "en")
        assert reason is not None and reason.startswith(("broken", "figure", "unbacked")), reason


@pytest.mark.parametrize(
    "sentence",
    [
        "Sorry for the trouble.",
        "Thanks again for your patience.",
        "Happy to help with anything else.",
        f"Your order {ORDER} is shipped.",
        "Good luck with your new order.",  # truth10: a product no tool names is not known
        "Thank you.",
    ],
)
def test_a_whole_sentence_without_much_of_a_verb_stays(sentence: str) -> None:
    assert check_sentence(sentence, TurnFacts.of([LOOKED]), "en") is None
