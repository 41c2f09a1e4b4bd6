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

import io
import json
import math
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from itertools import pairwise
from math import exp
from operator import add
from pathlib import Path

import numpy as np

from orchestrator.classifier.loader import RulesError
from orchestrator.classifier.negation import EN_JOINS, ZH_JOINS, has_negation
from orchestrator.outfiles import output_files
from orchestrator.routes import FALLBACK, Route
from orchestrator.textnorm import ASCII_SEPARATORS, TOKEN, tokens

FORMAT = "orchestrator-learned-router"
VERSION = 2
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
                out += [f"r:{route}>={lv}" for lv in _LEVELS if score >= lv]
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
            ``(logits, rule_share)``: logits in :attr:`classes` order; ``rule_share`` is
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

    @property
    def classes(self) -> tuple[Route, ...]:
        """The model's classes (route names, ``fallback`` among them), in column order: read
        from ``meta["classes"]``."""
        classes = self.meta.get("classes")
        if not isinstance(classes, list):
            raise ValueError("the model's meta names no classes")
        return tuple(Route(str(c)) for c in classes)

    def probabilities(self, feats: Sequence[str], *, combined: bool = True) -> np.ndarray:
        """Softmax of :meth:`logits`, in :attr:`LearnedModel.classes` order."""
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
        """Write the model as ``.npz``, whole or not at all
        (:func:`orchestrator.outfiles.output_files`)."""
        path = Path(path)
        names = sorted(self.vocab, key=self.vocab.__getitem__)
        with output_files(path) as (tmp,), tmp.open("wb") as handle:
            np.savez_compressed(
                handle,
                vocab=np.array(names, dtype=np.str_),
                w_text=self.w_text.astype(np.float32),
                b_text=self.b_text.astype(np.float32),
                w_comb=self.w_comb.astype(np.float32),
                b_comb=self.b_comb.astype(np.float32),
                meta=np.array(json.dumps(self.meta, sort_keys=True, ensure_ascii=False)),
            )


#: A feature's *row*: a count of 1.0, then its text-only weights and its combined weights
#: (:attr:`LearnedModel.classes` order each). A request's evidence is the column sums of its rows.
Row = tuple[float, ...]
#: Weights are rounded to multiples of ``1 / _SCALE`` (2**-32, below 1.2e-10 per weight), so
#: that any sum of a request's rows is exact in float64 (sums stay far below 2**21) and the
#: same in any order: a token's memoised sum plus its word pairs gives what the features one
#: by one give, to the last bit.
_SCALE = float(1 << 32)
#: Largest weight magnitude kept exact that way (fitted models stay under 10).
_LIMIT = float(1 << 8)
#: Most distinct tokens remembered per scorer (the memo is cleared when full).
_MEMO = 1 << 16


def _row(weights: Sequence[float]) -> Row:
    """One feature's row from its weights (text-only then combined), rounded (:data:`_SCALE`)."""
    return (1.0, *(round(w * _SCALE) / _SCALE for w in weights))


def _sum_rows(rows: Iterable[Row], zero: Row) -> Row:
    """Column sums of rows (exact: see :data:`_SCALE`); ``zero`` for none."""
    return tuple(map(sum, zip(*rows, strict=True))) or zero


def softmax(z: Sequence[float]) -> list[float]:
    """Softmax of logits (any number of classes)."""
    top = max(z)
    e = [exp(v - top) for v in z]
    total = sum(e)
    return [v / total for v in e]


