"""Pydantic models of the classifier: the rules file schema and the classification result."""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    computed_field,
    field_validator,
    model_validator,
)

from orchestrator.classifier.calibration import IsotonicMap
from orchestrator.routes import Route

#: Why a request went to the fallback route (``None`` when it did not).
FallbackReason = Literal[
    "no_signal",  # no rule fired
    "low_confidence",  # best score under ``min_score``
    "ambiguous",  # best and runner-up closer than ``ambiguity_margin``
    "invalid_input",  # empty, too long, binary or not UTF-8 (classify_text only)
    "out_of_scope",  # the learned tier's best class is fallback: no route serves it
]

#: A tier of the classifier, in the order they run: ``fast`` (the n-gram model alone, from a
#: precomputed weight table), ``rules`` (routes.toml), ``learned`` (the linear model, rules
#: included as features), ``semantic`` (the optional embedding router).
TierName = Literal["fast", "rules", "learned", "semantic"]


class Signal(BaseModel):
    """One rule that fired.

    Attributes:
        rule_id: Id of the rule in the rules file (``channel.<route>`` for a channel hint).
        route: The route it is evidence for (or against, when ``negative``).
        weight: Evidence it contributed, in (0, 1]: the rule's weight times the match
            similarity (1.0 for exact matches, rapidfuzz ratio / 100 for fuzzy ones).
        matched: The text (or attachment file name, or channel) that matched.
        span: ``(start, end)`` character offsets into the *normalised* text (NFKC, lower
            case), or None for attachment and channel signals.
        negative: True for a negative pattern (evidence against ``route``).
        similarity: 1.0 for exact matches, else the rapidfuzz ratio in [0, 1].
        negated: The match lies in the scope of a negation ("don't moderate ...", "不用审核")
            and counted for nothing (``weight`` is then what it would have given).
    """

    model_config = ConfigDict(frozen=True)

    rule_id: str
    route: Route
    weight: float
    matched: str
    span: tuple[int, int] | None = None
    negative: bool = False
    similarity: float = 1.0
    negated: bool = False


class TierContribution(BaseModel):
    """What one tier of the classifier said about a request.

    Attributes:
        tier: ``rules``, ``learned`` or ``semantic``.
        consulted: Whether it ran (the learned tier runs only when the rules are unsure, the
            semantic tier only when it is switched on and the fast tiers are unsure).
        scores: Its scores per class, highest first: rule evidence in [0, 1] for ``rules``,
            probabilities (fallback included) for ``learned`` and ``semantic``.
        decided: Whether its scores made the decision.
        note: In words: why it ran or not; for the learned tier, the share of its evidence
            for the top class that came from the rules that fired.
    """

    model_config = ConfigDict(frozen=True)

    tier: TierName
    consulted: bool
    scores: dict[Route, float] = {}
    decided: bool = False
    note: str = ""


class RouteScore(BaseModel):
    """A route and its evidence score (noisy-OR of fired rule weights), in [0, 1]."""

    model_config = ConfigDict(frozen=True)

    route: Route
    score: float


