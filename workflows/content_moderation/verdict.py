"""The verdict: one schema for every source (lexicon alone, model alone, the combination).

A :class:`Verdict` holds the decision (allow / review / block), a severity tier, the violated
categories with a score each, a bounded rationale, the spans that triggered (offsets into the
*original* post), the policy version and the model used, and a report on the input itself
(truncation, invalid UTF-8, control characters).

Categories map onto two widely used taxonomies, as data in :data:`TAXONOMY`:

* the MLCommons AI Safety hazard taxonomy v1.0 as used by Llama Guard 3 (``S1``–``S14``;
  Llama Guard 3 model card, https://github.com/meta-llama/PurpleLlama/blob/main/Llama-Guard3/8B/MODEL_CARD.md),
* the OpenAI moderation categories (``omni-moderation``; https://platform.openai.com/docs/guides/moderation),

plus the labels Chinese platforms use (涉政, 地域黑, 谩骂, 低俗, 广告引流 ...), which neither
taxonomy has.
"""

from __future__ import annotations

import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field


class Decision(StrEnum):
    """What happens to the post: publish it, hold it for a person, or refuse it."""

    ALLOW = "allow"
    REVIEW = "review"
    BLOCK = "block"


class Severity(StrEnum):
    """Severity tier, ordered ``none < low < medium < high < critical`` (see :attr:`rank`)."""

    NONE = "none"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """0 for ``none`` up to 4 for ``critical``."""
        return _SEVERITY_ORDER.index(self)

    @classmethod
    def highest(cls, values: list[Severity] | tuple[Severity, ...]) -> Severity:
        """The most severe of ``values`` (``none`` when empty)."""
        return max(values, key=lambda s: s.rank, default=cls.NONE)


_SEVERITY_ORDER = list(Severity)


class Category(StrEnum):
    """What a post violates. :data:`TAXONOMY` maps each onto MLCommons and OpenAI."""

    HATE = "hate"
    REGIONAL_DISCRIMINATION = "regional_discrimination"
    HARASSMENT = "harassment"
    THREAT = "threat"
    PROFANITY = "profanity"
    SEXUAL = "sexual"
    SEXUAL_MINORS = "sexual_minors"
    SEX_CRIMES = "sex_crimes"
    VIOLENCE = "violence"
    SELF_HARM = "self_harm"
    ILLICIT = "illicit"
    WEAPONS = "weapons"
    DEFAMATION = "defamation"
    SPECIALIZED_ADVICE = "specialized_advice"
    PRIVACY = "privacy"
    INTELLECTUAL_PROPERTY = "intellectual_property"
    ELECTIONS = "elections"
    CODE_INTERPRETER_ABUSE = "code_interpreter_abuse"
    POLITICAL_SENSITIVITY = "political_sensitivity"
    SPAM = "spam"


#: MLCommons hazard codes as named by Llama Guard 3 (S1 … S14, in order).
_MLCOMMONS_NAMES = ("Violent Crimes", "Non-Violent Crimes", "Sex-Related Crimes",
    "Child Sexual Exploitation", "Defamation", "Specialized Advice", "Privacy",
    "Intellectual Property", "Indiscriminate Weapons", "Hate", "Suicide & Self-Harm",
    "Sexual Content", "Elections", "Code Interpreter Abuse")  # fmt: skip
MLCOMMONS_CODES: dict[str, str] = {f"S{i}": n for i, n in enumerate(_MLCOMMONS_NAMES, start=1)}

#: The OpenAI moderation categories (omni-moderation).
OPENAI_CATEGORIES: tuple[str, ...] = (
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)


class TaxonomyEntry(BaseModel):
    """Where one :class:`Category` sits in the external taxonomies.

    Attributes:
        mlcommons: MLCommons / Llama Guard hazard codes (empty: none covers it).
        openai: OpenAI moderation categories; the first is the primary one, the others are
            sub-categories this category includes but does not tell apart.
        cn_label: The label Chinese platforms use.
        description: One line, also shown to the model.
    """

    model_config = ConfigDict(frozen=True)

    mlcommons: tuple[str, ...]
    openai: tuple[str, ...]
    cn_label: str
    description: str


