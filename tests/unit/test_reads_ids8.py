"""A read names the order asked about, never another one (tester8 F6).

A loosely written id of the customer's own order (``ord 101957``, ``#101957``, 订单101957) is
read as that order; one that is no order of theirs, or not an id at all (``ORD-12``), is asked
back; a read naming several orders answers each. Through the workflow with a tool-calling
test double of the model that picks the first order offered (so an old offer of all the
customer's orders answers the newest one) and a real seeded SQLite store.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator, TelemetryStore
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.read_ids import read_targets
from workflows.customer_service.store import Customer, OrderStore, RefundPolicy

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel, stream_turn

#: Loose ids of the customer's own (oldest) order: ``{}`` is its six digits.
LOOSE_OWN = {
    "en_US": [
        "ord {} status?",
        "ORD{} where is it",
        "what's happening with order #{}?",
        "order number {} - any news?",
        "status of ord_{} please",
    ],
    "zh_CN": [
        "订单{}现在什么状态？",
        "订单号：{} 到哪了",
        "訂單{}的狀態是什麼？",
        "請問訂單號 {} 到哪裡了",
        "ord {} 状态？",
    ],
}
#: Ids that name no order of the customer's: asked back, never answered with another's.
NOT_READ = [
    "ord {wrong} status?",
    "where is ORD{wrong}",
    "what is the status of ORD-12?",
    "status of ORD-{own}b please",
    "订单号{wrong}的状态？",
    "訂單 ORD{wrong} 到哪裡了？",
]
#: Two orders in one read: ``{a}`` and ``{b}``.
TWO = [
    "what is the status of {a} and {b}?",
    "where are {a} and {b}? which one arrives first?",
    "{a} 和 {b} 的订单状态是什么？",
    "請問 {a} 跟 {b} 的訂單狀態？",
    "status of {a}, and also ord {b_digits}",
]


@pytest.fixture
def shop(
    orders_url: Callable[[int, int], str], telemetry: TelemetryStore
) -> tuple[OrderStore, Orchestrator]:
    """A seeded store (60 orders' worth of customers), and the workflow over it."""
    store = OrderStore(orders_url(60, 6), policy=RefundPolicy(auto_limit_cents=20_000))
    return store, Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow(store)])


def _customer(store: OrderStore, locale: str) -> tuple[str, list[str]]:
    """A customer of ``locale`` with three or more orders, and their ids newest first."""
    with store.sessions() as s:
        ids = s.scalars(select(Customer.id).where(Customer.locale == locale)).all()
    for customer in ids:
        own = store.tools(customer).order_ids()
        if len(own) >= 3:
            return customer, own
    pytest.skip(f"no {locale} customer with three orders in the seed")


def _total(store: OrderStore, customer: str, order: str) -> str:
    """The order's total as the store gives it (``USD 12.50``), the same in every language."""
    return str(store.tools(customer).run("lookup_order", {"order_id": order}).facts["total"])


async def _reply(orch: Orchestrator, text: str, customer: str) -> str:
    _, done = await stream_turn(orch, text, customer, f"t-{abs(hash(text))}")
    assert done.status != "failed" and done.result is not None, done
    return str(done.result["reply"]["text"])


@pytest.mark.parametrize(
    ("locale", "phrasing"), [(loc, p) for loc, said in LOOSE_OWN.items() for p in said]
)
async def test_a_loose_id_of_an_own_order_is_read_as_that_order(
    shop, locale: str, phrasing: str
) -> None:
    store, orch = shop
    customer, own = _customer(store, locale)
    order = own[-1]  # the oldest: never the first one offered
    text = await _reply(orch, phrasing.format(order[4:]), customer)
    assert order in text, (phrasing, text)
    if "到哪" not in phrasing and "where" not in phrasing:  # a status read: its total
        assert _total(store, customer, order) in text, (phrasing, text)
    assert not [o for o in own if o != order and o in text], (phrasing, text)


@pytest.mark.parametrize("phrasing", NOT_READ)
async def test_an_id_that_is_not_read_is_asked_back(shop, phrasing: str) -> None:
    store, orch = shop
    customer, own = _customer(store, "en_US")
    wrong = next(str(n) for n in range(999_999, 100_000, -1) if f"ORD-{n}" not in own)
    text = await _reply(orch, phrasing.format(wrong=wrong, own=own[-1][4:]), customer)
    assert any(w in text for w in ("does not look right", "格式不对", "格式不對")), (phrasing, text)
    assert not [o for o in own if o in text], (phrasing, text)


@pytest.mark.parametrize("phrasing", TWO)
async def test_a_read_naming_two_orders_answers_each(shop, phrasing: str) -> None:
    store, orch = shop
    customer, own = _customer(store, "zh_CN" if "订单" in phrasing else "en_US")
    a, b = own[-1], own[-2]
    text = await _reply(orch, phrasing.format(a=a, b=b, b_digits=b[4:]), customer)
    for order in (a, b):
        assert order in text, (phrasing, text)
    assert not [o for o in own if o not in (a, b) and o in text], (phrasing, text)


def test_loose_ids_read_only_as_own_orders() -> None:
    own = {"ORD-101957", "ORD-102013"}
    assert read_targets("ｏｒｄ１０１９５７ 到了吗", own) == (["ORD-101957"], False)
    assert read_targets("#101957 and ORD-102013", own) == (["ORD-101957", "ORD-102013"], False)
    assert read_targets("where is my order? 2 weeks late, #1 priority", own) == ([], False)
    assert read_targets("I paid 120000 for it", own) == ([], False)  # a number, not an id
    assert read_targets("order 101958", own) == ([], True)
