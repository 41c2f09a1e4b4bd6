"""The classifier's result: :class:`Classification` and the small models it holds.

A light module (pydantic and :class:`~orchestrator.routes.Route` only), so that what records or
shows a classification (the telemetry store, the dispatcher's events) imports it without the
classifier itself (RE2, rapidfuzz, the learned tier). ``from orchestrator.classifier import
Classification`` gives the same class.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

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

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy takes no decorator over @property
    @cached_property
    def runner_ups(self) -> tuple[RouteScore, ...]:
        """The routes that were not chosen, with scores, best first (derived from ``scores``
        on first use, so that classifying does not build them; included in ``model_dump``)."""
        return tuple(
            RouteScore(route=route, score=score)
            for route, score in self.scores.items()
            if route != self.route
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
