"""``orch`` phase: the project's full path (classifier -> customer-service workflow ->
``VLLMClient`` + ``EngineCapture`` -> SQLite telemetry) vs a plain ``openai`` client sending
the same recorded model calls with the same concurrency.

Both sides run as a user at c=128 would run them: spread over the same number of client
processes (``--orch-procs``, default ``ceil(c / 16)`` like the load generator of
:mod:`benchmarks.gpu.load`), each with its share of the requests in flight; the full path's
processes each write their own SQLite file. One Python event loop cannot drive 128 workflow
requests (2026-11-30: the full path was CPU-bound at one core, 0.354x). The client CPU per
request is the CPU time of every client process (all threads: the telemetry writer too) over
the timed load, divided by the requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import multiprocessing as mp
import statistics
import time
from argparse import Namespace
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.gpu.common import Workspace, budget_left, log, texts
from benchmarks.gpu.diag import STRICT_VARIANT

Urls = dict[str, str | None]
Recorded = dict[str, list[dict[str, Any]]]

#: The index of the request being handled, so :class:`RecordingClient` can file its calls.
CURRENT_REQUEST: contextvars.ContextVar[str | None] = contextvars.ContextVar("req", default=None)
#: Alternating order of the three repetitions.
ORDER = [("full", "plain"), ("plain", "full"), ("full", "plain")]
#: Customers in each load's seeded order store (request ``i`` is customer ``i mod CUSTOMERS``).
CUSTOMERS = 64


class RecordingClient:
    """Wraps the project's client; records each call's arguments per request (for the plain
    client to send the same calls).

    Args:
        inner: The ``VLLMClient``.
        log_: Filled with ``{request index: [call kwargs + messages, ...]}``.
        drop_schema: Send every call without ``json_schema`` (when the server rejects it).
    """

    def __init__(self, inner: Any, log_: Recorded, *, drop_schema: bool = False) -> None:
        self.inner = inner
        #: What a captured call asks for (a call the sample leaves out asks for ``none``).
        self.encoding = getattr(inner.capture, "encoding", "counts")
        self.model_name = inner.model_name
        self.base_url = inner.base_url
        self.log = log_
        self.drop_schema = drop_schema

    async def chat(self, messages: Any, options: Any) -> Any:
        """Record, then forward to the wrapped client."""
        if self.drop_schema:
            options = options.model_copy(update={"json_schema": None})
        key = CURRENT_REQUEST.get()
        entry: dict[str, Any] = {
            "messages": [m.model_dump() for m in messages],
            **options.model_dump(exclude_defaults=True),
        }
        if key is not None:
            self.log.setdefault(key, []).append(entry)
        result = await self.inner.chat(messages, options)
        # the encoding this call asked the server for (the plain client asks the same): a call
        # the capture sample left out is recorded as unavailable and asked for ``none``
        from serving.expert_routing import ExpertRoutingSource  # the device's import path

        left_out = result.routing.source == ExpertRoutingSource.UNAVAILABLE
        entry["enc"] = "none" if left_out else self.encoding
        return result


def run(ws: Workspace, args: Namespace, urls: Urls) -> None:
    """Three alternating repetitions of ``args.orch_n`` requests at ``args.orch_c`` in flight,
    full path vs plain client; requests/s and output tok/s of each, and their ratio.

    Raises:
        RuntimeError: The routed-experts server is not available.
    """
    results = ws.load_results()
    diag = results.get("structured_output_diag", {}).get("on", {})
    strict = diag.get(STRICT_VARIANT, {})
    drop_schema = bool(strict) and strict.get("status") != 200
    probed = (results.get("probe", {}).get("on") or {}).get("structured")
    if probed is not None:  # issue 19: the launcher's probe decides, not an old diagnosis
        drop_schema = not probed.get("ok")
    if drop_schema:
        log("orch: the server rejects the triage json_schema; both paths send it without")
    base = urls["on"]
    if base is None:
        raise RuntimeError("routed-experts server is not available")
    n, c = args.orch_n, args.orch_c
    procs = getattr(args, "orch_procs", 0) or default_procs(c)
    items = texts(ws.data, n, seed=3)
    rate = float(getattr(args, "orch_sample_rate", 1.0) or 1.0)
    runs: list[dict[str, Any]] = []
    recorded: dict[str, Recorded] = {}
    paths = (ws.ckpt, ws.state, ws.out)
    if args.orch_profile:  # an extra, unmeasured run of one client process under cProfile
        per = max(1, c // procs)
        asyncio.run(
            full_path(
                *paths,
                base,
                list(enumerate(items[:128])),
                "PROF",
                per,
                drop_schema,
                sample_rate=rate,
                profile=True,
            )
        )
        log(f"orch: profiled run ({per} in flight, one process) written to orch_profile_PROF.txt")
    log(f"orch: {n} requests, {c} in flight over {procs} client processes on both sides")
    for rep, order in enumerate(ORDER):
        for mode in order:
            if budget_left(args.budget_s) < 60:
                log("orch: out of budget")
                break
            tag = f"O{rep}F"
            if mode == "full":
                r, calls = full_path_mp(
                    paths, base, items, tag, c, drop_schema, procs, sample_rate=rate
                )
                recorded[tag] = calls
            else:
                if tag not in recorded:  # plain before full in this rep: record first
                    r0, calls = full_path_mp(
                        paths, base, items, f"X{rep}F", c, drop_schema, procs, sample_rate=rate
                    )
                    recorded[tag] = {
                        k: json.loads(json.dumps(v).replace(f"X{rep}F-", f"{tag}-"))
                        for k, v in calls.items()
                    }
                    log(f"orch rep {rep}: recording run (unmeasured) {r0['wall_s']} s")
                r = plain_path_mp(base, recorded[tag], tag, f"O{rep}P", c, procs)
            r.update(rep=rep, mode=mode)
            runs.append(r)
            log(
                f"orch rep {rep} {mode}: {r['requests_s']} req/s, {r['output_tok_s']} tok/s, "
                f"{r['wall_s']} s"
            )
            ws.save_results({"orchestration": {"runs": runs, "complete": False}})
    ws.save_results(
        {
            "orchestration": {
                "runs": runs,
                "complete": len(runs) == 6,
                "summary": summarise(runs),
                "requests": n,
                "concurrency_requests": c,
                "client_processes": procs,
                "capture_sample_rate": rate,
                "json_schema_dropped": drop_schema,
                "calls_with_schema": sum(
                    1
                    for calls in recorded.values()
                    for seq in calls.values()
                    for call in seq
                    if call.get("json_schema") is not None
                ),
                "calls_with_tools": sum(
                    1
                    for calls in recorded.values()
                    for seq in calls.values()
                    for call in seq
                    if call.get("tools")
                ),
            }
        }
    )


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean requests/s, output tok/s and wall of each path, and the full / plain ratio
    (``{}`` until both paths ran).

    ``ratio_full_over_plain`` compares the same work: the plain client sends exactly the full
    path's recorded model calls, so the ratio is of output tok/s (equal to plain wall / full
    wall for the same calls and tokens). Requests/s are not comparable: requests whose
    workflow made no model call (e.g. handed to a person before any call) count for the full
    path but have nothing for the plain client to send (``ratio_requests_s`` keeps that
    figure, as the 2026-11-30 report computed it, for comparison only)."""
    full = [r for r in runs if r["mode"] == "full"]
    plain = [r for r in runs if r["mode"] == "plain"]
    if not (full and plain):
        return {}
    f = statistics.fmean(r["requests_s"] for r in full)
    p = statistics.fmean(r["requests_s"] for r in plain)
    ft = statistics.fmean(r["output_tok_s"] for r in full)
    pt = statistics.fmean(r["output_tok_s"] for r in plain)
    fw = statistics.fmean(r["wall_s"] for r in full)
    pw = statistics.fmean(r["wall_s"] for r in plain)
    return {
        "full_requests_s_mean": round(f, 3),
        "plain_requests_s_mean": round(p, 3),
        "ratio_full_over_plain": round(ft / pt, 4),
        "ratio_wall_plain_over_full": round(pw / fw, 4),
        "ratio_requests_s": round(f / p, 4),
        "full_wall_s_mean": round(fw, 3),
        "plain_wall_s_mean": round(pw, 3),
        "full_output_tok_s_mean": round(ft, 1),
        "plain_output_tok_s_mean": round(pt, 1),
        "full_client_cpu_ms_per_request_median": round(
            statistics.median(r["client_cpu_ms_per_request"] for r in full), 2
        ),
        "plain_client_cpu_ms_per_request_median": round(
            statistics.median(r["client_cpu_ms_per_request"] for r in plain), 2
        ),
    }


