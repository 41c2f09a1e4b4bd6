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
import struct
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import pairwise, repeat
from math import exp
from pathlib import Path

import numpy as np

from orchestrator.classifier.loader import RulesError
from orchestrator.classifier.negation import EN_JOINS, ZH_JOINS, has_negation
from orchestrator.routes import Route
from orchestrator.textnorm import ASCII_SEPARATORS, TOKEN, tokens

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
#: How many of :data:`_LEVELS` a score reaches (``sum(score >= lv ...)``, by bisection).
_level_of = partial(bisect_right, _LEVELS)

_FRAME = re.compile(r"[:：?？\n\"“「«]")

#: Cue flags of :func:`cues`: the text negates something (a negation scope of
#: :func:`orchestrator.classifier.negation.negated_scopes`: only the rules read its scope), may
#: ask for two things (a joining word: the rules split the clauses), or is too short (under
#: :data:`SHORT_TOKENS` tokens) for the n-grams alone: two cue words of different routes
#: ("agent attachment") are a tie for the rules to call. :data:`FEW`: at most
#: :data:`FEW_UNITS` words-or-Chinese-characters, where two cue words of different routes may
#: be all the rules see ("the invoice spreadsheet"): the fast tier decides such a text only
#: after the rules have been matched and do not tie (a tie never acts).
#: :data:`BLANK` (set by :meth:`FastScorer.fast` only): not one n-gram, framing, attachment or
#: channel feature of the text is known, so its probabilities are the model's prior alone.
NEGATION, COMPOUND, SHORT, FEW, BLANK = 1, 2, 4, 8, 16
SHORT_TOKENS = 3
FEW_UNITS = 6
#: Chinese words that may join two requests (the clause split of :mod:`.negation`), as one
#: pattern: one scan of the text instead of a substring search per word.
_ZH_COMPOUND = re.compile("|".join(map(re.escape, ZH_JOINS)))


#: A window whose tokens are mostly repeats (``"refund " * 50000``, one pasted line over and
#: over) keeps at most this many copies of each token (:func:`bag_tokens`).
REPEAT_KEEP = 2


def bag_tokens(text: str) -> list[str]:
    """The tokens of ``text`` that count as evidence: all of them, except in a text where more
    than three in four tokens are repeats; there each token counts at most :data:`REPEAT_KEEP`
    times. A word said a thousand times is not a thousand times the evidence (the bag is scaled
    by ``1 / sqrt(n)``, so n copies of a word would weigh ``sqrt(n)`` times one), and no
    request in training looked like that."""
    toks = tokens(text)
    if len(toks) > 8 and len(set(toks)) * 4 < len(toks):
        return list(_cap(toks))
    return toks


def window(text: str) -> str:
    """The head and tail of ``text`` that the model reads (all of it when short)."""
    if len(text) <= 2 * WINDOW:
        return text
    return text[:WINDOW] + " \n " + text[-WINDOW:]


def _cap(feats: list[str]) -> tuple[str, ...]:
    """``feats`` with each feature kept at most :data:`REPEAT_KEEP` times when more than three
    in four are repeats (one long run: ``"aaaa..."``, ``"退款退款..."``; see :func:`bag_tokens`)."""
    if len(feats) > 8 and len(set(feats)) * 4 < len(feats):
        seen: dict[str, int] = {}
        kept = []
        for f in feats:
            c = seen.get(f, 0)
            if c < REPEAT_KEEP:
                kept.append(f)
                seen[f] = c + 1
        return tuple(kept)
    return tuple(feats)


@lru_cache(maxsize=1 << 16)
def _word(tok: str) -> tuple[str, ...]:
    """``w`` and ``c`` features of one English token (memoised: words repeat)."""
    padded = " " + tok + " "
    if len(padded) <= 4:
        return ("w" + tok,)
    return _cap(["w" + tok, *["c" + padded[i : i + 4] for i in range(len(padded) - 3)]])


@lru_cache(maxsize=1 << 14)
def _han(tok: str) -> tuple[str, ...]:
    """``z`` and ``y`` features of one run of Chinese characters (memoised)."""
    return _cap([*["z" + ch for ch in tok], *["y" + tok[i : i + 2] for i in range(len(tok) - 1)]])


