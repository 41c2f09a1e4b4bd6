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

import time

from benchmarks.harness import BenchParser, host_info, median, percentile, write_results
from orchestrator.config import Settings
from workflows.content_moderation.dataset import load_moderation_set
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only


def one_run(texts: list[str], workflow: ContentModerationWorkflow) -> dict[str, float]:
    """Milliseconds per post of one pass over ``texts``: p50, p95, p99, max."""
    times = []
    for text in texts:
        start = time.perf_counter()
        moderate_lexicon_only(text, workflow)
        times.append((time.perf_counter() - start) * 1000)
    return {
        "p50_ms": round(percentile(times, 50) or 0.0, 3),
        "p95_ms": round(percentile(times, 95) or 0.0, 3),
        "p99_ms": round(percentile(times, 99) or 0.0, 3),
        "max_ms": round(max(times), 3),
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
    runs = [one_run(texts, workflow) for _ in range(args.runs)]
    p99 = median(r["p99_ms"] for r in runs)
    data = {"posts": len(texts), "runs": runs, "median_p99_ms": p99, "target_p99_ms": 2.0,
            "host": host_info()}  # fmt: skip
    md = (
        f"# Offline moderation latency (lexicon + scorer)\n\n{len(texts)} dev posts, "
        f"{args.runs} runs. Median p99 **{p99} ms** (target 2 ms).\n\n"
        + "\n".join(f"- run {i + 1}: {r}" for i, r in enumerate(runs))
        + "\n"
    )
    write_results(args.out, "moderation_offline_latency", data, md, command=args.command)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
