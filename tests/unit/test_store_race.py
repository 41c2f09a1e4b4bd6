"""Two processes racing writes of one order produce exactly one decision (tester5 finding 3).

Two real processes (``multiprocessing``, spawn) call the one write path,
:func:`~workflows.customer_service.policy.execute_write`, for the same order at the same moment
(a barrier), each with its own valid, confirmed action (the same customer in two conversations:
keys ``tab0:2`` / ``tab1:2``), :data:`REPEATS` times per kind of race, on a SQLite file and on a
real PostgreSQL server. One pair of processes runs every race of both databases; they are
forked (``spawn`` would import the workflows again in each, ~4 s on the 2-core CI machine) and
open their own connections (the parent's engines are disposed before the fork). Kinds:

* ``refund_full``: both refund the whole order: one refund row, the other is told
  "already refunded in full" (in Chinese: 已全额退款);
* ``refund_part``: both refund 60 % of it: one row, the other is told it is more than what is
  left (超过可退金额); the refunds never add up to more than the total;
* ``refund_same_key``: one conversation's retry (the same key) in both: one row, the same
  refund id to both (idempotency is kept);
* ``cancel_twice``: one cancel writes (only a writing cancel reads the clock), the other is told
  it was cancelled already and gets the winner's cancel time;
* ``address_vs_cancel``: either the address change came first (its row is older than the cancel)
  or it is refused because the order is cancelled (订单已取消); never a change after the cancel;
* ``refund_vs_cancel``: a delivered order refunds and does not cancel; an unshipped one
  cancels and does not refund (these two never compete for one state; a guard).

Raise the count with ``ORCH_STORE_RACES`` (e.g. 300) for a long run.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from skills.reply import fact_sentence
from workflows.customer_service.acting import refusal
from workflows.customer_service.policy import WriteAction, execute_write
from workflows.customer_service.store import (
    Customer,
    Order,
    OrderStore,
    OrderTools,
    Refund,
    ToolError,
)
from workflows.customer_service.store.schema import AddressChange, Shipment

sys.path.insert(0, str(Path(__file__).parent))
from handoff_races import run_racers
from postgres_server import PostgresServer

REPEATS = int(os.environ.get("ORCH_STORE_RACES", "10"))
KINDS = (
    "refund_full",
    "refund_part",
    "refund_same_key",
    "cancel_twice",
    "address_vs_cancel",
    "refund_vs_cancel",
)
BACKENDS = ("sqlite", "postgresql")
CUSTOMER = "C00001"
NEW_ADDRESS = {0: "12 Harbour Road, Springfield", 1: "上海市浦东新区世纪大道100号"}


def _ask(tool: str, order_id: str, side: int) -> str:
    """The customer's own ask, in English on one side and in Chinese on the other."""
    en = {
        "start_refund": f"Please refund {order_id}",
        "cancel_order": f"Please cancel {order_id}",
        "change_address": f"Please change the address of {order_id} to {NEW_ADDRESS[0]}",
    }
    zh = {
        "start_refund": f"请退款{order_id}",
        "cancel_order": f"请取消订单{order_id}",
        "change_address": f"请把{order_id}的地址改成{NEW_ADDRESS[1]}",
    }
    return (en if side == 0 else zh)[tool]


def _side(tool: str, order_id: str, side: int, cents: int = 0, key: str = "") -> dict[str, Any]:
    """One process's write of a race: the tool, its arguments, the ask and the key."""
    arguments: dict[str, Any] = {"order_id": order_id}
    if tool == "start_refund":
        arguments |= {"amount_cents": cents, "reason": "broken"}
    if tool == "change_address":
        arguments["new_address"] = NEW_ADDRESS[side]
    return {"tool": tool, "arguments": arguments, "ask": _ask(tool, order_id, side),
            "key": key or f"tab{side}:2"}  # fmt: skip


def _case(kind: str, n: int, total: int) -> tuple[str, dict[str, Any]]:
    """The order a race needs (``delivered`` or ``processing``) and the two sides' writes."""
    order_id = f"ORD-9{KINDS.index(kind)}{n:04d}"
    if kind == "refund_vs_cancel":
        status = "delivered" if n % 2 == 0 else "processing"
        sides = [_side("start_refund", order_id, 0, total), _side("cancel_order", order_id, 1)]
    elif kind.startswith("refund"):
        status = "delivered"
        cents = total * 6 // 10 if kind == "refund_part" else total
        key = "tab0:2" if kind == "refund_same_key" else ""
        sides = [_side("start_refund", order_id, side, cents, key) for side in (0, 1)]
    elif kind == "cancel_twice":
        status = "processing"
        sides = [_side("cancel_order", order_id, side) for side in (0, 1)]
    else:
        status = "processing"
        sides = [_side("change_address", order_id, 0), _side("cancel_order", order_id, 1)]
    return status, {"kind": kind, "order_id": order_id, "total": total, "sides": sides}


