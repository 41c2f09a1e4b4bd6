"""Fitting the learned tier (:mod:`orchestrator.classifier.learned`): multinomial logistic
regression with L2 by L-BFGS (scipy, imported when fitting), both weight sets (text-only and
combined) on one vocabulary. Deterministic: a sorted vocabulary, zero start, no sampling."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orchestrator.classifier.learned import FORMAT, VERSION, LearnedModel
from orchestrator.routes import FALLBACK, Route


def class_order(labels: Iterable[Route], declared: Sequence[Route] = ()) -> tuple[Route, ...]:
    """The model's classes: the routes among ``labels`` in ``declared`` order (the routes
    file's ``[[route]]`` order), then the others in the order they first appear, then
    ``fallback`` (always a class)."""
    seen = dict.fromkeys(r for r in labels if r != FALLBACK)
    first = [r for r in declared if r in seen]
    return (*first, *(r for r in seen if r not in first), FALLBACK)


def _design(docs: Sequence[Sequence[str]], vocab: dict[str, int], n_cols: int):
    from scipy import sparse

    indptr, indices = [0], []
    data: list[float] = []
    for feats in docs:
        counts = Counter(vocab[f] for f in feats if f in vocab)
        n = sum(counts.values())
        for i in sorted(counts):
            indices.append(i)
            data.append(counts[i] / math.sqrt(n))
        indptr.append(len(indices))
    return sparse.csr_matrix(
        (np.array(data), np.array(indices, dtype=np.int64), np.array(indptr)),
        shape=(len(docs), n_cols),
    )


def softmax(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of logits ``z`` (any shape)."""
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def softmax_xent(z: np.ndarray, onehot: np.ndarray, sw: np.ndarray) -> tuple[float, np.ndarray]:
    """Sample-weighted softmax cross-entropy of the logits ``z`` ``(n, k)`` against
    ``onehot`` ``(n, k)`` with weights ``sw`` ``(n,)``, and its gradient with respect to ``z``."""
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -float((sw[:, None] * onehot * logp).sum()), (np.exp(logp) - onehot) * sw[:, None]


