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
from functools import lru_cache
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
#: Levels of a route's rule score that become ``r:<route>>=<level>`` features.
_LEVELS = (0.3, 0.5, 0.7, 0.85)

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
_FRAME = re.compile(r"[:：?？\n\"“「«]")


def window(text: str) -> str:
    """The head and tail of ``text`` that the model reads (all of it when short)."""
    if len(text) <= 2 * WINDOW:
        return text
    return text[:WINDOW] + " \n " + text[-WINDOW:]


@lru_cache(maxsize=1 << 16)
def _word(tok: str) -> tuple[str, ...]:
    """``w:`` and ``c:`` features of one English token (memoised: words repeat)."""
    padded = " " + tok + " "
    if len(padded) <= 4:
        return ("w" + tok,)
    return ("w" + tok, *["c" + padded[i : i + 4] for i in range(len(padded) - 3)])


@lru_cache(maxsize=1 << 14)
def _han(tok: str) -> tuple[str, ...]:
    """``z:`` and ``y:`` features of one run of Chinese characters (memoised)."""
    return (*["z" + ch for ch in tok], *["y" + tok[i : i + 2] for i in range(len(tok) - 1)])


def _grams(text: str, out: set[str]) -> None:
    """Add the n-gram features of ``text`` to ``out`` (one pass over its tokens)."""
    prev = ""
    add, update = out.add, out.update
    for tok in _TOKEN.findall(text):
        if tok[0] >= "\u3400":
            update(_han(tok))
            prev = ""
            continue
        update(_word(tok))
        if prev:
            add("b" + prev + " " + tok)
        prev = tok


def _frame_grams(text: str, out: set[str]) -> None:
    """``f:`` features of a framing prefix: its words and its Chinese character pairs."""
    for tok in _TOKEN.findall(text):
        if tok[0] >= "\u3400":
            out.update(["f:y" + tok[i : i + 2] for i in range(len(tok) - 1)])
        else:
            out.add("f:w" + tok)


