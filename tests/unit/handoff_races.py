"""Helpers of the cross-process tests of handoffs and turns (real processes, real databases).

:func:`waiting_handoffs` puts conversations in the state a refund over the automatic limit
leaves them in (the graph interrupted in ``handoff`` with the pending refund), without a model:
the graph's state is written as ``run_tool`` would leave it, then the graph runs on to the
interrupt (:func:`one_waiting_handoff`: one such conversation on a freshly seeded store).
:func:`race_worker` is one process of a race: it resumes each conversation, after a barrier
shared with the other process, with its own decision. :func:`run_racers` starts the processes
of a race (here or in test_store_race) and collects what each put on its queue.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.core.workflow import WorkflowContext
from orchestrator.exceptions import HandoffDecidedError
from workflows.customer_service import open_workflow
from workflows.customer_service.store import OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel

TRIAGE = {"issue_type": "refund", "urgency": "medium", "sentiment": "neutral", "parsed": True}


def refundable_orders(store: OrderStore, customers: int, want: int) -> list[tuple[str, str]]:
    """``want`` (customer, order id) pairs whose order can be refunded now."""
    found: list[tuple[str, str]] = []
    for customer in (f"C{n:05d}" for n in range(1, customers + 1)):
        tools = store.tools(customer)
        for order_id in tools.order_ids(50):
            facts = tools.run("check_refund_eligibility", {"order_id": order_id}).facts
            if facts.get("eligible") == "yes":
                found.append((customer, order_id))
                break  # one per customer: the refunds of one race touch no other race
        if len(found) == want:
            return found
    raise AssertionError(f"only {len(found)} refundable orders among {customers} customers")


def _waiting_state(thread: str, customer: str, order_id: str, cents: int) -> dict[str, Any]:
    # the refund as the customer asked for it and confirmed it (the write policy's fields)
    action = {
        "tool": "start_refund",
        "customer_id": customer,
        "arguments": {"order_id": order_id, "amount_cents": cents},
        "key": f"{thread}:1",
        "ask": f"please refund {order_id}",
        "confirmation": "yes",
        "confirmed_by": customer,
    }
    return {
        "message": f"please refund {order_id}",
        "attachments": [],
        "thread_id": thread,
        "customer_id": customer,
        "locale": "en_US",
        "turn": 1,
        "angry_streak": 0,
        "history": [{"role": "customer", "text": f"please refund {order_id}"}],
        "route": "customer_service",
        "confidence": 1.0,
        "secondary_routes": [],
        "signals": {"intents": ["refund"], "order_ids": [order_id], "angry": False},
        "triage": TRIAGE,
        "plan": {"intent": "refund", "tool": "start_refund", "order_ids": [order_id]},
        "tool_calls": [],
        "tool_results": [],
        "handoff": {"reason": "refund over the automatic limit", "action": action},
        "reply": {},
        "model_down": None,
        "last_order_id": order_id,
    }


async def waiting_handoffs(settings: Settings, cases: list[tuple[str, str, str]]) -> None:
    """Leave each ``(thread, customer, order id)`` waiting in ``handoff`` with its refund."""
    async with open_workflow(settings) as workflow:
        for thread, customer, order_id in cases:
            config = {"configurable": {"thread_id": thread}}
            assert workflow.store is not None
            cents, _, why = workflow.store.tools(customer).refundable(order_id)
            assert why is None, why
            await workflow.graph.aupdate_state(
                config, _waiting_state(thread, customer, order_id, cents), as_node="run_tool"
            )
            request = Request(text="-", thread_id=thread, customer_id=customer)
            await workflow.graph.ainvoke(
                None,
                config,
                context=WorkflowContext(llm=None, request=request),  # type: ignore[arg-type]
            )
            assert await workflow.pending_handoff(thread) is not None


async def one_waiting_handoff(settings: Settings, thread: str) -> tuple[OrderStore, str, str]:
    """Seed the store of ``settings`` (20 customers, seed 7) and leave one refund waiting for a
    person on ``thread`` (:func:`waiting_handoffs`). Returns ``(store, customer, order id)``."""
    store = OrderStore(settings.cs_database_url)
    store.seed(20, seed=7)
    ((customer, order),) = refundable_orders(store, 20, 1)
    await waiting_handoffs(settings, [(thread, customer, order)])
    return store, customer, order


async def _resume_all(
    settings: Settings, threads: list[str], barrier: Any, approve: bool, telemetry: str
) -> list[tuple[str, str]]:
    results: list[tuple[str, str]] = []
    store = TelemetryStore(telemetry)
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(ScriptedToolModel(), store, [workflow])
        for thread in threads:
            barrier.wait(timeout=120)
            try:
                await orch.resume(thread, approve=approve, note="race", by=f"p-{approve}")
                results.append((thread, "won"))
            except HandoffDecidedError as exc:
                results.append((thread, f"decided: {exc}"))
            except Exception as exc:  # anything else is a failure of the test
                results.append((thread, f"error: {type(exc).__name__}: {exc}"))
    store.close()
    return results


def race_worker(
    settings: dict[str, Any],
    threads: list[str],
    barrier: Any,
    approve: bool,
    telemetry: str,
    out: Any,
) -> None:
    """One process of the race (a ``multiprocessing`` target): its results go to ``out``."""
    results = asyncio.run(_resume_all(Settings(**settings), threads, barrier, approve, telemetry))
    out.put((approve, results))


def run_racers(procs: Sequence[Any], out: Any, timeout: float) -> dict[Any, Any]:
    """Start ``procs`` (``multiprocessing`` processes, not started), wait up to ``timeout``
    seconds for each one's ``(key, results)`` on the queue ``out``, join them and assert each
    exited 0. Returns ``{key: results}``."""
    for proc in procs:
        proc.start()
    results = dict(out.get(timeout=timeout) for _ in procs)
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    return results