def _fit_lr(
    x,
    y: np.ndarray,
    sample_weight: np.ndarray,
    l2: float,
    max_iter: int,
    n_classes: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    n, d = x.shape
    k = int(y.max()) + 1 if n_classes is None else n_classes
    onehot = np.zeros((n, k))
    onehot[np.arange(n), y] = 1.0
    sw = sample_weight / sample_weight.sum()

    def xent(w: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray]:
        return softmax_xent(x @ w + b, onehot, sw)

    return _lbfgs(x, xent, l2, np.ones((d, k)), {"maxiter": max_iter})


def _lbfgs(x, xent, l2: float, mask: np.ndarray, options: Any) -> tuple[np.ndarray, np.ndarray]:
    """Weights ``(d, k)`` (zero outside ``mask``) and biases ``(k,)`` minimising ``xent(w, b)``
    (a loss and its gradient with respect to the ``k`` fitted logit columns, ``(n, k)``) plus
    ``l2 / 2 * |w|^2``, by L-BFGS from zero (deterministic); ``x`` ``(n, d)`` the features."""
    from scipy.optimize import minimize

    d, k = mask.shape

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = theta[: d * k].reshape(d, k) * mask
        value, g = xent(w, theta[d * k :])
        gw = (x.T @ g + l2 * w) * mask
        return value + 0.5 * l2 * float((w * w).sum()), np.concatenate(
            [np.asarray(gw).ravel(), g.sum(axis=0)]
        )

    res = minimize(loss, np.zeros(d * k + k), jac=True, method="L-BFGS-B", options=options)
    return res.x[: d * k].reshape(d, k) * mask, res.x[d * k :]


def train(
    docs: Sequence[Sequence[str]],
    labels: Sequence[Route],
    *,
    min_count: int = 2,
    l2: float = 3e-5,
    max_iter: int = 300,
    class_weight: float = 0.0,
    meta: dict[str, object] | None = None,
    classes: Sequence[Route] | None = None,
    row_weight: Sequence[float] | None = None,
) -> LearnedModel:
    """Fit both weight sets on feature lists (from :func:`features`, rule ids included).

    Rows are weighted by their class's inverse frequency to the power ``class_weight`` (see
    there; the labelled set has far more customer-service rows than anything else).

    Args:
        docs: Features of each request.
        labels: The right route of each.
        min_count: Keep features seen in at least this many requests.
        l2: L2 penalty on the weights (3e-5: chosen on the tune split's out-of-fold
            predictions, by family, against 1e-5, 1e-4 and 1e-3; see the README).
        max_iter: L-BFGS iterations.
        class_weight: Rows are weighted by their class's inverse frequency to this power: 0
            (default) weighs every row the same, so the model's prior follows the labelled
            set's mix of routes; 0.5 (the weighting of v1) made it send about one
            customer-service request in ten of an unseen intent to fallback.
        meta: Extra fields for the file's ``meta`` record.
        classes: The model's classes, in column order (default: :func:`class_order` of the
            labels); ``fallback`` must be one.
        row_weight: A weight per row, times the class weight (None: 1 each): a route learned
            from a few dozen examples beside thousands of built-in rows weighs as a route.

    Raises:
        ValueError: No rows, lengths differ, or a class has no rows.
    """
    if not docs or len(docs) != len(labels):
        raise ValueError(
            f"need one label per document and at least one ({len(docs)} vs {len(labels)})"
        )
    classes = tuple(classes or class_order(labels))
    if FALLBACK not in classes:
        raise ValueError(f"classes {classes} lack {FALLBACK!r}")
    col = {c: i for i, c in enumerate(classes)}
    unknown = sorted({r for r in labels if r not in col})
    if unknown:
        raise ValueError(f"labels {unknown} are not among the classes {classes}")
    y = np.array([col[r] for r in labels])
    counts = np.bincount(y, minlength=len(classes))
    if (counts == 0).any():
        missing = [classes[i] for i in np.flatnonzero(counts == 0)]
        raise ValueError(f"no training rows for {missing}")
    df: Counter[str] = Counter()
    for feats in docs:
        df.update(set(feats))
    names = sorted(f for f, c in df.items() if c >= min_count)
    vocab = {f: i for i, f in enumerate(names)}
    weight = (len(y) / (len(classes) * counts))[y] ** class_weight
    if row_weight is not None:
        weight = weight * np.asarray(row_weight, dtype=np.float64)
    x_comb = _design(docs, vocab, len(vocab))
    text_vocab = {f: i for f, i in vocab.items() if not f.startswith("r:")}
    x_text = _design(docs, text_vocab, len(vocab))
    w_comb, b_comb = _fit_lr(x_comb, y, weight, l2, max_iter, len(classes))
    w_text, b_text = _fit_lr(x_text, y, weight, l2, max_iter, len(classes))
    return LearnedModel(
        vocab=vocab,
        w_text=w_text.astype(np.float32),
        b_text=b_text.astype(np.float32),
        w_comb=w_comb.astype(np.float32),
        b_comb=b_comb.astype(np.float32),
        meta={
            "format": FORMAT,
            "version": VERSION,
            "classes": list(classes),
            "n_rows": len(docs),
            "n_features": len(vocab),
            "min_count": min_count,
            "l2": l2,
            "class_weight": class_weight,
            **(meta or {}),
        },
    )


#: ``(docs, labels, classes)`` of :func:`train_many`, set before its worker processes fork so
#: that they inherit it instead of receiving the feature lists pickled.
_JOB: (
    tuple[Sequence[Sequence[str]], Sequence[Route], tuple[Route, ...], Sequence[float] | None]
    | None
) = None


def _train_part(rows: Sequence[int]) -> LearnedModel:
    assert _JOB is not None
    docs, labels, classes, weights = _JOB
    return train(
        [docs[i] for i in rows],
        [labels[i] for i in rows],
        classes=classes,
        row_weight=[weights[i] for i in rows] if weights is not None else None,
    )


def train_many(
    parts: Sequence[Sequence[int]],
    docs: Sequence[Sequence[str]],
    labels: Sequence[Route],
    classes: Sequence[Route],
    *,
    workers: int = 1,
    row_weight: Sequence[float] | None = None,
) -> list[LearnedModel]:
    """One model (:func:`train`, default settings) per part, a part being the indices of the
    rows it is fitted on; in ``workers`` forked processes when more than one (the fits are
    independent and deterministic: the same models either way, in ``parts`` order).

    The process pool (the standard library's) forks, so it is meant for the command line, not
    for a process with threads of its own.
    """
    global _JOB
    _JOB = (docs, labels, tuple(classes), row_weight)
    if workers < 2 or len(parts) < 2:
        try:
            return [_train_part(p) for p in parts]
        finally:
            _JOB = None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(workers, len(parts)), mp_context=ctx) as pool:
            return list(pool.map(_train_part, parts))
    finally:
        _JOB = None


