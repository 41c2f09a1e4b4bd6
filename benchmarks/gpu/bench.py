"""``b128`` / ``b32`` / ``b8`` phases: routed experts off vs on at one concurrency (warm-up,
then three alternating repetitions), and :func:`summarise` of the repetitions."""

from __future__ import annotations

import asyncio
import json
from argparse import Namespace
from typing import Any

from benchmarks.gpu.common import Workspace, log, messages_for, run_orders, texts
from benchmarks.gpu.load import one_call, run_load_mp, summarise_modes

Urls = dict[str, str | None]
#: First guess of one repetition's seconds, by concurrency (then learnt from the runs).
FIRST_ESTIMATE_S = {"128": 15, "32": 30, "8": 70}
ORDER = [("off", "on"), ("on", "off"), ("off", "on")]


def run(ws: Workspace, args: Namespace, urls: Urls, c: int) -> None:
    """Warm both servers at concurrency ``c``, then run :data:`ORDER` with ``args.requests``
    requests each, saving after every repetition; stops (``complete: False``) when the budget
    would be exceeded, and the next ``measure`` resumes where it stopped.

    Raises:
        RuntimeError: Either server is not available.
    """
    on, off = urls["on"], urls["off"]
    if on is None or off is None:
        raise RuntimeError(f"need both servers, have {urls}")
    bases = {"on": on, "off": off}
    key = f"bench_c{c}"
    n = args.requests
    items = texts(ws.data, n, seed=0)
    done = ws.load_results().get(key, {})
    runs = done.setdefault("runs", [])
    record_no_flag_fixture(ws, off)
    if not done.get("warm"):
        warm_n = max(2 * c, 64)
        for name in ("off", "on"):
            batch = [messages_for(items[i % n], f"W{c}-{i:04d}") for i in range(warm_n)]
            r = run_load_mp(bases[name], batch, c)
            log(f"c={c} warm-up {name}: {r['output_tok_s']} tok/s ({r['wall_s']} s)")
        done["warm"] = True

    def measure(rep: int, name: str) -> dict[str, Any]:
        batch = [messages_for(t, f"R{c}-{rep}-{i:04d}") for i, t in enumerate(items)]
        return run_load_mp(bases[name], batch, c)

    def describe(r: dict[str, Any]) -> str:
        return (
            f"{r['output_tok_s']} tok/s, ttft p50 {r['ttft_p50_s']}, "
            f"lat p50 {r['latency_p50_s']}, {r['wall_s']} s, errors {r['errors']}"
        )

    first = FIRST_ESTIMATE_S.get(str(c), 60)
    if run_orders(
        ws, key, done, ORDER, measure, describe, c=c, budget_s=args.budget_s, first_estimate_s=first
    ):
        ws.save_results({key: {**done, "complete": True, "summary": summarise(runs)}})


def record_no_flag_fixture(ws: Workspace, base: str) -> None:
    """One short response from the server started without --enable-return-routed-experts."""
    import httpx

    fixtures = json.loads(ws.fixtures_file.read_text()) if ws.fixtures_file.is_file() else {}
    if "chat_no_flag" in fixtures:
        return

    async def go() -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=120) as client:
            msgs = [{"role": "user", "content": "Where is my refund?"}]
            return (await one_call(client, base, msgs, 4, False, {"ignore_eos": False}))["body"]

    fixtures["chat_no_flag"] = asyncio.run(go())
    ws.write_state_and_out(ws.fixtures_file.name, json.dumps(fixtures, indent=1))


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per mode (``off``, ``on``): repetitions, mean and each output tok/s, TTFT p50/p99 (s)
    pooled over all streamed requests, mean latency p50/p99 (s), mean body bytes, errors; and
    ``capture_overhead_pct`` = 100 x (1 - on / off output tok/s) when both were run."""
    out: dict[str, Any] = summarise_modes(runs, ("off", "on"), extra_means=("latency_p99_s",))
    if "on" in out and "off" in out:
        out["capture_overhead_pct"] = round(
            100.0 * (1 - out["on"]["output_tok_s_mean"] / out["off"]["output_tok_s_mean"]), 2
        )
    return out
