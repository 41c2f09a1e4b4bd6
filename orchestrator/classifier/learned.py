"""The learned tier: a linear model over word and character n-grams, and the rules that fired.

Why. The rules know the words someone wrote into ``routes.toml``; on phrasings nobody listed
("would you let this comment through: ...", "tell me a joke about delivery drivers") they are
either silent or sure of the wrong route. A linear model over short n-grams generalises to
unseen wordings of the same kind and, scored from a per-token table of precomputed weight sums
(:class:`FastScorer`), costs a few microseconds, so it is the classifier's *first* tier: it
decides alone when it is sure and nothing in the text needs the rules (a negation or a
second request); otherwise the rules run and the combined model decides.

Features of one request (:func:`features`; the text is the classifier's normalised text with
negated phrases masked, cut to a head and a tail window of :data:`WINDOW` characters) form a
*bag* (a feature counts once per occurrence):

* per English token: ``w`` the word and ``c`` the character 4-grams of the word padded with
  spaces (spelling variants share them); ``b`` each adjacent word pair;
* per run of Chinese characters: ``z`` each character and ``y`` each character pair;
* ``f:`` the words and character pairs of a *framing prefix*: the text before the first ``:``,
  ``?``, quote or line break in the first 120 characters, when more text follows it. "Is this OK
  to post: <post>" is a request about the post; the post's own words are not the request;
* ``a:`` attachment extensions, ``h:`` the channel, and ``r:`` the id of every rule that fired
  plus graded rule scores (only the *combined* model has weights for these).

A request's feature vector is the count of each known feature divided by ``sqrt`` of the total
count of known features.

Model. Multinomial logistic regression with L2, fitted by L-BFGS (scipy); classes are the three
routes and ``fallback``. Two weight sets share one vocabulary: ``text`` (n-grams only: the fast
tier, and the "learned" row of the evaluation) and ``combined`` (n-grams plus rule features:
what decides when the rules have run). Training is deterministic: a sorted vocabulary, zero
start, no sampling (``seed`` only orders the cross-fitting folds).

File. ``orchestrator/rules/learned.v2.npz``: ``numpy.savez_compressed`` of the vocabulary, both
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
VERSION = 2
#: Classes of the model, in column order.
CLASSES: tuple[Route, ...] = (
    Route.CUSTOMER_SERVICE,
    Route.CONTENT_MODERATION,
    Route.EXCEL_REPORT,
    Route.FALLBACK,
)
#: Characters of the text the model reads: the first WINDOW and the last WINDOW. A long paste
#: is mostly not the request; the ask is at its start or its end. It also bounds the cost.
WINDOW = 320
#: Levels of a route's rule score that become ``r:<route>>=<level>`` features.
_LEVELS = (0.3, 0.5, 0.7, 0.85)

_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
_FRAME = re.compile(r"[:：?？\n\"“「«]")

#: Cue flags of :func:`cues`: the text may negate a cue word, or ask for two things, or is
#: too short (under :data:`SHORT_TOKENS` tokens) for the n-grams alone: two cue words of
#: different routes ("agent attachment") are a tie for the rules to call.
NEGATION, COMPOUND, SHORT = 1, 2, 4
SHORT_TOKENS = 3
#: English tokens (``[a-z0-9]+``: "don't" is ``don`` ``t``) that may start a negation scope
#: (:mod:`orchestrator.classifier.negation`) or join two requests (its clause split).
_EN_CUES = {
    **dict.fromkeys(
        ("don", "dont", "not", "never", "no", "needn", "without", "instead", "rather"),
        NEGATION,
    ),
    **dict.fromkeys(("and", "also", "plus", "then", "well"), COMPOUND),
}
_ZH_NEG = ("不需要", "不要", "无需", "不用", "没必要", "不必", "用不着", "甭", "别")
_ZH_COMPOUND = ("另外", "并且", "还有", "顺便", "同时", "然后", "以及", "再帮我", "再把")


def window(text: str) -> str:
    """The head and tail of ``text`` that the model reads (all of it when short)."""
    if len(text) <= 2 * WINDOW:
        return text
    return text[:WINDOW] + " \n " + text[-WINDOW:]


@lru_cache(maxsize=1 << 16)
def _word(tok: str) -> tuple[str, ...]:
    """``w`` and ``c`` features of one English token (memoised: words repeat)."""
    padded = " " + tok + " "
    if len(padded) <= 4:
        return ("w" + tok,)
    return ("w" + tok, *["c" + padded[i : i + 4] for i in range(len(padded) - 3)])


@lru_cache(maxsize=1 << 14)
def _han(tok: str) -> tuple[str, ...]:
    """``z`` and ``y`` features of one run of Chinese characters (memoised)."""
    return (*["z" + ch for ch in tok], *["y" + tok[i : i + 2] for i in range(len(tok) - 1)])


def _han_flag(tok: str) -> int:
    flag = NEGATION if any(c in tok for c in _ZH_NEG) else 0
    return flag | (COMPOUND if any(c in tok for c in _ZH_COMPOUND) else 0)


def cues(text: str) -> int:
    """:data:`NEGATION`, :data:`COMPOUND`, :data:`SHORT` when ``text`` has such a cue, else 0.

    Short: fewer than :data:`SHORT_TOKENS` tokens and fewer than 4 words-or-Chinese-characters
    (a Chinese run is one token however long)."""
    flag = 0
    tokens = _TOKEN.findall(text)
    for tok in tokens:
        flag |= _han_flag(tok) if tok[0] >= "\u3400" else _EN_CUES.get(tok, 0)
    if len(tokens) < SHORT_TOKENS and sum(len(t) if t[0] >= "\u3400" else 1 for t in tokens) < 4:
        flag |= SHORT
    return flag


def _frame(text: str) -> list[str]:
    """``f:`` features of the framing prefix of ``text`` (none when it has none)."""
    head = text[:120]
    m = _FRAME.search(head)
    if m is None or len(text) - m.end() < 8 or m.start() < 4:
        return []
    out = ["f:"]
    for tok in _TOKEN.findall(head[: m.start()]):
        if tok[0] >= "\u3400":
            out += ["f:y" + tok[i : i + 2] for i in range(len(tok) - 1)]
        else:
            out.append("f:w" + tok)
    return out


def _extras(
    attachments: Iterable[str],
    channel: str | None,
    rule_ids: Iterable[str],
    rule_scores: dict[Route, float] | None,
) -> list[str]:
    out = ["a:" + ext for ext in attachments]
    if channel:
        out.append("h:" + channel.lower())
    out += ["r:" + rid for rid in rule_ids]
    if rule_scores:
        for route, score in rule_scores.items():
            if score >= 0.3:
                out += [f"r:{route.value}>={lv}" for lv in _LEVELS if score >= lv]
    return out


def features(
    text: str,
    *,
    attachments: Iterable[str] = (),
    channel: str | None = None,
    rule_ids: Iterable[str] = (),
    rule_scores: dict[Route, float] | None = None,
) -> list[str]:
    """Feature names of one request, one entry per occurrence (see the module docstring).

    Args:
        text: Normalised text (lower case, folded), negated phrases masked.
        attachments: Attachment extensions, lower case, without the dot.
        channel: The request's channel, or None.
        rule_ids: Ids of the positive rules that fired.
        rule_scores: The rules' score per route; each becomes ``r:<route>>=<level>`` features
            for the levels it reaches (0.3, 0.5, 0.7, 0.85), a graded view of the evidence.

    Returns:
        The features in text order (a bag: repeats count), of :func:`window` of the text.
    """
    text = window(text)
    out: list[str] = []
    prev = ""
    for tok in _TOKEN.findall(text):
        if tok[0] >= "\u3400":
            out += _han(tok)
            prev = ""
            continue
        out += _word(tok)
        if prev:
            out.append("b" + prev + " " + tok)
        prev = tok
    return out + _frame(text) + _extras(attachments, channel, rule_ids, rule_scores)


@dataclass
class LearnedModel:
    """A fitted model (see the module docstring).

    Attributes:
        vocab: Feature name -> row of the weight matrices.
        w_text: ``(features, classes)`` float32 weights of the n-gram-only model.
        b_text: ``(classes,)`` its biases.
        w_comb: Weights of the combined model (n-grams and rule features).
        b_comb: Its biases.
        meta: What it was trained on (JSON-able).
    """

    vocab: dict[str, int]
    w_text: np.ndarray
    b_text: np.ndarray
    w_comb: np.ndarray
    b_comb: np.ndarray
    meta: dict[str, object] = field(default_factory=dict)

    def logits(self, feats: Sequence[str], *, combined: bool = True) -> tuple[np.ndarray, float]:
        """Class logits for one request's features (a bag), and the share from rule features.

        The reference arithmetic (numpy, float64) that :class:`FastScorer` reproduces.

        Returns:
            ``(logits, rule_share)``: logits in :data:`CLASSES` order; ``rule_share`` is
            ``|rule part| / (|n-gram part| + |rule part|)`` of the top class's weighted sum (0
            for the text-only model or when no rule feature is known).
        """
        get = self.vocab.get
        idx = [i for i in map(get, feats) if i is not None]
        rule_rows = self.rule_rows
        if not combined:
            idx = [i for i in idx if i not in rule_rows]
        w, b = (self.w_comb, self.b_comb) if combined else (self.w_text, self.b_text)
        b = b.astype(np.float64)
        if not idx:
            return b, 0.0
        scale = 1.0 / math.sqrt(len(idx))
        rows = w[idx].astype(np.float64)
        is_rule = np.array([i in rule_rows for i in idx])
        text_part = rows[~is_rule].sum(axis=0) * scale
        rule_part = rows[is_rule].sum(axis=0) * scale
        out = b + text_part + rule_part
        share = 0.0
        if combined and is_rule.any():
            top = int(out.argmax())
            total = abs(text_part[top]) + abs(rule_part[top])
            share = abs(rule_part[top]) / total if total > 0 else 0.0
        return out, float(share)

    def probabilities(self, feats: Sequence[str], *, combined: bool = True) -> np.ndarray:
        """Softmax of :meth:`logits`, in :data:`CLASSES` order."""
        z, _ = self.logits(feats, combined=combined)
        z = np.exp(z - z.max())
        return z / z.sum()

    @property
    def rule_rows(self) -> frozenset[int]:
        """Rows of the ``r:`` (rule) features."""
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


#: Fixed-point scale of a packed weight (rounding below 2**-33 ~ 1.2e-10 per weight).
_SCALE = float(1 << 32)
#: Bits per signed lane: sums up to 2**31 in magnitude (far above any request's).
_LANE = 64
_HALF = 1 << (_LANE - 1)
_FULL = 1 << _LANE
_MASK = _FULL - 1
#: Most distinct tokens remembered per scorer (the memo is cleared when full).
_MEMO = 1 << 16
_K = len(CLASSES)
#: Largest packable weight magnitude: 2**16 leaves room for 2**15 features per request.
_LIMIT = float(1 << 16)


def _pack(values: Sequence[float]) -> int:
    """Signed fixed-point values as one Python integer, value k in lane k (``_LANE`` bits)."""
    out = 0
    for k, v in enumerate(values):
        out += round(v * _SCALE) << (_LANE * k)
    return out


def _unpack(total: int, n: int) -> list[float]:
    """The first ``n`` signed lanes of a sum of :func:`_pack` integers."""
    out = []
    for _ in range(n):
        r = total & _MASK
        if r >= _HALF:
            r -= _FULL
        out.append(r / _SCALE)
        total = (total - r) >> _LANE
    return out


class FastScorer:
    """The learned tier's per-request scorer, in plain Python: a table of precomputed sums.

    Built once per model (and again on a hot reload, aside). Each token the scorer meets is
    turned, once, into one *entry*: the sum of the weight rows of all its known features (a
    word's ``w`` and ``c`` grams, a Chinese run's ``z`` and ``y`` grams) for both weight sets,
    packed as eight signed fixed-point lanes of one Python integer (:func:`_pack`, scale
    ``2**32``: text-only lanes 0-3, combined lanes 4-7), the number of known features, and
    its cue flags (:func:`cues`). Word pairs and the framing, attachment, channel and rule
    features have packed rows of their own. A request then costs one dictionary lookup per
    token and per word pair and an integer addition each; the eight class sums are unpacked
    at the end: no numpy, no per-feature Python arithmetic. This is a precomputed weight table
    keyed by the token instead of by a hash bucket: the dictionary hashes the token anyway, and
    a known token needs no n-gram extraction at all.

    The arithmetic is :meth:`LearnedModel.logits`' (``b + sum(rows) / sqrt(n_known)``); the
    fixed-point rounding is below ``1.2e-10`` per weight, so the logits agree with the numpy
    scorer to ``1e-6`` on any request (tested on every labelled request).

    Args:
        model: The fitted model.

    Raises:
        ValueError: A weight of ``2**16`` or more in magnitude (no fitted model comes close).
    """

    __slots__ = ("_b_comb", "_b_text", "_ids", "_memo", "_rows", "_rule")

    def __init__(self, model: LearnedModel) -> None:
        names = sorted(model.vocab, key=model.vocab.__getitem__)
        text = model.w_text.astype(np.float64).tolist()
        comb = model.w_comb.astype(np.float64).tolist()
        biggest = max((abs(w) for row in (*text, *comb) for w in row), default=0.0)
        if biggest >= _LIMIT:
            raise ValueError(f"weight {biggest} out of the packable range (|w| < 2**16)")
        self._ids: dict[str, int] = {n: i for i, n in enumerate(names)}
        self._rows = [_pack(t + c) for t, c in zip(text, comb, strict=True)]
        self._rule = [n.startswith("r:") for n in names]
        self._b_text = tuple(model.b_text.astype(np.float64).tolist())
        self._b_comb = tuple(model.b_comb.astype(np.float64).tolist())
        self._memo: dict[str, tuple[int, int, int]] = {}

    def _entry(self, tok: str) -> tuple[int, int, int]:
        han = tok[0] >= "\u3400"
        get, rows = self._ids.get, self._rows
        known = [i for i in map(get, _han(tok) if han else _word(tok)) if i is not None]
        flag = _han_flag(tok) if han else _EN_CUES.get(tok, 0)
        entry = (sum(map(rows.__getitem__, known)), len(known), flag)
        if len(self._memo) >= _MEMO:
            self._memo.clear()
        self._memo[tok] = entry
        return entry

    def _named(self, names: Iterable[str]) -> tuple[int, int, int]:
        """Packed sum, count and rule part of named features (frame, extras, rules)."""
        get, rows, rule = self._ids.get, self._rows, self._rule
        total = count = rules = 0
        for name in names:
            i = get(name)
            if i is not None:
                total += rows[i]
                count += 1
                if rule[i]:
                    rules += rows[i]
        return total, count, rules

    def _bag(self, text: str) -> tuple[int, int, int]:
        """Packed sum, known-feature count and cue flags of the text's n-grams."""
        memo, entry, get, rows = self._memo, self._entry, self._ids.get, self._rows
        total = count = flag = 0
        prev = ""
        tokens = _TOKEN.findall(text)
        if (
            len(tokens) < SHORT_TOKENS
            and sum(len(t) if t[0] >= "\u3400" else 1 for t in tokens) < 4
        ):
            flag = SHORT
        for tok in tokens:
            e = memo.get(tok) or entry(tok)
            total += e[0]
            count += e[1]
            flag |= e[2]
            if tok[0] >= "\u3400":
                prev = ""
                continue
            if prev:
                i = get("b" + prev + " " + tok)
                if i is not None:
                    total += rows[i]
                    count += 1
            prev = tok
        return total, count, flag

    def fast(
        self, text: str, *, attachments: Iterable[str] = (), channel: str | None = None
    ) -> tuple[list[float], int]:
        """Text-only logits (:data:`CLASSES` order) and cue flags: the fast tier's input."""
        text = window(text)
        total, count, flag = self._bag(text)
        extra = _frame(text) + _extras(attachments, channel, (), None)
        if extra:
            t2, c2, _ = self._named(extra)
            total, count = total + t2, count + c2
        if not count:
            return list(self._b_text), flag
        scale = 1.0 / math.sqrt(count)
        sums = _unpack(total, _K)
        return [b + v * scale for b, v in zip(self._b_text, sums, strict=True)], flag

    def score(
        self,
        text: str,
        *,
        attachments: Iterable[str] = (),
        channel: str | None = None,
        rule_ids: Iterable[str] = (),
        rule_scores: dict[Route, float] | None = None,
        combined: bool = True,
    ) -> tuple[list[float], float]:
        """Logits and rule share of one request, as :meth:`LearnedModel.logits` of its
        :func:`features` (``combined=False``: the text-only weights, rule features ignored)."""
        text = window(text)
        total, count, _ = self._bag(text)
        named = _frame(text) + _extras(
            attachments, channel, rule_ids if combined else (), rule_scores if combined else None
        )
        t2, c2, rules = self._named(named)
        total, count = total + t2, count + c2
        bias = self._b_comb if combined else self._b_text
        if not count:
            return list(bias), 0.0
        scale = 1.0 / math.sqrt(count)
        lanes = _unpack(total, 2 * _K)
        sums = lanes[_K:] if combined else lanes[:_K]
        out = [b + v * scale for b, v in zip(bias, sums, strict=True)]
        share = 0.0
        if combined and rules:
            top = out.index(max(out))
            r = _unpack(rules, 2 * _K)[_K + top] * scale
            t = sums[top] * scale - r
            share = abs(r) / (abs(t) + abs(r)) if (t or r) else 0.0
        return out, share


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
    class_weight: float = 0.0,
    meta: dict[str, object] | None = None,
) -> LearnedModel:
    """Fit both weight sets on feature lists (from :func:`features`, rule ids included).

    Rows are weighted by their class's inverse frequency to the power ``class_weight`` (see
    there; the labelled set has far more customer-service rows than anything else).

    Args:
        docs: Features of each request.
        labels: The right route of each.
        min_count: Keep features seen in at least this many requests.
        l2: L2 penalty on the weights.
        max_iter: L-BFGS iterations.
        class_weight: Rows are weighted by their class's inverse frequency to this power: 0
            (default) weighs every row the same, so the model's prior follows the labelled
            set's mix of routes; 0.5 (the weighting of v1) made it send about one
            customer-service request in ten of an unseen intent to fallback.
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
    weight = (len(y) / (len(CLASSES) * counts))[y] ** class_weight
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
            "class_weight": class_weight,
            **(meta or {}),
        },
    )