def _seed(url: str) -> list[dict[str, Any]]:
    """A store with one customer and a fresh order for every race; returns the races."""
    store = OrderStore(url)
    now = datetime.now(UTC)
    races: list[dict[str, Any]] = []
    with store.sessions() as session:
        session.add(
            Customer(id=CUSTOMER, name="Ann Lee", email="ann@example.com", phone="555-0100",
                     locale="en_US", address="1 Old Street, Oldtown", created_at=now)
        )  # fmt: skip
        session.flush()
        for kind in KINDS:
            for n in range(REPEATS):
                total = 1999 + 731 * n % 17_000  # under the automatic limit (USD 200)
                status, race = _case(kind, n, total)
                races.append(race)
                oid = race["order_id"]
                session.add(
                    Order(id=oid, customer_id=CUSTOMER, status=status, currency="USD",
                          placed_at=now - timedelta(days=7), total_cents=total,
                          shipping_address="1 Old Street, Oldtown")
                )  # fmt: skip
                if status == "delivered":
                    session.add(
                        Shipment(order_id=oid, carrier="UPS", tracking_number=f"T{oid}",
                                 status="delivered", shipped_at=now - timedelta(days=5),
                                 estimated_delivery=now - timedelta(days=3),
                                 delivered_at=now - timedelta(days=3))
                    )  # fmt: skip
        session.commit()
    store.close()
    return races


def _write(store: OrderStore, side: dict[str, Any], barrier: Any) -> dict[str, Any]:
    """Run one side's write after the barrier; the result as the reply would word it."""
    clock: list[str] = []

    def now() -> datetime:  # the store reads the clock only when it writes (and to check)
        at = datetime.now(UTC)
        clock.append(at.isoformat())
        return at

    tools = OrderTools(store.sessions, CUSTOMER, policy=store.policy, now=now)
    action = WriteAction(customer_id=CUSTOMER, confirmation="yes", confirmed_by=CUSTOMER, **side)
    barrier.wait(timeout=60)
    try:
        result = execute_write(tools, action)
    except ToolError as exc:
        result = refusal(side["tool"], side["arguments"], exc)
    except Exception as exc:  # an error (a traceback) is a broken race: the test reports it
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "clock": clock}
    shown = result.model_dump()
    return {"ok": result.ok, "error": "", "code": result.error_code, "message": result.message,
            "facts": result.facts, "clock": clock, "en": fact_sentence([shown], "en_US"),
            "zh": fact_sentence([shown], "zh_CN")}  # fmt: skip


def worker(side: int, jobs: list[tuple[str, list[dict[str, Any]]]], barrier: Any, out: Any) -> None:
    """One process of the races (a ``multiprocessing`` target): its results go to ``out``."""
    results: list[list[dict[str, Any]]] = []
    for url, races in jobs:
        store = OrderStore(url)
        results.append([_write(store, race["sides"][side], barrier) for race in races])
        store.close()
    out.put((side, results))


def _after(store: OrderStore, order_id: str) -> dict[str, Any]:
    """What the database holds for one order after its race."""
    with store.sessions() as session:
        order = session.get(Order, order_id)
        assert order is not None
        refunds = list(session.scalars(select(Refund).where(Refund.order_id == order_id)))
        changes = list(
            session.scalars(select(AddressChange).where(AddressChange.order_id == order_id))
        )
        held = {
            "status": order.status,
            "cancelled_at": order.cancelled_at,
            "address": order.shipping_address,
            "refunds": [r.amount_cents for r in refunds],
            "refund_ids": [f"RF-{r.id:06d}" for r in refunds],
            "changes": [c.created_at for c in changes],
        }
    return held


@pytest.fixture(scope="module")
def raced(tmp_path_factory: pytest.TempPathFactory, postgres: PostgresServer) -> dict[str, Any]:
    """Every race on both databases: ``{backend: [(race, (side0, side1), held)]}``."""
    urls = {
        "sqlite": f"sqlite:///{tmp_path_factory.mktemp('race') / 'cs.db'}",
        "postgresql": postgres.create_database("cs_store_race"),
    }
    jobs = [(urls[b], _seed(urls[b])) for b in BACKENDS]
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(side, jobs, barrier, out)) for side in (0, 1)]
    results = run_racers(procs, out, timeout=300)
    raced: dict[str, Any] = {}
    for b, (backend, (url, races)) in enumerate(zip(BACKENDS, jobs, strict=True)):
        store = OrderStore(url)
        raced[backend] = [
            (race, (results[0][b][i], results[1][b][i]), _after(store, race["order_id"]))
            for i, race in enumerate(races)
        ]
        store.close()
    return raced


def _races(raced: dict[str, Any], backend: str, kind: str) -> list[Any]:
    found = [r for r in raced[backend] if r[0]["kind"] == kind]
    assert len(found) == REPEATS
    for race, sides, _ in found:
        assert not any(s["error"] for s in sides), (race["order_id"], sides)  # no traceback
    return found


