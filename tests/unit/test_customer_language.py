"""The customer's language and script: one reading per turn (the confirmation question and
the reply agree), a one-character Chinese message is answered in Chinese, and a customer who
writes in Traditional characters reads the reply (facts, prose, questions) in Traditional,
with every id and figure unchanged."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator
from orchestrator.textnorm import is_traditional, to_simplified
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.language import customer_emit, for_customer, reply_language
from workflows.customer_service.store import Order, OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from case_tables import cases
from customer_service_double import ScriptedToolModel, stream_turn

_FIGURES = re.compile(r"[A-Z]{2,}-\d+|\d+(?:\.\d+)?")


@pytest.mark.parametrize(
    ("message", "locale", "lang"),
    cases("customer_service8.toml", "reply_language"),
)
def test_the_reply_language(message: str, locale: str, lang: str) -> None:
    assert reply_language(message, locale) == lang


@pytest.mark.parametrize(
    ("message", "traditional"),
    [
        ("我的訂單什麼時候到？", True),
        ("請幫我退款", True),
        ("退款什麼時候會到帳", True),
        ("我的订单什么时候到？", False),
        ("我的帐户被锁了", False),  # 帐 is a Simplified variant of 账, not Traditional
        ("著名的品牌", False),
        ("Where is ORD-100001?", False),
        ("", False),
    ],
)
def test_traditional_script_is_read_from_the_message(message: str, traditional: bool) -> None:
    assert is_traditional(message) is traditional


@pytest.mark.parametrize(
    "text",
    [
        "订单 ORD-100042 已于 2026-11-30 发货，金额 USD 59.99。",
        "退款 RF-000131 已处理：退还 CNY 1,299.00 到原支付方式。",
        "请回复“是”确认取消订单 ORD-104165（USD 1647.00）。",
    ],
)
@pytest.mark.parametrize("locale", ["zh_TW", "zh_HK", "en_US", ""])
def test_conversion_keeps_every_id_and_figure(text: str, locale: str) -> None:
    shown = for_customer(text, "我要查詢訂單", locale)
    assert shown != text and is_traditional(shown)
    assert _FIGURES.findall(shown) == _FIGURES.findall(text)
    assert to_simplified(shown) == text
    assert for_customer(text, "我要查询订单", locale) == text  # Simplified stays Simplified
    assert for_customer(text, "Where is my order?", locale) == text


def test_only_reply_text_events_are_converted() -> None:
    from orchestrator.core.events import ReplyFacts, ReplyToken, ToolResultEvent

    seen: list[object] = []
    say = customer_emit(seen.append, "請問我的訂單", "zh_TW")
    say(ReplyFacts(text="订单已发货。"))
    say(ReplyToken(text="感谢您的耐心。"))
    tool = ToolResultEvent(tool="lookup_order", ok=True, facts={"status": "发货"})
    say(tool)
    assert [getattr(e, "text", None) for e in seen[:2]] == ["訂單已發貨。", "感謝您的耐心。"]
    assert seen[2] is tool
    send = seen.append
    assert customer_emit(send, "请问我的订单") is send


@pytest.fixture
def store(orders_url: Callable[[int, int], str]) -> OrderStore:
    return OrderStore(orders_url(30, 8))


def _an_order(store: OrderStore, status: str) -> Order:
    with store.sessions() as session:
        return session.scalars(select(Order).where(Order.status == status).limit(1)).one()


@pytest.mark.parametrize(
    "message",
    [
        "我的包裹 {order} 到哪了？請告訴我",
        "請問訂單 {order} 現在是什麼狀態",
        "{order} 為什麼還沒到",
    ],
)
async def test_a_traditional_customer_reads_traditional(message: str, store, telemetry) -> None:
    order = _an_order(store, "delivered")
    model = ScriptedToolModel(replies=["您的包裹已送达。"])
    orch = Orchestrator(model, telemetry, [CustomerServiceWorkflow(store)])
    events, done = await stream_turn(orch, message.format(order=order.id), order.customer_id)
    reply = done.result["reply"]["text"]
    shown = "".join(e.text for e in events if e.kind in ("reply_facts", "reply_token"))
    assert order.id in reply
    for text in (reply, shown):
        assert is_traditional(text), text
        assert to_simplified(text) != text
    simplified, _ = await stream_turn(
        Orchestrator(
            ScriptedToolModel(replies=["您的包裹已送达。"]),
            telemetry,
            [CustomerServiceWorkflow(store)],
        ),
        to_simplified(message.format(order=order.id)),
        order.customer_id,
        thread="t2",
    )
    plain = "".join(e.text for e in simplified if e.kind in ("reply_facts", "reply_token"))
    assert not is_traditional(plain)
    assert to_simplified(shown) == plain  # the same reply, only the script differs


@pytest.mark.parametrize(
    ("ask", "address"),
    [
        ("請幫我取消訂單 {order}", ""),
        ("請把訂單 {order} 的地址改成{address}", "台北市信義區市府路1號"),
        ("訂單 {order} 的收貨地址請改為{address}", "香港九龍彌敦道132號"),
    ],
)
async def test_the_question_and_the_done_reply_are_in_the_customers_script(
    ask: str, address: str, store, telemetry
) -> None:
    order = _an_order(store, "processing")
    orch = Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow(store)])
    message = ask.format(order=order.id, address=address)
    events, done = await stream_turn(orch, message, order.customer_id)
    assert done.result["status"] == "awaiting_confirmation", done.result
    question = done.result["reply"]["text"]
    assert order.id in question and is_traditional(question), question
    assert address in question  # the customer's own words, not converted again (台 stays 台)
    facts = [e.text for e in events if e.kind == "reply_facts"]
    assert facts and all(is_traditional(f) for f in facts)
    _, done = await stream_turn(orch, "是", order.customer_id)
    assert [r["ok"] for r in done.result["tool_results"]] == [True], done.result
    reply = done.result["reply"]["text"]
    assert order.id in reply and is_traditional(reply), reply
    assert address in reply