class Classification(BaseModel):
    """The classifier's decision for one request.

    Attributes:
        route: The chosen route (``fallback`` when unsure).
        confidence: Estimated probability, in [0, 1], that ``route`` is the right route:
            the raw evidence mapped through an isotonic calibration fitted on the tune split
            of the labelled request set (``orchestrator classifier fit-thresholds``). Of
            requests classified with confidence c, about c are right (ECE is reported by
            ``orchestrator classifier eval``). Uncalibrated (``calibrated`` False) when no
            calibration file is loaded, and for a compound request (``secondary_routes``),
            whose confidence is the rules' evidence for ``route`` in the clause that asks
            for it.
        scores: Evidence score of every non-fallback route, highest first; for a compound
            request, each route's evidence in the clause that asks for it (0 for a route no
            clause asks for), so a secondary route may score above ``route``.
        signals: Every rule that fired, with rule id and matched span.
        reason: Why this route was chosen, in words.
        fallback_reason: Machine-readable reason when ``route`` is fallback, else None.
        calibrated: Whether ``confidence`` went through a fitted calibration map.
        rules_version: Short hash of the rules (and calibration) the decision used.
        secondary_routes: Further routes the request also asks for (a compound request such
            as "refund my order and summarise the attached sheet"), in the order asked; the
            dispatcher runs ``route`` and notes these.
        tiers: What each tier contributed (see :class:`TierContribution`).
        truncated: The text was longer than the scan limit; only ``scanned`` was read.
        scanned: ``(start, end)`` character ranges of the *original* text that were read: the
            whole text, or a head and a tail window when ``truncated``.
    """

    model_config = ConfigDict(frozen=True)

    route: Route
    confidence: float = Field(ge=0, le=1)
    scores: dict[Route, float]
    signals: tuple[Signal, ...] = ()
    reason: str
    fallback_reason: FallbackReason | None = None
    calibrated: bool = False
    rules_version: str = ""
    secondary_routes: tuple[Route, ...] = ()
    tiers: tuple[TierContribution, ...] = ()
    truncated: bool = False
    scanned: tuple[tuple[int, int], ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def runner_ups(self) -> tuple[RouteScore, ...]:
        """The routes that were not chosen, with scores, best first (derived from ``scores``
        on first use, so that classifying does not build them; included in ``model_dump``)."""
        return tuple(
            RouteScore(route=route, score=score)
            for route, score in self.scores.items()
            if route is not self.route
        )

    @property
    def decided_by(self) -> TierName | None:
        """The tier whose scores made the decision (``fast``, ``rules``, ``learned`` or
        ``semantic``; None for invalid input). What telemetry should record next to the route."""
        return next((t.tier for t in self.tiers if t.decided), None)

    def tier(self, name: TierName) -> TierContribution | None:
        """The contribution of the tier called ``name`` (None when it is not in ``tiers``)."""
        return next((t for t in self.tiers if t.tier == name), None)

    @property
    def runner_up(self) -> tuple[Route, float] | None:
        """The best route that was not chosen, and its score (None when there is none)."""
        if not self.runner_ups:
            return None
        best = self.runner_ups[0]
        return best.route, best.score


class Rule(BaseModel):
    """One piece of evidence for (or, when ``negative``, against) a route.

    Exactly one of ``keywords``, ``regex`` and ``attachments`` is set.

    Attributes:
        id: Stable id (``[a-z0-9_.-]+``), shown in signals and telemetry.
        route: The route it is evidence for; never ``fallback``.
        weight: Evidence strength in (0, 1) (up to 1 for a negative rule: 1 vetoes the route).
        keywords: Words and phrases. English phrases match on word tokens, with or without
            spaces between words (``log in`` = ``login``); a trailing ``*`` matches any word
            that starts with the stem (``refund*``); Chinese keywords match anywhere as
            character substrings. Matching is after NFKC (full-width to half-width) and lower
            casing.
        fuzzy: Also match English words of ``fuzzy_min_len`` letters or more that are one edit
            (insert, delete, substitute, swap) away, scored with rapidfuzz ``ratio``.
        regex: A pattern for the ``regex`` module, searched in the normalised text; it must
            pass the catastrophic-backtracking probe at load.
        attachments: File extensions without the dot (``xlsx``); fires on an attachment with
            one of them.
        negative: A negative pattern: when it fires, the route's score is multiplied by
            ``1 - weight``.
        negatable: A match inside a negation's scope ("don't moderate", "不用审核") counts
            for nothing. Off for evidence that a negation does not undo (a problem described
            with "not", profanity inside a post).
        decisive: A high-precision regex rule that may overrule the learned tiers (fast and
            combined): a positive one turns their *fallback* into its route ("what is your
            return policy" is customer service however unsure the n-grams are), a negative
            one turns their decision *for* its route into a fallback ("a haiku about
            refunds" is not customer service). Only when it fires outside a negation's scope,
            and only when no decisive rule says the opposite; of several routes' positive
            decisive rules the one of the highest route priority wins (a post under review
            may mention anything). Regex rules only (one precompiled union checks them all
            before the fast tier acts).
        settles: A positive decisive rule whose route takes a fallback whatever route the
            learned tier ranks next (without it, only when that route is also the learned
            tier's most probable one). For evidence that is the route on its own, such as a
            threat or a dehumanising slur typed in with no ask: the n-grams of an unseen threat
            often read it as out of scope (p=0.9) with moderation far behind. It never turns
            one route into another.
        line: Line of the rule in the rules file (set by the loader).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_.\-]+$", max_length=80)
    route: Route
    weight: float = Field(gt=0, le=1)
    keywords: tuple[str, ...] = ()
    fuzzy: bool = True
    regex: str | None = None
    attachments: tuple[str, ...] = ()
    negative: bool = False
    negatable: bool = True
    decisive: bool = False
    settles: bool = False
    line: int | None = Field(default=None, exclude=True)

    @field_validator("keywords", "attachments")
    @classmethod
    def _no_blank(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            if not value.strip() or value.strip() == "*":
                raise ValueError("keywords and attachments must not be blank")
        return values

    @model_validator(mode="after")
    def _one_kind(self) -> Rule:
        kinds = [bool(self.keywords), self.regex is not None, bool(self.attachments)]
        if sum(kinds) != 1:
            raise ValueError(
                f"rule {self.id!r} must set exactly one of keywords, regex, attachments"
            )
        if self.route is Route.FALLBACK:
            raise ValueError(
                f"rule {self.id!r}: fallback is chosen by thresholds, not by rules; "
                "use another route or a negative rule"
            )
        if self.weight >= 1 and not self.negative:
            raise ValueError(f"rule {self.id!r}: weight must be below 1 for a positive rule")
        if self.decisive and self.regex is None:
            raise ValueError(
                f"rule {self.id!r}: decisive rules must be regex rules (they are checked by one "
                "precompiled union before the fast tier acts); write the keywords as a regex"
            )
        if self.settles and (not self.decisive or self.negative):
            raise ValueError(
                f"rule {self.id!r}: settles applies to positive decisive rules only; set "
                "decisive = true (and negative = false) or remove settles"
            )
        return self

    @property
    def kind(self) -> Literal["keywords", "regex", "attachment"]:
        """``keywords``, ``regex`` or ``attachment``."""
        if self.regex is not None:
            return "regex"
        return "attachment" if self.attachments else "keywords"


class RouteSpec(BaseModel):
    """Per-route settings.

    Attributes:
        name: The route.
        priority: Breaks ties between equal scores (higher wins).
        channels: Channels (``Request.channel``) that hint at this route.
        channel_weight: Evidence a hinted channel gives, in (0, 1).
        description: What the route is for.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Route
    priority: int = 0
    channels: tuple[str, ...] = ()
    channel_weight: float = Field(0.5, gt=0, lt=1)
    description: str = ""
    line: int | None = Field(default=None, exclude=True)


class Settings(BaseModel):
    """Engine settings of a rules file.

    Attributes:
        max_scan_chars: A longer text is read in two windows: its first half this many
            characters and its last half (``Classification.truncated`` and ``scanned`` say
            so).
        regex_timeout_ms: Per-search time limit of a regex rule at run time.
        fuzzy_min_len: Shortest English keyword (letters) that is fuzzy-matched.
        fuzzy_min_ratio: Lowest rapidfuzz ``ratio`` (0-100) that counts as a fuzzy match.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_scan_chars: int = Field(4_000, ge=100)
    regex_timeout_ms: float = Field(1000.0, gt=0)
    fuzzy_min_len: int = Field(5, ge=3)
    fuzzy_min_ratio: float = Field(80.0, ge=50, le=100)


class RulesFile(BaseModel):
    """The whole rules file (``orchestrator/rules/routes.toml``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = 1
    settings: Settings = Settings()
    route: tuple[RouteSpec, ...] = ()
    rule: tuple[Rule, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> RulesFile:
        seen: set[str] = set()
        for rule in self.rule:
            if rule.id in seen:
                raise ValueError(f"rule id {rule.id!r} is used twice; ids must be unique")
            seen.add(rule.id)
        names = [r.name for r in self.route]
        if len(set(names)) != len(names):
            raise ValueError("a route is listed twice in [[route]]")
        return self


class Thresholds(BaseModel):
    """Decision thresholds, on the scale of the tier that decides: rule evidence when the rules
    decide alone (no learned model), the combined probability when the learned tier decides.

    Attributes:
        min_score: The best route needs at least this score.
        ambiguity_margin: It must beat the runner-up by at least this much. Whatever its
            value, a tie (margin 0) never acts: it is always ``ambiguous``.
        sure_score: The rules decide alone (the learned tier is not run) when their best route
            scores at least this, no other route has any evidence, and nothing was negated.
            Above 1 the learned tier always runs.
        fast_min: The fast tier (n-gram model alone, before the rules) decides when its best
            class has at least this probability and the text has no negation cue and no second
            request (see :mod:`orchestrator.classifier.core`). Above 1 it never decides.
        secondary_min: A second clause's route becomes a secondary route when its evidence in
            that clause reaches this.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_score: float = Field(0.4, ge=0, le=1)
    ambiguity_margin: float = Field(0.1, ge=0, le=1)
    sure_score: float = Field(0.85, ge=0, le=1.01)
    secondary_min: float = Field(0.5, gt=0, le=1)
    fast_min: float = Field(1.01, ge=0, le=1.01)


class CalibrationFile(BaseModel):
    """Fitted thresholds and calibration maps (``orchestrator/rules/calibration.toml``).

    Attributes:
        thresholds: The fitted thresholds.
        maps: Per decided route (``fallback`` included): isotonic map from the raw score
            (best score minus runner-up for a route; best score for fallback) to P(correct).
        learned_maps: The same for decisions of the learned tier (raw score: best probability
            minus the runner-up's).
        fast_maps: The same for decisions of the fast tier (raw score: its best probability).
        fitted_on: Where the fit came from (split, sizes), for people.
        rules_sha: Hash of the rules file the fit was made with.
        cost: The decision costs the thresholds were chosen by (``wrong_route``, ``handoff``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    thresholds: Thresholds = Thresholds()
    maps: dict[Route, IsotonicMap] = {}
    learned_maps: dict[Route, IsotonicMap] = {}
    fast_maps: dict[Route, IsotonicMap] = {}
    cost: dict[str, float] = {}
    fitted_on: str = ""
    rules_sha: str = ""