def _add(a: Row, b: Row) -> Row:
    return tuple(map(add, a, b))


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
    turned, once, into one *entry*: the column sums of the rows (:data:`Row`: a count, then
    both weight sets) of all its known features (a word's ``w`` and ``c`` grams, a Chinese
    run's ``z`` and ``y`` grams). Word pairs and the framing, attachment, channel and rule
    features have rows of their own. A request then costs a dictionary lookup per token and
    per word pair and one column sum of the rows found: no numpy and no n-gram extraction for
    a known token. This is a precomputed weight table keyed by the token instead of by a hash
    bucket: the dictionary hashes the token anyway.

    The arithmetic is :meth:`LearnedModel.logits`' (``b + sum(rows) / sqrt(n_known)``); with the
    weights rounded to multiples of 2**-32 (:data:`_SCALE`) the logits agree with the numpy
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
        "_k",
        "_last",
        "_memo",
        "_rows",
        "_rule",
        "_score_memo",
        "_zero",
        "classes",
    )

    def __init__(self, model: LearnedModel) -> None:
        names = sorted(model.vocab, key=model.vocab.__getitem__)
        text = model.w_text.astype(np.float64).tolist()
        comb = model.w_comb.astype(np.float64).tolist()
        biggest = max((abs(w) for row in (*text, *comb) for w in row), default=0.0)
        if biggest >= _LIMIT:
            raise ValueError(f"weight {biggest} out of the exact range (|w| < 2**8)")
        #: the model's classes, in column order
        self.classes: tuple[Route, ...] = model.classes
        self._k = k = len(self.classes)
        self._zero: Row = (0.0,) * (1 + 2 * k)
        self._ids: dict[str, int] = {n: i for i, n in enumerate(names)}
        self._rows = [_row(t + c) for t, c in zip(text, comb, strict=True)]
        self._rule = [n.startswith("r:") for n in names]
        #: ``(prev, tok)`` -> row of the word pair feature ``b<prev> <tok>`` (a tuple of two
        #: strings hashes from their cached hashes: no string is built per pair).
        self._bigram: dict[tuple[str, ...], Row] = {
            tuple(n[1:].split(" ")): self._rows[i] for i, n in enumerate(names) if n[0] == "b"
        }
        self._b_text = tuple(model.b_text.astype(np.float64).tolist())
        self._b_comb = tuple(model.b_comb.astype(np.float64).tolist())
        self._memo: dict[str, Row] = {}
        #: framing prefix (the text before its first ``:``/``?``/quote/line break) -> sum of
        #: its ``f:`` features; ``(attachments, channel)`` -> sum of theirs.
        self._frames: dict[str, Row] = {}
        self._extra_memo: dict[tuple[tuple[str, ...], str | None], Row] = {}
        #: :meth:`score`'s memo: ``(attachments, channel, rule ids, routes, levels)`` -> sum
        #: and rule part of those features
        self._score_memo: dict[tuple[object, ...], tuple[Row, Row]] = {}
        #: ``(text, sum of its n-grams and framing)`` of the last :meth:`fast` call (compared
        #: by identity: one tuple, replaced whole, so a concurrent call is safe).
        self._last: tuple[str | None, Row] = (None, self._zero)

    def _entry(self, tok: str) -> Row:
        get, rows = self._ids.get, self._rows
        feats = _han(tok) if tok[0] >= "\u3400" else _word(tok)
        return _sum_rows((rows[i] for i in map(get, feats) if i is not None), self._zero)

    def _bag(self, toks: list[str]) -> list[Row]:
        """The rows of a text's tokens (their memoised entries) and of its known word pairs
        (keyed ``(prev, tok)``: a pair with a Chinese run is unknown)."""
        memo = self._memo
        try:
            rows = list(map(memo.__getitem__, toks))
        except KeyError:
            rows = self._fill(toks)
        if len(toks) > 1:
            rows += filter(None, map(self._bigram.get, pairwise(toks)))
        return rows

    def _named(self, names: Iterable[str]) -> tuple[Row, Row]:
        """Sum and rule part of named features (frame, extras, rules)."""
        get, rows, rule = self._ids.get, self._rows, self._rule
        known = [i for i in map(get, names) if i is not None]
        zero = self._zero
        return (
            _sum_rows((rows[i] for i in known), zero),
            _sum_rows((rows[i] for i in known if rule[i]), zero),
        )

    def _extras_sum(self, attachments: Iterable[str], channel: str | None) -> Row:
        """Sum of the attachment and channel features (memoised by both)."""
        key = (tuple(attachments), channel)
        extra = self._extra_memo.get(key)
        if extra is None:
            extra = self._memo_put(
                self._extra_memo, key, self._named(_extras(key[0], channel, (), None))[0]
            )
        return extra

    def fast(
        self, text: str, *, attachments: Iterable[str] = (), channel: str | None = None
    ) -> tuple[list[float], int]:
        """Text-only class *probabilities* (:attr:`classes` order, the softmax of the text-only
        logits) and :func:`cues` flags of :func:`window` of the text: the fast tier's input.

        The hot path of the classifier: tokens by byte translation for ASCII, the rows of the
        tokens and word pairs, the framing prefix's and the attachments'/channel's sums from
        memos keyed by the prefix and by ``(attachments, channel)``, then the cue flags
        (:func:`_fast_flags`) and the softmax.
        """
        given = text
        if len(text) > 2 * WINDOW:
            text = text[:WINDOW] + " \n " + text[-WINDOW:]
        ascii_text = text.isascii()
        if ascii_text:
            toks = text.encode().translate(ASCII_SEPARATORS).decode().split()
        else:
            toks = TOKEN.findall(text)
        n_tok = len(toks)  # before the repeats are capped: what the cue flags count
        if n_tok > 8 and len(set(toks)) * 4 < n_tok:
            toks = list(_cap(toks))
        rows = self._bag(toks)
        m = _FRAME.search(text, 0, 120)
        if m is not None and len(text) - m.end() >= 8 and m.start() >= 4:
            prefix = text[: m.start()]
            frame = self._frames.get(prefix)
            if frame is None:
                frame = self._memo_put(self._frames, prefix, self._named(_frame(text))[0])
            rows.append(frame)
        total = _sum_rows(rows, self._zero)
        # the text's part, for score() of the same text object when the rules run next
        self._last = (given, total)
        if attachments or channel:
            total = _add(total, self._extras_sum(attachments, channel))
        flag = _fast_flags(text, toks, n_tok, ascii_text)
        n = total[0]
        if not n:
            z = self._b_text
            flag |= BLANK
        else:
            scale = 1.0 / math.sqrt(n)
            k = self._k
            z = tuple(b + v * scale for b, v in zip(self._b_text, total[1 : 1 + k], strict=True))
        return softmax(z), flag

    def logits_fast(
        self, text: str, *, attachments: Iterable[str] = (), channel: str | None = None
    ) -> list[float]:
        """Text-only logits (:attr:`classes` order) of :func:`window` of the text (the log of
        :meth:`fast`'s probabilities, up to a constant; for tests and tools)."""
        text = window(text)
        rows = self._bag(bag_tokens(text))
        rows.append(self._named(_frame(text))[0])
        if attachments or channel:
            rows.append(self._named(_extras(attachments, channel, (), None))[0])
        total = _sum_rows(rows, self._zero)
        if not total[0]:
            return list(self._b_text)
        scale = 1.0 / math.sqrt(total[0])
        k = self._k
        return [b + v * scale for b, v in zip(self._b_text, total[1 : 1 + k], strict=True)]

    @staticmethod
    def _memo_put(memo: dict, key: object, value: Row) -> Row:
        """Store ``value`` under ``key`` in a bounded memo (cleared when full); returns it."""
        if len(memo) >= _MEMO:
            memo.clear()
        memo[key] = value
        return value

    def _fill(self, toks: list[str]) -> list[Row]:
        """Memoise the entries of the tokens not yet in the memo; the entries of all."""
        memo = self._memo
        missing = set(toks).difference(memo)
        if len(memo) + len(missing) > _MEMO:
            memo.clear()
            missing = set(toks)
        entry = self._entry
        for tok in missing:
            memo[tok] = entry(tok)
        return list(map(memo.__getitem__, toks))

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
        # the rule, attachment and channel features repeat across requests: their sum is
        # memoised by (attachments, channel, rule ids, the levels each route reaches)
        levels = tuple(map(_level_of, scores.values())) if scores else ()
        key = (tuple(attachments), channel, ids, tuple(scores) if scores else (), levels)
        memo = self._score_memo
        got = memo.get(key)
        if got is None:
            got = self._named(_extras(key[0], channel, ids, scores))
            if len(memo) >= _MEMO:
                memo.clear()
            memo[key] = got
        extra, rules = got
        last = self._last
        if last[0] is text:  # the same string object fast() just read: reuse its text part
            total = _add(last[1], extra)
        else:
            text = window(text)
            rows = self._bag(bag_tokens(text))
            rows += (self._named(_frame(text))[0], extra)
            total = _sum_rows(rows, self._zero)
        n = total[0]
        bias = self._b_comb if combined else self._b_text
        if not n:
            return list(bias), 0.0
        scale = 1.0 / math.sqrt(n)
        k = self._k
        sums = total[1 + k :] if combined else total[1 : 1 + k]
        out = [b + v * scale for b, v in zip(bias, sums, strict=True)]
        share = 0.0
        if combined and rules[0]:
            top = out.index(max(out))
            r = rules[1 + k + top] * scale
            t = sums[top] * scale - r
            share = abs(r) / (abs(t) + abs(r)) if (t or r) else 0.0
        return out, share


