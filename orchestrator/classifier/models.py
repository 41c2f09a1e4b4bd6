"""Pydantic models of the classifier: the rules file schema, thresholds and calibration (the
classification result lives in :mod:`orchestrator.classification`, re-exported here)."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from orchestrator.classification import Classification as Classification
from orchestrator.classification import FallbackReason as FallbackReason
from orchestrator.classification import RouteScore as RouteScore
from orchestrator.classification import Signal as Signal
from orchestrator.classification import TierContribution as TierContribution
from orchestrator.classification import TierName as TierName
from orchestrator.classifier.calibration import IsotonicMap
from orchestrator.routes import FALLBACK, Route
from orchestrator.routes import RouteSpec as RouteSpec


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
        elsewhere: A negative decisive rule that reads the text as a request for another
            business (its product, its staff, its bill): besides vetoing its route, it makes a
            route no rule spoke for, which the learned tier decided unsure, a fallback
            (:func:`~orchestrator.classifier.decide.overrule`; "物业说要涨停车费，这能拒绝吗" is no
            post under review). Not for general knowledge and jokes, which posts are about too.
        overrides: Ids of decisive rules of the same route and the opposite sign that count
            for nothing when this decisive rule fires too. A positive one overrides vetoes (the
            customer's own order named as ours, "refund my bag fee for order 1234", wins over
            the veto on another business's product); a negative one overrides weaker positive
            ones (another business named as the owner, "my gym keeps charging my card", wins
            over "my card"). Two rules never override each other.
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
    elsewhere: bool = False
    overrides: tuple[str, ...] = ()
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
        if self.route == FALLBACK:
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
        if self.elsewhere and not (self.decisive and self.negative):
            raise ValueError(
                f"rule {self.id!r}: elsewhere applies to negative decisive rules only; set "
                "decisive = true and negative = true or remove elsewhere"
            )
        if self.overrides and not self.decisive:
            raise ValueError(
                f"rule {self.id!r}: overrides applies to decisive rules only; set "
                "decisive = true or remove overrides"
            )
        return self

    @property
    def kind(self) -> Literal["keywords", "regex", "attachment"]:
        """``keywords``, ``regex`` or ``attachment``."""
        if self.regex is not None:
            return "regex"
        return "attachment" if self.attachments else "keywords"


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
        by_id = {rule.id: rule for rule in self.rule}
        for rule in self.rule:
            for named in rule.overrides:
                other = by_id.get(named)
                sign = "positive" if rule.negative else "negative"
                if (
                    other is None
                    or not other.decisive
                    or other.negative == rule.negative
                    or other.route != rule.route
                ):
                    raise ValueError(
                        f"rule {rule.id!r} overrides {named!r}, which is no {sign} decisive "
                        f"rule of {rule.route}; name one or remove it from overrides"
                    )
                if rule.id in other.overrides:
                    raise ValueError(
                        f"rules {rule.id!r} and {named!r} override each other; keep one of "
                        "the two overrides"
                    )
        names = [r.name for r in self.route]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(
                f"route {', '.join(map(repr, twice))} is declared more than once in [[route]]; "
                "declare each route once"
            )
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
