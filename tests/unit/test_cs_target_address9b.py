"""tester9b F1 and F2, new kinds: a write naming no id that describes an order (by an item, a
digit ordinal, a comparison, a plural) is asked back, never run on the conversation's order;
a clause after a new address that is no part of one (a connector, brackets, a Chinese
delivery time or instruction after a comma) is asked back, never stored.

Own inputs (English, Simplified and Traditional Chinese), not the tester's; look-alikes that
must keep working next to each.
"""

from __future__ import annotations

from handoff_races import refundable_orders
from sqlalchemy import select
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service import asks
from workflows.customer_service.order_words import write_describes_order
from workflows.customer_service.store import Order

#: Writes with no id that describe an order: asked back for its id.
DESCRIBED = [
    "could you refund the order with the blue kettle",
    "cancel the headphones order please",
    "I'd like my money back on the tablet purchase",
    "refund my 3rd order",
    "cancel the 2nd one",
    "refund the more expensive order",
    "refund the smaller one please",
    "cancel both of them",
    "refund all of my orders",
    "refund the order I got last week",
    "cancel the one we bought for grandma",
    "cancel order number 2",
    "could you refund the one before",
    "帮我把有充电器的那个订单退款",
    "取消买了键盘的那单",
    "退掉便宜的那个订单",
    "两个订单都退了吧",
    "請取消有藍牙喇叭的那張訂單",
    "把還沒出貨的那筆訂單退款",
]

#: Plain references to the conversation's order (or none): these still act on it.
PLAIN = [
    "refund it",
    "please cancel this order",
    "can you refund the order for me",
    "refund the full amount for this order",
    "I want my whole order refunded",
    "refund that one",
    "refund please",
    "把这个订单退款",
    "这单帮我退了",
    "我的订单退款",
    "這筆訂單請退款",
    "它退款吧",
]


def test_a_write_describing_an_order_needs_its_id() -> None:
    assert [s for s in DESCRIBED if not write_describes_order(s)] == []
    assert [s for s in PLAIN if write_describes_order(s)] == []


async def test_a_described_write_is_asked_back_and_it_still_acts(shop: Shop) -> None:  # noqa: F811
    store, orch = shop()
    customer, order = refundable_orders(store, 60, 1)[0]
    for n, said in enumerate([DESCRIBED[i] for i in (0, 3, 5, 13, 18)]):
        await _turn(orch, f"when did {order} arrive?", customer, f"t{n}")
        result = await _turn(orch, said, customer, f"t{n}")
        text = _said(result)
        assert result["status"] == "succeeded" and not result["tool_results"], (said, text)
        assert order not in text, (said, text)
        await _turn(orch, "yes", customer, f"t{n}")
    assert store.tools(customer).refund_count(order) == 0
    result = await _turn(orch, "refund this order please", customer, "t0")
    assert result["status"] == "awaiting_confirmation" and order in _said(result)


#: A new address and then more that is no part of it: ``{id}`` is the order.
MORE_AFTER = [
    "change the address of {id} to 22 Elm Road, Leeds LS6 2AB so the courier can find it",
    "change the address of {id} to 22 Elm Road, Leeds LS6 2AB, and leave the box at the back",
    "change the address of {id} to 22 Elm Road, Leeds LS6 2AB (side door)",
    "change the address of {id} to 22 Elm Road, Leeds LS6 2AB, delivery after 6pm",
    "change the address of {id} to 22 Elm Road, Leeds LS6 2AB as my flat is being painted",
    "change the address of {id} to 22 Elm Road, Leeds LS6 2AB and ring the bell twice",
    "change the address of {id} to 22 Elm Road, Leeds LS6 2AB, gift receipt inside",
    "把{id}的地址改成广州市天河区天河路208号，下午再送",
    "把{id}的地址改成广州市天河区天河路208号，放快递柜就行",
    "把{id}的地址改成广州市天河区天河路208号，星期六收",
    "請把{id}的地址改成高雄市前鎮區中山二路2號，晚上送來",
    "請把{id}的地址改成高雄市前鎮區中山二路2號，交給警衛室",
    "change the address of {id} to 广州市天河区天河路208号 and 叫我下楼",
]

#: Normal addresses (one with a comma-separated Chinese part): stored exactly.
ADDRESSES = [
    "Unit 5, 12 Ring Road, Leeds LS1 1AA",
    "Flat 2, Block C, 40 Mill Lane, Bristol BS1 5AA, United Kingdom",
    "1600 Amphitheatre Parkway, Mountain View, CA 94043",
    "Rose and Crown Cottage, 3 High Street, Oxford OX1 4AA",
    "广州市天河区天河路208号，天河城3楼",
    "上海市徐汇区漕溪北路1号，2幢3单元502室",
    "高雄市前鎮區中山二路2號5樓之1",
    "北京市朝阳区建国路88号，中国",
]


def test_more_after_a_new_address_is_never_stored_and_an_address_is_read_exactly() -> None:
    reads = [asks.read_asks(said.format(id="ORD-100200")) for said in MORE_AFTER]
    stored = [r for r in reads if r.writes != ("change_address",) or r.new_address]
    assert stored == [] and all(r.address_problem for r in reads), stored
    for address in ADDRESSES:
        read = asks.read_asks(f"change the address of ORD-100200 to {address}")
        assert read.new_address == address, (address, read)


async def test_yes_after_an_address_with_a_clause_writes_nothing(shop: Shop) -> None:  # noqa: F811
    store, orch = shop()
    with store.sessions() as s:
        order = s.scalars(select(Order).where(Order.status == "processing")).first()
        assert order is not None
        customer, before = order.customer_id, order.shipping_address
    for n, said in enumerate(MORE_AFTER[:1] + MORE_AFTER[7:8] + MORE_AFTER[10:11]):
        await _turn(orch, said.format(id=order.id), customer, f"a{n}")
        await _turn(orch, "yes", customer, f"a{n}")
    with store.sessions() as s:
        assert s.get(Order, order.id).shipping_address == before
