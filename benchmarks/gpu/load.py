"""The load generator: requests with a fixed number in flight, over one or several client
processes, and the summary of one load (throughput, latency and TTFT percentiles).

Percentiles here pick the nearest sample (``method="nearest"``), as from the first session, so
figures stay comparable across sessions.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import random
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from benchmarks.gpu.common import MAX_TOKENS
from benchmarks.harness import percentile

if TYPE_CHECKING:
    import httpx

Messages = list[dict[str, str]]
#: One request of a load: chat messages, or a prompt of token ids (a completions call).
Request = Messages | list[int]


def pct(values: list[float], q: float) -> float | None:
    """Nearest-sample percentile, ``q`` as a fraction (0.99); ``None`` for no values."""
    return percentile(values, 100 * q, method="nearest")


def chat_request(
    messages: Messages, max_tokens: int, *, stream: bool, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The body of a benchmark chat call: model ``ernie``, temperature 0, ``ignore_eos`` (so
    every call writes ``max_tokens``), ``return_token_ids``; streamed with the usage when
    ``stream``; ``extra`` fields added last."""
    body: dict[str, Any] = {
        "model": "ernie",
        "messages": messages,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "ignore_eos": True,
        "return_token_ids": True,
    }
    if stream:
        body.update(stream=True, stream_options={"include_usage": True})
    return {**body, **(extra or {})}