def _fast_flags(text: str, toks: list[str], n_tok: int, ascii_text: bool) -> int:
    """:func:`_flags` for :meth:`FastScorer.fast` (``n_tok``: the tokens before repeats were
    capped), with its shortcuts: an ASCII text without a negation token cannot match a
    negation cue (each English cue holds one of :data:`_NEG_TOKENS`, or starts a longer word
    with "without" / "needn"), and an ASCII token is one unit."""
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
    return flag


def load_model(path: Path | str, raw: bytes | None = None) -> LearnedModel:
    """Read a model written by :meth:`LearnedModel.save` (``raw``: the file's bytes, when
    already read; ``path`` then only names it in errors).

    Raises:
        RulesError: Missing or unreadable file, or another format or version (refit with
            ``orchestrator classifier fit``).
    """
    path = Path(path)
    try:
        with np.load(path if raw is None else io.BytesIO(raw), allow_pickle=False) as data:
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
    classes = meta.get("classes")
    if (
        not isinstance(classes, list)
        or len(classes) < 2
        or FALLBACK not in classes
        or len(set(classes)) != len(classes)
    ):
        raise RulesError(
            path, None, f"classes {classes!r}: need distinct route names, fallback among them"
        )
    n = len(vocab_names)
    for key in ("w_text", "w_comb"):
        if arrays[key].shape != (n, len(classes)):
            raise RulesError(
                path, None, f"{key} has shape {arrays[key].shape}, expected ({n}, {len(classes)})"
            )
    return LearnedModel(
        vocab={name: i for i, name in enumerate(vocab_names)},
        meta=meta,
        **arrays,
    )


def shared_model(path: Path | str) -> LearnedModel:
    """:func:`load_model`, loaded once per process for the same file bytes.

    Every classifier that reads a file with these bytes shares one model and so one
    :class:`FastScorer` (building the scorer's rows is most of a classifier's construction:
    about 0.4 s of 0.7 s; the tests build thousands). Sharing is safe because nothing changes a
    loaded model (fitting builds new ones) and the scorer's memos hold exact sums. A changed
    file (hot reload, refit) has other bytes and is loaded anew; the last 4 are kept.

    Raises:
        RulesError: As :func:`load_model`.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError:
        return load_model(path)  # its one-line error
    return _loaded(path, raw)


@lru_cache(maxsize=4)
def _loaded(path: Path, raw: bytes) -> LearnedModel:
    return load_model(path, raw)
