"""First visible text of a customer-service turn, as ``orchestrator chat`` shows it: from the
call to ``Orchestrator.stream`` to the first ``reply_facts`` or ``reply_token`` event.

Run it on two trees to compare code before and after a change (issue 44: the checked stream
must show its first text within 1.1× of the token-by-token stream)::

    git worktree add /tmp/before <commit>      # the code before
    PYTHONPATH=/tmp/before python benchmarks/first_visible.py --label before --out DIR
    PYTHONPATH=. python benchmarks/first_visible.py --label after --out DIR

Each run: a store seeded the same way, the same turns (tool turns and no-tool questions, in
English and Chinese) against ``--server-url``, routing capture off (both sides), one untimed
warm-up turn. It prints and writes ``first_visible_<label>.json`` (per-turn seconds, medians).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

TURNS = (
    ("en", "delivered", "Where is my parcel {id}?"),
    ("zh", "delivered", "订单 {id} 的包裹到哪了？"),
    ("en", None, "Why was I charged a fee on my last bill?"),
    ("zh", None, "为什么我的账单上多了一笔手续费？"),
    ("en", "shipped", "What is the status of order {id}?"),
    ("zh", "shipped", "请帮我查一下订单 {id} 的状态。"),
    ("en", None, "How do I repay my installment early?"),
    ("zh", None, "我想提前还款，怎么操作？"),
)


def order_rows(store: Any) -> list[tuple[str, str, str, str]]:
    """``(order id, status, customer id, customer locale)`` of every order in ``store`` (an
    ``OrderStore``), by order id. benchmarks/truth.py uses it too; this file imports nothing
    from benchmarks/ because it also runs on an older tree (PYTHONPATH=<before>)."""
    from sqlalchemy import select

    from workflows.customer_service.store import Order
    from workflows.customer_service.store.schema import Customer

    with store.sessions() as session:
        return [
            tuple(row)
            for row in session.execute(
                select(Order.id, Order.status, Order.customer_id, Customer.locale)
                .join(Customer, Customer.id == Order.customer_id)
                .order_by(Order.id)
            )
        ]


def _orders(store: Any) -> dict[str, tuple[str, str]]:
    picked: dict[str, tuple[str, str]] = {}
    for order_id, status, customer, locale in order_rows(store):
        picked.setdefault(f"{locale[:2]}-{status}", (order_id, customer))
        picked.setdefault(f"{locale[:2]}-None", (order_id, customer))
    return picked


async def run(server_url: str, rounds: int) -> list[dict[str, Any]]:
    """``rounds`` passes over :data:`TURNS` (after one warm-up turn), each a new thread."""
    from orchestrator import Orchestrator, Request, TelemetryStore
    from orchestrator.config import Settings
    from orchestrator.core.client import VLLMClient
    from orchestrator.testing import SCRIPTED_ARCH
    from serving.capture import NoCapture
    from workflows.customer_service import open_workflow
    from workflows.customer_service.store import OrderStore

    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'cs.db'}"
        OrderStore(url).seed(30, seed=9)
        settings = Settings(cs_database_url=url, server_url=server_url)
        picked = _orders(OrderStore(url))
        client = VLLMClient(server_url, "ernie", NoCapture(SCRIPTED_ARCH), timeout_s=300)
        telemetry = TelemetryStore(f"sqlite:///{Path(tmp) / 'tel.db'}")
        try:
            async with open_workflow(settings) as workflow:
                orch = Orchestrator(client, telemetry, [workflow])
                plan = [TURNS[0]] + [t for _ in range(rounds) for t in TURNS]
                for n, (lang, status, text) in enumerate(plan):
                    order_id, customer = picked[f"{lang}-{status}"]
                    request = Request(
                        text=text.format(id=order_id), thread_id=f"fv-{n}", customer_id=customer
                    )
                    started = time.perf_counter()
                    first = None
                    async for event in orch.stream(request):
                        if first is None and event.kind in ("reply_facts", "reply_token"):
                            first = time.perf_counter() - started
                    if n:  # the first is a warm-up
                        out.append({"text": text, "lang": lang, "tool": bool(status),
                                    "first_visible_s": first,
                                    "turn_s": time.perf_counter() - started})  # fmt: skip
        finally:
            await client.aclose()
            telemetry.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-url", default="http://127.0.0.1:8044/v1")
    parser.add_argument("--label", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    args = parser.parse_args()
    rows = asyncio.run(run(args.server_url, args.rounds))

    def med(values: list[float]) -> float | None:
        values = sorted(values)
        return values[len(values) // 2] if values else None

    data = {
        "label": args.label,
        "load_average": list(os.getloadavg()),
        "median_first_visible_s": med([r["first_visible_s"] for r in rows if r["first_visible_s"]]),
        "median_first_visible_no_tool_s": med(
            [r["first_visible_s"] for r in rows if r["first_visible_s"] and not r["tool"]]
        ),
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"first_visible_{args.label}.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in data.items() if k != "rows"}), "->", path)


if __name__ == "__main__":
    main()