#: The taxonomy file (data, one table per category).
TAXONOMY_PATH = Path(__file__).resolve().parent / "taxonomy.toml"


def _load_taxonomy(path: Path = TAXONOMY_PATH) -> dict[Category, TaxonomyEntry]:
    """Read the taxonomy file: one entry per :class:`Category`, in the enum's order.

    Raises:
        ValueError: A category is missing or unknown, or an entry is malformed.
    """
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    if set(raw) != {c.value for c in Category}:
        names = [c.value for c in Category]
        raise ValueError(f"{path}: needs one table per category, exactly {names}")
    return {c: TaxonomyEntry.model_validate(raw[c.value]) for c in Category}


#: The mapping table (``taxonomy.toml``; README "Content moderation" repeats it).
TAXONOMY: dict[Category, TaxonomyEntry] = _load_taxonomy()


MatchKind = Literal[
    "exact",  # the term as a whole word / CJK substring
    "inflected",  # the term plus an English inflection (s, es, ed, ing, in, er, ers, z)
    "prefix",  # a word that starts with the term (stem terms)
    "suffix",  # a word that ends with the term
    "infix",  # a word that contains the term
    "leet",  # after undoing leetspeak (0→o, 1→i, @→a, $→s ...)
    "masked",  # letters replaced by * or # (f*ck)
    "spaced",  # letters separated by spaces or symbols (f u c k, 傻 逼)
    "joined",  # two pieces around one symbol (fu.ck)
    "repeated",  # repeated letters collapsed (fuuuck)
    "fuzzy",  # rapidfuzz ratio at or above the term's cutoff
    "pinyin",  # a Chinese term written in pinyin (shabi)
    "abbreviation",  # a listed abbreviation (sb, nmsl)
    "evidence",  # a quote the model gave, found in the post
    "addressed",  # an insult aimed at the reader ("you filthy rats", 你们这群猪; addressed.py)
    "generalised",  # contempt for a whole group ("穆斯林都是恐怖分子"; generalised.py)
    "construction",  # harm said as who + what + whom, no listed word (constructions.py)
]


class Span(BaseModel):
    """A piece of the post that triggered a judgement.

    Attributes:
        start: Offset of the first character in the *original* post (Python ``str`` index).
        end: Offset one past the last character (``post[start:end]`` is :attr:`text`).
        text: The original characters (at most 200).
        term: The lexicon term matched (canonical form), or the model's quote.
        category: Category of the term.
        severity: Severity of the term.
        how: How it matched (:data:`MatchKind`).
        score: 1.0 for an exact match, rapidfuzz ratio / 100 for a fuzzy one.
        source: ``lexicon`` or ``model``.
        mention: The term names a harm in a sentence that negates or condemns it ("反对歧视"):
            noted, but it does not count toward the lexicon's severity.
    """

    model_config = ConfigDict(frozen=True)

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str = Field(max_length=200)
    term: str = Field(max_length=200)
    category: Category
    severity: Severity
    how: MatchKind
    score: float = Field(ge=0, le=1)
    source: Literal["lexicon", "model"] = "lexicon"
    mention: bool = False


class CategoryScore(BaseModel):
    """A violated category and how strongly, in [0, 1] (best lexicon match, model score or
    scorer probability)."""

    model_config = ConfigDict(frozen=True)

    category: Category
    score: float = Field(ge=0, le=1)
    sources: tuple[Literal["lexicon", "model", "scorer"], ...]


