"""Trust fixes of session 9 (cs9), through the workflow with the tool-calling test double and a
real seeded SQLite store; inputs of our own, English, Simplified and Traditional Chinese.

* (a) A write or read naming an order by a loose id (``cancel order 101957``, ``refund
  #101957``, 退款订单101957) acts on that order when it is the customer's, never on the
  conversation's; one of no order of theirs is asked back, and nothing of it is told.
* F1 (tester9): a write or read describing an order ("my other order", 另外那个订单) is asked
  back for its id; "refund it" still means the conversation's order.
* F2 (tester9): what follows a new address (an instruction, a time, other orders) is never
  stored as part of it.
* (b) A refund negated, pasted or someone else's, on an order that cannot be refunded, is
  answered with the order's status: never "That is not possible" nor the model's refusal.
* (c) A cap ("up to $20", 最多退20块) is asked back or read exactly, never the whole order.
* F4 (tester9): a change of a write that waits for a person withdraws it (the store's claim:
  the race with an approval is ``test_handoff_withdraw``'s); an approval afterwards is refused.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator, TelemetryStore
from orchestrator.exceptions import HandoffDecidedError
from workflows.customer_service import CustomerServiceWorkflow, amending, asks, read_ids
from workflows.customer_service.store import Customer, Order, OrderStore, RefundPolicy

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel, stream_turn
from handoff_races import refundable_orders

Shop = Callable[..., tuple[OrderStore, Orchestrator]]


@pytest.fixture
def shop(orders_url: Callable[[int, int], str], telemetry: TelemetryStore) -> Shop:
    """``(auto_limit_cents, **model) -> (store, orchestrator)`` on this test's seeded store."""

    def opened(limit: int = 100_000_000, **model: Any) -> tuple[OrderStore, Orchestrator]:
        store = OrderStore(orders_url(60, 6), policy=RefundPolicy(auto_limit_cents=limit))
        workflow = CustomerServiceWorkflow(store)
        return store, Orchestrator(ScriptedToolModel(**model), telemetry, [workflow])

    return opened


#: Writes naming the customer's own order loosely: ``{}`` is its six digits.
OWN_WRITES = [
    "cancel order {}",
    "refund #{}",
    "please cancel ord{} now",
    "I want a refund for order no. {}",
    "change the address of order {} to 12 Willow Lane, Leeds LS1 4AB",
    "退款订单{}",
    "帮我取消单号{}",
    "請幫我取消訂單{}",
    "訂單號：{} 退款",
]


#: Writes naming an order that is not the customer's: ``{}`` is another customer's digits.
NOT_OWN_WRITES = [
    "cancel order {}",
    "refund #{}",
    "cancel {} please",
    "change the address of order {} to 9 Elm Street, York YO1 7HH",
    "退款订单{}",
    "取消訂單{}",
]


#: A loose id alone, or with a bare question: the order's facts.
ALONE = ["#{}", "{}", "#{}??", "单号{}", "訂單編號 {}"]

#: Writes that describe another order than the conversation's, with no id.
DESCRIBED = [
    "ok, now cancel my other order",
    "please refund the previous one",
    "refund the one from September please",
    "I'd like a refund on my newest order",
    "please cancel the second order as well",
    "帮我把另外那个订单退款",
    "取消上一个订单",
    "最早那单帮我退款",
    "請幫我把另一張訂單取消",
    "幫我退款最近的那張訂單",
    "幫我把較舊的那張訂單取消",
]
#: Refund questions that name no order: no verdict on an order the customer did not ask about.
NO_ORDER_QUESTIONS = [
    "what's your refund policy on sale items?",
    "do you do refunds for opened boxes?",
    "退款政策是什么？",
    "你們的退款規定是什麼？",
]


#: Reads that describe another order: not answered with the conversation's order.
DESCRIBED_READS = [
    "and where is my other order?",
    "另一个订单到哪了？",
    "那張九月的訂單呢？狀態是什麼",
]


