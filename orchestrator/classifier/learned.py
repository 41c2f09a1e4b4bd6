"""The learned tier: a linear model over character and word n-grams, and the rules that fired.

Why. The rules know the words someone wrote into ``routes.toml``; on phrasings nobody listed
("would you let this comment through: ...", "tell me a joke about delivery drivers") they are
either silent or sure of the wrong route. A linear model over short n-grams generalises to
unseen wordings of the same kind and costs tens of microseconds, so it can sit behind the rules
and run only when they are unsure.

Features of one request (:func:`features`; the text is the classifier's normalised text, with
negated phrases already masked, cut to a head and a tail window of :data:`WINDOW` characters):

* ``w:`` English words, ``b:`` adjacent word pairs, ``c:`` character 4-grams of each word padded
  with spaces (spelling variants share them);
* ``z:`` Chinese characters and ``y:`` character pairs (Chinese has no spaces);
* ``f:`` the words and character pairs of a *framing prefix*: the text before the first ``:``,
  ``?``, quote or line break in the first 120 characters, when more text follows it. "Is this OK
  to post: <post>" is a request about the post; the post's own words are not the request;
* ``a:`` attachment extensions, ``h:`` the channel, and ``r:`` the id of every rule that fired
  (only the *combined* model has weights for these).

Model. Multinomial logistic regression with L2, fitted by L-BFGS (scipy) on binary features
scaled by ``1/sqrt(count)``; classes are the three routes and ``fallback``. Two weight sets
share one vocabulary: ``text`` (n-grams only: the "learned" row of the evaluation) and
``combined`` (n-grams plus rule ids: what the classifier uses). Training is deterministic: a
sorted vocabulary, zero start, no sampling (``seed`` only orders the cross-fitting folds).

File. ``orchestrator/rules/learned.v1.npz``: ``numpy.savez_compressed`` of the vocabulary, both
weight matrices and biases, and a JSON ``meta`` record (``format``, ``version``, classes, what
it was trained on, the rules hash, the seed). :func:`load_model` refuses another format or
version with a :class:`~orchestrator.classifier.loader.RulesError` that says how to refit
(``orchestrator classifier fit``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from orchestrator.classifier.loader import RulesError
from orchestrator.routes import Route

FORMAT = "orchestrator-learned-router"
VERSION = 1
#: Classes of the model, in column order.
CLASSES: tuple[Route, ...] = (
    Route.CUSTOMER_SERVICE,
    Route.CONTENT_MODERATION,
    Route.EXCEL_REPORT,
    Route.FALLBACK,
)
#: Characters of the text the model reads: the first WINDOW and the last WINDOW.
WINDOW = 320

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
_FRAME = re.compile(r"[:：?？\n\"“「«]")


def window(text: str) -> str:
    """The head and tail of ``text`` that the model reads (all of it when short)."""
    if len(text) <= 2 * WINDOW:
        return text
    return text[:WINDOW] + " \n " + text[-WINDOW:]


def _grams(text: str, out: list[str], prefix: str = "") -> None:
    words: list[str] = []
    for tok in _TOKEN.findall(text):
        if tok[0] >= "\u3400":
            if prefix:
                out.extend([prefix + "y" + tok[i : i + 2] for i in range(len(tok) - 1)])
                continue
            out.extend(["z" + ch for ch in tok])
            out.extend(["y" + tok[i : i + 2] for i in range(len(tok) - 1)])
            words.clear()
            continue
        if prefix:
            out.append(prefix + "w" + tok)
            continue
        out.append("w" + tok)
        if words:
            out.append("b" + words[-1] + " " + tok)
        words.append(tok)
        padded = " " + tok + " "
        if len(padded) > 4:
            out.extend(["c" + padded[i : i + 4] for i in range(len(padded) - 3)])


def features(
    text: str,
    *,
    attachments: Iterable[str] = (),
    channel: str | None = None,
    rule_ids: Iterable[str] = (),
    rule_scores: dict[Route, float] | None = None,
) -> list[str]:
    """Feature names of one request (see the module docstring).

    Args:
        text: Normalised text (lower case, folded), negated phrases masked.
        attachments: Attachment extensions, lower case, without the dot.
        channel: The request's channel, or None.
        rule_ids: Ids of the positive rules that fired.
        rule_scores: The rules' score per route; each becomes ``r:<route>>=<level>`` features
            for the levels it reaches (0.3, 0.5, 0.7, 0.85), a graded view of the evidence.

    Returns:
        Feature names; duplicates are allowed (the model counts each once).
    """
    text = window(text)
    out: list[str] = []
    _grams(text, out)
    head = text[:120]
    m = _FRAME.search(head)
    if m is not None and len(text) - m.end() >= 8 and m.start() >= 4:
        out.append("f:")
        _grams(head[: m.start()], out, "f:")
    out.extend(["a:" + ext for ext in attachments])
    if channel:
        out.append("h:" + channel.lower())
    out.extend(["r:" + rid for rid in rule_ids])
    if rule_scores:
        for route, score in rule_scores.items():
            out.extend([f"r:{route.value}>={lv}" for lv in _LEVELS if score >= lv])
    return out


_LEVELS = (0.3, 0.5, 0.7, 0.85)


@dataclass
class LearnedModel:
    """A fitted model (see the module docstring).

    Attributes:
        vocab: Feature name -> row of the weight matrices.
        w_text: ``(features, classes)`` float32 weights of the n-gram-only model.
        b_text: ``(classes,)`` its biases.
        w_comb: Weights of the combined model (n-grams and rule ids).
        b_comb: Its biases.
        meta: What it was trained on (JSON-able).
    """

    vocab: dict[str, int]
    w_text: np.ndarray
    b_text: np.ndarray
    w_comb: np.ndarray
    b_comb: np.ndarray
    meta: dict[str, object] = field(default_factory=dict)

    def _index(self, feats: Iterable[str]) -> list[int]:
        get = self.vocab.get
        return list({i for i in map(get, feats) if i is not None})

    def logits(self, feats: Sequence[str], *, combined: bool = True) -> tuple[np.ndarray, float]:
        """Class logits for one request's features, and the share of them from rule features.

        Returns:
            ``(logits, rule_share)``: logits in :data:`CLASSES` order; ``rule_share`` is the
            fraction of the absolute weight behind the top class that came from ``r:``
            features (0 for the text-only model).
        """
        idx = self._index(feats)
        if not combined:
            idx = [i for i in idx if i not in self.rule_rows]
        w, b = (self.w_comb, self.b_comb) if combined else (self.w_text, self.b_text)
        if not idx:
            return b.astype(np.float64), 0.0
        rows = w[idx]
        scale = 1.0 / math.sqrt(len(idx))
        out = b + rows.sum(axis=0) * scale
        share = 0.0
        if combined and self.rule_rows:
            top = int(out.argmax())
            mags = np.abs(rows[:, top])
            total = float(mags.sum())
            if total > 0:
                rule = sum(float(mags[k]) for k, i in enumerate(idx) if i in self.rule_rows)
                share = rule / total
        return out.astype(np.float64), share

    def probabilities(self, feats: Sequence[str], *, combined: bool = True) -> np.ndarray:
        """Softmax of :meth:`logits`, in :data:`CLASSES` order."""
        z, _ = self.logits(feats, combined=combined)
        z = np.exp(z - z.max())
        return z / z.sum()

    @property
    def rule_rows(self) -> frozenset[int]:
        """Rows of the ``r:`` (rule id) features."""
        cached = self.__dict__.get("_rule_rows")
        if cached is None:
            cached = frozenset(i for f, i in self.vocab.items() if f.startswith("r:"))
            self.__dict__["_rule_rows"] = cached
        return cached

    # ------------------------------------------------------------------ file

    def save(self, path: Path | str) -> None:
        """Write the model as ``.npz`` (atomic: a temporary file, then a rename)."""
        path = Path(path)
        names = sorted(self.vocab, key=self.vocab.__getitem__)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez_compressed(
            tmp,
            vocab=np.array(names, dtype=np.str_),
            w_text=self.w_text.astype(np.float32),
            b_text=self.b_text.astype(np.float32),
            w_comb=self.w_comb.astype(np.float32),
            b_comb=self.b_comb.astype(np.float32),
            meta=np.array(json.dumps(self.meta, sort_keys=True, ensure_ascii=False)),
        )
        tmp.replace(path)


def load_model(path: Path | str) -> LearnedModel:
    """Read a model written by :meth:`LearnedModel.save`.

    Raises:
        RulesError: Missing or unreadable file, or another format or version (refit with
            ``orchestrator classifier fit``).
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            vocab_names = data["vocab"].tolist()
            arrays = {k: data[k] for k in ("w_text", "b_text", "w_comb", "b_comb")}
    except FileNotFoundError as exc:
        raise RulesError(
            path, None, "learned model not found; run `orchestrator classifier fit`"
        ) from exc
    except (OSError, ValueError, KeyError) as exc:
        raise RulesError(path, None, f"not a learned-router file ({exc}); refit it") from exc
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise RulesError(
            path,
            None,
            f"format {meta.get('format')!r} version {meta.get('version')!r}, expected {FORMAT!r} "
            f"version {VERSION}; run `orchestrator classifier fit` to refit",
        )
    if [c for c in meta.get("classes", [])] != [c.value for c in CLASSES]:
        raise RulesError(path, None, f"classes {meta.get('classes')} differ from {CLASSES}")
    n = len(vocab_names)
    for key in ("w_text", "w_comb"):
        if arrays[key].shape != (n, len(CLASSES)):
            raise RulesError(path, None, f"{key} has shape {arrays[key].shape}, expected ({n}, 4)")
    return LearnedModel(
        vocab={name: i for i, name in enumerate(vocab_names)},
        meta=meta,
        **arrays,
    )