def default_procs(c: int) -> int:
    """Client processes for ``c`` in flight: ``ceil(c / 16)``, as :func:`benchmarks.gpu.load.
    run_load_mp` spreads the plain load generator."""
    return max(1, -(-c // 16))


def _shares(c: int, procs: int) -> list[int]:
    """In-flight requests of each of ``procs`` processes (``c`` in all)."""
    return [c // procs + (1 if j < c % procs else 0) for j in range(procs)]


def _in_processes(shard: Callable[[Any], Any], jobs: list[tuple[Any, ...]]) -> list[Any]:
    """``shard(job)`` of each job, in order: in this process for one job, else one forked
    client process per job."""
    if len(jobs) == 1:
        return [shard(jobs[0])]
    with mp.get_context("fork").Pool(len(jobs)) as pool:
        return pool.map(shard, jobs)


def _merge(parts: list[dict[str, Any]], procs: int) -> dict[str, Any]:
    """One load's figures from its processes': wall = first start to last finish."""
    wall = max(p["t_end"] for p in parts) - min(p["t_start"] for p in parts)
    requests = sum(p["requests"] for p in parts)
    tokens = sum(p["output_tokens"] for p in parts)
    cpu_s = sum(p["cpu_s"] for p in parts)
    out: dict[str, Any] = {
        "wall_s": round(wall, 3),
        "requests": requests,
        "requests_s": round(requests / wall, 3),
        "model_calls": sum(p["model_calls"] for p in parts),
        "output_tokens": tokens,
        "output_tok_s": round(tokens / wall, 1),
        "client_processes": procs,
        "client_cpu_s": round(cpu_s, 3),
        # all client processes' CPU (every thread) over the timed load, per request
        "client_cpu_ms_per_request": round(1000 * cpu_s / max(1, requests), 3),
    }
    for key in ("statuses", "routing_sources"):
        if any(key in p for p in parts):
            merged: dict[str, int] = {}
            for p in parts:
                for k, v in p.get(key, {}).items():
                    merged[k] = merged.get(k, 0) + v
            out[key] = merged
    if any("telemetry_rows" in p for p in parts):
        out["telemetry_rows"] = sum(p.get("telemetry_rows", 0) for p in parts)
    return out


def _full_shard(job: tuple[Any, ...]) -> tuple[dict[str, Any], Recorded]:
    """One client process of :func:`full_path_mp` (module level, so a pool can run it)."""
    paths, base, shard, tag, c, drop_schema, encoding, rate = job
    return asyncio.run(
        full_path(*paths, base, shard, tag, c, drop_schema, encoding=encoding, sample_rate=rate)
    )


def full_path_mp(
    paths: tuple[Path, Path, Path],
    base: str,
    items: list[str],
    tag: str,
    c: int,
    drop_schema: bool,
    procs: int,
    *,
    encoding: str = "counts",
    sample_rate: float = 1.0,
) -> tuple[dict[str, Any], Recorded]:
    """:func:`full_path` over ``procs`` forked client processes: process ``j`` takes requests
    ``j, j + procs, ...`` with its share of ``c`` in flight and its own telemetry file.

    Returns:
        The merged figures (see :func:`_merge`) and every request's recorded calls.
    """
    jobs = [
        (
            paths,
            base,
            list(enumerate(items))[j::procs],
            f"{tag}",
            share,
            drop_schema,
            encoding,
            sample_rate,
        )
        for j, share in enumerate(_shares(c, procs))
    ]
    parts = _in_processes(_full_shard, jobs)
    calls: Recorded = {}
    for _, recorded in parts:
        calls.update(recorded)
    return _merge([p for p, _ in parts], procs), calls


def _plain_shard(job: tuple[Any, ...]) -> dict[str, Any]:
    base, calls, old, new, c = job
    return asyncio.run(plain_path(base, calls, old, new, c))  # each call's recorded "enc"


def plain_path_mp(
    base: str, calls: Recorded, old: str, new: str, c: int, procs: int
) -> dict[str, Any]:
    """:func:`plain_path` over ``procs`` forked client processes, the requests split as
    :func:`full_path_mp` splits them (request ``i`` to process ``i % procs``)."""
    jobs = [
        (base, {k: v for k, v in calls.items() if int(k) % procs == j}, old, new, share)
        for j, share in enumerate(_shares(c, procs))
    ]
    parts = _in_processes(_plain_shard, jobs)
    return _merge(parts, procs)


@dataclass
class _FullStack:
    """One load's project path: the ``Orchestrator`` over a recording ``VLLMClient``, its
    telemetry store and its seeded order store."""

    orch: Any
    store: Any
    orders: Any
    inner: Any

    @classmethod
    def open(
        cls,
        ckpt: Path,
        state: Path,
        base: str,
        name: str,
        seed: int,
        calls: Recorded,
        *,
        drop_schema: bool,
        encoding: str,
        sample_rate: float,
    ) -> _FullStack:
        """Files ``telemetry_<name>.db`` and ``orders_<name>.db`` in ``state`` (made afresh);
        the capture draws its sample with ``seed``; ``calls`` collects the recorded calls."""
        from orchestrator import Orchestrator, TelemetryStore
        from orchestrator.core.client import VLLMClient
        from serving import EngineCapture, MoEArchitecture
        from workflows.customer_service import CustomerServiceWorkflow
        from workflows.customer_service.store import OrderStore

        arch = MoEArchitecture.from_checkpoint(ckpt)
        db = state / f"telemetry_{name}.db"
        db.unlink(missing_ok=True)
        store = TelemetryStore(f"sqlite:///{db}")
        capture = EngineCapture(arch, encoding, sample_rate=sample_rate, seed=seed)
        inner = VLLMClient(base, "ernie", capture, timeout_s=600)
        client = RecordingClient(inner, calls, drop_schema=drop_schema)
        # the order store users run with (2026-12-01c): without one the workflow has no tools,
        # and runs a and b sent no call with tools; seeded afresh per load, so every load starts
        # alike
        orders = OrderStore(f"sqlite:///{state / f'orders_{name}.db'}")
        orders.seed(CUSTOMERS, seed=0)
        workflow = CustomerServiceWorkflow(orders)
        orch = Orchestrator(client, store, [workflow])  # type: ignore[arg-type]
        return cls(orch, store, orders, inner)

    async def close(self) -> tuple[int, dict[str, int]]:
        """Close everything; returns the telemetry rows and their expert-routing sources."""
        await self.inner.aclose()
        sources: dict[str, int] = {}
        rows = 0
        for record in self.store.calls():
            rows += 1
            source = record.expert_routing_source
            sources[source] = sources.get(source, 0) + 1
        self.store.close()
        self.orders.close()
        return rows, sources


async def _handle_all(
    orch: Any, requests: list[tuple[int, Any]], c: int
) -> tuple[dict[str, int], int]:
    """Every ``(index, Request)`` through ``orch`` with ``c`` in flight; returns the count of
    each outcome status and the output tokens of all model calls."""
    statuses: dict[str, int] = {}
    tokens = 0
    sem = asyncio.Semaphore(c)

    async def one(i: int, req: Any) -> None:
        nonlocal tokens
        async with sem:
            CURRENT_REQUEST.set(str(i))
            outcome = await orch.handle(req)
            statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
            tokens += sum(call.completion_tokens for call in outcome.calls)

    await asyncio.gather(*(one(i, r) for i, r in requests))
    return statuses, tokens


@contextlib.contextmanager
def _profiled(enabled: bool, out: Path, tag: str) -> Iterator[None]:
    """With ``enabled``, where the client's CPU time goes in the block (cProfile): tables by
    own time (top 30) and cumulative time (top 40) in ``<out>/orch_profile[_cum]_<tag>.txt``."""
    if not enabled:
        yield
        return
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    yield
    profiler.disable()
    tables = (("tottime", 30, "orch_profile"), ("cumulative", 40, "orch_profile_cum"))
    for sort, top, name in tables:
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats(sort).print_stats(top)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}_{tag}.txt").write_text(buf.getvalue())


async def full_path(
    ckpt: Path,
    state: Path,
    out: Path,
    base: str,
    items: list[tuple[int, str]],
    tag: str,
    c: int,
    drop_schema: bool,
    *,
    encoding: str = "counts",
    sample_rate: float = 1.0,
    profile: bool = False,
) -> tuple[dict[str, Any], Recorded]:
    """``items`` (``(request index, text)``) through the project's ``Orchestrator`` with ``c``
    requests in flight, in this process.

    Args:
        ckpt: The served checkpoint (its ``config.json`` gives the architecture).
        state: Folder for the telemetry file (``telemetry_<tag>_<first index>.db``).
        out: Folder for the cProfile tables.
        encoding: The routed-experts encoding the client asks for (``counts`` or ``ids``).
        sample_rate: The capture's sampling rate (``EngineCapture``; 1.0: every call), drawn
            per call with a seed from ``tag`` and the first request index.

    Returns:
        The figures (wall s, requests/s, model calls, output tok/s, statuses, telemetry rows
        and their expert-routing sources, ``cpu_s`` of this process over the load,
        ``t_start``/``t_end`` epoch seconds) and the recorded calls per request. With
        ``profile`` also writes cProfile tables to ``<out>/orch_profile[_cum]_<tag>.txt``.
    """
    from orchestrator import Request

    first = items[0][0] if items else 0
    calls: Recorded = {}
    stack = _FullStack.open(
        ckpt,
        state,
        base,
        f"{tag}_{first}",
        sum(map(ord, tag)) * 1_000_003 + first,
        calls,
        drop_schema=drop_schema,
        encoding=encoding,
        sample_rate=sample_rate,
    )
    requests = [
        (
            i,
            Request(
                text=f"Ticket {tag}-{i:04d}: {t[:2000]}",
                thread_id=f"{tag}-{i:04d}",
                customer_id=f"C{i % CUSTOMERS + 1:05d}",
            ),
        )
        for i, t in items
    ]
    with _profiled(profile, out, tag):
        t_start, cpu0 = time.time(), time.process_time()
        t0 = time.perf_counter()
        statuses, tokens = await _handle_all(stack.orch, requests, c)
        wall = time.perf_counter() - t0
        t_end, cpu_s = time.time(), time.process_time() - cpu0
    rows, sources = await stack.close()
    n_calls = sum(len(v) for v in calls.values())
    return (
        {
            "wall_s": round(wall, 3),
            "requests": len(requests),
            "requests_s": round(len(requests) / wall, 3),
            "model_calls": n_calls,
            "output_tokens": tokens,
            "output_tok_s": round(tokens / wall, 1),
            "statuses": statuses,
            "telemetry_rows": rows,
            "routing_sources": sources,
            "cpu_s": cpu_s,
            "t_start": t_start,
            "t_end": t_end,
        },
        calls,
    )


async def plain_path(
    base: str, calls: Recorded, old: str, new: str, c: int, enc: str = "counts"
) -> dict[str, Any]:
    """The recorded ``calls`` (tag ``old`` renamed ``new`` so no prefix cache is shared) sent
    with a plain ``openai`` client, each request's calls in order, ``c`` requests in flight,
    asking for the routed-experts encoding ``enc`` as the full path does."""
    import openai

    client = openai.AsyncOpenAI(base_url=base, api_key="EMPTY", timeout=600, max_retries=2)
    sem = asyncio.Semaphore(c)
    tokens = 0

    async def one(seq: list[dict[str, Any]]) -> None:
        nonlocal tokens
        async with sem:
            for call in seq:
                msgs = json.loads(json.dumps(call["messages"]).replace(f"{old}-", f"{new}-"))
                kwargs: dict[str, Any] = {}
                if call.get("tools"):  # the same tools and tool_choice as the full path
                    kwargs["tools"] = call["tools"]
                    if call.get("tool_choice") is not None:
                        kwargs["tool_choice"] = call["tool_choice"]
                if call.get("json_schema") is not None:
                    kwargs["response_format"] = {
                        "type": "json_schema",
                        "json_schema": {
                            "name": "output",
                            "schema": call["json_schema"],
                            "strict": True,
                        },
                    }
                resp = await client.chat.completions.create(
                    model="ernie",
                    messages=msgs,
                    max_tokens=call["max_tokens"],
                    temperature=call.get("temperature", 0.0),
                    # the same routed-experts encoding as the full path's EngineCapture asks
                    # for (on 2026-12-01 the plain client sent none and got the server's
                    # default, ids: more server work and bigger bodies than the full path's)
                    # (per call: a call the full path's sample left out asked for none)
                    extra_body={
                        "return_token_ids": True,
                        "vllm_xargs": {"routed_experts": call.get("enc", enc)},
                    },
                    **kwargs,
                )
                tokens += resp.usage.completion_tokens

    n_requests = len(calls)
    t_start, cpu0 = time.time(), time.process_time()
    t0 = time.perf_counter()
    await asyncio.gather(*(one(seq) for seq in calls.values()))
    wall = time.perf_counter() - t0
    t_end, cpu_s = time.time(), time.process_time() - cpu0
    await client.close()
    return {
        "cpu_s": cpu_s,
        "t_start": t_start,
        "t_end": t_end,
        "wall_s": round(wall, 3),
        "requests": n_requests,
        "requests_s": round(n_requests / wall, 3),
        "model_calls": sum(len(v) for v in calls.values()),
        "output_tokens": tokens,
        "output_tok_s": round(tokens / wall, 1),
    }
