"""Fitting the learned risk scorer (:mod:`.scorer`): train on the ``train`` part, calibrate
(Platt) and choose thresholds on ``dev`` (issue 47's protocol; see the scorer's docstring for
the features, the models and the threshold rules).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workflows.content_moderation.dataset import LabelledPost
from workflows.content_moderation.scorer import (
    FORMAT_VERSION,
    MODEL_KEYS,
    N_FEATURES,
    SEED,
    STACKED_MODELS,
    TARGETING_MODELS,
    LinearModel,
    RiskScorer,
    default_lexicon,
    flag_matrix,
    lexicon_spans,
    scorer_version,
    targeting_matrix,
)
from workflows.content_moderation.targeting import load_targeting_cues
from workflows.content_moderation.verdict import Severity, Span


def platt(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Platt scaling: ``(a, b)`` with ``P(y=1) = sigmoid(a * z + b)`` fitted by logistic
    regression on decision values ``z`` (shape ``(n,)``) and labels ``y`` (shape ``(n,)``, 0/1).
    Platt, "Probabilistic outputs for support vector machines" (1999)."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, solver="lbfgs")
    lr.fit(z.reshape(-1, 1), y)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def _pr(truth: np.ndarray, guess: np.ndarray) -> tuple[float, float, float]:
    tp = float(np.sum(truth & guess))
    p = tp / guess.sum() if guess.sum() else 0.0
    r = tp / truth.sum() if truth.sum() else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


@dataclass(frozen=True)
class EvalRows:
    """Rows the thresholds are chosen on: the dev part (protocol) or the out-of-fold train.

    Attributes:
        y: Labels (0/1).
        lex: Whether the lexicon alone flags each row.
        plain: Ordinary sentences (customer service), never to be reviewed.
        cand: Rows the scorer may flag (all for ``flagged``; a slur for ``hate``).
        term: Rows holding a lexicon term of medium severity or more (no mention): an
            ordinary one the lexicon reviews anyway, so the scorer's review budget of ordinary
            rows does not count it. None: no row.
    """

    y: np.ndarray
    lex: np.ndarray
    plain: np.ndarray
    cand: np.ndarray
    term: np.ndarray | None = None


def choose_thresholds(
    p: np.ndarray, rows: EvalRows, *, min_precision: float, grid_start: float, solo: bool
) -> tuple[float, float, dict[str, float]]:
    """``(review, high, figures)`` from calibrated probabilities ``p`` of ``rows``.

    ``review`` is the best-F1 threshold of "lexicon or scorer" on the labelled rows among those
    that keep its precision at least ``min_precision``, send at most
    :data:`MAX_ORDINARY_REVIEW_RATE` of the ordinary rows to review and, with ``solo``, keep the
    precision of the posts the scorer flags *alone* (the lexicon passes them) at least
    :data:`MIN_SOLO_PRECISION`; 1.0 (never alone) when none does.
    """
    truth = rows.y.astype(bool)
    plain = rows.plain.astype(bool)
    labelled = ~plain
    n_plain = int(plain.sum())
    counted = plain if rows.term is None else plain & ~rows.term.astype(bool)
    best = (-1.0, 1.0, (0.0, 0.0, 0.0), 0.0, 0)
    for t in np.round(np.arange(grid_start, 1.0, 0.01), 2):
        if n_plain and float(np.sum(p[counted] >= t)) > MAX_ORDINARY_REVIEW_RATE * n_plain:
            continue  # too many ordinary sentences would go to review
        alone = (p >= t) & rows.cand & ~rows.lex
        guess = rows.lex | alone
        prec, rec, f1 = _pr(truth[labelled], guess[labelled])
        solo_n = int(alone[labelled].sum())
        solo_p = _pr(truth[labelled], alone[labelled])[0] if solo_n else 1.0
        if solo and solo_p < MIN_SOLO_PRECISION:
            continue
        if prec >= min_precision and f1 > best[0]:
            best = (f1, float(t), (prec, rec, f1), solo_p, solo_n)
    if best[0] < 0:  # no threshold keeps the precision: the scorer never flags alone
        best = (0.0, 1.0, _pr(truth[labelled], rows.lex[labelled]), 0.0, 0)
    review = best[1]
    high = next(
        (float(t) for t in np.round(np.arange(review, 0.99, 0.01), 2)
         if (p >= t).any() and _pr(truth, p >= t)[0] >= 0.95),
        0.99,
    )  # fmt: skip
    prec, rec, f1 = best[2]
    return (
        review,
        max(high, review),
        {
            "precision": round(float(prec), 4),
            "recall": round(float(rec), 4),
            "f1": round(float(f1), 4),
            "solo_precision": round(float(best[3]), 4),
            "solo_flagged": best[4],
            "ordinary_review_rate": round(
                float(np.mean(p[plain] >= review)) if n_plain else 0.0, 5
            ),
            "ordinary_rows": n_plain,
        },
    )


def fit_one(
    matrix: Any,
    rows: EvalRows,
    *,
    c: float,
    min_precision: float,
    seed: int,
    soft: np.ndarray | None = None,
    grid_start: float = 0.30,
    dev: tuple[Any, EvalRows] | None = None,
    solo: bool = False,
    clears: bool = False,
) -> LinearModel:
    """Fit one model on ``matrix``/``rows``. With ``dev`` (its matrix and rows) the model is
    fitted on all of ``rows`` and calibrated and thresholded on dev (the protocol); without,
    on the out-of-fold decision values of a 5-fold split of ``rows``."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    y = rows.y

    def fit(idx: np.ndarray) -> LogisticRegression:
        model = LogisticRegression(
            C=c,
            solver="liblinear",
            class_weight="balanced" if soft is None else None,
            random_state=seed,
            max_iter=1000,
        )
        if soft is None:
            return model.fit(matrix[idx], y[idx])
        return fit_soft(model, matrix[idx], soft[idx])

    final = fit(np.arange(len(y)))
    if dev is not None:
        z, judged = final.decision_function(dev[0]), dev[1]
    else:
        z, judged = np.zeros(len(y)), rows
        folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
        for train, held in folds.split(np.zeros(len(y)), y):
            z[held] = fit(train).decision_function(matrix[held])
    a, b = platt(z, judged.y)
    p = 1.0 / (1.0 + np.exp(-(a * z + b)))
    review, high, figures = choose_thresholds(
        p, judged, min_precision=min_precision, grid_start=grid_start, solo=solo
    )
    coef = final.coef_.ravel()
    nz = np.nonzero(coef)[0].astype(np.int32)
    return LinearModel(
        columns=nz,
        weights=coef[nz].astype(np.float32),
        intercept=float(final.intercept_[0]),
        platt_a=a,
        platt_b=b,
        review=review,
        high=high,
        n=len(y),
        positives=int(y.sum()),
        oof={**figures, "on": "dev" if dev is not None else "out-of-fold"},
        clears=clears,
    )


