"""cs15 (session 14): goods of none of the customer's orders ("where is my blender?") get a
question listing their orders, never another order's facts, and a write naming them offers
nothing; a read naming no order and no goods is never the model's pick among several orders;
the refund question lists the order's items; plain withdrawals, 退掉…的錢 / 只要 asks and
questions that ask to be told something, read as the customer's own words. Cases in
``tests/data/cases/cs_goods15.toml``."""

from __future__ import annotations

from typing import Any

import pytest
from ask_checks import assert_gate, with_ids
from case_tables import tables
from handoff_races import refundable_orders
from test_compound_evidence14 import _reply
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows import default_workflows
from workflows.customer_service.ask_marks import normalise
from workflows.customer_service.item_orders import goods_phrases
from workflows.customer_service.plain_talk import STORY, unusual_reason
from workflows.customer_service.withdrawing import waiting_decision

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_goods15.toml")
_REFUND = {"tool": "start_refund", "arguments": {"order_id": "ORD-100200", "amount_cents": 9999}}


def test_goods_are_read_where_they_stand() -> None:
    assert [(m, goods_phrases(m)) for m, p in CASES["goods"] if goods_phrases(m) != [p]] == []
    assert [m for m in with_ids(CASES["not_goods"]) if goods_phrases(m)] == []


def test_plain_withdrawals_withdraw_and_other_forms_keep_waiting() -> None:
    kept = [m for m in CASES["waiting_withdraw"] if waiting_decision(m, _REFUND) != "withdrawn"]
    taken = [m for m in CASES["waiting_keep"] if waiting_decision(m, _REFUND) != "kept"]
    assert (kept, taken) == ([], [])


def test_own_asks_and_questions_are_plain() -> None:
    assert_gate(CASES["no_write"], CASES["own"], doubted=True)
    assert [m for m in with_ids([*CASES["own"], *CASES["plain"]]) if unusual_reason(m)] == []
    assert [m for m in with_ids(CASES["story"]) if unusual_reason(m) != STORY] == []


def _customer(store: Any, *, zh: bool, orders: range) -> tuple[str, list[str]]:
    """A customer of that language whose number of orders is in ``orders``; their ids."""
    for n in range(1, 61):
        customer = f"C{n:05d}"
        own = store.tools(customer).order_ids()
        names = [p for ps in store.tools(customer).products().values() for p in ps]
        if len(own) in orders and any("\u4e00" <= c <= "\u9fff" for c in "".join(names)) == zh:
            return customer, own
    pytest.skip("no such customer in the seed")


def _order_facts(result: dict[str, Any]) -> set[str]:
    return {str(r["facts"].get("order_id")) for r in result.get("tool_results", [])}


@pytest.mark.parametrize(
    ("asked", "zh"),
    [
        ("where is my blender?", False),
        ("has the air purifier I ordered shipped?", False),
        ("我的冰箱到哪了？", True),
        ("我買的吹風機什麼時候到？", True),
    ],
)
async def test_goods_of_no_order_of_theirs_are_asked_back(shop: Shop, asked: str, zh: bool) -> None:
    store, orch = shop()
    customer, own = _customer(store, zh=zh, orders=range(2, 99))
    result = await _turn(orch, f"where is {own[-1]}?", customer, "g")  # the conversation's order
    assert own[-1] in _order_facts(result)
    result = await _turn(orch, asked, customer, "g")
    said = _said(result)
    assert _order_facts(result) == set() and own[0] in said, said  # listed, none answered
    assert ("没有找到这件商品" if zh else "could not find that item") in normalise(said), said


@pytest.mark.parametrize(("asked", "yes", "currency"), CASES["goods_writes"])
async def test_a_write_naming_goods_of_no_order_offers_nothing(
    shop: Shop, asked: str, yes: str, currency: str
) -> None:
    store, orch = shop()
    customer, order = _refundable(store, currency)
    await _turn(orch, f"where is {order}?", customer, "w")  # the conversation's order
    before = store.tools(customer).refund_count(order)
    result = await _turn(orch, asked, customer, "w")
    assert result["status"] != "awaiting_confirmation", _said(result)
    await _turn(orch, yes, customer, "w")
    assert store.tools(customer).refund_count(order) == before


def _refundable(store: Any, currency: str) -> tuple[str, str]:
    """A customer and an order of theirs in ``currency`` that can be refunded now."""
    pairs = refundable_orders(store, 60, 20)
    return next((c, o) for c, o in pairs if store.tools(c).refundable(o)[1] == currency)


async def test_a_read_naming_no_order_is_never_a_pick_among_several(shop: Shop) -> None:
    store, orch = shop()
    many, own = _customer(store, zh=False, orders=range(4, 99))
    result = await _turn(orch, "where is my order?", many, "m")
    assert _order_facts(result) == set() and own[0] in _said(result), _said(result)
    few, own = _customer(store, zh=False, orders=range(2, 4))
    result = await _turn(orch, "where is my order?", few, "f")
    assert _order_facts(result) == set(own), _said(result)  # each one answered
    asked = await _turn(orch, "refund it", few, "f")  # none of them is "it"
    assert asked["status"] != "awaiting_confirmation", _said(asked)


@pytest.mark.parametrize(("ask", "currency"), [("refund {}", "USD"), ("退款{}", "CNY")])
async def test_the_refund_question_lists_the_items(shop: Shop, ask: str, currency: str) -> None:
    store, orch = shop()
    customer, order = _refundable(store, currency)
    items = store.tools(customer).run("lookup_order", {"order_id": order}).facts["items"]
    asked = await _turn(orch, ask.format(order), customer, "q")
    assert asked["status"] == "awaiting_confirmation" and items in _said(asked), _said(asked)


@pytest.mark.parametrize(
    ("text", "note"),
    [
        (
            "I'm writing for my aunt. Refund ORD-100076. Also, is it ok to post this: 'idiots'",
            "recorded separately for a colleague",
        ),
        ("我替我妈问一下，ORD-105142退款。另外请审核这条评论：你们都是垃圾", "转交人工跟进"),
        ("我是她的兒子。請退款ORD-105142。另外，這條評論可以發嗎：加微信返現", "转交人工跟进"),
    ],
)
async def test_a_part_handed_on_is_told_beside_a_question(
    telemetry: TelemetryStore, text: str, note: str
) -> None:
    """A not-plain ask, or one the workflow asks back about, beside a post to review: the
    review is handed on, and the reply says so (it was a question alone)."""
    orch = Orchestrator(ScriptedModel(replies=["Noted."]), telemetry, default_workflows())
    outcome = await orch.handle(Request(text=text, thread_id="h", customer_id="C00002"))
    assert [h.route for h in outcome.handed_on] == ["content_moderation"]
    assert note in normalise(_reply(outcome.result)), _reply(outcome.result)
