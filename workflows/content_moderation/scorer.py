"""The learned risk scorer: a calibrated linear model over words (English) and character
n-grams (Chinese), the third signal beside the lexicon and the model.

**Features.** The two *flagged* models (:func:`features`) read the normalised text
(:func:`~.normalize.normalize`: NFKC, case folded, homoglyphs folded):

* Latin-script words (``[a-z0-9']+``, leetspeak digits kept) as unigrams and bigrams;
* runs of Chinese characters as character 1-, 2- and 3-grams (Chinese has no spaces, so
  characters stand in for words), and the cues of :mod:`.zh_cues`.

The Chinese flagged model is *stacked* (:data:`STACKED_MODELS`): it also reads the lexicon's
hits (:func:`lexicon_features`), so it judges a medium term in its context and may clear it
(state ``clear`` below ``review``; the policy's ``medium-term-cleared`` rule).

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
Each is fitted on the ``train`` part and calibrated by Platt scaling (a logistic fit of the
decision value; Platt, 1999) on the ``dev`` part (issue 47's protocol; without dev rows, on
out-of-fold values of a 5-fold split). Fitting lives in :mod:`.fitting`. Thresholds are chosen
on the dev probabilities:

* ``review``: the probability at which "lexicon flags or the scorer reaches it" (for a stacked
  model: "a high or critical term, or the scorer reaches it") gives the best dev F1, among
  thresholds whose precision is at least ``min_precision`` of the model and where the posts
  the scorer flags alone reach ``MIN_SOLO_PRECISION``; when none does, ``review`` is 1.0 (the
  scorer never flags alone).
  For ``en/hate`` the rule is the verdict's (:func:`~.judgement.build_verdict`): a critical
  hate term is hate whatever the model says; a lesser slur is hate only when the hate model
  reaches ``review`` (else it reads as an insult of a person, harassment); a post without a
  slur is hate only at ``high``;
* ``high``: the lowest probability from ``review`` up whose out-of-fold precision (scorer
  alone) is at least 0.95 (0.99 when none reaches it).

The policy table (``policy.toml``) turns ``clear`` / ``low`` / ``medium`` (≥ review) /
``high`` (≥ high) into a decision together with the lexicon and the model.

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
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from orchestrator.exceptions import DataFileError
from orchestrator.outfiles import output_files
from workflows.content_moderation.dataset import Lang, language
from workflows.content_moderation.findings import lexicon_findings
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.targeting import load_targeting_cues, targeting_features
from workflows.content_moderation.verdict import Span
from workflows.content_moderation.zh_cues import zh_cue_features

#: Format of the scorer file; bumped when the features or the layout change.
FORMAT_VERSION = 4
#: The packaged scorer file.
DEFAULT_SCORER_PATH = Path(__file__).resolve().parent / "scorer" / "risk_scorer.npz"
N_FEATURES = 2**20
SEED = 20261130
ScorerState = Literal["absent", "clear", "low", "medium", "high"]
SCORER_STATES: tuple[ScorerState, ...] = ("absent", "clear", "low", "medium", "high")
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


def lexicon_features(spans: Sequence[Span]) -> list[str]:
    """Features of the lexicon's hits, read by the Chinese flagged model beside its n-grams
    (issue 47): per hit, the term (``l:t:<term>:<mention>``), its tier (``l:s:<severity>``,
    ``m`` for a mention) and its category at that tier. With them the model learns, on
    train, how often a term in its context goes with an offensive post, so it can clear a
    medium term (scorer state ``clear``) or raise a post the lexicon passes.

    Example:
        >>> lexicon_features([])
        []
    """
    out = []
    for s in spans:
        if s.source != "lexicon":
            continue
        tier = "m" if s.mention else s.severity.value
        out += [f"l:t:{s.term}:{int(s.mention)}", f"l:s:{tier}", f"l:c:{s.category.value}:{tier}"]
    return out


#: Models that read the lexicon's hits beside the text (:func:`lexicon_features`).
STACKED_MODELS = frozenset({"zh/flagged"})


def flag_features(text: str, spans: Sequence[Span]) -> list[str]:
    """The features of a post for its language's flagged model: :func:`features`, plus
    :func:`lexicon_features` where that model is stacked (Chinese)."""
    out = features(text)
    if f"{language(text)}/flagged" in STACKED_MODELS:
        out += lexicon_features(spans)
    return out


def hashed_matrix(rows: Sequence[Sequence[str]]) -> Any:
    """CSR matrix of feature strings, one row per post: hashed into ``N_FEATURES`` columns
    (what :func:`hashed_columns` places), binary, L2-normalised."""
    from sklearn.feature_extraction import FeatureHasher
    from sklearn.preprocessing import normalize as l2

    hashed = FeatureHasher(n_features=N_FEATURES, input_type="string", alternate_sign=False)
    matrix = hashed.transform([list(dict.fromkeys(r)) for r in rows]).tocsr()
    matrix.data[:] = 1.0
    return l2(matrix, norm="l2")


def flag_matrix(texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> Any:
    """CSR matrix of :func:`flag_features`, one row per post (the flagged models' input)."""
    return hashed_matrix([flag_features(t, s) for t, s in zip(texts, spans, strict=True)])


#: Models that read targeting features (:mod:`.targeting`) rather than words.
TARGETING_MODELS = frozenset({"en/hate"})


def targeting_matrix(texts: Sequence[str], spans: Sequence[Sequence[Span]]) -> Any:
    """CSR matrix of the targeting features, one row per post (hashed like the words: same
    columns, binary, L2-normalised; the ``t:`` prefix keeps them apart from word features)."""
    cues = load_targeting_cues()
    return hashed_matrix(
        [
            [f"t:{f}" for f in targeting_features(t, s, cues)]
            for t, s in zip(texts, spans, strict=True)
        ]
    )


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
    matcher = default_lexicon().matcher()
    out = []
    for text in texts:
        scan = matcher.scan(text)
        out.append(lexicon_findings(scan, matcher.version, matcher.names_harm)[1])
    return out


_LEXICON: list[Any] = []


def default_lexicon() -> Any:  # -> Lexicon
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
        clears: A stacked model (it reads the lexicon's hits): below ``review`` its state is
            ``clear``, which lets the policy allow a medium term it read in context.
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
    clears: bool = False

    def probability(self, rows: Any) -> np.ndarray:
        """Calibrated probabilities of a CSR matrix of hashed features, shape
        ``(posts, N_FEATURES)``: one sparse-dense product with the weights laid out densely,
        O(non-zeros) per post.

        (Selecting ``self.columns`` out of the matrix, as this did before, needed a CSC copy
        whose index array spans all 2**20 columns: most of
        a moderation post's CPU in a batch.)
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
        """``high`` / ``medium`` / ``low`` (``clear`` for a stacked model) for a probability."""
        if p < self.review:
            return "clear" if self.clears else "low"
        return "high" if p >= self.high else "medium"


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
            p = flag_model.probability_of(hashed_columns(flag_features(text, found)))
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


def scorer_version(meta: dict[str, Any], models: dict[str, LinearModel]) -> str:
    h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for k in sorted(models):
        h.update(models[k].columns.tobytes())
        h.update(models[k].weights.tobytes())
    return f"v{FORMAT_VERSION}-{h.hexdigest()[:12]}"


def save_scorer(scorer: RiskScorer, path: Path | str) -> Path:
    """Write the scorer whole or not at all (:func:`orchestrator.outfiles.output_files`);
    returns the path. Raises UserError (one line) when it cannot be written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {
        "meta": np.frombuffer(json.dumps(scorer.meta, sort_keys=True).encode(), dtype=np.uint8)
    }
    for k, m in scorer.models.items():
        arrays[f"{k}/columns"] = m.columns
        arrays[f"{k}/weights"] = m.weights
    with output_files(path) as (tmp,), tmp.open("wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]  # mypy matches **arrays to allow_pickle too
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
            models: dict[str, LinearModel] = {}
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
                    clears=bool(m.get("clears", False)),
                )
    except ScorerError:
        raise
    # numpy's zip and .npy header parsers run on arbitrary bytes here and raise whatever their
    # input provokes (BadZipFile, EOFError, zlib.error, SyntaxError, tokenize.TokenError, ...):
    # any failure to read the file is a damaged scorer file
    except Exception as exc:
        raise ScorerError(path, None, f"cannot read the scorer file ({exc}); {fix}") from exc
    return RiskScorer(models=models, meta=meta, version=scorer_version(meta, models), path=path)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
