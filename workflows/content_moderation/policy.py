"""The moderation policy: limits and a decision table, read from ``policy.toml`` (data).

The decision table combines the lexicon's judgement (its highest severity, or ``absent``)
with the model's (``allow``/``review``/``block``, ``uncertain`` when its answer is unusable or
below ``model.min_confidence``, ``absent`` when it did not run). The first matching rule
wins. The packaged table (``policy.toml`` beside this module) says, in short:

=================  ==========================================================
lexicon            decision
=================  ==========================================================
high, critical     block, whatever the model says (an injected "allow" cannot
                   unblock a slur)
medium             block when the model also says block; allow when no usable
                   model answer flags it and the scorer, which read the term in
                   context, is ``clear``; else review
none, low,         review when the learned scorer is ``high``, or ``medium``
mention            while the model does not allow it; review when the model
                   flags the post only if its measured precision allows it
                   (see below), else the flag is a note; else allow
absent             the model alone decides (uncertain → review)
=================  ==========================================================

A third column, ``scorer`` (the learned risk scorer: ``absent``, ``clear``, ``low``,
``medium``, ``high``; :mod:`workflows.content_moderation.scorer`), defaults to ``*``.
``clear`` is ``low`` from a stacked model (Chinese), one that reads the lexicon's hits and
was calibrated on dev, so it may clear a medium term. ``mention`` is the
lexicon state when its only hits above ``low`` name a harm in a sentence that negates or
condemns it (:mod:`workflows.content_moderation.mention`).

**The model's vote alone.** Where the lexicon passes a post, the model's ``review`` or
``block`` decides alone only when ``model.solo_review_precision`` (the Wilson 95% lower bound of
its precision on such posts, measured on the dev part by
``benchmarks/moderation_model_precision.py``) reaches ``model.solo_review_min_precision``;
otherwise the vote is ``noted``: said in the rationale, and the scorer decides
(:meth:`Policy.model_vote`).

**The scorer's vote alone.** Where the lexicon finds nothing above ``low`` (mentions aside),
the scorer's ``medium`` sends a post to review only from ``scorer.solo_review_from[lang]``: the
lowest probability from which such reviews had dev precision of at least
``scorer.solo_review_min_precision`` (``benchmarks/moderation_dev_speech.py`` measures it);
below it the state reads as ``low`` (:meth:`Policy.scorer_may_review_alone`).

The loader (:func:`load_policy`, on :mod:`orchestrator.datafiles`) checks the table is total
(every pair decided) and has no dead rule; a bad file raises :class:`PolicyError`
(``file:line: reason``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator.datafiles import content_hash, load_toml, locate_line
from orchestrator.exceptions import DataFileError
from workflows.content_moderation.verdict import Decision

#: The packaged policy file.
DEFAULT_POLICY_PATH = Path(__file__).resolve().parent / "policy.toml"

LexiconState = Literal["absent", "none", "mention", "low", "medium", "high", "critical"]
ModelState = Literal["absent", "allow", "review", "block", "uncertain", "noted"]
ScorerState = Literal["absent", "clear", "low", "medium", "high"]
LEXICON_STATES: tuple[LexiconState, ...] = (
    "absent", "none", "mention", "low", "medium", "high", "critical",
)  # fmt: skip
MODEL_STATES: tuple[ModelState, ...] = (
    "absent", "allow", "review", "block", "uncertain", "noted",
)  # fmt: skip
SCORER_STATES: tuple[ScorerState, ...] = ("absent", "clear", "low", "medium", "high")


class PolicyError(DataFileError):
    """The policy file is invalid (``file:line: reason``; see
    :class:`~orchestrator.exceptions.DataFileError` for the attributes)."""


class Limits(BaseModel):
    """Input limits (see ``policy.toml`` for why each is what it is)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scan_chars: int = Field(200_000, ge=1_000, le=1_000_000)
    model_head_bytes: int = Field(900, ge=64)
    model_tail_bytes: int = Field(300, ge=0)
    max_spans: int = Field(50, ge=1, le=1_000)