class InputReport(BaseModel):
    """What the moderation saw of the post, and what it had to do to it.

    Attributes:
        chars: Length of the post in characters (after decoding).
        scanned_chars: Characters the lexicon scanned (``min(chars, limits.scan_chars)``).
        model_chars: Characters of the window the model saw (head + tail).
        truncated: True when the model saw less than the whole post.
        scan_truncated: True when the lexicon scanned less than the whole post.
        empty: The post was empty or whitespace only (nothing is judged; decision allow).
        invalid_utf8_bytes: Bytes that were not valid UTF-8 (decoded as U+FFFD), or lone
            surrogates in a ``str``.
        control_chars: Control and invisible format characters (C0/C1, zero-width, bidi)
            removed before matching and before the model saw the text.
        scripts: Unicode scripts of the letters in the post (``Latin``, ``Han``, ``Cyrillic``...).
        mixed_script_words: Words mixing Latin with Cyrillic or Greek letters (a homoglyph
            obfuscation sign).
        bidi_controls: Bidi control characters (U+202A–U+202E, U+2066–U+2069, marks) among
            ``control_chars``; right-to-left runs were read in display order (a disguise sign).
        emoji_words: Emoji read as the insult, gesture or threat they stand for.
    """

    model_config = ConfigDict(frozen=True)

    chars: int = Field(ge=0)
    scanned_chars: int = Field(ge=0)
    model_chars: int = Field(ge=0)
    truncated: bool = False
    scan_truncated: bool = False
    empty: bool = False
    invalid_utf8_bytes: int = Field(0, ge=0)
    control_chars: int = Field(0, ge=0)
    scripts: tuple[str, ...] = ()
    mixed_script_words: int = Field(0, ge=0)
    bidi_controls: int = Field(0, ge=0)
    emoji_words: int = Field(0, ge=0)


class LexiconJudgement(BaseModel):
    """What the term lexicon found (no model).

    Attributes:
        severity: Highest severity among the hits that are not mentions (``none`` without).
        categories: Categories hit (mentions left out), with the best match score each.
        hits: Number of hits (``Verdict.spans`` keeps at most ``limits.max_spans``).
        mentions: Hits that are mentions (a term naming a harm, negated or condemned).
        version: Hash of the lexicon files used.
        speech_about_harm: The post opposes, reports or quotes discrimination (``mention.toml``
            ``speech_*`` cues): its hate, regional and harassment terms below critical are
            mentions, and the learned scorer does not send it to review alone.
    """

    model_config = ConfigDict(frozen=True)

    severity: Severity = Severity.NONE
    categories: tuple[CategoryScore, ...] = ()
    hits: int = Field(0, ge=0)
    mentions: int = Field(0, ge=0)
    speech_about_harm: bool = False
    version: str = ""


class ScorerJudgement(BaseModel):
    """The learned risk scorer's judgement (:mod:`workflows.content_moderation.scorer`).

    Attributes:
        status: ``ok``, or ``unavailable`` (no scorer file; ``error`` says why).
        lang: The language model used (``en`` / ``zh``).
        flagged: Calibrated probability that the post should not be published as is.
        hate: Probability of hate speech (English only).
        state: ``low`` / ``medium`` / ``high`` by the file's thresholds (``absent`` when
            unavailable).
        hate_state: The same for ``hate``.
        version: The scorer file's version.
        error: Why the scorer is unavailable.
    """

    model_config = ConfigDict(frozen=True)

    status: Literal["ok", "unavailable"]
    lang: Literal["en", "zh"] | None = None
    flagged: float | None = Field(None, ge=0, le=1)
    hate: float | None = Field(None, ge=0, le=1)
    state: Literal["absent", "clear", "low", "medium", "high"] = "absent"
    hate_state: Literal["absent", "clear", "low", "medium", "high"] = "absent"
    version: str = ""
    error: str | None = Field(None, max_length=300)


ModelStatus = Literal["ok", "unparsed", "error", "skipped"]


