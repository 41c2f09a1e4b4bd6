"""The customer-service graph runs a turn on the event loop alone: its conditional edges are
coroutines, so LangGraph does not send each one to the loop's default executor (a thread hop
and a GIL handover per edge, on every batch row's path)."""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from orchestrator import Request, TelemetryStore
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service import edges as cs_edges
from workflows.customer_service.store import OrderStore
from workflows.customer_service.withdrawing import after_handoff

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel, customer_service_only


class CountingExecutor(ThreadPoolExecutor):
    """The loop's default executor, counting what is sent to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.submitted: list[str] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted.append(getattr(fn, "__name__", repr(fn)))
        return super().submit(fn, *args, **kwargs)


def test_every_conditional_edge_is_a_coroutine_function() -> None:
    graph = CustomerServiceWorkflow().graph.builder
    branches = [b.path for spec in graph.branches.values() for b in spec.values()]
    # with after_handoff (a customer's withdrawal: withdrawing.py) and after_clarify (cs11)
    assert len(branches) == 7
    for branch in branches:
        assert branch.afunc is not None and asyncio.iscoroutinefunction(branch.afunc)
        assert branch.func is None or asyncio.iscoroutinefunction(branch.func), branch.name
    edges = (
        "after_decision",
        "after_tool_choice",
        "after_confirm",
        "after_clarify",
        "after_run",
        "after_draft",
    )
    for name in edges:
        assert asyncio.iscoroutinefunction(getattr(cs_edges, name)), name
    assert asyncio.iscoroutinefunction(after_handoff)


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("Where is my parcel? Please track my order.", "succeeded"),  # a tool
        ("I want to speak to a human agent right now!", "needs_human"),  # handoff, interrupt
        ("我的订单什么时候发货？", "succeeded"),
    ],
)
async def test_a_turn_sends_nothing_to_the_default_executor(
    tmp_path: Path, text: str, status: str
) -> None:
    orders = OrderStore(f"sqlite:///{tmp_path / 'cs.db'}")
    orders.seed(5, seed=1)  # a handoff needs the store's queue
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    executor = CountingExecutor()
    asyncio.get_running_loop().set_default_executor(executor)
    model = ScriptedToolModel(replies=["Thanks for writing."])
    orch = customer_service_only(model, store, CustomerServiceWorkflow(orders))
    outcome = await orch.handle(Request(text=text, customer_id="C00001"))
    store.close()
    orders.close()
    assert outcome.workflow == "customer_service"
    assert outcome.status == status
    assert executor.submitted == []
