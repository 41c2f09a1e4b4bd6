"""Nearest user examples by their characters: the part of ``fit --examples`` that needs no
optional extra and reads Chinese as well as English.

A route learnt from a few dozen examples is a column of the learned tier whose lift is held
back by the built-in rows (:func:`~.fit_routes._lift`): a new phrasing that shares a word or
two with the examples ("打印机打不出彩色" beside "三楼的打印机又卡纸了") often stays under
the thresholds and falls back. This index relates a request to the user's examples directly:
TF-IDF over character 2- to 4-grams (scikit-learn's hashing vectorizer, ``char_wb``: English
spelling variants share most of them, and a Chinese word shares its characters and pairs),
after case folding and Traditional -> Simplified folding (OpenCC), with document frequencies
from the built-in tune rows, so that "how do I" or "我想" weigh little and a topic's own words
weigh much. ``fit --examples`` writes it beside the fitted model (:data:`FILE`); the examples
tier (:class:`~.fit_semantic.ExampleTier`) consults it only where the other tiers end in a
fallback, and takes a new route when the similarity of its nearest example
(:data:`NEAREST`) reaches its threshold and beats the user's own fallback rows' (near misses
among them). The route's examples include its declaration (the clauses of its description,
its keywords: :func:`~.fit_routes.declared_rows`). A Chinese text shares few n-grams with a few
dozen examples (a paraphrase shares a character or two), so it is also taken when the route's
examples are the nearest of everything the index holds and its score reaches a lower threshold
fitted the same way (:data:`ZH_NEAREST`, :func:`nearest_of_all`). It also keeps up to
:data:`REFERENCE` built-in requests of each built-in route, to which it compares a request that
the tiers gave that route (or fallback) with no sure reason (:func:`overrule`).

Each route's thresholds are fitted on a sample of built-in tune requests, one for English and
one for Chinese texts (:data:`FIT`, a :class:`ThresholdFit`: the score at the ``1 - budget``
quantile, at least ``floor``): at most about ``budget`` of built-in requests could be taken,
and only those the other tiers left to fallback.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.exceptions import UserError
from orchestrator.routes import FALLBACK, Route
from orchestrator.textnorm import fold_text, to_simplified

#: The file beside the fitted model (``learned.v2.npz``) that holds the index.
FILE = "examples.lexical.npz"
#: Hashed n-gram buckets (2**16: a few dozen examples' n-grams rarely share one by chance).
N_FEATURES = 1 << 16
#: Character n-gram lengths (within words; a Chinese run is one word).
NGRAMS = (2, 4)
#: Built-in requests of each built-in route (fallback's too) an index keeps to compare a
#: request with when the built-in tiers decided it (:func:`overrule`; not tuned).
REFERENCE = 200
#: The label of the built-in fallback requests among them (not a route name: never a user's).
BUILT_IN_FALLBACK = Route("fallback (built-in)")
#: Nearest examples of a route whose mean similarity is its score here (1 of 1, 2, 3 on the
#: spent rounds: one close example is evidence enough for a character match).
NEAREST = 1
#: The same for :mod:`.fit_semantic` (MiniLM: the mean of the 3 nearest).
TOP_K = 3
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class ThresholdFit:
    """How a new route's threshold is fitted on built-in tune requests (this index's and
    :mod:`.fit_semantic`'s): the score at the ``1 - budget`` quantile of a fixed sample of
    them, at least ``floor``, so that at most about ``budget`` of them reach it.

    Attributes:
        budget: Share of the sample a threshold lets through (0 to 1).
        floor: Least threshold (cosine similarity).
        sample: Built-in requests of a script in the sample (the first by hash of the id).
    """

    budget: float
    floor: float
    sample: int

    def sample_of(self, rows: Sequence[LabelledRequest], lang: str) -> list[str]:
        """The texts of the first :attr:`sample` of ``rows`` (by SHA-256 of the id) whose
        :func:`script` is ``lang``."""
        return [r.text for r in self.split_of(rows, lang)[0]]

    def split_of(
        self, rows: Sequence[LabelledRequest], lang: str
    ) -> tuple[list[LabelledRequest], list[LabelledRequest]]:
        """``(sample, reference)`` of the ``rows`` whose :func:`script` is ``lang``, by SHA-256
        of the id: the first :attr:`sample` (the thresholds' and margins' sample), then up to
        :data:`REFERENCE` of each built-in route among the rest, labelled by
        :func:`reference_label` (what a request is compared with when the built-in tiers
        decided it: :func:`overrule`)."""
        ranked = sorted(rows, key=lambda r: hashlib.sha256(r.id.encode()).digest())
        mine = [r for r in ranked if script(r.text) == lang]
        seen: dict[Route, int] = {}
        reference = []
        for row in mine[self.sample :]:
            if seen.get(row.route, 0) < REFERENCE:
                seen[row.route] = seen.get(row.route, 0) + 1
                reference.append(row.model_copy(update={"route": reference_label(row.route)}))
        return mine[: self.sample], reference

    def threshold(self, scores: Sequence[float]) -> float:
        """The threshold over the sample's ``scores`` for one route, to 4 places (``floor``
        for no scores)."""
        cut = float(np.quantile(scores, 1.0 - self.budget)) if len(scores) else self.floor
        return round(max(self.floor, cut), 4)

    def margin(self, leads: Sequence[float]) -> float:
        """The least lead a new route's score needs over a built-in route's reference score to
        take that route's request (:func:`overrule`): the ``1 - budget`` quantile of the leads
        of the sample's requests of built-in routes over their own route, at least 0, to 4
        places; so at most about ``budget`` of them would be taken. 1 for no leads."""
        cut = float(np.quantile(leads, 1.0 - self.budget)) if len(leads) else 1.0
        return round(max(0.0, cut), 4)


#: This index's thresholds: a budget of 0.002 (of 0.002 and 0.005: on the spent rounds'
#: held-out files, 0.005 routed 2 more of 156 phrasings and took twice as many built-in
#: requests, all of them wrongly; benchmarks/results/classifier_fit_examples_2026-12-06b.md),
#: a floor of 0.1 (Chinese texts score low, see :func:`script`), 1000 texts of each script.
FIT = ThresholdFit(budget=0.002, floor=0.1, sample=1000)
#: The thresholds of a Chinese text whose nearest label is a new route (:func:`nearest_of_all`):
#: the same budget of the Chinese sample, counted on its requests whose nearest label the route
#: is (scores of the others count 0); that is seldom 2 of 1000, so the floor of 0.05 mostly
#: holds. Chosen on the spent rounds (one value tried): 3 more of their 80 Chinese held-out
#: phrasings routed, no near miss taken; for English the same rule took about as many built-in
#: tune requests as it won phrasings, so English texts have none
#: (benchmarks/results/classifier_fit_examples_2026-12-06e.md).
ZH_NEAREST = ThresholdFit(budget=0.002, floor=0.05, sample=1000)


def script(text: str) -> str:
    """``zh`` for a text with a Chinese character, else ``en``: Chinese and English texts
    score on different scales (a Chinese run is one word of many n-grams), so each has its
    own thresholds."""
    return "zh" if _HAN.search(text) else "en"


def top_mean(sims: np.ndarray, k: int = TOP_K) -> float:
    """Mean of the ``k`` largest of ``sims`` ``(n,)``; 0 for none."""
    if len(sims) == 0:
        return 0.0
    return float(np.sort(sims)[-min(k, len(sims)) :].mean())


def choose(scores: dict[Route, float], thresholds: dict[Route, float]) -> Route | None:
    """The first route of ``scores`` (best first) with a threshold that its score reaches and
    that beats fallback's score (the user's fallback rows), or None."""
    fb = scores.get(FALLBACK, 0.0)
    for route, score in scores.items():
        if route in thresholds and score >= thresholds[route] and score > fb:
            return route
    return None


def reference_label(route: Route) -> Route:
    """How an index labels a built-in reference request of ``route`` (fallback's apart from
    the user's own fallback rows: :data:`BUILT_IN_FALLBACK`)."""
    return BUILT_IN_FALLBACK if route == FALLBACK else route


def overrule(
    scores: dict[Route, float],
    thresholds: dict[Route, float],
    margins: dict[Route, float],
    decided: Route,
) -> Route | None:
    """The new route that takes a request the built-in tiers gave ``decided`` (a built-in
    route, or fallback), or None: the first of ``scores`` (best first) whose score reaches its
    threshold, beats fallback's (the user's fallback rows), and leads the score of
    ``decided``'s reference requests by at least its margin (:meth:`ThresholdFit.margin`).
    None when ``decided`` has no reference requests."""
    theirs = scores.get(reference_label(decided))
    if theirs is None:
        return None
    fb = scores.get(FALLBACK, 0.0)
    for route, score in scores.items():
        near = route in thresholds and score >= thresholds[route] and score > fb
        if near and route in margins and score - theirs >= margins[route]:
            return route
    return None


def nearest_of_all(scores: dict[Route, float], thresholds: dict[Route, float]) -> Route | None:
    """The new route whose examples are the nearest of everything an index holds (``scores``,
    best first: the user's fallback rows and the built-in routes' reference requests too),
    when its score reaches its threshold in ``thresholds``; else None."""
    route, score = next(iter(scores.items()), (None, 0.0))
    if route is None or route not in thresholds or score < thresholds[route]:
        return None
    return route


def folded(text: str) -> str:
    """What the index reads of ``text``: case and width folded, Traditional -> Simplified."""
    return to_simplified(fold_text(text))


@lru_cache(maxsize=1)
def _hasher() -> Any:
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        analyzer="char_wb",
        ngram_range=NGRAMS,
        n_features=N_FEATURES,
        alternate_sign=False,
        norm=None,
        preprocessor=folded,
    )