class ModelSettings(BaseModel):
    """How much the model's answer is trusted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_confidence: float = Field(0.5, ge=0, le=1)
    solo_review_min_precision: float = Field(0.8, ge=0, le=1)
    solo_review_precision: float | None = Field(None, ge=0, le=1)


class ScorerSettings(BaseModel):
    """How much the learned scorer is trusted alone (see ``policy.toml``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    solo_review_min_precision: float = Field(0.75, ge=0, le=1)
    solo_review_from: dict[str, float] = {}


class PolicyRule(BaseModel):
    """One row of the decision table.

    Attributes:
        id: Stable id, recorded in every verdict it decides.
        lexicon: Lexicon states it matches (``*`` for any).
        model: Model states it matches (``*`` for any).
        scorer: Learned-scorer states it matches (``*`` for any, the default).
        decision: The decision.
        reason: Why, in words (goes into the verdict's rationale).
        line: Line in the policy file (set by the loader).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_.\-]+$", max_length=64)
    lexicon: tuple[LexiconState | Literal["*"], ...] = Field(min_length=1)
    model: tuple[ModelState | Literal["*"], ...] = Field(min_length=1)
    scorer: tuple[ScorerState | Literal["*"], ...] = Field(("*",), min_length=1)
    decision: Decision
    reason: str = Field(min_length=1, max_length=200)
    line: int | None = Field(default=None, exclude=True)

    @field_validator("lexicon", "model", "scorer")
    @classmethod
    def _star_alone(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if "*" in value and len(value) > 1:
            raise ValueError('"*" already matches every state; list it alone')
        return value

    def matches(
        self, lexicon: LexiconState, model: ModelState, scorer: ScorerState = "absent"
    ) -> bool:
        """True when this rule covers the (lexicon, model, scorer) triple."""
        return (
            ("*" in self.lexicon or lexicon in self.lexicon)
            and ("*" in self.model or model in self.model)
            and ("*" in self.scorer or scorer in self.scorer)
        )


class PolicyFile(BaseModel):
    """The whole ``policy.toml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    limits: Limits = Limits()
    model: ModelSettings = ModelSettings()
    scorer: ScorerSettings = ScorerSettings()
    rule: tuple[PolicyRule, ...] = Field(min_length=1)


@dataclass(frozen=True)
class Policy:
    """A validated policy.

    Attributes:
        version: ``version`` of the file plus 8 hex digits of its SHA-256 (an edit that forgets
            to bump the version still changes it).
        limits: Input limits.
        min_confidence: Model confidence below which its answer is ``uncertain``.
        rules: The decision table, in order.
        path: The file.

    Example:
        >>> policy = load_policy()
        >>> policy.decide("critical", "allow").decision
        <Decision.BLOCK: 'block'>
    """

    version: str
    limits: Limits
    min_confidence: float
    rules: tuple[PolicyRule, ...]
    path: Path | None = None
    solo_review_min_precision: float = 0.8
    solo_review_precision: float | None = None
    scorer_solo_from: dict[str, float] = field(default_factory=dict)
    scorer_min_precision: float = 0.75

    def scorer_may_review_alone(self, lang: str | None, probability: float | None) -> bool:
        """True when the scorer's probability for a post in ``lang`` reaches the threshold
        (``scorer.solo_review_from``) from which its reviews of posts with no term above low
        had dev precision of at least ``scorer.solo_review_min_precision``; a language with no
        measured threshold keeps the scorer's own ``review``."""
        start = self.scorer_solo_from.get(lang or "")
        return start is None or (probability is not None and probability >= start)

    @property
    def model_may_review_alone(self) -> bool:
        """True when the model's measured precision where it alone flags a post (lexicon
        clean; ``model.solo_review_precision``, the Wilson 95% lower bound on the dev part)
        reaches ``model.solo_review_min_precision``. Unmeasured means no."""
        measured = self.solo_review_precision
        return measured is not None and measured >= self.solo_review_min_precision

    def model_vote(self, lexicon: LexiconState, model: ModelState) -> ModelState:
        """The model's state as the table reads it: a ``review`` or ``block`` on a post the
        lexicon passes (``none``, ``mention``, ``low``) becomes ``noted`` (a note in the
        rationale, no review on its own) unless :attr:`model_may_review_alone`."""
        clean = lexicon in ("none", "mention", "low")
        if clean and model in ("review", "block") and not self.model_may_review_alone:
            return "noted"
        return model

    def noted_reason(self) -> str:
        """Why a ``noted`` flag is only a note (for the verdict's rationale)."""
        measured = (
            "unmeasured"
            if self.solo_review_precision is None
            else f"{self.solo_review_precision:.2f}"
        )
        return (
            f"; a note only: its measured precision where it alone flags ({measured}, dev "
            f"part) is under the {self.solo_review_min_precision:.2f} needed to send a post "
            "to review on its own"
        )

    def decide(
        self, lexicon: LexiconState, model: ModelState, scorer: ScorerState = "absent"
    ) -> PolicyRule:
        """The first rule matching ``(lexicon, model, scorer)`` (the loader guarantees one
        exists)."""
        for rule in self.rules:
            if rule.matches(lexicon, model, scorer):
                return rule
        raise PolicyError(
            self.path or "policy", None, f"no rule for ({lexicon}, {model}, {scorer})"
        )


def check_table(path: Path, text: str, rules: tuple[PolicyRule, ...]) -> None:
    """Refuse a table with an undecided pair or a rule that earlier rules shadow.

    Raises:
        PolicyError: Names the pair or the rule (with its line).
    """
    used: set[str] = set()
    for lexicon in LEXICON_STATES:
        for model in MODEL_STATES:
            for scorer in SCORER_STATES:
                rule = next((r for r in rules if r.matches(lexicon, model, scorer)), None)
                if rule is None:
                    raise PolicyError(
                        path,
                        None,
                        f"no rule decides lexicon={lexicon!r}, model={model!r}, "
                        f"scorer={scorer!r}; add a [[rule]] for it or end the table with a "
                        'catch-all (lexicon = ["*"], model = ["*"])',
                    )
                used.add(rule.id)
    for i, rule in enumerate(rules):
        if rule.id in [r.id for r in rules[:i]]:
            raise PolicyError(
                path, locate_line(text, ("rule", i, "id")), f"duplicate rule id {rule.id!r}"
            )
        if rule.id not in used:
            raise PolicyError(
                path,
                locate_line(text, ("rule", i)),
                f"rule {rule.id!r} never fires: earlier rules already decide every case it "
                "lists; remove it or move it up",
            )


def load_policy(path: Path | str = DEFAULT_POLICY_PATH) -> Policy:
    """Read and check a policy file.

    Raises:
        PolicyError: Unreadable, not TOML, fails validation, or the table is not total or
            has a dead rule; the message names the file and the line when known.
    """
    path = Path(path)
    loaded = load_toml(path, PolicyFile, error=PolicyError)
    text, parsed = loaded.text, loaded.value
    rules = tuple(
        r.model_copy(update={"line": loaded.line_of("rule", i)}) for i, r in enumerate(parsed.rule)
    )
    check_table(path, text, rules)
    return Policy(
        version=f"{parsed.version}+{content_hash(text, digits=8)}",
        limits=parsed.limits,
        min_confidence=parsed.model.min_confidence,
        rules=rules,
        path=path,
        solo_review_min_precision=parsed.model.solo_review_min_precision,
        solo_review_precision=parsed.model.solo_review_precision,
        scorer_solo_from=dict(parsed.scorer.solo_review_from),
        scorer_min_precision=parsed.scorer.solo_review_min_precision,
    )
