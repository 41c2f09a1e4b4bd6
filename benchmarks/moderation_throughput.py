"""Moderation throughput (posts/s) against a running vLLM server, at several concurrencies.

Posts are real rows of ../shared/data/moderation/ (held-out split, English and Chinese,
interleaved). Each post goes through the whole workflow: lexicon scan, one schema-constrained
model call with routing capture (replay on CPU), policy decision, and its rows in a SQLite
store. Also measures the lexicon alone (no server) for reference.

Usage::

    orchestrator serve &                     # or any server: ORCH_SERVER_URL
    python benchmarks/moderation_throughput.py --posts 48 --concurrency 1 4 8

Writes benchmarks/results/moderation_throughput.{json,md} (temp file, then os.replace).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.telemetry import TelemetryStore
from workflows.content_moderation import ContentModerationWorkflow
from workflows.content_moderation.dataset import load_moderation_set
from workflows.content_moderation.service import Moderator, moderate_lexicon_only

RESULTS = Path(__file__).resolve().parent / "results"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


async def _run(settings: Settings, posts: list[str], concurrency: int, workflow) -> dict:  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as tmp:
        store = TelemetryStore(f"sqlite:///{tmp}/bench.db")
        client = make_client(settings)
        try:
            await client.check()
            moderator = Moderator(client, store, workflow=workflow)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=int, default=48)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--server-url", default=None)
    args = parser.parse_args()
    settings = Settings(**({"server_url": args.server_url} if args.server_url else {}))
    rows = load_moderation_set(settings.data_dir, "test")
    en = [p.text for p in rows if p.lang == "en"]
    zh = [p.text for p in rows if p.lang == "zh"]
    posts = [t for pair in zip(en, zh, strict=False) for t in pair][: args.posts]
    workflow = ContentModerationWorkflow()

    started = time.perf_counter()
    lex_posts = [p.text for p in rows]
    for text in lex_posts:
        moderate_lexicon_only(text, workflow)
    lexicon_rate = len(lex_posts) / (time.perf_counter() - started)

    runs = []
    for concurrency in args.concurrency:
        results = [
            asyncio.run(_run(settings, posts, concurrency, workflow)) for _ in range(args.repeats)
        ]
        best = statistics.median(r["posts_per_s"] for r in results)
        runs.append({**results[-1], "posts_per_s_median": best, "repeats": len(results)})
        print(f"concurrency {concurrency}: {best:.2f} posts/s ({results[-1]})")
    report = {
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "server_url": settings.server_url,
        "profile": settings.profile,
        "lexicon_only_posts_per_s": round(lexicon_rate, 1),
        "runs": runs,
        "note": "random-weight offline checkpoint on CPU; routing by transformers replay",
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    _write(RESULTS / "moderation_throughput.json", json.dumps(report, indent=2))
    lines = [
        "# Moderation throughput",
        "",
        f"Machine: {report['machine']}; server "
        f"{settings.server_url} ({settings.profile}). Lexicon alone: "
        f"{report['lexicon_only_posts_per_s']} posts/s.",
        "",
        "| concurrency | posts | posts/s (median) | parsed answers | seconds |",
        "|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r['concurrency']} | {r['posts']} | {r['posts_per_s_median']:.2f} | "
            f"{r['model_answers_parsed']} | {r['seconds']} |"
        )
    _write(RESULTS / "moderation_throughput.md", "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