def _assert_all_hold(
    raced: dict[str, Any], backend: str, kind: str, check: Callable[..., str]
) -> None:
    """``check(race, sides, held)`` on every race of ``kind``: "" or the rule it broke. All
    races are checked before the test fails, so the failure counts them ("3 of 12 ...")."""
    broken = [
        (race["order_id"], why)
        for race, sides, held in _races(raced, backend, kind)
        if (why := check(race, sides, held))
    ]
    print(f"{kind} on {backend}: {len(broken)} of {REPEATS} races broke a rule")
    assert not broken, f"{len(broken)} of {REPEATS} {kind} races on {backend}: {broken[:3]}"


def _one_refund(race: dict[str, Any], sides: Any, held: dict[str, Any]) -> str:
    if sum(held["refunds"]) > race["total"]:
        return f"refunded {sum(held['refunds'])} of {race['total']} ({len(held['refunds'])} rows)"
    if len(held["refunds"]) != 1 or [s["ok"] for s in sides].count(True) != 1:
        return f"{len(held['refunds'])} refund rows, {[s['ok'] for s in sides]} told ok"
    (loser,) = [s for s in sides if not s["ok"]]
    en, zh = {"refund_full": ("already refunded in full", "已全额退款"),
              "refund_part": ("left to refund", "超过可退金额")}[race["kind"]]  # fmt: skip
    if loser["code"] != "policy" or en not in loser["en"] or zh not in loser["zh"]:
        return f"the loser was told {loser['en']!r} / {loser['zh']!r}"
    return ""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["refund_full", "refund_part"])
def test_two_refunds_of_one_order_give_one_refund(raced: Any, backend: str, kind: str) -> None:
    _assert_all_hold(raced, backend, kind, _one_refund)


def _same_refund(race: dict[str, Any], sides: Any, held: dict[str, Any]) -> str:
    if len(held["refunds"]) != 1 or not all(s["ok"] for s in sides):
        return f"{len(held['refunds'])} rows; told {[s['en'] for s in sides]}"
    if {s["facts"]["refund_id"] for s in sides} != set(held["refund_ids"]):
        return f"told {[s['facts']['refund_id'] for s in sides]}, stored {held['refund_ids']}"
    return ""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_retry_with_the_same_key_races_to_the_same_refund(raced: Any, backend: str) -> None:
    _assert_all_hold(raced, backend, "refund_same_key", _same_refund)


def _one_cancel(race: dict[str, Any], sides: Any, held: dict[str, Any]) -> str:
    if not all(s["ok"] for s in sides) or held["status"] != "cancelled":
        return f"status {held['status']}; told {[s['en'] for s in sides]}"
    writers = [s for s in sides if s["clock"]]  # only a cancel that writes reads the clock
    if len(writers) != 1:
        return f"{len(writers)} cancels wrote"
    if held["cancelled_at"].isoformat() != writers[0]["clock"][0]:
        return "the stored cancel time is not the writer's"
    (loser,) = [s for s in sides if not s["clock"]]
    return "" if loser["message"].startswith("already cancelled") else "the loser was not told"


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_cancels_of_one_order_write_once(raced: Any, backend: str) -> None:
    _assert_all_hold(raced, backend, "cancel_twice", _one_cancel)


def _change_before_cancel(race: dict[str, Any], sides: Any, held: dict[str, Any]) -> str:
    change, cancel = sides
    if not cancel["ok"] or held["status"] != "cancelled":
        return f"the cancel was told {cancel['en']!r}"
    if change["ok"]:  # then the change must have run first, and the cancel after it
        if len(held["changes"]) != 1 or held["address"] != NEW_ADDRESS[0]:
            return f"{len(held['changes'])} changes stored, address {held['address']!r}"
        if held["changes"][0] > held["cancelled_at"]:
            return "the address changed after the order was cancelled"
        return ""
    if held["changes"] or held["address"] != "1 Old Street, Oldtown":
        return "refused, yet the address changed"
    if change["code"] != "policy" or "is cancelled" not in change["en"]:
        return f"the change was told {change['en']!r}"
    return "" if "订单已取消" in change["zh"] else f"in Chinese: {change['zh']!r}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_address_change_never_lands_after_the_cancel(raced: Any, backend: str) -> None:
    _assert_all_hold(raced, backend, "address_vs_cancel", _change_before_cancel)
    changed = sum(r[1][0]["ok"] for r in _races(raced, backend, "address_vs_cancel"))
    print(f"address vs cancel on {backend}: the change ran first in {changed} of {REPEATS}")


def _state_decides(race: dict[str, Any], sides: Any, held: dict[str, Any]) -> str:
    refund, cancel = sides
    delivered = race["order_id"][-1] in "02468"
    if refund["ok"] is not delivered or cancel["ok"] is delivered:
        return f"refund told {refund['en']!r}, cancel told {cancel['en']!r}"
    if len(held["refunds"]) != int(delivered):
        return f"{len(held['refunds'])} refund rows"
    return "" if held["status"] == ("delivered" if delivered else "cancelled") else "status"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refund_and_a_cancel_never_both_run(raced: Any, backend: str) -> None:
    _assert_all_hold(raced, backend, "refund_vs_cancel", _state_decides)
