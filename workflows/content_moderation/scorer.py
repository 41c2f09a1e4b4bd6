"""The learned risk scorer: a calibrated linear model over words (English) and character
n-grams (Chinese), the third signal beside the lexicon and the model.

**Features.** The two *flagged* models (:func:`features`) read the normalised text
(:func:`~.normalize.normalize`: NFKC, case folded, homoglyphs folded):

* Latin-script words (``[a-z0-9']+``, leetspeak digits kept) as unigrams and bigrams;
* runs of Chinese characters as character 1-, 2- and 3-grams (Chinese has no spaces, so
  characters stand in for words).

The English *hate* model reads targeting features instead (:mod:`.targeting`): the lexicon's
hits as term / category / severity tiers, how a slur is used (plural, as a label, addressing
the reader) and cues of a targeted group (a group named, generalisation, dehumanising or
violent words, banter). Hate differs from offensive language by whom it is aimed at, and a
word model cannot learn that from the few dozen hate posts of the tune split.

They are hashed into 2**20 columns (MurmurHash3: stateless, so the file holds only the
weights), binary, L2-normalised.

**Models.** One logistic regression per (language, label): ``zh/flagged`` (COLD),
``en/flagged`` (Davidson + Jigsaw) and ``en/hate`` (Davidson hate and Jigsaw identity_hate).
The hate model learns from the share of annotators who said hate where the source has it
(Davidson's vote counts: each post is a positive with weight *share* and a negative with
weight 1 - *share*, classes balanced), since a 2-of-3 vote is weaker evidence than 3-of-3.
Each is calibrated by Platt scaling (a logistic fit of the decision value; Platt, 1999) on
out-of-fold decision values of a 5-fold stratified split of the **tune** split only, then
refit on the whole tune split. Thresholds are chosen on the same out-of-fold probabilities:

* ``review``: the probability at which "lexicon flags or the scorer reaches it" gives the best
  F1 on tune, among thresholds whose precision is at least ``min_precision`` of the model;
  when no threshold keeps that precision, ``review`` is 1.0 (the scorer never flags alone).
  For ``en/hate`` the rule is the verdict's (:func:`~.judgement.build_verdict`): a critical
  hate term is hate whatever the model says; a lesser slur is hate only when the hate model
  reaches ``review`` (else it reads as an insult of a person, harassment); a post without a
  slur is hate only at ``high``;
* ``high``: the lowest probability from ``review`` up whose out-of-fold precision (scorer
  alone) is at least 0.95 (0.99 when none reaches it).

The policy table (``policy.toml``) turns ``low`` / ``medium`` (≥ review) / ``high`` (≥ high)
into a decision together with the lexicon and the model.

**File.** :func:`save_scorer` writes one ``.npz`` (no pickle): a JSON header (format version,
seed, thresholds, calibration, training counts and the SHA-256 of the training files) and, per
model, the non-zero weights (int32 column, float32 weight). The same data and seed give the
same file (fitting is deterministic: liblinear with a fixed ``random_state``).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from orchestrator.exceptions import DataFileError
from workflows.content_moderation.dataset import LabelledPost, Lang, language
from workflows.content_moderation.findings import lexicon_findings
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.targeting import load_targeting_cues, targeting_features
from workflows.content_moderation.verdict import Span
from workflows.content_moderation.zh_cues import zh_cue_features

#: Format of the scorer file; bumped when the features or the layout change.
FORMAT_VERSION = 3
#: The packaged scorer file.
DEFAULT_SCORER_PATH = Path(__file__).resolve().parent / "scorer" / "risk_scorer.npz"
N_FEATURES = 2**20
SEED = 20261130
ScorerState = Literal["absent", "low", "medium", "high"]
SCORER_STATES: tuple[ScorerState, ...] = ("absent", "low", "medium", "high")
ModelKey = Literal["zh/flagged", "en/flagged", "en/hate"]
MODEL_KEYS: tuple[ModelKey, ...] = ("zh/flagged", "en/flagged", "en/hate")

_WORD = re.compile(r"[a-z0-9']+")
_HAN_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")


class ScorerError(DataFileError):
    """The scorer file is missing, unreadable or of another format (``file: reason``; see
    :class:`~orchestrator.exceptions.DataFileError`)."""


def features(text: str, *, chars: bool = True, cues: frozenset[str] | None = None) -> list[str]:
    """The feature strings of a post (see the module docstring).

    Args:
        text: The post.
        chars: Chinese character n-grams (the ablation turns them off).
        cues: Chinese cue names (:mod:`.zh_cues`) to add where the post holds Chinese;
            None adds all, an empty set none.

    Example:
        >>> features("You IDIOT 傻逼")
        ['w:you', 'w:idiot', 'b:you idiot', 'c:傻', 'c:逼', 'c:傻逼', 'z:insult']
    """
    s = normalize(text).text
    words = [w.strip("'") for w in _WORD.findall(s)]
    words = [w for w in words if w]
    out = [f"w:{w}" for w in words]
    out += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
    runs = _HAN_RUN.findall(s)
    for run in runs if chars else ():
        for n in (1, 2, 3):
            out += [f"c:{run[i : i + n]}" for i in range(len(run) - n + 1)]
    if runs and (cues is None or cues):
        out += zh_cue_features(s, use=cues)
    return out


@functools.cache
def _vectorizer():  # -> HashingVectorizer
    """The word and character n-gram hasher (stateless, so one is shared; scikit-learn is
    imported on first use)."""
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(
        analyzer=features, n_features=N_FEATURES, alternate_sign=False, binary=True, norm="l2"
    )


#: Models that read targeting features (:mod:`.targeting`) rather than words.
TARGETING_MODELS = frozenset({"en/hate"})


def _targeting_matrix(texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> Any:
    """CSR matrix of the targeting features, one row per post (hashed like the words: same
    columns, binary, L2-normalised; the ``t:`` prefix keeps them apart from word features)."""
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.preprocessing import normalize as l2

    cues = load_targeting_cues()
    hashed = FeatureHasher(n_features=N_FEATURES, input_type="string", alternate_sign=False)
    rows = [
        [f"t:{f}" for f in targeting_features(t, s, cues)]
        for t, s in zip(texts, spans, strict=True)
    ]
    matrix = hashed.transform(rows)
    matrix.data[:] = 1.0
    return l2(matrix, norm="l2")


_INT32_MIN = -(2**31)
_INT32_MIN_COLUMN = (2147483647 - (N_FEATURES - 1)) % N_FEATURES  # sklearn's abs(-2**31) rule


def hashed_columns(feats: Sequence[str]) -> np.ndarray:
    """Distinct columns of feature strings, placed exactly as scikit-learn's hashers place them
    (signed MurmurHash3 of the UTF-8 bytes, seed 0, ``|h| mod N_FEATURES``; sklearn's
    ``_hashing_fast``). Scoring one post this way skips building a sparse matrix: the
    binary, L2-normalised row is ``1 / sqrt(len(columns))`` at each column (issue 47: the
    matrix path's input validation cost several ms a post)."""
    from sklearn.utils import murmurhash3_32

    out = set()
    for f in feats:
        h = int(murmurhash3_32(f, seed=0))
        out.add(
            (2147483647 - (N_FEATURES - 1)) % N_FEATURES if h == _INT32_MIN else abs(h) % N_FEATURES
        )
    return np.fromiter(out, dtype=np.int64, count=len(out))


def lexicon_spans(texts: Sequence[str]) -> list[tuple[Span, ...]]:
    """The packaged lexicon's spans of each text (mentions marked), for callers that score
    without having scanned (the workflow passes its own spans)."""
    matcher = _default_lexicon().matcher()
    out = []
    for text in texts:
        scan = matcher.scan(text)
        out.append(lexicon_findings(scan, matcher.version, matcher.names_harm)[1])
    return out


_LEXICON: list[Any] = []


def _default_lexicon() -> Any:  # -> Lexicon
    from workflows.content_moderation.matcher import Lexicon

    if not _LEXICON:
        _LEXICON.append(Lexicon())
    return _LEXICON[0]


@dataclass(frozen=True)
class LinearModel:
    """One calibrated linear model.

    Attributes:
        columns: Hashed feature columns with a non-zero weight (int32, sorted).
        weights: Their weights (float32).
        intercept: The logistic regression intercept.
        platt_a: Calibration slope: ``p = 1 / (1 + exp(-(a * z + b)))`` for decision value z.
        platt_b: Calibration offset.
        review: Probability from which the state is ``medium``.
        high: Probability from which the state is ``high``.
        n: Training rows; ``positives`` of them positive.
        positives: Positive training rows.
        oof: Out-of-fold figures on tune at ``review`` (precision, recall, f1).
    """

    columns: np.ndarray
    weights: np.ndarray
    intercept: float
    platt_a: float
    platt_b: float
    review: float
    high: float
    n: int
    positives: int
    oof: dict[str, Any] = field(default_factory=dict)

    def probability(self, rows: Any) -> np.ndarray:
        """Calibrated probabilities of a CSR matrix of hashed features, shape
        ``(posts, N_FEATURES)``: one sparse-dense product with the weights laid out densely,
        O(non-zeros) per post.

        (Selecting ``self.columns`` out of the matrix, as this did before, needed a CSC copy
        whose index array spans all 2**20 columns: about 5 ms for a single post, 85% of a
        moderation post's CPU in a batch.)
        """
        z = rows @ self._dense_weights + self.intercept
        return 1.0 / (1.0 + np.exp(-(self.platt_a * np.asarray(z).ravel() + self.platt_b)))

    @functools.cached_property
    def _dense_weights(self) -> np.ndarray:
        """The weights as a dense float64 vector of N_FEATURES (8 MiB; built on first use)."""
        dense = np.zeros(N_FEATURES, dtype=np.float64)
        dense[self.columns] = self.weights
        return dense

    def probability_of(self, columns: np.ndarray) -> float:
        """Calibrated probability of one post given its distinct hashed columns
        (:func:`hashed_columns`): the same value as :meth:`probability` of its binary,
        L2-normalised row."""
        z = self.intercept
        if len(columns):
            z += float(self._dense_weights[columns].sum()) / float(np.sqrt(len(columns)))
        return float(1.0 / (1.0 + np.exp(-(self.platt_a * z + self.platt_b))))

    def state(self, p: float) -> ScorerState:
        """``high`` / ``medium`` / ``low`` for a probability."""
        return "high" if p >= self.high else "medium" if p >= self.review else "low"


@dataclass(frozen=True)
class ScorerResult:
    """The scorer's judgement of one post.

    Attributes:
        lang: Language model used (``en`` or ``zh``).
        flagged: Calibrated probability that the post should not be published as is.
        hate: Probability of hate speech (English model only; None for Chinese).
        state: ``low`` / ``medium`` / ``high`` from the flagged probability.
        hate_state: The same for ``hate`` (``absent`` for Chinese).
        version: The scorer file's version.
    """

    lang: Lang
    flagged: float
    hate: float | None
    state: ScorerState
    hate_state: ScorerState
    version: str


@dataclass(frozen=True)
class RiskScorer:
    """A loaded scorer file (thread-safe; no state per call).

    Attributes:
        models: ``zh/flagged``, ``en/flagged``, ``en/hate``.
        meta: The file's JSON header.
        version: ``v{format}-{12 hex digits of the file's SHA-256}``.
        path: The file.
    """

    models: dict[str, LinearModel]
    meta: dict[str, Any]
    version: str
    path: Path | None = None

    def score_many(
        self, texts: Sequence[str], spans: Sequence[Sequence[Span]] | None = None
    ) -> list[ScorerResult]:
        """Score posts (vectorised; the order is kept).

        Args:
            texts: The posts.
            spans: Each post's lexicon spans (:func:`~.judgement.lexicon_findings`), read by
                the hate model; None scans them with the packaged lexicon.
        """
        if not texts:
            return []
        if spans is None:
            spans = lexicon_spans(texts)
        cues = load_targeting_cues()
        out = []
        for text, found in zip(texts, spans, strict=True):
            lang = language(text)
            flag_model = self.models[f"{lang}/flagged"]
            p = flag_model.probability_of(hashed_columns(features(text)))
            hate = None
            if lang == "en":
                targeting = [f"t:{f}" for f in targeting_features(text, found, cues)]
                hate = self.models["en/hate"].probability_of(hashed_columns(targeting))
            out.append(
                ScorerResult(
                    lang=lang,
                    flagged=round(p, 4),
                    hate=round(hate, 4) if hate is not None else None,
                    state=flag_model.state(p),
                    hate_state=self.models["en/hate"].state(hate) if hate is not None else "absent",
                    version=self.version,
                )
            )
        return out

    def score(self, text: str, spans: Sequence[Span] | None = None) -> ScorerResult:
        """Score one post (``spans``: its lexicon spans; None scans them)."""
        return self.score_many([text], None if spans is None else [spans])[0]


# ---------------------------------------------------------------------------------- fitting


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
    """

    y: np.ndarray
    lex: np.ndarray
    plain: np.ndarray
    cand: np.ndarray


def _choose_thresholds(
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
    best = (-1.0, 1.0, (0.0, 0.0, 0.0), 0.0, 0)
    for t in np.round(np.arange(grid_start, 1.0, 0.01), 2):
        if n_plain and float(np.sum(p[plain] >= t)) > MAX_ORDINARY_REVIEW_RATE * n_plain:
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
    review, high, figures = _choose_thresholds(
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
    )


def is_slur(span: Span) -> bool:
    """A lexicon hit on a hate term that is no mention."""
    return span.source == "lexicon" and span.category.value == "hate" and not span.mention


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


def fit_scorer(
    posts: Sequence[LabelledPost],
    lexicon_flags: Sequence[bool],
    lexicon_hate: Sequence[bool],
    *,
    seed: int = SEED,
    sources: dict[str, str] | None = None,
    ordinary: Sequence[LabelledPost] = (),
    spans: Sequence[Sequence[Span]] | None = None,
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
            features); None scans them with the packaged lexicon.
        seed: Seed of the folds and the solver.
        sources: File name → SHA-256 of the training files (recorded in the header).

    Raises:
        ValueError: A model has no rows or only one class (the data folder is incomplete).
    """
    if any(p.split != "tune" for p in [*posts, *ordinary]):
        raise ValueError("fit_scorer trains on the tune split only; the test split is held out")
    if len(lexicon_flags) != len(posts) or len(lexicon_hate) != len(posts):
        raise ValueError("lexicon_flags and lexicon_hate need one value per post")
    n_labelled = len(posts)
    posts = [*posts, *ordinary]
    texts = [p.text for p in posts]
    if spans is None:
        spans = lexicon_spans(texts)
    if len(spans) != len(posts):
        raise ValueError("spans need one entry per post and per ordinary sentence")
    matrix = _vectorizer().transform(texts).tocsr()
    targeting = _targeting_matrix(texts, spans).tocsr()
    pad = [False] * len(ordinary)
    lex = np.asarray([*lexicon_flags, *pad], dtype=bool)
    lex_hate = np.asarray([*lexicon_hate, *pad], dtype=bool)
    plain = np.arange(len(posts)) >= n_labelled
    # the hate model confirms or withdraws the hate label of a slur; it adds none alone
    slur = np.asarray([any(is_slur(x) for x in found) for found in spans], dtype=bool)
    models: dict[str, LinearModel] = {}
    for key in MODEL_KEYS:
        lang, label = key.split("/")
        mine = [i for i, p in enumerate(posts) if p.lang == lang and label in p.truth]
        rows = [i for i in mine if posts[i].part != "dev"]
        held = [i for i in mine if posts[i].part == "dev"]
        y = np.array([posts[i].truth[label] for i in rows], dtype=np.int64)  # type: ignore[index]
        if len(rows) < 20 or y.min() == y.max():
            raise ValueError(
                f"cannot fit {key}: {len(rows)} rows, {int(y.sum()) if len(y) else 0} positive; "
                "the data folder needs labelled posts of both classes in that language"
            )
        c, min_precision, grid_start = FIT_SETTINGS[key]
        flags = lex_hate if label == "hate" else lex
        soft = None
        if label == "hate":  # annotator shares where the source has them, else the label
            shares = [posts[i].hate_share for i in rows]
            soft = np.array(
                [float(y[j]) if share is None else share for j, share in enumerate(shares)]
            )
        source = targeting if key in TARGETING_MODELS else matrix

        def eval_rows(idx: list[int], label: str = label, flags: np.ndarray = flags) -> EvalRows:
            return EvalRows(
                y=np.array([posts[i].truth[label] for i in idx], dtype=np.int64),  # type: ignore[index]
                lex=flags[idx],
                plain=plain[idx],
                cand=slur[idx] if label == "hate" else np.ones(len(idx), dtype=bool),
            )

        models[key] = fit_one(
            source[rows], eval_rows(rows), c=c, min_precision=min_precision, seed=seed,
            soft=soft, grid_start=grid_start, solo=label == "flagged",
            dev=(source[held], eval_rows(held)) if held else None,
        )  # fmt: skip
    meta = {
        "format": FORMAT_VERSION,
        "seed": seed,
        "n_features": N_FEATURES,
        "features": "words+bigrams (Latin), char 1-3 grams (Han); binary, l2",
        "features_en/hate": "targeting (lexicon tiers, slur use, group cues); binary, l2",
        "targeting": load_targeting_cues().version,
        "lexicon": _default_lexicon().version,
        "split": "train, calibrated on dev" if any(p.part == "dev" for p in posts) else "tune",
        "min_solo_precision": MIN_SOLO_PRECISION,
        "ordinary_rows": len(ordinary),
        "max_ordinary_review_rate": MAX_ORDINARY_REVIEW_RATE,
        "sources": sources or {},
        "models": {
            k: {
                "intercept": m.intercept,
                "platt_a": m.platt_a,
                "platt_b": m.platt_b,
                "review": m.review,
                "high": m.high,
                "n": m.n,
                "positives": m.positives,
                "oof": m.oof,
            }
            for k, m in models.items()
        },
    }
    return RiskScorer(models=models, meta=meta, version=_version(meta, models))


def _version(meta: dict[str, Any], models: dict[str, LinearModel]) -> str:
    h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for k in sorted(models):
        h.update(models[k].columns.tobytes())
        h.update(models[k].weights.tobytes())
    return f"v{FORMAT_VERSION}-{h.hexdigest()[:12]}"


def save_scorer(scorer: RiskScorer, path: Path | str) -> Path:
    """Write the scorer atomically (temp file, then ``os.replace``); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {
        "meta": np.frombuffer(json.dumps(scorer.meta, sort_keys=True).encode(), dtype=np.uint8)
    }
    for k, m in scorer.models.items():
        arrays[f"{k}/columns"] = m.columns
        arrays[f"{k}/weights"] = m.weights
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]
    os.replace(tmp, path)
    return path


def load_scorer(path: Path | str = DEFAULT_SCORER_PATH) -> RiskScorer:
    """Read a scorer file written by :func:`save_scorer`.

    Raises:
        ScorerError: Missing, unreadable, or of another format version (the message says to
            run ``orchestrator moderation fit``).
    """
    path = Path(path)
    fix = "run `orchestrator moderation fit` to write it"
    if not path.is_file():
        raise ScorerError(path, None, f"risk scorer file not found; {fix}")
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if meta.get("format") != FORMAT_VERSION:
                raise ScorerError(
                    path, None, f"scorer format {meta.get('format')} is not {FORMAT_VERSION}; {fix}"
                )
            models = {}
            for k in MODEL_KEYS:
                m = meta["models"][k]
                models[k] = LinearModel(
                    columns=data[f"{k}/columns"].astype(np.int32),
                    weights=data[f"{k}/weights"].astype(np.float32),
                    intercept=float(m["intercept"]),
                    platt_a=float(m["platt_a"]),
                    platt_b=float(m["platt_b"]),
                    review=float(m["review"]),
                    high=float(m["high"]),
                    n=int(m["n"]),
                    positives=int(m["positives"]),
                    oof=dict(m.get("oof", {})),
                )
    except ScorerError:
        raise
    # numpy's zip and .npy header parsers run on arbitrary bytes here and raise whatever their
    # input provokes (BadZipFile, EOFError, zlib.error, SyntaxError, tokenize.TokenError, ...):
    # any failure to read the file is a damaged scorer file
    except Exception as exc:
        raise ScorerError(path, None, f"cannot read the scorer file ({exc}); {fix}") from exc
    return RiskScorer(models=models, meta=meta, version=_version(meta, models), path=path)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