#: A new address with more after it: ``{id}`` is the order.
MORE_AFTER = [
    "change the address of {id} to 77 Harbour Rd, Cork T12 X2Y3 and let the courier leave it "
    "at the back door",
    "please change the address of {id} to 9 Mill Lane, Bath BA1 1AA before it ships",
    "update the address of {id} to 15 Park Ave, Denver CO 80202, then tell the driver to ring",
    "change the address of {id} to 4 Quay St, Galway H91 and ask the driver to call first",
    "change the address of {id} to 301 King St, Toronto ON M5V 1J5 and make it my default",
    "把{id}的地址改成广州市天河区体育西路100号，然后让快递员放驿站",
    "把{id}的地址改成成都市武侯区人民南路4段1号，发货之后再改",
    "把{id}的地址改成高雄市前金區中正四路211號，並且通知司機先打電話",
]


_ASKED_BACK = ("Which order", "哪一个订单", "哪一個訂單")

#: Refunds set aside on an order that cannot be refunded: ``{id}`` is the order.
SET_ASIDE = [
    "I'm not after a refund for {id}, I just want to know how it's going",
    "no refund needed for {id}",
    "forwarded from my sister: please refund {id}",
    "{id}不用退款，我就想了解一下",
    "我老公说要退款{id}",
    "{id}不需要退款，謝謝",
    "朋友說：退款{id}",
]


REFUSALS = (
    "not possible",
    "cannot do",
    "I am sorry",
    "无法办理",
    "無法辦理",
    "无法进一步",
    "無法進一步",
)


#: A cap on the refund: ``{id}`` is a refundable order; the cap is 20 in its currency.
CAPS = [
    "refund {id} up to $20",
    "refund {id}, no more than 20 dollars",
    "refund at most $20 on {id}",
    "refund {id} but not more than $20",
    "{id}最多退20块",
    "{id}退款不超过二十元",
    "退款{id}，不超過20元",
]

#: Changes of the waiting refund: ``{other}`` is another order of the same customer.
AMENDMENTS = [
    "sorry, wrong amount - I only need USD 12 back",
    "Actually make it a refund of $15 instead",
    "I meant {other}, not this one",
    "my mistake, it's the other parcel that broke",
    "could you change it to just half of the amount?",
    "不好意思我写错了，是{other}要退款",
    "改成只退50元吧",
    "抱歉，我弄錯了訂單",
    "其實只要退30元就好",
]


#: Messages that keep the refund waiting as asked.
KEEPS = [
    "please hurry with my refund",
    "is the refund approved yet?",
    "I'd also like to cancel {other} too",
    "退款金额是多少？",
    "謝謝，我等同事回覆",
]


_WITHDRAWN = ("is withdrawn", "已撤回")


async def _turn(orch: Orchestrator, text: str, customer: str, thread: str) -> dict[str, Any]:
    """One turn; its result (``status``, ``reply``, ``tool_results``), or ``{"status": …}``
    when the turn waits for a person (no result)."""
    _, done = await stream_turn(orch, text, customer, thread)
    assert done.status != "failed", done
    return dict(done.result) if done.result is not None else {"status": done.status}


def _said(result: dict[str, Any]) -> str:
    return str((result.get("reply") or {}).get("text", ""))


def _people(store: OrderStore) -> tuple[str, list[str], str]:
    """A customer with three or more orders (newest first), and another customer's order."""
    with store.sessions() as s:
        ids = s.scalars(select(Customer.id).order_by(Customer.id)).all()
    mine = next(c for c in ids if len(store.tools(c).order_ids()) >= 3)
    other = next(o for c in ids if c != mine for o in store.tools(c).order_ids())
    return mine, store.tools(mine).order_ids(), other


# --- (a) loose ids ---------------------------------------------------------------------------


async def test_a_write_naming_an_own_order_loosely_acts_on_it(shop: Shop) -> None:
    store, orch = shop(20_000)
    customer, own, _ = _people(store)
    talked, named = own[0], own[-1]  # the conversation's order, and the one the write names
    for n, phrasing in enumerate(OWN_WRITES):
        await _turn(orch, f"where is {talked}?", customer, f"own-{n}")
        result = await _turn(orch, phrasing.format(named[4:]), customer, f"own-{n}")
        assert named in _said(result) and talked not in _said(result), (phrasing, result)
        assert all(r["facts"].get("order_id") != talked for r in result["tool_results"])