def cues(text: str) -> int:
    """:data:`NEGATION`, :data:`COMPOUND`, :data:`SHORT`, :data:`FEW` when ``text`` has such a
    cue, else 0.

    Negation: a directive negation scope ("don't moderate ...", "不用审核"), not any "not" ("my
    card is not working" negates nothing). Compound: a joining word (and, also, plus, then,
    well; 另外, 并且, ...). Short: fewer than :data:`SHORT_TOKENS` tokens and fewer than 4
    words-or-Chinese-characters (a Chinese run is one token however long). Few: at most
    :data:`FEW_UNITS` words-or-Chinese-characters."""
    return _flags(text, tokens(text))


def _frame(text: str) -> list[str]:
    """``f:`` features of the framing prefix of ``text`` (none when it has none)."""
    head = text[:120]
    m = _FRAME.search(head)
    if m is None or len(text) - m.end() < 8 or m.start() < 4:
        return []
    out = ["f:"]
    for tok in TOKEN.findall(head[: m.start()]):
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
        The features in text order (a bag: repeats count, see :func:`bag_tokens`), of
        :func:`window` of the text.
    """
    text = window(text)
    out: list[str] = []
    prev = ""
    for tok in bag_tokens(text):
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


#: Lanes of a packed row, 64 bits each, lowest first: lane 0 counts known features (1 per row),
#: lanes 1-4 hold the text-only weights and lanes 5-8 the combined weights, each stored as
#: ``_OFFSET + round(w * _SCALE)`` so that every lane stays non-negative and a sum of rows never
#: borrows across lanes: a sum of n rows holds ``n * _OFFSET`` extra on each weight lane, which
#: :func:`_unpack` subtracts (exactly, in integers) before converting to float.
_K = len(CLASSES)
_LANE = 64
_LANES = 1 + 2 * _K
_BYTES = _LANES * _LANE // 8
_UNPACK = struct.Struct(f"<{_LANES}Q").unpack
#: Fixed-point scale of a packed weight (rounding below 2**-33 ~ 1.2e-10 per weight).
_SCALE = float(1 << 32)
#: Largest packable weight magnitude (fitted models stay under 10): ``|w| * _SCALE < 2**40``.
_LIMIT = float(1 << 8)
_OFFSET = 1 << 40
#: Most known features one packed sum may hold: each row adds under ``2**41`` per lane.
_MAX_FEATURES = (1 << (_LANE - 41)) - 1
#: Most distinct tokens remembered per scorer (the memo is cleared when full).
_MEMO = 1 << 16


def _pack(values: Sequence[float]) -> int:
    """One feature's weights (text-only then combined, :data:`CLASSES` order each) as one
    Python integer: a count of 1 in lane 0, value k in lane k + 1, offset to be non-negative."""
    out = 1
    for k, v in enumerate(values, 1):
        out += (_OFFSET + round(v * _SCALE)) << (_LANE * k)
    return out


def _unpack(total: int) -> tuple[int, list[float]]:
    """The feature count and the eight weight sums (text-only, then combined) of a sum of
    :func:`_pack` integers.

    Raises:
        ValueError: More than :data:`_MAX_FEATURES` features were summed (lanes would carry;
            a request's window holds a few thousand at most).
    """
    lanes = _UNPACK(total.to_bytes(_BYTES, "little"))
    n = lanes[0]
    if n > _MAX_FEATURES:
        raise ValueError(f"{n} features in one packed sum, over {_MAX_FEATURES}")
    base = n * _OFFSET
    return n, [(v - base) / _SCALE for v in lanes[1:]]


_LANE_MASK = (1 << _LANE) - 1


def _lane(total: int, k: int) -> float:
    """Lane ``k`` (1 or more) of a sum of :func:`_pack` integers, as :func:`_unpack` gives it,
    without unpacking the others."""
    n = total & _LANE_MASK
    return (((total >> (_LANE * k)) & _LANE_MASK) - n * _OFFSET) / _SCALE


_TEXT_MASK = (1 << (_LANE * (1 + _K))) - 1
_TEXT_BYTES = _LANE // 8 * (1 + _K)
_UNPACK_TEXT = struct.Struct(f"<{1 + _K}Q").unpack


def _unpack_text(total: int) -> tuple[int, list[float]]:
    """:func:`_unpack` of the count and the text-only lanes only (the fast tier's)."""
    lanes = _UNPACK_TEXT((total & _TEXT_MASK).to_bytes(_LANE // 8 * (1 + _K), "little"))
    n = lanes[0]
    if n > _MAX_FEATURES:
        raise ValueError(f"{n} features in one packed sum, over {_MAX_FEATURES}")
    base = n * _OFFSET
    return n, [(v - base) / _SCALE for v in lanes[1:]]


#: Tokens (of :func:`tokens`) one of which every English negation cue of
#: :mod:`orchestrator.classifier.negation` holds: ``don't`` splits into ``don`` and ``t``,
#: ``needn't`` into ``needn`` and ``t``.
_NEG_TOKENS = frozenset(
    ("t", "dont", "not", "never", "no", "needn", "neednt", "without", "instead", "rather")
)
#: English tokens that may join two requests (:func:`orchestrator.classifier.negation.clauses`).
_EN_COMPOUND = frozenset((*EN_JOINS, "well"))


def _flags(text: str, toks: Sequence[str]) -> int:
    """:func:`cues` of a text whose tokens are already split."""
    flag = NEGATION if has_negation(text) else 0
    if not _EN_COMPOUND.isdisjoint(toks) or (
        not text.isascii() and _ZH_COMPOUND.search(text) is not None
    ):
        flag |= COMPOUND
    if len(toks) <= FEW_UNITS:
        units = sum(len(t) if t[0] >= "\u3400" else 1 for t in toks)
        if len(toks) < SHORT_TOKENS and units < 4:
            flag |= SHORT
        if units <= FEW_UNITS:
            flag |= FEW
    return flag


class FastScorer:
    """The learned tier's per-request scorer, in plain Python: a table of precomputed sums.

    Built once per model (and again on a hot reload, aside). Each token the scorer meets is
    turned, once, into one *entry*: the sum of the weight rows of all its known features (a
    word's ``w`` and ``c`` grams, a Chinese run's ``z`` and ``y`` grams) for both weight sets,
    packed as unsigned 64-bit lanes of one Python integer (:func:`_pack`: a feature count and
    eight offset fixed-point weights, scale ``2**32``). Word pairs and the framing, attachment,
    channel and rule features have packed rows of their own. A request then costs one C-level
    ``sum(map(memo.__getitem__, tokens))``, one more over its word pairs (``dict.get`` of
    ``(prev, tok)``), and one ``int.to_bytes`` + ``struct`` unpack of the nine lanes at the
    end: no numpy and no per-token Python bytecode on a warm path. This is a precomputed weight
    table keyed by the token instead of by a hash bucket: the dictionary hashes the token
    anyway, and a known token needs no n-gram extraction at all.

    The arithmetic is :meth:`LearnedModel.logits`' (``b + sum(rows) / sqrt(n_known)``); the
    fixed-point rounding is below ``1.2e-10`` per weight, so the logits agree with the numpy
    scorer to ``1e-6`` on any request (tested on every labelled request).

    Args:
        model: The fitted model.

    Raises:
        ValueError: A weight of ``2**8`` or more in magnitude (fitted models stay under 10).
    """

    __slots__ = (
        "_b_comb",
        "_b_text",
        "_bigram",
        "_extra_memo",
        "_frames",
        "_ids",
        "_last",
        "_memo",
        "_rows",
        "_rule",
        "_score_memo",
    )

    def __init__(self, model: LearnedModel) -> None:
        names = sorted(model.vocab, key=model.vocab.__getitem__)
        text = model.w_text.astype(np.float64).tolist()
        comb = model.w_comb.astype(np.float64).tolist()
        biggest = max((abs(w) for row in (*text, *comb) for w in row), default=0.0)
        if biggest >= _LIMIT:
            raise ValueError(f"weight {biggest} out of the packable range (|w| < 2**8)")
        self._ids: dict[str, int] = {n: i for i, n in enumerate(names)}
        self._rows = [_pack(t + c) for t, c in zip(text, comb, strict=True)]
        self._rule = [n.startswith("r:") for n in names]
        #: ``(prev, tok)`` -> packed row of the word pair feature ``b<prev> <tok>`` (a tuple of
        #: two strings hashes from their cached hashes: no string is built per pair).
        self._bigram: dict[tuple[str, ...], int] = {
            tuple(n[1:].split(" ")): self._rows[i] for i, n in enumerate(names) if n[0] == "b"
        }
        self._b_text = tuple(model.b_text.astype(np.float64).tolist())
        self._b_comb = tuple(model.b_comb.astype(np.float64).tolist())
        self._memo: dict[str, int] = {}
        #: framing prefix (the text before its first ``:``/``?``/quote/line break) -> packed
        #: sum of its ``f:`` features; ``(attachments, channel)`` -> packed sum of theirs.
        self._frames: dict[str, int] = {}
        self._extra_memo: dict[tuple[tuple[str, ...], str | None], int] = {}
        #: :meth:`score`'s memo: ``(attachments, channel, rule ids, routes, levels)`` -> packed
        #: sum and rule part of those features
        self._score_memo: dict[tuple[object, ...], tuple[int, int]] = {}
        #: ``(text, packed sum of its n-grams and framing)`` of the last :meth:`fast` call
        #: (compared by identity: one tuple, replaced whole, so a concurrent call is safe).
        self._last: tuple[str | None, int] = (None, 0)

    def _entry(self, tok: str) -> int:
        get, rows = self._ids.get, self._rows
        feats = _han(tok) if tok[0] >= "\u3400" else _word(tok)
        known = [i for i in map(get, feats) if i is not None]
        return sum(map(rows.__getitem__, known))

    def _bag(self, toks: list[str]) -> int:
        """Packed sum of the n-grams of a text's tokens (word pairs included)."""
        memo = self._memo
        try:
            total = sum(map(memo.__getitem__, toks))
        except KeyError:
            total = self._fill(toks)
        if len(toks) > 1:  # word pairs, keyed (prev, tok): a pair with a Chinese run is unknown
            total += sum(map(self._bigram.get, pairwise(toks), repeat(0)))
        return total

    def _named(self, names: Iterable[str]) -> tuple[int, int]:
        """Packed sum and rule part of named features (frame, extras, rules)."""
        get, rows, rule = self._ids.get, self._rows, self._rule
        total = rules = 0
        for name in names:
            i = get(name)
            if i is not None:
                total += rows[i]
                if rule[i]:
                    rules += rows[i]
        return total, rules

    def fast(
        self, text: str, *, attachments: Iterable[str] = (), channel: str | None = None
    ) -> tuple[list[float], int]:
        """Text-only class *probabilities* (:data:`CLASSES` order, the softmax of the text-only
        logits) and :func:`cues` flags of :func:`window` of the text: the fast tier's input.

        The hot path of the classifier, written flat (one call, no helper per step): tokens by
        byte translation for ASCII, one C-level sum over the per-token memo, one over the word
        pairs, the framing prefix's and the attachments'/channel's packed sums from memos keyed
        by the prefix and by ``(attachments, channel)``, then the cue flags (a substring
        pre-check before any regex) and the softmax.
        """
        given = text
        if len(text) > 2 * WINDOW:
            text = text[:WINDOW] + " \n " + text[-WINDOW:]
        ascii_text = text.isascii()
        if ascii_text:
            toks = text.encode().translate(ASCII_SEPARATORS).decode().split()
        else:
            toks = TOKEN.findall(text)
        n_tok = len(toks)
        if n_tok > 8 and len(set(toks)) * 4 < n_tok:
            toks = list(_cap(toks))
        memo = self._memo
        try:
            total = sum(map(memo.__getitem__, toks))
        except KeyError:
            total = self._fill(toks)
        if n_tok > 1:  # word pairs, keyed (prev, tok): a pair with a Chinese run is unknown
            total += sum(map(self._bigram.get, pairwise(toks), repeat(0)))
        m = _FRAME.search(text, 0, 120)
        if m is not None and len(text) - m.end() >= 8 and m.start() >= 4:
            prefix = text[: m.start()]
            frame = self._frames.get(prefix)
            if frame is None:
                frame = self._memo_put(self._frames, prefix, self._named(_frame(text))[0])
            total += frame
        # the text's part, for score() of the same text object when the rules run next
        self._last = (given, total)
        if attachments or channel:
            key = (tuple(attachments), channel)
            extra = self._extra_memo.get(key)
            if extra is None:
                extra = self._memo_put(
                    self._extra_memo, key, self._named(_extras(key[0], channel, (), None))[0]
                )
            total += extra
        # cue flags (:func:`_flags`, inlined); an ASCII text without a negation token cannot
        # match a negation cue (each English cue holds one of :data:`_NEG_TOKENS`, or starts a
        # longer word with "without" / "needn")
        if (
            ascii_text
            and _NEG_TOKENS.isdisjoint(toks)
            and "without" not in text
            and "needn" not in text
        ):
            flag = 0
        else:
            flag = NEGATION if has_negation(text) else 0
        if not _EN_COMPOUND.isdisjoint(toks) or (
            not ascii_text and _ZH_COMPOUND.search(text) is not None
        ):
            flag |= COMPOUND
        if n_tok <= FEW_UNITS:
            units = n_tok if ascii_text else sum(len(t) if t[0] >= "\u3400" else 1 for t in toks)
            if n_tok < SHORT_TOKENS and units < 4:
                flag |= SHORT
            if units <= FEW_UNITS:
                flag |= FEW
        lanes = _UNPACK_TEXT((total & _TEXT_MASK).to_bytes(_TEXT_BYTES, "little"))
        n = lanes[0]
        if not n:
            z = self._b_text
            flag |= BLANK
        else:
            if n > _MAX_FEATURES:
                raise ValueError(f"{n} features in one packed sum, over {_MAX_FEATURES}")
            base = n * _OFFSET
            scale = 1.0 / (_SCALE * math.sqrt(n))
            b0, b1, b2, b3 = self._b_text
            z = (
                b0 + (lanes[1] - base) * scale,
                b1 + (lanes[2] - base) * scale,
                b2 + (lanes[3] - base) * scale,
                b3 + (lanes[4] - base) * scale,
            )
        top = max(z)
        e0, e1, e2, e3 = exp(z[0] - top), exp(z[1] - top), exp(z[2] - top), exp(z[3] - top)
        s = e0 + e1 + e2 + e3
        return [e0 / s, e1 / s, e2 / s, e3 / s], flag

    def logits_fast(
        self, text: str, *, attachments: Iterable[str] = (), channel: str | None = None
    ) -> list[float]:
        """Text-only logits (:data:`CLASSES` order) of :func:`window` of the text (the log of
        :meth:`fast`'s probabilities, up to a constant; for tests and tools)."""
        text = window(text)
        toks = bag_tokens(text)
        total = self._bag(toks) + self._named(_frame(text))[0]
        if attachments or channel:
            total += self._named(_extras(attachments, channel, (), None))[0]
        n, sums = _unpack_text(total)
        if not n:
            return list(self._b_text)
        scale = 1.0 / math.sqrt(n)
        return [b + v * scale for b, v in zip(self._b_text, sums, strict=True)]

    @staticmethod
    def _memo_put(memo: dict, key: object, value: int) -> int:  # type: ignore[type-arg]
        """Store ``value`` under ``key`` in a bounded memo (cleared when full); returns it."""
        if len(memo) >= _MEMO:
            memo.clear()
        memo[key] = value
        return value

    def _fill(self, toks: list[str]) -> int:
        """Memoise the entries of the tokens not yet in the memo; the packed sum of all."""
        memo = self._memo
        missing = set(toks).difference(memo)
        if len(memo) + len(missing) > _MEMO:
            memo.clear()
            missing = set(toks)
        entry = self._entry
        for tok in missing:
            memo[tok] = entry(tok)
        return sum(map(memo.__getitem__, toks))

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
        ids = tuple(rule_ids) if combined else ()
        scores = rule_scores if combined and rule_scores else None
        # the rule, attachment and channel features repeat across requests: their packed sum
        # is memoised by (attachments, channel, rule ids, the levels each route reaches)
        levels = tuple(map(_level_of, scores.values())) if scores else ()
        key = (tuple(attachments), channel, ids, tuple(scores) if scores else (), levels)
        memo = self._score_memo
        got = memo.get(key)
        if got is None:
            got = self._named(_extras(key[0], channel, ids, scores))
            if len(memo) >= _MEMO:
                memo.clear()
            memo[key] = got
        t2, rules = got
        last = self._last
        if last[0] is text:  # the same string object fast() just read: reuse its text part
            total = last[1]
        else:
            text = window(text)
            total = self._bag(bag_tokens(text))
            frame = self._named(_frame(text))
            t2 += frame[0]
        n, lanes = _unpack(total + t2)
        bias = self._b_comb if combined else self._b_text
        if not n:
            return list(bias), 0.0
        scale = 1.0 / math.sqrt(n)
        sums = lanes[_K:] if combined else lanes[:_K]
        out = [b + v * scale for b, v in zip(bias, sums, strict=True)]
        share = 0.0
        if combined and rules:
            top = out.index(max(out))
            r = _lane(rules, 1 + _K + top) * scale
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
        # numpy answers any non-archive with "contains pickled data ... load it unsafely": never
        # repeat that advice
        why = "not a NumPy .npz archive" if "pickle" in str(exc) else str(exc)
        raise RulesError(
            path,
            None,
            f"not a learned-router file ({why}); give the .npz that `orchestrator classifier "
            "fit` wrote, or refit it",
        ) from exc
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
    l2: float = 3e-5,
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
        l2: L2 penalty on the weights (3e-5: chosen on the tune split's out-of-fold
            predictions, by family, against 1e-5, 1e-4 and 1e-3; see the README).
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