# ------------------------------------------------- new columns onto a fitted model
#
# ``fit --examples`` (:func:`orchestrator.classifier.fitting.fit_new_routes`) fits one column per
# new route with the fitted model's columns held fixed; these are its linear-algebra parts.


@dataclass(frozen=True)
class ColumnDesign:
    """Rows of a fit of new columns: the fixed logits of the base model's classes and the
    features a new column may weigh, for the combined and the text-only model."""

    fixed: tuple[np.ndarray, np.ndarray]  # (combined, text-only): (rows, base classes)
    x: tuple[Any, Any]  # scipy sparse (rows, len(cols)) of the combined / text-only bag
    cols: list[str]  # the feature names the new columns weigh
    #: ``(base classes, new)``: each new column's anchor, a mix of the base logits (each
    #: column sums to 1; :func:`anchored`); None: fallback's logit alone
    anchor: np.ndarray | None = None


def anchored(fixed: np.ndarray, anchor: np.ndarray | None, n_new: int) -> np.ndarray:
    """``(rows, n_new)``: the logit each new column is an offset over: ``fixed @ anchor`` (the
    base logits ``(rows, base classes)`` mixed by each column's weights), or fallback's (the
    last) logit when ``anchor`` is None."""
    if anchor is None:
        return np.repeat(fixed[:, -1:], n_new, axis=1)
    return fixed @ anchor


def column_design(base: LearnedModel, docs: Sequence[Sequence[str]], learn_from: Sequence[int]):
    """The extended vocabulary (the base's, then the features of the rows ``learn_from`` that
    it lacks, sorted) and the :class:`ColumnDesign` of ``docs``."""
    from scipy import sparse

    seen = sorted({f for i in learn_from for f in docs[i]})
    extra = [f for f in seen if f not in base.vocab]
    vocab = {**base.vocab, **{f: len(base.vocab) + j for j, f in enumerate(extra)}}
    col_of = {f: j for j, f in enumerate(seen)}
    fixed, xs = [], []
    for combined in (True, False):
        keep = (lambda f: True) if combined else (lambda f: not f.startswith("r:"))
        w = (base.w_comb if combined else base.w_text).astype(np.float64)
        b = (base.b_comb if combined else base.b_text).astype(np.float64)
        z = np.tile(b, (len(docs), 1))
        indptr, indices, data = [0], [], []
        for i, feats in enumerate(docs):
            known = [f for f in feats if f in vocab and keep(f)]
            if known:
                scale = 1.0 / np.sqrt(len(known))
                old = [base.vocab[f] for f in known if f in base.vocab]
                if old:
                    z[i] += w[old].sum(axis=0) * scale
                counts: dict[int, int] = defaultdict(int)
                for f in known:
                    if f in col_of:
                        counts[col_of[f]] += 1
                for j in sorted(counts):
                    indices.append(j)
                    data.append(counts[j] * scale)
            indptr.append(len(indices))
        fixed.append(z)
        xs.append(sparse.csr_matrix((data, indices, indptr), shape=(len(docs), len(seen))))
    return vocab, ColumnDesign((fixed[0], fixed[1]), (xs[0], xs[1]), seen)