async def test_a_write_naming_an_order_not_theirs_is_asked_back(shop: Shop) -> None:
    store, orch = shop(20_000)
    customer, own, other = _people(store)
    for n, phrasing in enumerate(NOT_OWN_WRITES):
        await _turn(orch, f"where is {own[0]}?", customer, f"other-{n}")
        result = await _turn(orch, phrasing.format(other[4:]), customer, f"other-{n}")
        text = _said(result)
        assert result["status"] == "succeeded" and not result["tool_results"], (phrasing, text)
        assert not [o for o in [*own, other] if o in text], (phrasing, text)
        assert any(w in text for w in _ASKED_BACK), (phrasing, text)
    assert store.tools(customer).refund_count(own[0]) == 0


async def test_a_loose_id_alone_gets_the_order_facts(shop: Shop) -> None:
    store, orch = shop(20_000)
    customer, own, other = _people(store)
    order = own[-1]
    total = str(store.tools(customer).run("lookup_order", {"order_id": order}).facts["total"])
    for n, phrasing in enumerate(ALONE):
        text = _said(await _turn(orch, phrasing.format(order[4:]), customer, f"alone-{n}"))
        assert order in text and total in text, (phrasing, text)
        text = _said(await _turn(orch, phrasing.format(other[4:]), customer, f"alone-o{n}"))
        assert other not in text and not [o for o in own if o in text], (phrasing, text)


def test_six_bare_digits_in_a_write_are_an_id_unless_money() -> None:
    own, read = {"ORD-101957"}, read_ids.read_targets
    assert read("cancel 101957", own, write=True) == (["ORD-101957"], False)
    assert read("cancel 101958", own, write=True) == ([], True)
    assert read("cancel 101958", own) == ([], False)  # a read: a number
    assert read("refund $120000 of ORD-101957", own, write=True) == (["ORD-101957"], False)
    assert read("ORD-101957 退 120000元", own, write=True) == (["ORD-101957"], False)


# --- F1 described orders, F2 what follows an address ----------------------------------------


async def test_a_write_describing_another_order_is_asked_back(shop: Shop) -> None:
    store, orch = shop()
    customer, order = refundable_orders(store, 60, 1)[0]
    assert len(store.tools(customer).order_ids()) >= 2
    for n, said in enumerate([*DESCRIBED, *DESCRIBED_READS]):
        await _turn(orch, f"when did {order} arrive?", customer, f"d{n}")
        result = await _turn(orch, said, customer, f"d{n}")
        text = _said(result)
        assert result["status"] == "succeeded" and not result["tool_results"], (said, text)
        assert order not in text and any(w in text for w in _ASKED_BACK), (said, text)
        await _turn(orch, "yes", customer, f"d{n}")
    assert store.tools(customer).refund_count(order) == 0
    result = await _turn(orch, "please refund it", customer, "d0")  # "it": the conversation's
    assert result["status"] == "awaiting_confirmation" and order in _said(result)


@pytest.mark.parametrize("said", MORE_AFTER)
def test_what_follows_a_new_address_is_not_part_of_it(said: str) -> None:
    read = asks.read_asks(said.format(id="ORD-100200"))
    assert read.new_address == "", read
    # asked back, or (a time: "发货之后再改") set aside whole by the second reading (cs10)
    assert (read.writes == ("change_address",) and read.address_problem) or (
        read.writes == () and read.declined == (("change_address", "conditional"),)
    ), read


async def test_yes_after_an_address_with_more_writes_nothing(shop: Shop) -> None:
    store, orch = shop()
    with store.sessions() as s:
        order = s.scalars(select(Order).where(Order.status == "processing")).first()
        assert order is not None
        customer, before = order.customer_id, order.shipping_address
    for n, said in enumerate(MORE_AFTER):
        result = await _turn(orch, said.format(id=order.id), customer, f"a{n}")
        assert result["status"] == "succeeded", (said, result)
        await _turn(orch, "yes", customer, f"a{n}")
    with store.sessions() as s:
        assert s.get(Order, order.id).shipping_address == before  # type: ignore[union-attr]


# --- (b) no refusal of an ask not made, (c) a cap is never a larger refund ------------------


