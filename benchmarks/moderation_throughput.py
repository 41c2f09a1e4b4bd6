"""Moderation throughput (posts/s) against a running vLLM server, at several concurrencies.

Posts are real rows of ../shared/data/moderation/ (held-out split, English and Chinese,
interleaved). Each post goes through the whole workflow: lexicon scan, one schema-constrained
model call with routing capture (replay on CPU), policy decision, and its rows in a SQLite
store. Also measures the lexicon alone (no server) for reference.

Usage, from the repository root::

    orchestrator serve &                     # or any server: ORCH_SERVER_URL
    python -m benchmarks.moderation_throughput --posts 48 --concurrency 1 4 8
    python -m benchmarks.moderation_throughput --quick --scripted   # no server: plumbing only

``--quick``: 8 posts at concurrency 1 and 4, once. ``--scripted``: no server;
:class:`orchestrator.testing.ScriptedModel` stands in for the model (made-up answers and
routing labelled ``scripted``), so posts/s measure the workflow, the lexicon and the store,
not a model; the report says so. Writes ``benchmarks/results/moderation_throughput.{json,md}``
(``--out``; a ``--quick`` run writes under ``/tmp/benchmarks-quick``).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from typing import Any

from benchmarks.harness import BenchParser, host_info, median, write_results
from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows.content_moderation import ContentModerationWorkflow
from workflows.content_moderation.dataset import load_moderation_set
from workflows.content_moderation.service import Moderator, moderate_lexicon_only

NAME = "moderation_throughput"
NOTE_SERVER = "random-weight offline checkpoint on CPU; routing by transformers replay"
NOTE_SCRIPTED = (
    "scripted: no model (orchestrator.testing.ScriptedModel); posts/s of the workflow, the "
    "lexicon and the telemetry store only"
)


async def run_once(
    settings: Settings,
    posts: list[str],
    concurrency: int,
    workflow: ContentModerationWorkflow,
    *,
    scripted: bool = False,
) -> dict[str, Any]:
    """Moderate ``posts`` with ``concurrency`` in flight into a fresh SQLite store.

    Returns:
        ``concurrency``, ``posts``, ``succeeded``, ``model_answers_parsed``, ``seconds`` (wall
        time of ``moderate_many``) and ``posts_per_s``.

    Raises:
        Whatever the client's ``check()`` raises when the server is not reachable.
    """
    with tempfile.TemporaryDirectory() as tmp:
        store = TelemetryStore(f"sqlite:///{tmp}/bench.db")
        client = ScriptedModel() if scripted else make_client(settings)
        try:
            await client.check()
            moderator = Moderator(client, store, workflow=workflow)  # type: ignore[arg-type]
            started = time.perf_counter()
            outcomes = await moderator.moderate_many(posts, concurrency=concurrency)
            seconds = time.perf_counter() - started
        finally:
            await client.aclose()
            store.close()
    ok = sum(o.status == "succeeded" for o in outcomes)
    parsed = sum(
        1
        for o in outcomes
        if o.verdict and o.verdict.assessment and o.verdict.assessment.status == "ok"
    )
    return {
        "concurrency": concurrency,
        "posts": len(posts),
        "succeeded": ok,
        "model_answers_parsed": parsed,
        "seconds": round(seconds, 2),
        "posts_per_s": round(len(posts) / seconds, 3),
    }


def markdown(report: dict[str, Any]) -> str:
    """The summary table, one row per concurrency."""
    lines = [
        "# Moderation throughput",
        "",
        f"Machine: {report['machine']}; server "
        f"{report['server_url']} ({report['profile']}). Lexicon alone: "
        f"{report['lexicon_only_posts_per_s']} posts/s.",
        "",
        "| concurrency | posts | posts/s (median) | parsed answers | seconds |",
        "|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        lines.append(
            f"| {r['concurrency']} | {r['posts']} | {r['posts_per_s_median']:.2f} | "
            f"{r['model_answers_parsed']} | {r['seconds']} |"
        )
    if report.get("scripted"):
        lines += ["", f"Note: {report['note']}."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        f"benchmarks.{NAME}",
        __doc__.splitlines()[0],
        repeat=1,
        repeat_help="Runs per concurrency (the median posts/s is reported).",
        repeat_aliases=("--repeats",),
    )
    parser.add_argument("--posts", type=int, default=48)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--server-url", default=None)
    parser.add_argument(
        "--scripted", action="store_true", help="No server: a scripted stand-in for the model."
    )
    args = parser.parse_args(argv)
    n_posts, concurrencies, repeat = args.posts, args.concurrency, args.repeat
    if args.quick:
        n_posts, concurrencies, repeat = min(n_posts, 8), [1, 4], 1
    settings = Settings(**({"server_url": args.server_url} if args.server_url else {}))
    rows = load_moderation_set(settings.data_dir, "test")
    en = [p.text for p in rows if p.lang == "en"]
    zh = [p.text for p in rows if p.lang == "zh"]
    posts = [t for pair in zip(en, zh, strict=False) for t in pair][:n_posts]
    workflow = ContentModerationWorkflow()

    started = time.perf_counter()
    lex_posts = [p.text for p in rows]
    for text in lex_posts:
        moderate_lexicon_only(text, workflow)
    lexicon_rate = len(lex_posts) / (time.perf_counter() - started)

    runs = []
    for concurrency in concurrencies:
        results = [
            asyncio.run(run_once(settings, posts, concurrency, workflow, scripted=args.scripted))
            for _ in range(repeat)
        ]
        best = median(r["posts_per_s"] for r in results)
        runs.append({**results[-1], "posts_per_s_median": best, "repeats": len(results)})
        print(f"concurrency {concurrency}: {best:.2f} posts/s ({results[-1]})")
    host = host_info()
    report = {
        "machine": f"{host['machine']} {host['cpus']} cores",
        "host": host,
        "server_url": "scripted (no server)" if args.scripted else settings.server_url,
        "profile": settings.profile,
        "scripted": args.scripted,
        "lexicon_only_posts_per_s": round(lexicon_rate, 1),
        "runs": runs,
        "note": NOTE_SCRIPTED if args.scripted else NOTE_SERVER,
    }
    text = markdown(report)
    write_results(args.out, NAME, report, text, command=args.command)
    print(text)


if __name__ == "__main__":
    main()
