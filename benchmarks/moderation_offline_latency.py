"""Per-post latency of the offline moderation path (lexicon + learned scorer, no model), the
path issue 47 bounds at 2 ms per post at p99.

Posts are the dev part of the labelled set (:mod:`workflows.content_moderation.dataset`,
English and Chinese, COLD's fine-labelled file included), each moderated once per run with
:func:`~workflows.content_moderation.service.moderate_lexicon_only` after one warm-up pass
(first-use loading of the lexicon, scorer and OpenCC is not a per-post cost). Reports p50,
p95, p99 and max per run and the median of the runs' p99.

Usage, from the repository root::

    python -m benchmarks.moderation_offline_latency --repeat 3

Writes ``benchmarks/results/moderation_offline_latency.{json,md}`` (``--out``).
"""

from __future__ import annotations

import os
import time

from benchmarks.harness import BenchParser, host_info, median, percentile, write_results
from orchestrator.config import Settings
from workflows.content_moderation.dataset import load_moderation_set
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only


def one_run(texts: list[str], workflow: ContentModerationWorkflow) -> dict[str, float]:
    """Milliseconds per post of one pass over ``texts``: p50, p95, p99 and max of the wall
    time, and p50 and p99 of the thread's CPU time (``time.thread_time``: what the post costs
    the thread, without the time the 2 shared cores spent on other people's processes)."""
    wall, cpu = [], []
    for text in texts:
        start, start_cpu = time.perf_counter(), time.thread_time()
        moderate_lexicon_only(text, workflow)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        wall.append((time.perf_counter() - start) * 1000)
    return {
        "p50_ms": round(percentile(wall, 50) or 0.0, 3),
        "p95_ms": round(percentile(wall, 95) or 0.0, 3),
        "p99_ms": round(percentile(wall, 99) or 0.0, 3),
        "max_ms": round(max(wall), 3),
        "cpu_p50_ms": round(percentile(cpu, 50) or 0.0, 3),
        "cpu_p99_ms": round(percentile(cpu, 99) or 0.0, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = BenchParser(
        "benchmarks.moderation_offline_latency",
        (__doc__ or "").splitlines()[0],
        repeat=3,
        repeat_help="Timed passes over the dev posts.",
        quick=False,
    )
    args = parser.parse_args(argv)
    args.runs = args.repeat
    texts = [p.text for p in load_moderation_set(Settings().data_dir, "dev")]
    workflow = ContentModerationWorkflow()
    for text in texts:  # warm-up
        moderate_lexicon_only(text, workflow)
    load_before = os.getloadavg()[0]
    runs = [one_run(texts, workflow) for _ in range(args.runs)]
    load_after = os.getloadavg()[0]
    p99 = median(r["p99_ms"] for r in runs)
    cpu_p99 = median(r["cpu_p99_ms"] for r in runs)
    data = {"posts": len(texts), "runs": runs, "median_p99_ms": p99,
            "median_cpu_p99_ms": cpu_p99, "target_p99_ms": 2.0,
            "load_average_1min": [load_before, load_after], "host": host_info()}  # fmt: skip
    md = (
        f"# Offline moderation latency (lexicon + scorer)\n\n{len(texts)} dev posts, "
        f"{args.runs} runs. Median p99: wall **{p99} ms**, CPU **{cpu_p99} ms** (target 2 ms). "
        f"1-minute load average {load_before:.1f} before, {load_after:.1f} after "
        f"({os.cpu_count()} cores).\n\n"
        + "\n".join(f"- run {i + 1}: {r}" for i, r in enumerate(runs))
        + "\n"
    )
    write_results(args.out, "moderation_offline_latency", data, md, command=args.command)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