# ---------------------------------------------------------------------- training


def _design(docs: Sequence[Sequence[str]], vocab: dict[str, int], n_cols: int):  # type: ignore[no-untyped-def]
    from scipy import sparse

    indptr, indices = [0], []
    data: list[float] = []
    for feats in docs:
        idx = sorted({vocab[f] for f in feats if f in vocab})
        indices.extend(idx)
        data.extend([1.0 / math.sqrt(len(idx))] * len(idx) if idx else [])
        indptr.append(len(indices))
    return sparse.csr_matrix(
        (np.array(data), np.array(indices, dtype=np.int64), np.array(indptr)),
        shape=(len(docs), n_cols),
    )


def _fit_lr(
    x,  # type: ignore[no-untyped-def]
    y: np.ndarray,
    sample_weight: np.ndarray,
    l2: float,
    max_iter: int,
) -> tuple[np.ndarray, np.ndarray]:
    from scipy.optimize import minimize

    n, d = x.shape
    k = len(CLASSES)
    onehot = np.zeros((n, k))
    onehot[np.arange(n), y] = 1.0
    sw = sample_weight / sample_weight.sum()

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = theta[: d * k].reshape(d, k)
        b = theta[d * k :]
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        value = -float((sw[:, None] * onehot * logp).sum()) + 0.5 * l2 * float((w * w).sum())
        g = (np.exp(logp) - onehot) * sw[:, None]
        gw = x.T @ g + l2 * w
        return value, np.concatenate([np.asarray(gw).ravel(), g.sum(axis=0)])

    res = minimize(
        loss,
        np.zeros(d * k + k),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": max_iter},
    )
    theta = res.x
    return theta[: d * k].reshape(d, k), theta[d * k :]


