"""What the customer reads (issue 44 items 1, 2 and its bad input; issue 43 item 5): the model's
prose through the claim checker in the workflow, with a scripted model. Bad model output
(empty, one token, 10,000 characters, JSON, another language, a contradiction) becomes code's
reply, never an error or a broken sentence; each dropped sentence is a trace event and a reason
on the model call's telemetry row; a cut stream says so; a request for a person in the main
job (no order store) is ``needs_human``."""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.core.client import (
    TRUNCATED,
    ChatMessage,
    ChatOptions,
    TextDelta,
    TruncatedStreamError,
)
from orchestrator.telemetry.schema import ModelCallRecord
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.claims import TurnFacts, check_sentence, code_reply, cut_reply
from workflows.customer_service.store import Order, OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel, customer_service_only, stream_turn


@pytest.fixture
def store(orders_url: Callable[[int, int], str]) -> OrderStore:
    return OrderStore(orders_url(30, 8))


def _delivered(store: OrderStore) -> tuple[str, Order]:
    from sqlalchemy.orm import selectinload

    with store.sessions() as session:
        order = session.scalars(
            select(Order)
            .where(Order.status == "delivered")
            .options(selectinload(Order.shipment))
            .limit(1)
        ).one()
    return order.customer_id, order


def _calls(telemetry: TelemetryStore) -> list[tuple[str, str | None, Any]]:
    columns = (ModelCallRecord.node, ModelCallRecord.finish_reason, ModelCallRecord.checks)
    with telemetry.engine.connect() as connection:
        return [tuple(r) for r in connection.execute(select(*columns))]  # type: ignore[misc]


def _prose(events: list[Any]) -> str:
    return "".join(e.text for e in events if e.kind == "reply_token")


#: Model answers a customer must never read as they are.
BAD = {
    "empty": "",
    "one token": "Your",
    "10,000 characters": "Your order is great " * 500,
    "JSON": '{"order_id": "ORD-000001", "status": "shipped"}',
    "another language": "Su pedido ya fue entregado. Gracias por su paciencia.",
    "chinese in english": "您的包裹正在运输中。",
    "a contradiction": "Your order has not shipped yet. It is on its way to you.",
    "stripped figures": "Order {order_id} ships on 2030-01-01 for $12.",
}


@pytest.mark.parametrize("kind", sorted(BAD))
async def test_bad_model_output_becomes_codes_reply(kind: str, store, telemetry) -> None:
    customer, order = _delivered(store)
    orch = Orchestrator(
        ScriptedToolModel(replies=[BAD[kind]]), telemetry, [CustomerServiceWorkflow(store)]
    )
    events, done = await stream_turn(orch, f"Where is my parcel {order.id}?", customer)
    assert done.status == "succeeded"
    reply = done.result["reply"]["text"]
    assert order.id in reply  # code's fact sentence
    assert _prose(events) == code_reply("tool:track_shipment", "track", "en")
    assert reply.endswith(_prose(events))
    dropped = [e for e in events if e.kind == "sentence_dropped"]
    checks = next(c for node, _, c in _calls(telemetry) if node == "draft_reply")
    assert len(dropped) == len(checks or [])
    assert [d.reason for d in dropped] == [c["reason"] for c in checks or []]
    if BAD[kind].strip():
        assert dropped  # every bad answer leaves a reason in the trace and the row


async def test_a_true_model_sentence_is_shown_whole(store, telemetry) -> None:
    customer, order = _delivered(store)
    model = ScriptedToolModel(
        replies=["Your parcel was delivered. Thank you for shopping with us."]
    )
    orch = Orchestrator(model, telemetry, [CustomerServiceWorkflow(store)])
    events, done = await stream_turn(orch, f"Has {order.id} arrived?", customer)
    tokens = [e.text for e in events if e.kind == "reply_token"]
    assert tokens == ["Your parcel was delivered.", " Thank you for shopping with us."]
    assert done.result["reply"]["text"].endswith("Thank you for shopping with us.")
    assert [c for n, _, c in _calls(telemetry) if n == "draft_reply"] == [[]]