def completion_request(
    prompt_ids: list[int], max_tokens: int, *, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The body of a benchmark completions call with a token-id prompt: model ``ernie``,
    temperature 0, ``ignore_eos`` (every call writes ``max_tokens``); ``extra`` fields last."""
    body: dict[str, Any] = {
        "model": "ernie",
        "prompt": prompt_ids,
        "max_tokens": max_tokens,
        "temperature": 0.0,
        "ignore_eos": True,
    }
    return {**body, **(extra or {})}


async def sse_chunks(resp: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON chunks of a streamed chat response (its ``data:`` lines but ``[DONE]``)."""
    async for line in resp.aiter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            yield json.loads(line[6:])


async def one_call(
    client: httpx.AsyncClient,
    base: str,
    messages: Request,
    max_tokens: int,
    stream: bool,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One chat completion (temperature 0, ``ignore_eos``, ``return_token_ids``); when
    ``messages`` is a list of token ids, one non-streamed ``/completions`` call with that prompt
    (:func:`completion_request`).

    Returns:
        Non-streaming: ``latency`` (s), ``tokens``, ``bytes`` of the body and the ``body``.
        Streaming: ``latency`` (s), ``ttft`` (s to the first chunk with choices), ``tokens``.

    Raises:
        httpx.HTTPStatusError: The server answered an error status.
    """
    if messages and isinstance(messages[0], int):  # token ids: a completions call
        body = completion_request(messages, max_tokens, extra=extra)
        endpoint, stream = "completions", False
    else:
        body = chat_request(cast(Messages, messages), max_tokens, stream=stream, extra=extra)
        endpoint = "chat/completions"
    t0 = time.perf_counter()
    if not stream:
        resp = await client.post(f"{base}/{endpoint}", json=body)
        raw = resp.content
        resp.raise_for_status()
        data = json.loads(raw)
        return {
            "latency": time.perf_counter() - t0,
            "tokens": data["usage"]["completion_tokens"],
            "bytes": len(raw),
            "body": data,
        }
    ttft = None
    tokens = 0
    async with client.stream("POST", f"{base}/chat/completions", json=body) as resp:
        resp.raise_for_status()
        async for chunk in sse_chunks(resp):
            if ttft is None and chunk.get("choices"):
                ttft = time.perf_counter() - t0
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
    return {"latency": time.perf_counter() - t0, "ttft": ttft, "tokens": tokens, "stream": True}


#: Key of an ``extra`` that samples the routed-experts encoding per request:
#: Seconds between forking the client processes of :func:`run_load_mp` and their common start.
START_BARRIER_S = 1.0
#: ``{SAMPLE_KEY: {"rate": r, "seed": s}}`` sends ``vllm_xargs.routed_experts`` ``counts`` on a
#: request whose draw is below ``r`` and ``none`` on the others (see :func:`request_extra`).
SAMPLE_KEY = "sample_routed_experts"


def request_extra(extra: dict[str, Any] | None, i: int) -> dict[str, Any] | None:
    """The fields added to request ``i`` (its position in the whole workload): ``extra``
    itself, or for a sampling ``extra`` (:data:`SAMPLE_KEY`) ``counts`` or ``none`` drawn from
    ``random.Random(seed * 1_000_003 + i)``: independent of the request's content, so the
    sampled calls' load shares are unbiased, and the same in every repetition."""
    if not extra or SAMPLE_KEY not in extra:
        return extra
    spec = extra[SAMPLE_KEY]
    rest = {k: v for k, v in extra.items() if k != SAMPLE_KEY}
    draw = random.Random(int(spec.get("seed", 0)) * 1_000_003 + i).random()
    mode = "counts" if draw < float(spec["rate"]) else "none"
    return {**rest, "vllm_xargs": {"routed_experts": mode}}


def _load_shard(args: tuple[str, list[Request], dict[str, Any]]) -> dict[str, Any]:
    """One client process of :func:`run_load_mp` (module level, so it can be pickled): ``(base,
    its requests, run_load keyword arguments)``."""
    base, batch, options = args
    return asyncio.run(run_load(base, batch, raw=True, **options))


def run_load_mp(
    base: str,
    batch: Sequence[Request],
    concurrency: int,
    *,
    per_process: int = 16,
    stream_every: int = 8,
    extra: dict[str, Any] | None = None,
    max_tokens: int = MAX_TOKENS,
    keep_routing: bool = False,
) -> dict[str, Any]:
    """:func:`run_load` spread over ``ceil(concurrency / per_process)`` client processes
    (``extra``: fields added to every request body, e.g. ``vllm_xargs``; ``keep_routing``: the
    summary's ``routing`` lists each call's :func:`routing_of`).

    One Python process with one httpx pool could not keep 128 requests in flight in the first
    session (throughput at 128 fell below 32, TTFT p50 above 1 s); several processes remove
    the client as the limit. Shard ``j`` takes requests ``j, j + P, ...``; the wall time is
    first start to last finish over all processes.
    """
    options: dict[str, Any] = {
        "stream_every": stream_every,
        "extra": extra,
        "max_tokens": max_tokens,
        "keep_routing": keep_routing,
    }
    procs = max(1, -(-concurrency // per_process))
    if procs == 1:
        return asyncio.run(run_load(base, batch, concurrency=concurrency, **options))
    shards = []
    # every process starts sending at the same wall time (forking and importing take a few
    # hundred ms, unevenly): the load's wall time is then not stretched by a late process
    t_go = time.time() + START_BARRIER_S
    for j in range(procs):
        index = list(range(j, len(batch), procs))
        conc = concurrency // procs + (1 if j < concurrency % procs else 0)
        shard_options = {**options, "concurrency": conc, "index": index, "t_go": t_go}
        shards.append((base, [batch[i] for i in index], shard_options))
    with mp.get_context("fork").Pool(procs) as pool:
        parts = pool.map(_load_shard, shards)
    results = [r for part in parts for r in part["results"]]
    errors = [e for part in parts for e in part["errors"]]
    wall = max(p["t_end"] for p in parts) - min(p["t_start"] for p in parts)
    out = summarise_load(results, errors, len(batch), concurrency, wall)
    out["client_processes"] = procs
    if keep_routing:
        out["routing"] = [r["routing"] for r in results if "routing" in r]
    return out


def routing_of(body: dict[str, Any], asked: str | None) -> dict[str, Any]:
    """What a non-streamed response says about routed experts, for checking after the load:
    ``asked`` (the request's ``vllm_xargs`` mode, None for none), ``present`` (the choice has
    the field), ``routed_experts`` (its value), ``prompt_tokens``, ``completion_tokens``."""
    choice = (body.get("choices") or [{}])[0]
    usage = body.get("usage") or {}
    return {
        "asked": asked,
        "present": "routed_experts" in choice,
        "routed_experts": choice.get("routed_experts"),
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
    }


@dataclass
class Pool:
    """What :func:`worker_pool` returns: each call's result, each failure (``Type: message``,
    300 characters at most), the wall seconds of the load, and its start and end (epoch)."""

    results: list[dict[str, Any]]
    errors: list[str]
    wall_s: float
    t_start: float
    t_end: float


async def worker_pool(
    n: int,
    concurrency: int,
    call: Callable[[httpx.AsyncClient, int], Awaitable[dict[str, Any]]],
    *,
    t_go: float | None = None,
) -> Pool:
    """``call(client, i)`` for ``i`` in ``range(n)``, ``concurrency`` at a time, on one HTTP
    client (``concurrency + 8`` connections, 600 s timeout); the clock starts at ``t_go``
    (epoch seconds, a start barrier shared by processes) when given. A call that raises is
    counted in :attr:`Pool.errors`, not raised."""
    import httpx

    limits = httpx.Limits(
        max_connections=concurrency + 8, max_keepalive_connections=concurrency + 8
    )
    results: list[dict[str, Any]] = []
    errors: list[str] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)
    async with httpx.AsyncClient(limits=limits, timeout=600.0) as client:

        async def worker() -> None:
            while True:
                try:
                    i = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    results.append(await call(client, i))
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {exc}"[:300])

        if t_go is not None:
            await asyncio.sleep(max(0.0, t_go - time.time()))
        t_start = time.time()
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
        t_end = time.time()
    return Pool(results, errors, wall, t_start, t_end)


async def run_load(
    base: str,
    batch: Sequence[Request],
    concurrency: int,
    *,
    stream_every: int = 8,
    max_tokens: int = MAX_TOKENS,
    keep_bodies: bool = False,
    index: list[int] | None = None,
    raw: bool = False,
    extra: dict[str, Any] | None = None,
    t_go: float | None = None,
    keep_routing: bool = False,
) -> dict[str, Any]:
    """Send ``batch`` with ``concurrency`` requests in flight; every ``stream_every``-th request
    (by ``index``, the requests' positions in the whole workload) is streamed to measure TTFT
    (0: none). ``raw`` returns the per-request results for :func:`run_load_mp` to pool;
    ``keep_routing`` keeps each non-streamed call's :func:`routing_of` (``routing``)."""
    index = index if index is not None else list(range(len(batch)))

    async def call(client: httpx.AsyncClient, i: int) -> dict[str, Any]:
        stream = bool(stream_every) and index[i] % stream_every == stream_every - 1
        fields = request_extra(extra, index[i])
        r = await one_call(client, base, batch[i], max_tokens, stream, fields)
        r["i"] = i
        if keep_routing and "body" in r:
            asked = ((fields or {}).get("vllm_xargs") or {}).get("routed_experts")
            r["routing"] = routing_of(r["body"], asked)
        if not keep_bodies:
            r.pop("body", None)
        return r

    pool = await worker_pool(len(batch), concurrency, call, t_go=t_go)
    results, errors = pool.results, pool.errors
    if raw:
        return {"results": results, "errors": errors, "t_start": pool.t_start, "t_end": pool.t_end}
    out = summarise_load(results, errors, len(batch), concurrency, pool.wall_s)
    ordered = sorted(results, key=lambda r: r["i"])
    if keep_bodies:
        out["bodies"] = [r.get("body") for r in ordered]
    if keep_routing:
        out["routing"] = [r["routing"] for r in ordered if "routing" in r]
    return out


def summarise_load(
    results: list[dict[str, Any]], errors: list[str], n: int, concurrency: int, wall: float
) -> dict[str, Any]:
    """One load's figures: counts, ``wall_s``, ``output_tok_s``, ``requests_s``, latency
    p50/p99 of the non-streamed requests and TTFT p50/p99 of the streamed ones (seconds), the
    TTFT samples, and the mean body size in bytes."""
    plain = [r for r in results if not r.get("stream")]
    streamed = [r for r in results if r.get("stream")]
    tokens = sum(r["tokens"] for r in results)
    ttfts = [r["ttft"] for r in streamed if r.get("ttft") is not None]
    return {
        "requests": n,
        "ok": len(results),
        "errors": len(errors),
        "error_samples": errors[:3],
        "concurrency": concurrency,
        "wall_s": round(wall, 3),
        "output_tokens": tokens,
        "output_tok_s": round(tokens / wall, 1),
        "requests_s": round(len(results) / wall, 2),
        "latency_p50_s": pct([r["latency"] for r in plain], 0.5),
        "latency_p99_s": pct([r["latency"] for r in plain], 0.99),
        "ttft_samples": len(streamed),
        "ttft_p50_s": pct(ttfts, 0.5),
        "ttft_p99_s": pct(ttfts, 0.99),
        "ttft_values_s": [round(t, 4) for t in ttfts],
        "body_bytes_mean": round(statistics.fmean([r["bytes"] for r in plain]), 1)
        if plain
        else None,
    }


def summarise_modes(
    runs: list[dict[str, Any]], modes: Sequence[str], *, extra_means: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """Each mode's repetitions (``runs``: :func:`summarise_load` results, each with its ``mode``)
    pooled, for the modes in ``modes`` that were run: repetitions, each and mean output tok/s,
    mean body bytes (a missing size counts 0), TTFT p50/p99 (s) and samples pooled over all
    streamed requests, mean latency p50 (s), errors; and ``<key>_mean`` of each key in
    ``extra_means`` (``"latency_p99_s"``)."""
    out: dict[str, dict[str, Any]] = {}
    for mode in modes:
        rs = [r for r in runs if r["mode"] == mode]
        if not rs:
            continue
        ttfts = [v for r in rs for v in r.get("ttft_values_s", [])]
        out[mode] = {
            "reps": len(rs),
            "output_tok_s_each": [r["output_tok_s"] for r in rs],
            "output_tok_s_mean": round(statistics.fmean(r["output_tok_s"] for r in rs), 1),
            "body_bytes_mean": round(statistics.fmean(r["body_bytes_mean"] or 0 for r in rs), 1),
            "ttft_p50_s": pct(ttfts, 0.5),
            "ttft_p99_s": pct(ttfts, 0.99),
            "ttft_samples": len(ttfts),
            "latency_p50_s_mean": round(statistics.fmean(r["latency_p50_s"] for r in rs), 4),
            "errors": sum(r["errors"] for r in rs),
        }
        for key in extra_means:
            out[mode][f"{key}_mean"] = round(statistics.fmean(r[key] for r in rs), 4)
    return out