def is_slur(span: Span) -> bool:
    """A lexicon hit on a hate term that is no mention."""
    return span.source == "lexicon" and span.category.value == "hate" and not span.mention


def _is_term(span: Span) -> bool:
    """A lexicon hit of medium severity or more that is no mention."""
    return (
        span.source == "lexicon" and not span.mention and span.severity.rank >= Severity.MEDIUM.rank
    )


def fit_soft(model: Any, matrix: Any, share: np.ndarray) -> Any:
    """Fit a logistic regression to soft targets: each row once as a positive weighted by
    ``share`` and once as a negative weighted by ``1 - share``, the two classes' total
    weights made equal (what ``class_weight="balanced"`` does for hard labels)."""
    import scipy.sparse as sp

    n = len(share)
    pos, neg = share.sum(), (1.0 - share).sum()
    weight = np.r_[share * (n / 2 / max(pos, 1e-9)), (1.0 - share) * (n / 2 / max(neg, 1e-9))]
    target = np.r_[np.ones(n, dtype=np.int64), np.zeros(n, dtype=np.int64)]
    return model.fit(sp.vstack([matrix, matrix]).tocsr(), target, sample_weight=weight)


#: Most out-of-fold share of ordinary sentences (customer-service text, never to be reviewed)
#: that the scorer may send to review at its ``review`` threshold: half of the guard's 0.5%
#: budget, the other half left for sentences unlike the training ones. The cost stated: a
#: higher threshold trades recall on the labelled sets for fewer reviews of ordinary text.
MAX_ORDINARY_REVIEW_RATE = 0.0025

#: The least precision, measured on dev, of the posts the scorer sends to review *alone* (the
#: lexicon passes them) at its ``review`` threshold; below it the scorer never flags alone.
#: Issue 47 asks for 0.75 on unseen posts; 0.05 of margin for the shift from dev to them.
MIN_SOLO_PRECISION = 0.80