async def test_chinese_customer_gets_chinese_prose(store, telemetry) -> None:
    customer, order = _delivered(store)
    model = ScriptedToolModel(replies=["Your parcel is on its way."])
    orch = Orchestrator(model, telemetry, [CustomerServiceWorkflow(store)])
    events, done = await stream_turn(orch, f"我的包裹 {order.id} 到哪了？", customer)
    assert _prose(events) == code_reply("tool:track_shipment", "track", "zh")
    facts = TurnFacts.of(done.result["tool_results"])
    for sentence in done.result["reply"]["text"].split("。"):
        assert "on its way" not in sentence
    assert check_sentence(_prose(events), facts, "zh") is None


class CutStreamModel(ScriptedToolModel):
    """Streams ``pieces`` of the reply, then stops with no finish reason."""

    def __init__(self, pieces: Sequence[str]) -> None:
        super().__init__()
        self.pieces = list(pieces)

    async def stream_chat(
        self, messages: Sequence[ChatMessage], options: ChatOptions
    ) -> AsyncIterator[TextDelta]:
        call = await self.chat(messages, options)
        for piece in self.pieces:
            yield TextDelta(text=piece)
        cut = call.model_copy(update={"text": "".join(self.pieces), "finish_reason": TRUNCATED})
        raise TruncatedStreamError("the stream ended without a finish reason", cut)


@pytest.mark.parametrize("with_store", [True, False], ids=["store", "stateless"])
async def test_a_cut_stream_says_the_answer_was_cut(with_store: bool, store, telemetry) -> None:
    customer, order = _delivered(store)
    model = CutStreamModel(["Your parcel was delivered. ", "It was left at the ", "front"])
    workflow = CustomerServiceWorkflow(store if with_store else None)
    orch = customer_service_only(model, telemetry, workflow)
    events, done = await stream_turn(
        orch, f"Where is {order.id}?", customer if with_store else None
    )
    reply = done.result["reply"]
    assert "left at the" not in reply["text"]  # half a sentence is never shown
    assert reply["text"].endswith(cut_reply("en")) and reply["truncated"]
    if with_store:
        assert "Your parcel was delivered." in _prose(events)  # a whole checked sentence
    assert ("draft_reply", "truncated", None) in _calls(telemetry)


@pytest.mark.parametrize(
    "text", ["Can I speak with a human?", "I want a real person please", "我要转人工"]
)
async def test_the_main_job_hands_a_request_for_a_person_over(text: str, telemetry) -> None:
    real = Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow()])
    assert (await real.handle(Request(text=text))).status == "needs_human"  # whatever the route
    workflow = CustomerServiceWorkflow()  # and in the workflow itself, stateless
    orch = customer_service_only(ScriptedToolModel(), telemetry, workflow)
    outcome = await orch.handle(Request(text=text))
    assert outcome.status == "needs_human"
    assert outcome.result and "person" in outcome.result["handoff"]["reason"]
    lang = "zh" if "人" in text else "en"
    assert outcome.result["reply"]["text"] == code_reply(None, "human", lang)
    assert outcome.headline.startswith("[handoff:")


@pytest.mark.parametrize(
    ("text", "model_says", "intent", "kept"),
    [
        ("Why was I charged a fee on my statement?", "Thanks for your review!", "billing", ""),
        ("How can I repay my loan early?", "We apologise for the trouble.", "payment", "keep"),
        ("为什么扣了我一笔手续费？", "感谢您的好评！", "billing", ""),
        ("我想提前还款。", "您的订单已发货。", "payment", ""),
    ],
)
async def test_a_no_tool_reply_answers_the_intent_first(
    text: str, model_says: str, intent: str, kept: str, telemetry
) -> None:
    model = ScriptedToolModel(replies=[model_says])
    orch = customer_service_only(model, telemetry)
    events, done = await stream_turn(orch, text, thread=None)
    assert done.status == "succeeded"
    lang = "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"
    answer = code_reply(None, intent, lang)
    first = next(e for e in events if e.kind in ("reply_facts", "reply_token"))
    assert first.kind == "reply_facts" and first.text == answer  # before the model's prose
    expected = f"{answer} {model_says}" if kept else answer  # another kind, or a false state: out
    assert done.result["reply"]["text"] == expected