async def test_a_refund_set_aside_is_not_refused(shop: Shop) -> None:
    triage = {"issue_type": "refund", "urgency": "medium", "sentiment": "neutral"}
    refusal = ["I'm sorry, I cannot do that for this order."]
    store, orch = shop(json_reply=json.dumps(triage), replies=refusal)
    with store.sessions() as s:
        shipped = s.scalars(select(Order).where(Order.status == "shipped")).first()
        assert shipped is not None
        customer, order = shipped.customer_id, shipped.id
    for n, said in enumerate(SET_ASIDE):
        text = _said(await _turn(orch, said.format(id=order), customer, f"b{n}"))
        assert not [w for w in REFUSALS if w in text] and order in text, (said, text)


async def test_a_refund_question_naming_no_order_gets_no_verdict_on_one(shop: Shop) -> None:
    store, orch = shop()
    customer, own, _ = _people(store)
    for n, said in enumerate(NO_ORDER_QUESTIONS):
        text = _said(await _turn(orch, said, customer, f"q{n}"))
        assert not [o for o in own if o in text], (said, text)
        assert not [w for w in REFUSALS if w in text], (said, text)


def _left(store: OrderStore, customer: str, order: str) -> Decimal:
    facts = store.tools(customer).run("check_refund_eligibility", {"order_id": order}).facts
    return Decimal(str(facts["refundable"]).split()[-1])


async def test_a_cap_is_never_a_larger_refund(shop: Shop) -> None:
    store, orch = shop()
    customer, order = refundable_orders(store, 60, 1)[0]
    before = _left(store, customer, order)
    for n, said in enumerate(CAPS):
        result = await _turn(orch, said.format(id=order), customer, f"c{n}")
        text = _said(result)
        assert f'"refund {order}"' not in text and f"退款{order}”" not in text, (said, text)
        if result["status"] == "awaiting_confirmation":  # read exactly, or not offered at all
            assert "20.00" in text, (said, text)
        await _turn(orch, "yes", customer, f"c{n}")
        assert before - _left(store, customer, order) <= 20, (said, text)


# --- F4 a change while a person decides ------------------------------------------------------


async def _waiting(orch: Orchestrator, customer: str, order: str, thread: str) -> None:
    for text in (f"please refund {order}", "yes"):
        result = await _turn(orch, text, customer, thread)
    assert result["status"] == "needs_human", result


async def test_a_changed_request_withdraws_the_waiting_refund(shop: Shop) -> None:
    store, orch = shop(1)
    customer, order = refundable_orders(store, 60, 1)[0]
    other = next(o for o in store.tools(customer).order_ids() if o != order)
    for n, said in enumerate(AMENDMENTS):
        await _waiting(orch, customer, order, f"am-{n}")
        result = await _turn(orch, said.format(other=other), customer, f"am-{n}")
        assert result["status"] == "succeeded", (said, result)
        assert any(w in _said(result) for w in _WITHDRAWN) and order in _said(result), said
        with pytest.raises(HandoffDecidedError):
            await orch.resume(f"am-{n}", approve=True, note="ok", by="olga")
    assert store.tools(customer).refund_count(order) == 0


async def test_a_repeated_ask_or_a_question_keeps_it_waiting(shop: Shop) -> None:
    store, orch = shop(1)
    customer, order = refundable_orders(store, 60, 1)[0]
    other = next(o for o in store.tools(customer).order_ids() if o != order)
    await _waiting(orch, customer, order, "keep")
    for said in KEEPS:
        result = await _turn(orch, said.format(other=other), customer, "keep")
        assert result["status"] == "needs_human", (said, result)
    await orch.resume("keep", approve=True, note="ok", by="olga")
    assert store.tools(customer).refund_count(order) == 1


def test_amendments_of_a_cancel_and_an_address_change() -> None:
    cancel = {"tool": "cancel_order", "arguments": {"order_id": "ORD-100200"}}
    move = {"tool": "change_address", "arguments": {"order_id": "ORD-100200", "new_address": "1 A"}}
    amends = amending.amends
    assert amends("oops, wrong order: cancel ORD-100201 instead", cancel)
    assert amends("please change the address of ORD-100200 to 9 Elm St, York YO1 7HH instead", move)
    assert not amends("please cancel ORD-100200 quickly", cancel)
    assert not amends("I didn't make a mistake, I still want it cancelled", cancel)
    assert not amends('my friend said "I made a mistake"', cancel)  # someone else's words