def feature_set(
    text: str,
    *,
    attachments: Iterable[str] = (),
    channel: str | None = None,
    rule_ids: Iterable[str] = (),
    rule_scores: dict[Route, float] | None = None,
) -> set[str]:
    """The distinct feature names of one request; arguments as in :func:`features`."""
    text = window(text)
    out: set[str] = set()
    _grams(text, out)
    head = text[:120]
    m = _FRAME.search(head)
    if m is not None and len(text) - m.end() >= 8 and m.start() >= 4:
        out.add("f:")
        _frame_grams(head[: m.start()], out)
    for ext in attachments:
        out.add("a:" + ext)
    if channel:
        out.add("h:" + channel.lower())
    for rid in rule_ids:
        out.add("r:" + rid)
    if rule_scores:
        for route, score in rule_scores.items():
            if score >= 0.3:
                out.update([f"r:{route.value}>={lv}" for lv in _LEVELS if score >= lv])
    return out


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
        The distinct feature names, sorted (the model counts each once).
    """
    return sorted(
        feature_set(
            text,
            attachments=attachments,
            channel=channel,
            rule_ids=rule_ids,
            rule_scores=rule_scores,
        )
    )


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
        b = b.astype(np.float64)
        if not idx:
            return b, 0.0
        rows = w[idx].astype(np.float64)
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
        return out, share

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

    def scorer(self) -> FastScorer:
        """The plain-Python scorer of this model (built once, then cached)."""
        cached = self.__dict__.get("_scorer")
        if cached is None:
            cached = FastScorer(self)
            self.__dict__["_scorer"] = cached
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


#: Fixed-point scale of a packed weight (2**-41 ~ 4.5e-13 rounding per weight).
_SCALE = float(1 << 40)
#: Added to each packed weight so that every lane stays non-negative (|weight| < 2**16).
_OFFSET = 1 << 56
#: Bits per lane: room for the sum of 2**23 offset weights without a carry into the next.
_LANE = 80
_MASK = (1 << _LANE) - 1
#: Most distinct tokens remembered per scorer (the memo is cleared when full).
_MEMO = 1 << 16


def _pack(row: Sequence[float]) -> int:
    """Four weights as one non-negative integer, lane k at bits ``[80k, 80k + 80)``."""
    out = 0
    for k, w in enumerate(row):
        q = round(w * _SCALE)
        if abs(q) >= _OFFSET:
            raise ValueError(f"weight {w} out of the packable range (|w| < 2**16)")
        out |= (q + _OFFSET) << (_LANE * k)
    return out


def _unpack(total: int, n: int) -> list[float]:
    """Sums of the four lanes of ``total``, the sum of ``n`` packed rows."""
    base = n * _OFFSET
    return [(((total >> (_LANE * k)) & _MASK) - base) / _SCALE for k in range(len(CLASSES))]


class FastScorer:
    """The learned tier's scorer for one request, in plain Python: the per-request path.

    Built once per model (and again on a hot reload, aside): every known feature gets an
    integer id, and its four weights (combined and text-only) are packed into one Python
    integer each, as fixed-point lanes (:func:`_pack`, scale ``2**40``). The sum of a
    request's weight rows is then a single C-level ``sum`` of integers, unpacked into four
    floats: no numpy, no sparse matrix, no Python arithmetic per feature. The absolute weights
    are packed the same way for the "share of the evidence from the rules" note.

    :meth:`score` builds the features in one pass over the normalised text, straight into ids:
    the ``w:``/``c:`` ids of an English word and the ``z:``/``y:`` ids of a run of Chinese
    characters are memoised per token (words repeat), so a request costs a dictionary lookup
    per token, per word pair and per rule, plus one set union.

    The arithmetic is :meth:`LearnedModel.logits`' (``b + sum(rows) / sqrt(n_known)``); the
    fixed-point rounding is below ``1e-12`` per weight, so the logits agree with the numpy
    scorer to ``1e-9`` (tested on every labelled request).

    Args:
        model: The fitted model.

    Raises:
        ValueError: A weight of ``2**16`` or more in magnitude (no fitted model comes close).
    """

    __slots__ = (
        "_abs",
        "_b_comb",
        "_b_text",
        "_comb",
        "_han",
        "_ids",
        "_rule_ids",
        "_text",
        "_word",
    )

    def __init__(self, model: LearnedModel) -> None:
        names = sorted(model.vocab, key=model.vocab.__getitem__)
        comb = model.w_comb.astype(np.float64).tolist()
        text = model.w_text.astype(np.float64).tolist()
        self._ids: dict[str, int] = {n: i for i, n in enumerate(names)}
        self._comb = [_pack(r) for r in comb]
        self._abs = [_pack([abs(w) for w in r]) for r in comb]
        self._text = [_pack(r) for r in text]
        self._rule_ids = frozenset(i for i, n in enumerate(names) if n.startswith("r:"))
        self._b_comb = tuple(model.b_comb.astype(np.float64).tolist())
        self._b_text = tuple(model.b_text.astype(np.float64).tolist())
        self._word: dict[str, tuple[int, ...]] = {}
        self._han: dict[str, tuple[int, ...]] = {}

    # ------------------------------------------------------------------ features -> ids

    def _known(self, feats: Iterable[str]) -> tuple[int, ...]:
        return tuple(i for i in map(self._ids.get, feats) if i is not None)

    def ids(self, feats: Iterable[str]) -> set[int]:
        """Ids of the known features among ``feats`` (unknown ones carry no weight)."""
        return {i for i in map(self._ids.get, feats) if i is not None}

    def text_ids(
        self,
        text: str,
        *,
        attachments: Iterable[str] = (),
        channel: str | None = None,
        rule_ids: Iterable[str] = (),
        rule_scores: dict[Route, float] | None = None,
    ) -> set[int]:
        """Ids of the known features of one request, in one pass; the same features as
        :func:`feature_set` with the same arguments, less those the model does not know."""
        text = window(text)
        out: set[int] = set()
        update = out.update
        get = self._ids.get
        words, hans = self._word, self._han
        prev = ""
        for tok in _TOKEN.findall(text):
            if tok[0] >= "\u3400":
                got = hans.get(tok)
                if got is None:
                    if len(hans) >= _MEMO:
                        hans.clear()
                    got = hans[tok] = self._known(_han(tok))
                update(got)
                prev = ""
                continue
            got = words.get(tok)
            if got is None:
                if len(words) >= _MEMO:
                    words.clear()
                got = words[tok] = self._known(_word(tok))
            update(got)
            if prev:
                i = get("b" + prev + " " + tok)
                if i is not None:
                    out.add(i)
            prev = tok
        extra: set[str] = set()
        head = text[:120]
        m = _FRAME.search(head)
        if m is not None and len(text) - m.end() >= 8 and m.start() >= 4:
            extra.add("f:")
            _frame_grams(head[: m.start()], extra)
        for ext in attachments:
            extra.add("a:" + ext)
        if channel:
            extra.add("h:" + channel.lower())
        for rid in rule_ids:
            extra.add("r:" + rid)
        if rule_scores:
            for route, score in rule_scores.items():
                if score >= 0.3:
                    extra.update([f"r:{route.value}>={lv}" for lv in _LEVELS if score >= lv])
        update(self._known(extra))
        return out

    # ------------------------------------------------------------------ scoring

    def logits_ids(self, ids: set[int], *, combined: bool = True) -> tuple[list[float], float]:
        """Class logits (in :data:`CLASSES` order) and the rule share, from feature ids.

        Returns:
            ``(logits, rule_share)`` as :meth:`LearnedModel.logits` returns them (a list of
            floats instead of an array).
        """
        if not combined:
            ids = ids - self._rule_ids if ids & self._rule_ids else ids
        bias = self._b_comb if combined else self._b_text
        n = len(ids)
        if not n:
            return list(bias), 0.0
        rows = self._comb if combined else self._text
        sums = _unpack(sum(map(rows.__getitem__, ids)), n)
        scale = 1.0 / math.sqrt(n)
        out = [b + v * scale for b, v in zip(bias, sums, strict=True)]
        share = 0.0
        if combined:
            rule = ids & self._rule_ids
            if rule:
                top = out.index(max(out))
                total = _unpack(sum(map(self._abs.__getitem__, ids)), n)[top]
                if total > 0:
                    share = _unpack(sum(map(self._abs.__getitem__, rule)), len(rule))[top] / total
        return out, share

    def logits(self, feats: Iterable[str], *, combined: bool = True) -> tuple[list[float], float]:
        """:meth:`logits_ids` of feature names (duplicates and unknown names are ignored)."""
        return self.logits_ids(self.ids(feats), combined=combined)

    def score(
        self,
        text: str,
        *,
        attachments: Iterable[str] = (),
        channel: str | None = None,
        rule_ids: Iterable[str] = (),
        rule_scores: dict[Route, float] | None = None,
    ) -> tuple[list[float], float]:
        """Combined-model logits and rule share of one request (see :meth:`text_ids`)."""
        return self.logits_ids(
            self.text_ids(
                text,
                attachments=attachments,
                channel=channel,
                rule_ids=rule_ids,
                rule_scores=rule_scores,
            )
        )


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