def fit_columns(
    fixed: np.ndarray,
    x,
    y: np.ndarray,
    sw: np.ndarray,
    mask: np.ndarray,
    l2: float,
    anchor: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weights ``(features, n_new)`` and biases of the new columns: L2-penalised softmax
    cross-entropy of the logits ``[fixed[:, :-1], a + x @ w + b, fixed[:, -1]]`` (a new route
    is its anchor's logit ``a`` plus an offset, :func:`anchored`; fallback stays last), ``y``
    indexing those columns, ``w`` zero outside ``mask`` ``(features, n_new)``; L-BFGS from
    zero (deterministic)."""

    n = x.shape[0]
    n_new = mask.shape[1]
    k_old = fixed.shape[1]
    onehot = np.zeros((n, k_old + n_new))
    onehot[np.arange(n), y] = 1.0
    sw = sw / sw.sum()
    new = slice(k_old - 1, k_old - 1 + n_new)
    base = anchored(fixed, anchor, n_new)

    def xent(w: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray]:
        z_new = x @ w + b + base
        z = np.concatenate([fixed[:, :-1], z_new, fixed[:, -1:]], axis=1)
        value, g = softmax_xent(z, onehot, sw)
        return value, g[:, new]

    # sample weights sum to 1, so gradients are small: scipy's default tolerances stop at once
    return _lbfgs(x, xent, l2, mask, {"maxiter": 1000, "gtol": 1e-10, "ftol": 1e-12})


def column_logits(design: ColumnDesign, fitted) -> tuple[np.ndarray, np.ndarray]:
    """Class logits (combined, text-only) of every row under fitted new columns."""
    out = []
    for fixed, x, (w, b) in zip(design.fixed, design.x, fitted, strict=True):
        z_new = x @ w + b + anchored(fixed, design.anchor, len(b))
        out.append(np.concatenate([fixed[:, :-1], z_new, fixed[:, -1:]], axis=1))
    return out[0], out[1]


def extended_model(base: LearnedModel, vocab: dict[str, int], design: ColumnDesign, fitted, new):
    """The base model with the new columns (before ``fallback``) and the extended vocabulary."""
    mats = []
    for old_w, old_b, (w, b) in zip(
        (base.w_comb, base.w_text), (base.b_comb, base.b_text), fitted, strict=True
    ):
        full = np.zeros((len(vocab), old_w.shape[1] + len(new)))
        full[: old_w.shape[0], : old_w.shape[1] - 1] = old_w[:, :-1]
        full[: old_w.shape[0], -1] = old_w[:, -1]
        rows = [vocab[f] for f in design.cols]
        mix = design.anchor
        if mix is None:
            mix = np.zeros((old_w.shape[1], len(new)))
            mix[-1] = 1.0
        full[: old_w.shape[0], old_w.shape[1] - 1 : -1] = old_w @ mix  # the anchor's, plus
        full[rows, old_w.shape[1] - 1 : -1] += w
        bias = np.concatenate([old_b[:-1], b + old_b @ mix, old_b[-1:]])
        mats.append((full.astype(np.float32), bias.astype(np.float32)))
    classes = [*base.classes[:-1], *new, FALLBACK]
    meta = {**base.meta, "classes": classes, "n_features": len(vocab), "base": base.meta}
    (w_comb, b_comb), (w_text, b_text) = mats
    return LearnedModel(vocab, w_text, b_text, w_comb, b_comb, meta)
