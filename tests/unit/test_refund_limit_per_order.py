"""The automatic refund limit holds per order, and not while a person reviews the order
(tester14 E14: an over-limit order was refunded in full, self-served, in two asks under the
limit; and a part of it self-served in a second thread while a person reviewed the whole)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from workflows.customer_service.store import OrderStore, RefundPolicy, ToolError
from workflows.customer_service.store.tools import OrderTools, _mint_grant

AS_OF = datetime(2026, 11, 30, tzinfo=UTC)
LIMIT = 20_000  # cents


POLICY = RefundPolicy(window_days=30, auto_limit_cents=LIMIT)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seeded") / "cs.db"
    OrderStore(f"sqlite:///{path}", policy=POLICY).seed(60, seed=7, as_of=AS_OF)
    return path


@pytest.fixture
def store(seeded: Path, tmp_path: Path) -> OrderStore:
    """A fresh copy of one seeded store per test (seeding each costs about 2 s)."""
    shutil.copy(seeded, tmp_path / "cs.db")
    return OrderStore(f"sqlite:///{tmp_path / 'cs.db'}", policy=POLICY)


def _tools(store: OrderStore, customer_id: str) -> OrderTools:
    tools = store.tools(customer_id)
    tools.now = lambda: AS_OF
    return tools


def _over_limit_order(store: OrderStore) -> tuple[OrderTools, str, int]:
    """A delivered, refundable order over the limit: ``(tools, order id, cents left)``."""
    for customer in range(1, 61):
        tools = _tools(store, f"C{customer:05d}")
        for order_id in tools.order_ids():
            left, _, why = tools.refundable(order_id)
            if why is None and left > LIMIT + 500:
                return tools, order_id, left
    pytest.skip("the seed has no refundable order over the limit")


def _refund(tools: OrderTools, order_id: str, cents: int, key: str, **write: str):
    grant = _mint_grant("start_refund", tools.customer_id, key)
    args = {"order_id": order_id, "amount_cents": cents}
    return tools.run("start_refund", args, key=key, grant=grant, **write)


def _needs_approval(tools: OrderTools, order_id: str) -> str:
    return tools.run("check_refund_eligibility", {"order_id": order_id}).facts["needs_approval"]


@pytest.mark.parametrize("first", [100, 5_000, 15_000, LIMIT - 1, LIMIT])
def test_a_split_refund_reaches_a_person_once_the_parts_pass_the_limit(
    store: OrderStore, first: int
) -> None:
    tools, order_id, left = _over_limit_order(store)
    _refund(tools, order_id, first, key="t:1")
    second = min(left - first, LIMIT - first + 1)  # what takes the automatic ones over
    with pytest.raises(ToolError) as caught:
        _refund(tools, order_id, second, key="t:2")
    assert caught.value.code == "needs_approval"
    assert "per order" in str(caught.value)
    assert tools.refund_count(order_id) == 1  # nothing written by the refused part
    assert _needs_approval(tools, order_id) == "yes"
    # up to the limit, together, is still self-served
    if first < LIMIT:
        _refund(tools, order_id, LIMIT - first, key="t:3")
        assert tools.refund_count(order_id) == 2


def test_a_person_approves_what_the_limit_holds_back(store: OrderStore) -> None:
    tools, order_id, left = _over_limit_order(store)
    _refund(tools, order_id, 15_000, key="t:1")
    done = _refund(tools, order_id, left - 15_000, key="t:2", approved_by="person:ana")
    assert done.ok and tools.refund_count(order_id) == 2
    assert tools.refundable(order_id)[2] == "already refunded in full"


def _wait_for_person(store: OrderStore, tools: OrderTools, order_id: str, thread: str) -> None:
    action = {"tool": "start_refund", "arguments": {"order_id": order_id}}
    context = {"reason": "refund over the automatic limit", "action": action}
    assert store.record_handoff(thread, 1, tools.customer_id, "refund over the limit", context)


def test_no_refund_self_serves_on_an_order_a_person_reviews(store: OrderStore) -> None:
    tools, order_id, _ = _over_limit_order(store)
    _wait_for_person(store, tools, order_id, "ka")
    assert _needs_approval(tools, order_id) == "yes"
    with pytest.raises(ToolError) as caught:
        _refund(tools, order_id, 100, key="kb:1")  # a small part, from another thread
    assert caught.value.code == "needs_approval"
    assert "reviewing" in str(caught.value)
    assert tools.refund_count(order_id) == 0
    store.resolve_handoff("ka", 1, "rejected", "no")
    _refund(tools, order_id, 100, key="kb:2")  # decided: the limit alone holds again
    assert tools.refund_count(order_id) == 1


def test_a_review_of_another_order_or_customer_holds_nothing_back(store: OrderStore) -> None:
    tools, order_id, _ = _over_limit_order(store)
    other = next(o for o in tools.order_ids() if o != order_id)
    _wait_for_person(store, tools, other, "kc")
    stranger = _tools(store, "C00060" if tools.customer_id != "C00060" else "C00059")
    _wait_for_person(store, stranger, order_id, "kd")  # a stranger's record naming the id
    _refund(tools, order_id, 100, key="ke:1")
    assert tools.refund_count(order_id) == 1