class ModelJudgement(BaseModel):
    """The model's structured risk judgement (its output is data, never instructions).

    Attributes:
        status: ``ok`` (schema-valid answer), ``unparsed`` (cut or invalid output),
            ``error`` (the server answered with an error), ``skipped`` (no model call).
        decision: The model's decision, when ``ok``.
        severity: The model's severity, when ``ok``.
        categories: The model's categories with its scores mapped to [0, 1].
        confidence: The model's confidence in [0, 1], when ``ok``.
        rationale: The model's one-line reason (bounded by the schema to 160 characters).
        evidence: Quotes the model gave (bounded); those found in the post become spans.
        model: Served model name.
        finish_reason: ``stop`` or ``length``...
        raw: Raw output when it could not be parsed (first 200 characters).
        error: Why the call failed or was skipped.
    """

    model_config = ConfigDict(frozen=True)

    status: ModelStatus
    decision: Decision | None = None
    severity: Severity | None = None
    categories: tuple[CategoryScore, ...] = ()
    confidence: float | None = Field(None, ge=0, le=1)
    rationale: str = Field("", max_length=300)
    evidence: tuple[str, ...] = ()
    model: str | None = None
    finish_reason: str | None = None
    raw: str | None = Field(None, max_length=200)
    error: str | None = Field(None, max_length=300)


VerdictSource = Literal["lexicon", "model", "combined"]


class Verdict(BaseModel):
    """The moderation decision for one post, whatever produced it.

    Attributes:
        decision: allow / review / block.
        severity: Severity tier of the decision.
        categories: Violated categories with a score each, highest first.
        rationale: Why, in words (policy rule, lexicon hits, model reason); at most 600 chars.
        spans: Parts of the original post that triggered, in order (at most
            ``limits.max_spans``; :attr:`spans_total` counts all).
        spans_total: Number of triggering spans before the cap.
        source: ``lexicon`` (term lexicon alone), ``model`` (model alone) or ``combined``.
        policy_version: Version of the policy file that decided.
        policy_rule: Id of the policy rule that fired.
        lexicon_version: Hash of the lexicon files.
        model: Model used, or None when no model judged.
        input: Truncation, decoding and sanitising report.
        lexicon: The lexicon's judgement.
        assessment: The model's judgement, or None when no model ran.
        scorer: The learned scorer's judgement, or None when it did not run.

    Example:
        >>> v = Verdict(decision="allow", severity="none", source="lexicon",
        ...             policy_version="1", policy_rule="r", lexicon_version="x",
        ...             input=InputReport(chars=2, scanned_chars=2, model_chars=0))
        >>> v.mlcommons, v.openai
        ([], [])
    """

    model_config = ConfigDict(frozen=True)

    decision: Decision
    severity: Severity
    categories: tuple[CategoryScore, ...] = ()
    rationale: str = Field("", max_length=600)
    spans: tuple[Span, ...] = ()
    spans_total: int = Field(0, ge=0)
    source: VerdictSource
    policy_version: str
    policy_rule: str
    lexicon_version: str
    model: str | None = None
    input: InputReport
    lexicon: LexiconJudgement = LexiconJudgement()
    assessment: ModelJudgement | None = None
    scorer: ScorerJudgement | None = None

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy takes no decorator over @property
    @property
    def mlcommons(self) -> list[str]:
        """MLCommons / Llama Guard hazard codes of the categories (``S10``...), sorted."""
        codes = {code for c in self.categories for code in TAXONOMY[c.category].mlcommons}
        return sorted(codes, key=lambda code: int(code[1:]))

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy takes no decorator over @property
    @property
    def openai(self) -> list[str]:
        """Primary OpenAI moderation categories of the categories; ``hate`` with ``threat``
        gives ``hate/threatening``."""
        present = {c.category for c in self.categories}
        names = {TAXONOMY[c].openai[0] for c in present if TAXONOMY[c].openai}
        hateful = present & {Category.HATE, Category.REGIONAL_DISCRIMINATION}
        if Category.THREAT in present and hateful:
            names.add("hate/threatening")
        return [name for name in OPENAI_CATEGORIES if name in names]
