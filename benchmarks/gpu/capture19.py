"""Issue 19 phases: the structured-output and tool probe, routed-experts capture cost by
encoding (``cap128``, ``cap32``), experts of streamed calls (``stream``), and the check that the
plugin's counts equal the engine's own ids (``agree19``).

Capture modes (the on-server runs the project's vLLM plugin, :mod:`serving.vllm_plugin`; a
request picks its encoding with ``vllm_xargs``):

* ``off``: the server started without ``--enable-return-routed-experts``.
* ``ids``: vLLM's own per-token ``.npy`` (what the 2026-11-29 runs measured).
* ``counts``: per-call ``(layer, expert)`` counts computed in the server.
* ``none``: capture on in the engine, nothing returned: the floor any API-side encoding can
  reach (and the cost of a call left out of a sampled capture).
* ``sampled``: per-call sampled capture, ``counts`` on a random quarter of the requests (drawn
  per request, independently of its content: :func:`benchmarks.gpu.load.request_extra`) and
  ``none`` on the rest. Its records are a 25% sample: load shares from them are unbiased, and
  counts scale by 1 / 0.25 to estimate totals.

Since 2026-12-01 the plugin's ``counts`` are compact (non-MoE layers dropped, uint8 below 256
tokens: :func:`serving.vllm_plugin.compact_expert_counts`).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from argparse import Namespace
from typing import Any

from benchmarks.gpu.common import (
    MAX_TOKENS,
    Workspace,
    budget_left,
    log,
    messages_for,
    run_orders,
    texts,
)
from benchmarks.gpu.load import (
    SAMPLE_KEY,
    chat_request,
    pct,
    run_load_mp,
    sse_chunks,
    summarise_modes,
    worker_pool,
)

Urls = dict[str, str | None]

#: Share of requests that carry counts in the ``sampled`` mode.
SAMPLE_RATE = 0.25
#: mode -> (server, extra request fields)
MODES: dict[str, tuple[str, dict[str, Any] | None]] = {
    "off": ("off", None),
    "ids": ("on", {"vllm_xargs": {"routed_experts": "ids"}}),
    "counts": ("on", {"vllm_xargs": {"routed_experts": "counts"}}),
    "none": ("on", {"vllm_xargs": {"routed_experts": "none"}}),
    "sampled": ("on", {SAMPLE_KEY: {"rate": SAMPLE_RATE, "seed": 19}}),
    # 2026-12-01c: a 10% sample, to see how close a lower rate comes to the floor (none)
    "sampled10": ("on", {SAMPLE_KEY: {"rate": 0.10, "seed": 19}}),
}
#: Orders of the three repetitions (each mode once per repetition, order rotated).
ORDERS = {
    4: [
        ["off", "ids", "counts", "none"],
        ["none", "counts", "ids", "off"],
        ["counts", "off", "none", "ids"],
    ],
    3: [["off", "ids", "counts"], ["counts", "ids", "off"], ["ids", "off", "counts"]],
}
#: Orders of cap128 on 2026-12-01 (compact counts, sampled capture; ids measured 2026-11-30).
ORDERS_SAMPLED = [
    ["off", "counts", "none", "sampled"],
    ["sampled", "none", "counts", "off"],
    ["counts", "off", "sampled", "none"],
]


def rotated_orders(modes: list[str], reps: int) -> list[list[str]]:
    """``reps`` orders of ``modes``: repetition ``r`` starts at mode ``r mod len(modes)`` and
    runs on cyclically, every other repetition with the modes after the first reversed, so
    each mode leads once in ``len(modes)`` repetitions, takes each position about equally
    often and does not always follow the same mode (drift of the server over the run, e.g.
    the first loads after a warm-up, then spreads over every mode).

    Raises:
        ValueError: ``modes`` is empty or has duplicates, or ``reps < 1``.
    """
    if not modes or len(set(modes)) != len(modes) or reps < 1:
        raise ValueError(f"need distinct modes and reps >= 1, got {modes!r}, {reps}")
    out = []
    for r in range(reps):
        k = r % len(modes)
        order = modes[k:] + modes[:k]
        out.append(order if r % 2 == 0 else [order[0], *order[1:][::-1]])
    return out


# ---- probe -----------------------------------------------------------------------------------


def probe(ws: Workspace, args: Namespace, urls: Urls) -> None:
    """Structured output (the launcher's probe, :func:`serving.probe.probe_structured_output`)
    and tool calls (``tool_choice`` required and named) on each server; saved under
    ``probe``."""
    import httpx

    from serving.probe import probe_structured_output

    hold = json.loads(ws.hold_file.read_text()) if ws.hold_file.is_file() else {}
    out: dict[str, Any] = {}
    tool = {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Look up an order by its id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string", "maxLength": 12}},
                "required": ["order_id"],
                "additionalProperties": False,
            },
        },
    }
    for name in ("on", "off"):
        base = urls.get(name)
        if base is None:
            continue
        result = probe_structured_output(
            base,
            "ernie",
            log_path=ws.state / f"server_{name}.log",
            command=(hold.get(name) or {}).get("command"),
        )
        entry: dict[str, Any] = {"structured": result.model_dump(), "explain": result.explain()}
        with httpx.Client(timeout=120) as client:
            for label, choice in (
                ("tool_required", "required"),
                ("tool_named", {"type": "function", "function": {"name": "lookup_order"}}),
            ):
                body = {
                    "model": "ernie",
                    "messages": [{"role": "user", "content": "Where is my order A123?"}],
                    "max_tokens": 48,
                    "temperature": 0.0,
                    "tools": [tool],
                    "tool_choice": choice,
                }
                t = time.perf_counter()
                resp = client.post(f"{base}/chat/completions", json=body)
                item: dict[str, Any] = {
                    "status": resp.status_code,
                    "seconds": round(time.perf_counter() - t, 3),
                }
                if resp.status_code == 200:
                    msg = resp.json()["choices"][0]["message"]
                    calls = msg.get("tool_calls") or []
                    item["tool_calls"] = [c.get("function") for c in calls][:2]
                    item["routed_experts_len"] = len(
                        resp.json()["choices"][0].get("routed_experts") or ""
                    )
                else:
                    item["body"] = resp.text[:300]
                entry[label] = item
        out[name] = entry
        log(
            f"probe {name}: structured ok={result.ok} status={result.status}; "
            + ", ".join(
                f"{k} {v['status']}"
                for k, v in entry.items()
                if isinstance(v, dict) and "status" in v
            )
        )
    ws.save_results({"probe": out})


# ---- capture cost by encoding ------------------------------------------------------------------


def capture(ws: Workspace, args: Namespace, urls: Urls, c: int, modes: list[str]) -> None:
    """Warm both servers at concurrency ``c``, then three repetitions of ``args.requests``
    requests in each mode of ``modes`` (rotated order); saved after every load under
    ``capture_c<c>``; resumes where a previous command stopped.

    Raises:
        RuntimeError: A server needed is not available.
    """
    key = f"capture_c{c}"
    n = args.requests
    items = texts(ws.data, n, seed=0)
    done = ws.load_results().get(key, {})
    runs: list[dict[str, Any]] = done.setdefault("runs", [])
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"unknown capture mode(s) {unknown}; choose from {', '.join(MODES)}")
    for mode in modes:
        if urls.get(MODES[mode][0]) is None:
            raise RuntimeError(f"mode {mode} needs server {MODES[mode][0]}; have {urls}")
    if not done.get("warm"):
        # 2026-12-01: 256 requests of warm-up left the first repetition the slowest of every
        # mode; four waves of c (at least 512 requests) per server now
        warm_n = max(4 * c, 512)
        for server in ("off", "on"):
            batch = [messages_for(items[i % n], f"W{c}-{i:04d}") for i in range(warm_n)]
            r = run_load_mp(
                str(urls[server]), batch, c, extra=MODES["counts"][1] if server == "on" else None
            )
            log(f"c={c} warm-up {server}: {r['output_tok_s']} tok/s ({r['wall_s']} s)")
        done["warm"] = True
    reps = int(getattr(args, "cap_reps", 0) or 0)
    if reps:
        orders = rotated_orders(modes, reps)
    else:
        orders = ORDERS_SAMPLED if "sampled" in modes else ORDERS[len(modes)]
    done["orders"] = orders
    done["sample_rate"] = SAMPLE_RATE

    def measure(rep: int, mode: str) -> dict[str, Any]:
        server, extra = MODES[mode]
        batch = [messages_for(t, f"C{c}-{rep}-{mode}-{i:04d}") for i, t in enumerate(items)]
        return run_load_mp(str(urls[server]), batch, c, extra=extra)

    def describe(r: dict[str, Any]) -> str:
        return (
            f"{r['output_tok_s']} tok/s, body {r['body_bytes_mean']} B, "
            f"ttft p50 {r['ttft_p50_s']}, {r['wall_s']} s, errors {r['errors']}"
        )

    first = 10.0 if c >= 128 else 20.0
    if run_orders(
        ws,
        key,
        done,
        orders,
        measure,
        describe,
        c=c,
        budget_s=args.budget_s,
        first_estimate_s=first,
    ):
        ws.save_results({key: {**done, "complete": True, "summary": summarise(runs, modes)}})


def summarise(runs: list[dict[str, Any]], modes: list[str]) -> dict[str, Any]:
    """Per mode: repetitions, each and mean output tok/s, body bytes, TTFT p50/p99 pooled,
    latency p50 mean, errors; and ``overhead_pct`` of each mode against ``off`` (100 x (1 -
    mode / off) of the means), with the per-repetition overheads (same repetition's off)."""
    out: dict[str, Any] = summarise_modes(runs, modes)
    off = out.get("off", {}).get("output_tok_s_mean")
    if off:
        for mode in modes:
            if mode != "off" and mode in out:
                out[mode]["overhead_pct"] = round(
                    100.0 * (1 - out[mode]["output_tok_s_mean"] / off), 2
                )
                per_rep = []
                for r in runs:
                    if r["mode"] != mode:
                        continue
                    o = next((x for x in runs if x["mode"] == "off" and x["rep"] == r["rep"]), None)
                    if o:
                        per_rep.append(
                            round(100.0 * (1 - r["output_tok_s"] / o["output_tok_s"]), 2)
                        )
                out[mode]["overhead_pct_each_rep"] = per_rep
                if per_rep:
                    # robust to one slow repetition (the paired figure: same rep's off)
                    out[mode]["overhead_pct_median_of_reps"] = round(statistics.median(per_rep), 2)
    if "sampled" in out:
        out["sampled"]["sample_rate"] = SAMPLE_RATE
    return out


# ---- experts of streamed calls -------------------------------------------------------------------


async def _stream_call(
    client: Any, base: str, messages: list[dict[str, str]], max_tokens: int
) -> dict[str, Any]:
    """One streamed chat call with ``return_token_ids``: ttft, latency, prompt and completion
    ids."""
    body = chat_request(messages, max_tokens, stream=True)
    t0 = time.perf_counter()
    ttft = None
    prompt_ids: list[int] = []
    completion_ids: list[int] = []
    usage: dict[str, Any] = {}
    async with client.stream("POST", f"{base}/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for chunk in sse_chunks(resp):
            if chunk.get("prompt_token_ids"):
                prompt_ids = list(chunk["prompt_token_ids"])
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or []:
                ids = choice.get("token_ids") or []
                if ids and ttft is None:
                    ttft = time.perf_counter() - t0
                completion_ids.extend(ids)
    return {
        "ttft": ttft,
        "latency": time.perf_counter() - t0,
        "prompt_ids": prompt_ids,
        "completion_ids": completion_ids,
        "usage": usage,
    }


async def reprefill(
    client: Any, base: str, prompt_ids: list[int], completion_ids: list[int], mode: str = "counts"
) -> tuple[dict[str, Any], float]:
    """The streamed call's expert record: one non-streamed completions request whose prompt is
    the call's prompt ids and all completion ids but the last (the last sampled token never
    passed through the model), ``max_tokens=1``. Its ``routed_experts`` rows are then exactly
    the original call's ``prompt + completion - 1`` routed tokens; the prefix cache holds
    them (vLLM keeps each cached slot's routing), so the engine recomputes only the uncached
    tail. Returns the body and the seconds it took."""
    body = {
        "model": "ernie",
        "prompt": prompt_ids + completion_ids[:-1],
        "max_tokens": 1,
        "temperature": 0.0,
        "vllm_xargs": {"routed_experts": mode},
    }
    t0 = time.perf_counter()
    resp = await client.post(f"{base}/completions", json=body)
    resp.raise_for_status()
    return resp.json(), time.perf_counter() - t0


def stream(ws: Workspace, args: Namespace, urls: Urls) -> None:
    """Streamed calls at concurrency 32 with and without the re-prefill (alternating, two
    repetitions each of ``args.stream_n`` calls): throughput, the re-prefill's latency, and
    whether every record decodes (:func:`serving.engine_capture.decode_routed_experts`, counts
    summing to routed tokens x top-k). Saved under ``stream_experts``."""
    import httpx

    from serving import MoEArchitecture
    from serving.engine_capture import decode_routed_experts

    base = urls["on"]
    if base is None:
        raise RuntimeError("the routed-experts server is not available")
    arch = MoEArchitecture.from_checkpoint(ws.ckpt)
    n, c = args.stream_n, 32
    items = texts(ws.data, n, seed=5)
    runs: list[dict[str, Any]] = []

    async def load(tag: str, with_reprefill: bool) -> dict[str, Any]:
        async def call(client: httpx.AsyncClient, i: int) -> dict[str, Any]:
            msgs = messages_for(items[i], f"{tag}-{i:04d}")
            r = await _stream_call(client, base, msgs, MAX_TOKENS)
            if with_reprefill:
                body, secs = await reprefill(client, base, r["prompt_ids"], r["completion_ids"])
                r["reprefill_s"] = secs
                r["reprefill_bytes"] = len(json.dumps(body))
                trace = decode_routed_experts(
                    body["choices"][0],
                    prompt_tokens=len(r["prompt_ids"]),
                    completion_tokens=len(r["completion_ids"]),
                    arch=arch,
                    response=body,
                )
                r["decoded"] = bool(trace.has_routing)
                r["source"] = trace.source.value
            return r

        pool = await worker_pool(n, c, call)
        res, errors, wall = pool.results, pool.errors, pool.wall_s
        tokens = sum(len(r["completion_ids"]) for r in res)
        out = {
            "with_reprefill": with_reprefill,
            "calls": n,
            "ok": len(res),
            "errors": len(errors),
            "error_samples": errors[:3],
            "wall_s": round(wall, 3),
            "output_tok_s": round(tokens / wall, 1),
            "ttft_p50_s": pct([r["ttft"] for r in res if r["ttft"] is not None], 0.5),
            "stream_latency_p50_s": pct([r["latency"] for r in res], 0.5),
        }
        if with_reprefill:
            secs = [r["reprefill_s"] for r in res]
            out.update(
                reprefill_p50_s=pct(secs, 0.5),
                reprefill_p99_s=pct(secs, 0.99),
                reprefill_bytes_mean=round(statistics.fmean(r["reprefill_bytes"] for r in res), 1)
                if res
                else None,
                decoded=sum(1 for r in res if r.get("decoded")),
                sources=sorted({r.get("source", "") for r in res}),
            )
        return out

    for rep, order in enumerate([(False, True), (True, False)]):
        for with_re in order:
            if budget_left(args.budget_s) < 30:
                log("stream: out of budget")
                break
            r = asyncio.run(load(f"S{rep}{int(with_re)}", with_re))
            r["rep"] = rep
            runs.append(r)
            log(f"stream rep {rep} reprefill={with_re}: {r['output_tok_s']} tok/s, {r['wall_s']} s")
    summary: dict[str, Any] = {}
    for flag in (False, True):
        rs = [r for r in runs if r["with_reprefill"] is flag]
        if rs:
            summary["with_reprefill" if flag else "stream_only"] = round(
                statistics.fmean(r["output_tok_s"] for r in rs), 1
            )
    if len(summary) == 2:
        summary["cost_pct"] = round(
            100.0 * (1 - summary["with_reprefill"] / summary["stream_only"]), 2
        )
    ws.save_results({"stream_experts": {"runs": runs, "summary": summary, "concurrency": c}})


# ---- counts vs ids, and re-prefill vs the non-streamed record ----------------------------------


def agree(ws: Workspace, args: Namespace, urls: Urls) -> None:
    """For ``args.agree_n`` real requests, one at a time: the same call with ``ids`` and with
    ``counts``, and streamed + re-prefill. Compares the plugin's counts with the counts of the
    engine's own ids (exact equality when the tokens match), and the re-prefill record with
    the non-streamed one (total variation distance of load shares). Saved under
    ``counts_agreement``."""
    import httpx
    import numpy as np

    from serving import MoEArchitecture
    from serving.engine_capture import decode_routed_experts

    base = urls["on"]
    if base is None:
        raise RuntimeError("the routed-experts server is not available")
    arch = MoEArchitecture.from_checkpoint(ws.ckpt)
    items = texts(ws.data, args.agree_n, seed=11)

    def tvd(a: np.ndarray, b: np.ndarray) -> float:
        pa = a / a.sum(axis=1, keepdims=True)
        pb = b / b.sum(axis=1, keepdims=True)
        return float(0.5 * np.abs(pa - pb).sum(axis=1).mean())

    async def go() -> dict[str, Any]:
        rows = []
        async with httpx.AsyncClient(timeout=300) as client:
            for i, text in enumerate(items):
                msgs = messages_for(text, f"A19-{i:04d}")
                traces = {}
                token_ids = {}
                for mode in ("ids", "counts"):
                    body = {
                        "model": "ernie",
                        "messages": msgs,
                        "max_tokens": MAX_TOKENS,
                        "temperature": 0.0,
                        "ignore_eos": True,
                        "return_token_ids": True,
                        "vllm_xargs": {"routed_experts": mode},
                    }
                    resp = (await client.post(f"{base}/chat/completions", json=body)).json()
                    usage = resp["usage"]
                    traces[mode] = decode_routed_experts(
                        resp["choices"][0],
                        prompt_tokens=usage["prompt_tokens"],
                        completion_tokens=usage["completion_tokens"],
                        arch=arch,
                        response=resp,
                    )
                    token_ids[mode] = resp["choices"][0].get("token_ids")
                s = await _stream_call(client, base, msgs, MAX_TOKENS)
                again, _ = await reprefill(client, base, s["prompt_ids"], s["completion_ids"])
                traces["reprefill"] = decode_routed_experts(
                    again["choices"][0],
                    prompt_tokens=len(s["prompt_ids"]),
                    completion_tokens=len(s["completion_ids"]),
                    arch=arch,
                    response=again,
                )
                a = traces["ids"].expert_counts()
                rows.append(
                    {
                        "same_tokens": token_ids["ids"] == token_ids["counts"],
                        "counts_equal_ids": bool(
                            np.array_equal(a, traces["counts"].expert_counts())
                        ),
                        "tvd_counts_vs_ids": tvd(a, traces["counts"].expert_counts()),
                        "stream_same_tokens": s["completion_ids"] == token_ids["ids"],
                        "reprefill_equal_ids": bool(
                            np.array_equal(a, traces["reprefill"].expert_counts())
                        ),
                        "tvd_reprefill_vs_ids": tvd(a, traces["reprefill"].expert_counts()),
                        "sources": [t.source.value for t in traces.values()],
                    }
                )
        return {
            "calls": len(rows),
            "counts_equal_ids": sum(r["counts_equal_ids"] for r in rows),
            "same_tokens": sum(r["same_tokens"] for r in rows),
            "tvd_counts_vs_ids_max": max((r["tvd_counts_vs_ids"] for r in rows), default=None),
            "reprefill_equal_ids": sum(r["reprefill_equal_ids"] for r in rows),
            "stream_same_tokens": sum(r["stream_same_tokens"] for r in rows),
            "tvd_reprefill_vs_ids_median": statistics.median(
                [r["tvd_reprefill_vs_ids"] for r in rows]
            )
            if rows
            else None,
            "tvd_reprefill_vs_ids_max": max(
                (r["tvd_reprefill_vs_ids"] for r in rows), default=None
            ),
            "rows": rows,
        }

    result = asyncio.run(go())
    log(
        f"agree19: counts == ids counts in {result['counts_equal_ids']}/{result['calls']}, "
        f"reprefill == ids counts in {result['reprefill_equal_ids']}/{result['calls']}"
    )
    ws.save_results({"counts_agreement": result})