def train(
    docs: Sequence[Sequence[str]],
    labels: Sequence[Route],
    *,
    min_count: int = 2,
    l2: float = 1e-4,
    max_iter: int = 300,
    meta: dict[str, object] | None = None,
) -> LearnedModel:
    """Fit both weight sets on feature lists (from :func:`features`, rule ids included).

    Rows are weighted by the square root of their class's inverse frequency (the labelled set
    has far more customer-service rows than anything else; full balancing made the model call
    too many customer-service requests out of scope).

    Args:
        docs: Features of each request.
        labels: The right route of each.
        min_count: Keep features seen in at least this many requests.
        l2: L2 penalty on the weights.
        max_iter: L-BFGS iterations.
        meta: Extra fields for the file's ``meta`` record.

    Raises:
        ValueError: No rows, lengths differ, or a class has no rows.
    """
    if not docs or len(docs) != len(labels):
        raise ValueError(
            f"need one label per document and at least one ({len(docs)} vs {len(labels)})"
        )
    col = {c: i for i, c in enumerate(CLASSES)}
    y = np.array([col[r] for r in labels])
    counts = np.bincount(y, minlength=len(CLASSES))
    if (counts == 0).any():
        missing = [CLASSES[i].value for i in np.flatnonzero(counts == 0)]
        raise ValueError(f"no training rows for {missing}")
    df: Counter[str] = Counter()
    for feats in docs:
        df.update(set(feats))
    names = sorted(f for f, c in df.items() if c >= min_count)
    vocab = {f: i for i, f in enumerate(names)}
    weight = np.sqrt(len(y) / (len(CLASSES) * counts))[y]
    x_comb = _design(docs, vocab, len(vocab))
    text_vocab = {f: i for f, i in vocab.items() if not f.startswith("r:")}
    x_text = _design(docs, text_vocab, len(vocab))
    w_comb, b_comb = _fit_lr(x_comb, y, weight, l2, max_iter)
    w_text, b_text = _fit_lr(x_text, y, weight, l2, max_iter)
    return LearnedModel(
        vocab=vocab,
        w_text=w_text.astype(np.float32),
        b_text=b_text.astype(np.float32),
        w_comb=w_comb.astype(np.float32),
        b_comb=b_comb.astype(np.float32),
        meta={
            "format": FORMAT,
            "version": VERSION,
            "classes": [c.value for c in CLASSES],
            "n_rows": len(docs),
            "n_features": len(vocab),
            "min_count": min_count,
            "l2": l2,
            **(meta or {}),
        },
    )