#: Per model: regularisation C, the least out-of-fold precision of "lexicon or scorer", and
#: the lowest review threshold tried (hate is rare, so its calibrated probabilities are low).
FIT_SETTINGS: dict[str, tuple[float, float, float]] = {
    "zh/flagged": (1.0, 0.0, 0.30),
    "en/flagged": (1.0, 0.985, 0.30),
    "en/hate": (1.0, 0.0, 0.05),
}


@dataclass(frozen=True)
class _FitData:
    """What every model of :func:`fit_scorer` reads: the posts (labelled, then ordinary), the
    two feature matrices and the per-post lexicon signals (see :func:`fit_scorer`)."""

    posts: list[LabelledPost]
    matrix: Any
    targeting: Any
    lex: np.ndarray
    strong: np.ndarray
    lex_hate: np.ndarray
    speech: np.ndarray
    plain: np.ndarray
    slur: np.ndarray
    term: np.ndarray

    def eval_rows(self, idx: list[int], key: str) -> EvalRows:
        """The threshold rows of one model: a stacked model is judged with the strong lexicon
        hits only (it decides the medium ones), and no flagged model may flag speech about
        harm alone; the hate model may only confirm a slur."""
        label = key.split("/")[1]
        if label == "hate":
            lex, cand = self.lex_hate[idx], self.slur[idx]
        else:
            lex = (self.strong if key in STACKED_MODELS else self.lex)[idx]
            cand = ~self.speech[idx]
        y = np.array([self.posts[i].truth[label] for i in idx], dtype=np.int64)  # type: ignore[index]  # label: an EvalLabel (MODEL_KEYS)
        return EvalRows(y=y, lex=lex, plain=self.plain[idx], cand=cand, term=self.term[idx])


def _fit_model(key: str, data: _FitData, seed: int) -> LinearModel:
    """Fit one model on its language's ``train`` rows; calibrate and threshold it on ``dev``.

    Raises:
        ValueError: Fewer than 20 rows, or one class only.
    """
    lang, label = key.split("/")
    posts = data.posts
    mine = [i for i, p in enumerate(posts) if p.lang == lang and label in p.truth]
    rows = [i for i in mine if posts[i].part != "dev"]
    held = [i for i in mine if posts[i].part == "dev"]
    y = np.array([posts[i].truth[label] for i in rows], dtype=np.int64)  # type: ignore[index]  # label: an EvalLabel (MODEL_KEYS)
    if len(rows) < 20 or y.min() == y.max():
        raise ValueError(
            f"cannot fit {key}: {len(rows)} rows, {int(y.sum()) if len(y) else 0} positive; "
            "the data folder needs labelled posts of both classes in that language"
        )
    c, min_precision, grid_start = FIT_SETTINGS[key]
    soft = None
    if label == "hate":  # annotator shares where the source has them, else the label
        shares = [posts[i].hate_share for i in rows]
        soft = np.array([float(y[j]) if sh is None else sh for j, sh in enumerate(shares)])
    source = data.targeting if key in TARGETING_MODELS else data.matrix
    return fit_one(
        source[rows], data.eval_rows(rows, key), c=c, min_precision=min_precision, seed=seed,
        soft=soft, grid_start=grid_start, solo=label == "flagged",
        dev=(source[held], data.eval_rows(held, key)) if held else None,
        clears=key in STACKED_MODELS,
    )  # fmt: skip


