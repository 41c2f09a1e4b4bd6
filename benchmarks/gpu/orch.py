"""``orch`` phase: the project's full path (classifier -> customer-service workflow ->
``VLLMClient`` + ``EngineCapture`` -> SQLite telemetry) vs a plain ``openai`` client sending
the same recorded model calls with the same concurrency."""

from __future__ import annotations

import asyncio
import contextvars
import json
import statistics
import time
from argparse import Namespace
from typing import Any

from benchmarks.gpu.common import Workspace, budget_left, log, texts
from benchmarks.gpu.diag import STRICT_VARIANT

Urls = dict[str, str | None]
Recorded = dict[str, list[dict[str, Any]]]

#: The index of the request being handled, so :class:`RecordingClient` can file its calls.
CURRENT_REQUEST: contextvars.ContextVar[str | None] = contextvars.ContextVar("req", default=None)
#: Alternating order of the three repetitions.
ORDER = [("full", "plain"), ("plain", "full"), ("full", "plain")]


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
        self.model_name = inner.model_name
        self.base_url = inner.base_url
        self.log = log_
        self.drop_schema = drop_schema

    async def chat(self, messages: Any, **kwargs: Any) -> Any:
        """Record, then forward to the wrapped client."""
        if self.drop_schema:
            kwargs["json_schema"] = None
        key = CURRENT_REQUEST.get()
        if key is not None:
            self.log.setdefault(key, []).append(
                {"messages": [m.model_dump() for m in messages], **kwargs}
            )
        return await self.inner.chat(messages, **kwargs)


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
    items = texts(ws.data, n, seed=3)
    runs: list[dict[str, Any]] = []
    recorded: dict[str, Recorded] = {}
    if args.orch_profile:  # an extra, unmeasured run under cProfile
        asyncio.run(full_path(ws, base, items[:128], "PROF", c, drop_schema, profile=True))
        log("orch: profiled run written to orch_profile_PROF.txt")
    for rep, order in enumerate(ORDER):
        for mode in order:
            if budget_left(args.budget_s) < 60:
                log("orch: out of budget")
                break
            tag = f"O{rep}F"
            cpu0 = time.process_time()
            if mode == "full":
                r, calls = asyncio.run(full_path(ws, base, items, tag, c, drop_schema))
                recorded[tag] = calls
            else:
                if tag not in recorded:  # plain before full in this rep: record first
                    r0, calls = asyncio.run(full_path(ws, base, items, f"X{rep}F", c, drop_schema))
                    recorded[tag] = {
                        k: json.loads(json.dumps(v).replace(f"X{rep}F-", f"{tag}-"))
                        for k, v in calls.items()
                    }
                    log(f"orch rep {rep}: recording run (unmeasured) {r0['wall_s']} s")
                cpu0 = time.process_time()
                r = asyncio.run(plain_path(base, recorded[tag], tag, f"O{rep}P", c))
            # client CPU per request: where the full path's extra time goes
            r["client_cpu_ms_per_request"] = round(
                1000 * (time.process_time() - cpu0) / max(1, r["requests"]), 3
            )
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
    """Mean requests/s and output tok/s of each path and the full / plain ratio (``{}`` until
    both paths ran)."""
    full = [r for r in runs if r["mode"] == "full"]
    plain = [r for r in runs if r["mode"] == "plain"]
    if not (full and plain):
        return {}
    f = statistics.fmean(r["requests_s"] for r in full)
    p = statistics.fmean(r["requests_s"] for r in plain)
    return {
        "full_requests_s_mean": round(f, 3),
        "plain_requests_s_mean": round(p, 3),
        "ratio_full_over_plain": round(f / p, 4),
        "full_output_tok_s_mean": round(statistics.fmean(r["output_tok_s"] for r in full), 1),
        "plain_output_tok_s_mean": round(statistics.fmean(r["output_tok_s"] for r in plain), 1),
    }


async def full_path(
    ws: Workspace,
    base: str,
    items: list[str],
    tag: str,
    c: int,
    drop_schema: bool,
    *,
    profile: bool = False,
) -> tuple[dict[str, Any], Recorded]:
    """``items`` through the project's ``Orchestrator`` with ``c`` requests in flight.

    Returns:
        The figures (wall s, requests/s, model calls, output tok/s, statuses, telemetry rows
        and their expert-routing sources) and the recorded calls per request. With ``profile``
        also writes cProfile tables to ``<out>/orch_profile[_cum]_<tag>.txt``.
    """
    from orchestrator import Orchestrator, Request, TelemetryStore
    from orchestrator.core.client import VLLMClient
    from serving import EngineCapture, MoEArchitecture
    from workflows.customer_service import CustomerServiceWorkflow

    arch = MoEArchitecture.from_checkpoint(ws.ckpt)
    db = ws.state / f"telemetry_{tag}.db"
    db.unlink(missing_ok=True)
    store = TelemetryStore(f"sqlite:///{db}")
    calls: Recorded = {}
    inner = VLLMClient(base, "ernie", EngineCapture(arch), timeout_s=600)
    client = RecordingClient(inner, calls, drop_schema=drop_schema)
    orch = Orchestrator(client, store, [CustomerServiceWorkflow()])  # type: ignore[arg-type]
    requests = [Request(text=f"Ticket {tag}-{i:04d}: {t[:2000]}") for i, t in enumerate(items)]
    statuses: dict[str, int] = {}
    tokens = 0
    sem = asyncio.Semaphore(c)

    async def one(i: int, req: Request) -> None:
        nonlocal tokens
        async with sem:
            CURRENT_REQUEST.set(str(i))
            outcome = await orch.handle(req)
            statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
            tokens += sum(call.completion_tokens for call in outcome.calls)

    profiler = None
    if profile:  # where the client's CPU time goes (cProfile, top functions by own time)
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i, r) for i, r in enumerate(requests)))
    wall = time.perf_counter() - t0
    if profiler is not None:
        import io
        import pstats

        profiler.disable()
        tables = (("tottime", 30, "orch_profile"), ("cumulative", 40, "orch_profile_cum"))
        for sort, top, name in tables:
            buf = io.StringIO()
            pstats.Stats(profiler, stream=buf).sort_stats(sort).print_stats(top)
            ws.out.mkdir(parents=True, exist_ok=True)
            (ws.out / f"{name}_{tag}.txt").write_text(buf.getvalue())
    await inner.aclose()
    sources: dict[str, int] = {}
    rows = 0
    for record in store.calls():
        rows += 1
        source = record.expert_routing_source
        sources[source] = sources.get(source, 0) + 1
    store.close()
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
        },
        calls,
    )


async def plain_path(base: str, calls: Recorded, old: str, new: str, c: int) -> dict[str, Any]:
    """The recorded ``calls`` (tag ``old`` renamed ``new`` so no prefix cache is shared) sent
    with a plain ``openai`` client, each request's calls in order, ``c`` requests in flight."""
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
                    extra_body={"return_token_ids": True},
                    **kwargs,
                )
                tokens += resp.usage.completion_tokens

    n_requests = len(calls)
    t0 = time.perf_counter()
    await asyncio.gather(*(one(seq) for seq in calls.values()))
    wall = time.perf_counter() - t0
    await client.close()
    return {
        "wall_s": round(wall, 3),
        "requests": n_requests,
        "requests_s": round(n_requests / wall, 3),
        "model_calls": sum(len(v) for v in calls.values()),
        "output_tokens": tokens,
        "output_tok_s": round(tokens / wall, 1),
    }
