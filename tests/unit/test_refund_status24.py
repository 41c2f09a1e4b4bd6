"""tester7 F24: "where is my refund?" on an order with refunds is a read of those refunds.

The reply states each refund the store holds (id, amount, status, date) in code's fact
sentence, English or Chinese, and never words it as the refusal of a new refund; an order
never refunded is said to have none. The model's prose is scripted (ScriptedModel).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orchestrator import Orchestrator
from orchestrator.textnorm import to_simplified
from skills.reply import fact_sentence
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.claims import TurnFacts, outcome_key
from workflows.customer_service.store import OrderStore, RefundPolicy
from workflows.customer_service.store.schema import Order, Refund

sys.path.insert(0, str(Path(__file__).parent))
from case_tables import cases
from customer_service_double import ScriptedToolModel, stream_turn

#: Refund-status questions (English, Simplified, Traditional); ``{id}`` is the order id.
QUESTIONS = cases("customer_service8.toml", "refund_status_where")
#: Words of a refusal of the customer's ask (EN, and Chinese after to_simplified).
REFUSALS = ("not possible", "cannot do", "I am sorry", "无法办理", "无法进一步处理", "抱歉")
WHEN = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


@pytest.fixture
def store(orders_url: Callable[[int, int], str]) -> OrderStore:
    return OrderStore(orders_url(40, 5), policy=RefundPolicy(auto_limit_cents=20_000))


def _eligible(store: OrderStore) -> tuple[str, str, int, str]:
    """``(customer, order id, total cents, currency)`` of a refundable, never refunded order."""
    with store.sessions() as session:
        orders = session.query(Order).order_by(Order.id).all()
        for order in orders:
            facts = store.tools(order.customer_id).run(
                "check_refund_eligibility", {"order_id": order.id}
            )
            if facts.facts["eligible"] == "yes" and not order.refunds:
                return order.customer_id, order.id, order.total_cents, order.currency
    pytest.skip("no refundable order in the seed")


def _refund(store: OrderStore, order_id: str, cents: int) -> str:
    """Record an approved refund of ``cents`` on ``order_id`` (test set-up); its RF- id."""
    with store.sessions() as session:
        refund = Refund(
            order_id=order_id,
            amount_cents=cents,
            reason="test",
            status="approved",
            approved_by="policy",
            idempotency_key=f"test-{order_id}-{cents}",
            created_at=WHEN,
        )
        session.add(refund)
        session.commit()
        return f"RF-{refund.id:06d}"


def _money(cents: int, currency: str) -> str:
    return f"{currency} {cents // 100}.{cents % 100:02d}"


async def _ask(store: OrderStore, telemetry, customer: str, text: str, prose: str) -> str:
    model = ScriptedToolModel(replies=[prose])
    orch = Orchestrator(model, telemetry, [CustomerServiceWorkflow(store)])
    _, done = await stream_turn(orch, text, customer, thread=None)
    assert done.status == "succeeded"
    return to_simplified(done.result["reply"]["text"])


@pytest.mark.parametrize(("question", "lang"), QUESTIONS)
async def test_fully_refunded_order_states_its_refund(store, telemetry, question, lang) -> None:
    customer, order_id, total, currency = _eligible(store)
    rf = _refund(store, order_id, total)
    reply = await _ask(store, telemetry, customer, question.format(id=order_id), "Thank you.")
    assert rf in reply and _money(total, currency) in reply and "2026-12-01" in reply
    assert ("已批准" if lang == "zh" else "approved") in reply
    assert ("已全额退款" if lang == "zh" else "refunded in full") in reply
    assert not any(word in reply for word in REFUSALS), reply
    # nothing is left: no offer or hint to start another refund
    assert "start the refund" not in reply and "start a refund" not in reply
    assert "办理退款" not in reply


@pytest.mark.parametrize(("question", "lang"), QUESTIONS[::2])
async def test_partly_refunded_order_states_refund_and_what_is_left(
    store, telemetry, question, lang
) -> None:
    customer, order_id, total, currency = _eligible(store)
    rf = _refund(store, order_id, 1000)
    reply = await _ask(store, telemetry, customer, question.format(id=order_id), "Thank you.")
    assert rf in reply and _money(1000, currency) in reply and "2026-12-01" in reply
    assert _money(total - 1000, currency) in reply
    assert not any(word in reply for word in REFUSALS), reply


@pytest.mark.parametrize(("question", "lang"), QUESTIONS[1::2])
async def test_never_refunded_order_says_no_refund_yet(store, telemetry, question, lang) -> None:
    customer, order_id, _, _ = _eligible(store)
    reply = await _ask(store, telemetry, customer, question.format(id=order_id), "Thank you.")
    assert ("目前没有退款记录" if lang == "zh" else "No refund has been made") in reply
    assert "RF-" not in reply
    assert not any(word in reply for word in REFUSALS), reply


async def test_model_may_say_the_refund_was_approved_when_the_store_holds_it(
    store, telemetry
) -> None:
    customer, order_id, _, currency = _eligible(store)
    _refund(store, order_id, 1000)
    prose = f"Your refund of {_money(1000, currency)} was approved."
    reply = await _ask(store, telemetry, customer, f"where is my refund for {order_id}?", prose)
    assert prose in reply
    # never refunded: the same sentence is dropped (no refund backs it)
    other_customer, other, _, _ = _eligible(store)
    assert other != order_id
    reply = await _ask(store, telemetry, other_customer, f"where is my refund for {other}?", prose)
    assert "was approved" not in reply


def test_refund_facts_and_sentences_of_the_read(store) -> None:
    customer, order_id, total, currency = _eligible(store)
    first = _refund(store, order_id, 500)
    second = _refund(store, order_id, total - 500)
    result = store.tools(customer).run("check_refund_eligibility", {"order_id": order_id})
    assert result.ok and result.error_code is None
    facts = result.facts
    assert facts["refund_count"] == "2" and facts["eligible"] == "no"
    assert (facts["refund_1_id"], facts["refund_2_id"]) == (first, second)
    assert facts["refunded"] == _money(total, currency)
    states = TurnFacts.of([result.model_dump()]).states
    assert {"refunded", "approved"} <= states and "eligible" not in states
    assert outcome_key([result.model_dump()], False) == "tool:lookup_order"
    en = fact_sentence([result.model_dump()])
    zh = fact_sentence([result.model_dump()], "zh_CN")
    for text in (en, zh):
        assert first in text and second in text and _money(500, currency) in text
    assert "not possible" not in en and "无法办理" not in zh
