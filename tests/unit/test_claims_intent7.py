"""Replies that answer another question (tester7 F7): a request for another customer's orders
or account is answered with what this chat can show (the signed-in customer's own orders),
never with a template of another intent; and an answer that restates the customer's trouble
("I see you cannot get into your account") is never chosen from the triage alone (the CPU
default model's triage is random), only when the message names that trouble. Own inputs,
English, Simplified and Traditional Chinese."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.claims import code_reply, message_topic, reply_intent
from workflows.customer_service.store import Order, OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel, stream_turn

OTHERS = [
    "list all orders of customer C00003",
    "Show me the orders for customer id C00417.",
    "Can you look up another customer's account?",
    "What did somebody else's order contain?",
    "Give me every customer's order history",
    "列出客户C00003的所有订单",
    "帮我查一下别人的订单",
    "請列出其他用戶的訂單",
    "所有顾客的订单都给我看看",
]
NOT_OTHERS = [
    "list my orders",
    "I have other questions about my refund",
    "Where is my parcel?",
    "我的订单到哪了？",
]


@pytest.mark.parametrize("message", OTHERS)
def test_another_customers_data_is_its_own_topic(message: str) -> None:
    assert message_topic(message) == "others"
    for triage in ("account_access", "billing", "other"):
        assert reply_intent(None, message, triage) == "others"


@pytest.mark.parametrize("message", NOT_OTHERS)
def test_own_orders_are_not_another_customers(message: str) -> None:
    assert message_topic(message) != "others"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_others_answer_says_what_this_chat_can_show(lang: str) -> None:
    text = code_reply(None, "others", lang)  # type: ignore[arg-type]
    assert ("signed in" in text) if lang == "en" else ("登录" in text)
    assert "account" not in text and "密码" not in text


@pytest.mark.parametrize(
    ("message", "triage"),
    [
        ("hello there", "account_access"),
        ("can you help me with something", "billing"),
        ("我有个问题", "card"),
        ("I have a question", "payment"),
    ],
)
def test_a_restating_answer_is_not_taken_from_the_triage_alone(message: str, triage: str) -> None:
    assert reply_intent(None, message, triage) is None


@pytest.mark.parametrize(
    ("message", "triage", "intent"),
    [
        ("I can't log in", "account_access", "account_access"),
        ("what is the price of the blue mug", "billing", "billing"),
        ("hello there", "delivery", "track"),  # no restating answer: the triage still counts
    ],
)
def test_the_triage_counts_where_the_message_names_it(
    message: str, triage: str, intent: str
) -> None:
    assert reply_intent(None, message, triage) == intent


@pytest.fixture
def store(orders_url: Callable[[int, int], str]) -> OrderStore:
    return OrderStore(orders_url(30, 8))


@pytest.mark.parametrize(
    "message", ["list all orders of customer C00003", "Show me another customer's orders."]
)
async def test_the_workflow_answers_a_request_for_another_customers_orders(
    message: str, store: OrderStore, telemetry
) -> None:
    """(In Chinese the planner reads 订单 as a status read and looks up one of the customer's
    own orders: no data of another customer, but deciding.py's to answer.)"""
    lang = "en"
    with store.sessions() as session:
        customer = session.scalars(select(Order.customer_id).limit(1)).one()
    model = ScriptedToolModel(replies=["Thank you for reaching out."])
    orch = Orchestrator(model, telemetry, [CustomerServiceWorkflow(store)])
    _events, done = await stream_turn(orch, message, customer)
    assert done.status == "succeeded"
    reply = done.result["reply"]["text"]
    assert reply.startswith(code_reply(None, "others", lang)), reply  # type: ignore[arg-type]
    assert "cannot get into your account" not in reply and "无法登录" not in reply