def idf_of(texts: Sequence[str]) -> np.ndarray:
    """``(N_FEATURES,)`` smoothed inverse document frequency of each bucket over ``texts``
    (scikit-learn's formula: ``log((1 + n) / (1 + df)) + 1``)."""
    counts = _hasher().transform(texts)
    df = np.bincount(counts.indices, minlength=N_FEATURES)
    return (np.log((1 + len(texts)) / (1 + df)) + 1.0).astype(np.float32)


def encode(texts: Sequence[str], idf: np.ndarray) -> Any:
    """scipy sparse ``(len(texts), N_FEATURES)``: sublinear TF times ``idf``, rows of unit
    length (an empty text: a zero row)."""
    from sklearn.preprocessing import normalize

    x = _hasher().transform(texts).astype(np.float64)
    x.data = 1.0 + np.log(x.data)
    return normalize(x.multiply(idf).tocsr())


@dataclass
class LexicalIndex:
    """The user's examples (new routes' and fallback's) and built-in reference requests
    (:meth:`ThresholdFit.split_of`), their labels, the bucket weights, and per new route a
    threshold and a margin (:func:`overrule`) for English texts (``thresholds``, ``margins``)
    and for Chinese ones (``zh_thresholds``, ``zh_margins``; :func:`script`). An index without
    margins (written before them) never overrules a built-in route."""

    texts: list[str]
    labels: list[Route]
    idf: np.ndarray
    thresholds: dict[Route, float]
    zh_thresholds: dict[Route, float]
    margins: dict[Route, float] = field(default_factory=dict)
    zh_margins: dict[Route, float] = field(default_factory=dict)
    zh_nearest: dict[Route, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        x = encode(self.texts, self.idf)
        at = np.array(self.labels)
        self._by = {r: x[np.flatnonzero(at == r)] for r in dict.fromkeys(self.labels)}

    def scores(self, text: str) -> dict[Route, float]:
        """Each route's score (fallback's too, from the user's fallback rows), best first."""
        vec = encode([text], self.idf).T
        out = {
            r: round(top_mean((m @ vec).toarray().ravel(), NEAREST), 4) for r, m in self._by.items()
        }
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def decide(self, text: str) -> tuple[Route | None, dict[Route, float]]:
        """The new route whose score reaches its threshold and beats fallback's; else, for a
        Chinese text, the new route nearest of all that reaches its ``zh_nearest`` threshold
        (:func:`nearest_of_all`); else None."""
        scores = self.scores(text)
        route = choose(scores, self.thresholds_for(text))
        if route is None and script(text) == "zh":
            route = nearest_of_all(scores, self.zh_nearest)
        return route, scores

    def thresholds_for(self, text: str) -> dict[Route, float]:
        """The thresholds of ``text``'s script."""
        return self.zh_thresholds if script(text) == "zh" else self.thresholds

    def least_for(self, text: str) -> dict[Route, float]:
        """The least score that can take each new route for ``text`` in :meth:`decide`: its
        threshold, or for a Chinese text the lower of that and its ``zh_nearest`` one."""
        if script(text) != "zh":
            return self.thresholds
        return {r: min(t, self.zh_nearest.get(r, t)) for r, t in self.zh_thresholds.items()}

    def overrule(self, text: str, decided: Route) -> tuple[Route | None, dict[Route, float]]:
        """The new route that takes ``text`` from the built-in route ``decided``
        (:func:`overrule`), or None; and the scores."""
        scores = self.scores(text)
        margins = self.zh_margins if script(text) == "zh" else self.margins
        return overrule(scores, self.thresholds_for(text), margins, decided), scores

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (an ``.npz``)."""
        routes = route_arrays(
            thresholds=self.thresholds,
            zh_thresholds=self.zh_thresholds,
            margins=self.margins,
            zh_margins=self.zh_margins,
            zh_nearest=self.zh_nearest,
        )
        with path.open("wb") as handle:
            np.savez_compressed(
                handle,
                texts=np.array(self.texts),
                labels=np.array(self.labels),
                idf=self.idf,
                **routes,
            )

    @classmethod
    def load(cls, path: Path) -> LexicalIndex:
        """Read an index written by :meth:`save`.

        Raises:
            UserError: The file cannot be read as such an index.
        """

        def build(z: Mapping[str, np.ndarray]) -> LexicalIndex:
            idf = np.asarray(z["idf"], dtype=np.float32)
            if idf.shape != (N_FEATURES,):
                raise ValueError(f"idf of shape {idf.shape}")
            return cls(
                texts=[str(t) for t in z["texts"]],
                labels=labels_of(z),
                idf=idf,
                thresholds=per_route(z, "thresholds"),
                zh_thresholds=per_route(z, "zh_thresholds"),
                margins=per_route(z, "margins", optional=True),
                zh_margins=per_route(z, "zh_margins", optional=True),
                zh_nearest=per_route(z, "zh_nearest", optional=True),
            )

        return read_index(path, build)


T = TypeVar("T")


def read_index(path: Path, build: Callable[[Mapping[str, np.ndarray]], T]) -> T:
    """``build`` over the arrays of the ``.npz`` at ``path`` (no pickles): how the example
    indexes (this one and :class:`~.fit_semantic.ExampleIndex`) are read.

    Raises:
        UserError: The file cannot be read, or ``build`` finds an array missing (KeyError) or
            wrong (ValueError).
    """
    try:
        with np.load(path, allow_pickle=False) as z:
            return build(z)
    except (OSError, KeyError, ValueError) as exc:
        raise UserError(f"{path}: not an examples index written by fit ({exc})") from None


def labels_of(z: Mapping[str, np.ndarray]) -> list[Route]:
    """The routes of the examples (``z["labels"]``) of an index file."""
    return [Route(str(x)) for x in z["labels"]]


def per_route(
    z: Mapping[str, np.ndarray], key: str, *, optional: bool = False
) -> dict[Route, float]:
    """``z[key]``, one value per route of ``z["names"]``, as a dict (written by
    :func:`route_arrays`); ``optional``: empty when the file has no ``key``."""
    if optional and key not in z:
        return {}
    names = [Route(str(n)) for n in z["names"]]
    return dict(zip(names, map(float, z[key]), strict=True))


def route_arrays(**by_route: dict[Route, float]) -> dict[str, Any]:
    """Arrays (``np.ndarray``) to save for ``by_route`` (each a dict over the same routes):
    ``names`` and one array per keyword, in the order of the sorted names (read back by
    :func:`per_route`). Typed ``Any``: ``np.savez(**arrays)`` would take an array for its
    ``allow_pickle`` flag by mypy's reading."""
    names = sorted(next(iter(by_route.values())))
    out = {k: np.array([v[n] for n in names]) for k, v in by_route.items() if v}
    return {"names": np.array(names), **out}


def fit_lexical(
    mine: Sequence[LabelledRequest],
    base_rows: Sequence[LabelledRequest],
    new: Sequence[Route],
) -> LexicalIndex | None:
    """The index of the user's fitting rows of the ``new`` routes and fallback (document
    frequencies over ``base_rows`` and those rows) and of the built-in reference requests of
    each script, each new route's thresholds and margins fitted on the built-in sample of each
    script (see the module docstring); None when no new route has :data:`NEAREST` examples."""
    rows = [r for r in mine if r.route in new or r.route == FALLBACK]
    routes = [r for r in new if sum(x.route == r for x in rows) >= NEAREST]
    rows = [r for r in rows if r.route in routes or r.route == FALLBACK]
    if not routes:
        return None
    idf = idf_of([r.text for r in base_rows] + [r.text for r in rows])
    cuts: dict[str, tuple[dict[Route, float], dict[Route, float]]] = {}
    for lang in ("en", "zh"):
        sample, reference = FIT.split_of(base_rows, lang)
        rows += reference
        x, index = encode([r.text for r in sample], idf), encode([r.text for r in rows], idf)
        labels = [r.route for r in rows]
        dense = lambda m: np.asarray(m.toarray())  # noqa: E731
        cuts[lang] = fit_cuts(x, [r.route for r in sample], index, labels, routes, dense, fit=FIT)
    zh_nearest = fit_nearest(x, index, labels, routes, dense)  # the Chinese sample's
    en, zh = cuts["en"], cuts["zh"]
    texts = [r.text for r in rows]
    return LexicalIndex(texts, labels, idf, en[0], zh[0], en[1], zh[1], zh_nearest)


def label_scores(sims: np.ndarray, at: np.ndarray, k: int) -> dict[Route, np.ndarray]:
    """Each label of ``at`` ``(index rows,)``: the score ``(sample rows,)`` of each sample row
    of ``sims`` ``(sample rows, index rows)``, the mean of its ``k`` nearest of that label."""
    return {r: np.array([top_mean(s, k) for s in sims[:, at == r]]) for r in dict.fromkeys(at)}


def fit_nearest(
    sample: Any,
    index: Any,
    labels: Sequence[Route],
    routes: Sequence[Route],
    dense: Callable[[Any], np.ndarray] = np.asarray,
    fit: ThresholdFit = ZH_NEAREST,
) -> dict[Route, float]:
    """Each new route of ``routes``' :func:`nearest_of_all` threshold over the built-in
    ``sample`` (rows of vectors) against the ``index`` (rows, their ``labels``):
    :meth:`ThresholdFit.threshold` of the sample's scores of the route, each counted as 0
    where another label of the index is as near or nearer (so at most about ``fit.budget``
    of the sample would be taken by the rule)."""
    at = np.array(labels)
    sims = dense(sample @ index.T)
    score = label_scores(sims, at, NEAREST)
    out = {}
    for route in routes:
        theirs = [v for r, v in score.items() if r != route]
        others = np.max(theirs, axis=0) if theirs else np.zeros(len(score[route]))
        out[route] = fit.threshold(np.where(score[route] > others, score[route], 0.0).tolist())
    return out


def fit_cuts(
    sample: Any,
    truth: Sequence[Route],
    index: Any,
    labels: Sequence[Route],
    routes: Sequence[Route],
    dense: Callable[[Any], np.ndarray] = np.asarray,
    fit: ThresholdFit = FIT,
    k: int = NEAREST,
) -> tuple[dict[Route, float], dict[Route, float]]:
    """``(thresholds, margins)`` of each new route of ``routes`` over the built-in ``sample``
    (rows of vectors, their routes ``truth``) against the ``index`` (rows, their ``labels``):
    a route's threshold from every sample row's score (:meth:`ThresholdFit.threshold`), its
    margin from the leads of the sample's rows of a built-in route that the index holds
    reference rows of over that route's score (:meth:`ThresholdFit.margin`); a score is the
    mean of the ``k`` nearest (``dense`` makes the similarities an array)."""
    at = np.array(labels)
    sims = dense(sample @ index.T)
    score = label_scores(sims, at, k)
    theirs = [reference_label(t) for t in truth]
    thresholds, margins = {}, {}
    for route in routes:
        thresholds[route] = fit.threshold(score[route].tolist())
        leads = [float(score[route][i] - score[t][i]) for i, t in enumerate(theirs) if t in score]
        margins[route] = fit.margin(leads)
    return thresholds, margins