def fit_scorer(
    posts: Sequence[LabelledPost],
    lexicon_flags: Sequence[bool],
    lexicon_hate: Sequence[bool],
    *,
    seed: int = SEED,
    sources: dict[str, str] | None = None,
    ordinary: Sequence[LabelledPost] = (),
    spans: Sequence[Sequence[Span]] | None = None,
    lexicon_strong: Sequence[bool] | None = None,
    speech: Sequence[bool] | None = None,
) -> RiskScorer:
    """Fit the three models on ``posts`` (the caller passes the **tune** split only).

    Protocol (issue 47): posts and ordinary sentences whose ``part`` is ``dev`` are not fitted
    on; each model is fitted on the others (``train``), then calibrated (Platt) and given its
    thresholds on its dev rows. Without dev rows, out-of-fold values of the fit rows are used.

    ``ordinary`` sentences (:func:`~.dataset.load_ordinary_set`, tune half) join every model of
    their language as negatives; the ``review`` threshold is the best-F1 one on the labelled
    rows among those that send at most :data:`MAX_ORDINARY_REVIEW_RATE` of the ordinary
    sentences to review out of fold (the lexicon does not flag them: its own guard is a test).

    Args:
        posts: Labelled posts.
        lexicon_flags: Per post, whether the lexicon alone flags it (review or block), so the
            review threshold is chosen for the combination the policy makes.
        lexicon_hate: Per post, whether the lexicon labels it hate whatever the scorer says
            (a critical hate term that is no mention; see :func:`~.judgement.build_verdict`).
        ordinary: Ordinary sentences of the tune split (negatives; see above).
        spans: The lexicon spans of ``posts`` then ``ordinary`` (the hate model's targeting
            features and the stacked models' lexicon features); None scans them with the
            packaged lexicon.
        lexicon_strong: Per post, whether a lexicon hit that the scorer cannot clear (high or
            critical, no mention) flags it: the flags a stacked model is judged beside.
            None: ``lexicon_flags``.
        speech: Per post, whether it is speech about harm (the scorer may not flag it alone).
            None: no post is.
        seed: Seed of the folds and the solver.
        sources: File name → SHA-256 of the training files (recorded in the header).

    Raises:
        ValueError: A model has no rows or only one class (the data folder is incomplete).
    """
    if any(p.split != "tune" for p in [*posts, *ordinary]):
        raise ValueError("fit_scorer trains on the tune split only; the test split is held out")
    n = len(posts)
    strong = lexicon_flags if lexicon_strong is None else lexicon_strong
    speech = [False] * n if speech is None else speech
    if any(len(x) != n for x in (lexicon_flags, lexicon_hate, strong, speech)):
        raise ValueError(
            "lexicon_flags, lexicon_hate, lexicon_strong and speech need one value per post"
        )
    everything = [*posts, *ordinary]
    texts = [p.text for p in everything]
    spans = lexicon_spans(texts) if spans is None else spans
    if len(spans) != len(everything):
        raise ValueError("spans need one entry per post and per ordinary sentence")
    pad = [False] * len(ordinary)

    def flags(values: Sequence[bool]) -> np.ndarray:
        return np.asarray([*values, *pad], dtype=bool)

    data = _FitData(
        posts=everything,
        matrix=flag_matrix(texts, spans),
        targeting=targeting_matrix(texts, spans).tocsr(),
        lex=flags(lexicon_flags),
        strong=flags(strong),
        lex_hate=flags(lexicon_hate),
        speech=flags(speech),
        plain=np.arange(len(everything)) >= n,
        # the hate model confirms or withdraws the hate label of a slur; it adds none alone
        slur=np.asarray([any(is_slur(x) for x in found) for found in spans], dtype=bool),
        term=np.asarray([any(_is_term(x) for x in found) for found in spans], dtype=bool),
    )
    models: dict[str, LinearModel] = {key: _fit_model(key, data, seed) for key in MODEL_KEYS}
    meta = _meta(
        models, seed=seed, sources=sources or {}, posts=everything, n_ordinary=len(ordinary)
    )
    return RiskScorer(models=models, meta=meta, version=scorer_version(meta, models))


def _meta(
    models: dict[str, LinearModel], *, seed: int, sources: dict[str, str],
    posts: Sequence[LabelledPost], n_ordinary: int,
) -> dict[str, Any]:  # fmt: skip
    """The scorer file's JSON header."""
    return {
        "format": FORMAT_VERSION,
        "seed": seed,
        "n_features": N_FEATURES,
        "features": "words+bigrams (Latin), char 1-3 grams + cues (Han); binary, l2",
        "features_zh/flagged": "+ lexicon hits (term, tier, category at tier); stacked",
        "features_en/hate": "targeting (lexicon tiers, slur use, group cues); binary, l2",
        "targeting": load_targeting_cues().version,
        "lexicon": default_lexicon().version,
        "split": "train, calibrated on dev" if any(p.part == "dev" for p in posts) else "tune",
        "min_solo_precision": MIN_SOLO_PRECISION,
        "ordinary_rows": n_ordinary,
        "max_ordinary_review_rate": MAX_ORDINARY_REVIEW_RATE,
        "sources": sources,
        "models": {
            k: {
                "intercept": m.intercept,
                "platt_a": m.platt_a,
                "platt_b": m.platt_b,
                "review": m.review,
                "high": m.high,
                "clears": m.clears,
                "n": m.n,
                "positives": m.positives,
                "oof": m.oof,
            }
            for k, m in models.items()
        },
    }
