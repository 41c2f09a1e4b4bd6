"""How each tier of the classifier decides, once its scores are known.

* :func:`rule_evidence`: the rules' signals and scores on a normalised text (noisy-OR of the
  positive evidence per route, times ``1 - w`` of its negative rules; channel hints; matches
  in a negation's scope count for nothing).
* :func:`rules_decision`: the rules decide alone (sure, no learned tier, a text over the scan
  limit, or nothing any tier knows): fallback when no rule fired, on a tie, under
  ``min_score`` or within ``ambiguity_margin``, else the best route.
* :func:`learned_decision`: the combined learned tier decides from the n-grams and the
  rules' evidence; a decisive rule may overrule it (:func:`overrule`).
* :func:`fast_decision`: the fast tier's decision, the n-gram probabilities alone.

Each returns a :class:`Decision`; :class:`~orchestrator.classifier.core.RuleClassifier` turns
it into a :class:`~orchestrator.classification.Classification`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from orchestrator.classification import (
    Classification,
    FallbackReason,
    Signal,
    TierContribution,
    TierName,
)
from orchestrator.classifier.calibration import IsotonicMap
from orchestrator.classifier.engine import CompiledRules
from orchestrator.classifier.learned import (
    COMPOUND,
    FEW,
    NEGATION,
    SHORT,
    FastScorer,
    softmax,
)
from orchestrator.classifier.models import CalibrationFile, Rule, Thresholds
from orchestrator.classifier.negation import (
    in_scopes,
    joined_after_post,
    joined_before_post,
    mask,
    negated_scopes,
)
from orchestrator.routes import FALLBACK, Route


@dataclass(frozen=True)
class RuleEvidence:
    """What the rules found in a text (:func:`rule_evidence`).

    Attributes:
        signals: Every rule that fired (and each channel hint), in match order.
        rule_ids: Ids of the positive rules that fired outside a negation's scope.
        n_negated: How many matches lay in a negation's scope.
        decisive: The decisive rules that fired outside a negation's scope.
        scopes: The text's negation scopes.
        scores: Each route's score, best first (ties by priority, then route order).
        s1: The best score; ``best`` its route.
        s2: The runner-up's score; ``second`` its route.
    """

    signals: list[Signal]
    rule_ids: list[str]
    n_negated: int
    decisive: list[Rule]
    scopes: list[tuple[int, int]]
    scores: dict[Route, float]
    s1: float
    best: Route
    s2: float
    second: Route

    @property
    def tie(self) -> bool:
        """The two best routes score the same, above 0 (a tie never acts)."""
        return self.s1 > 0.0 and self.s1 == self.s2


@dataclass(frozen=True)
class Decision:
    """One tier's decision, before the compound and semantic reads (:func:`rules_decision`,
    :func:`learned_decision`).

    Attributes:
        route: The route decided (``fallback`` when unsure).
        why: The fallback reason, or None.
        reason: Why, in words.
        confidence: Rounded to 4 places, calibrated when ``calibrated``.
        calibrated: Whether ``confidence`` went through a fitted map.
        scores: The scores the classification reports (routes only).
        tiers: The fast, rules and learned tiers' records.
        learned_probs: The learned tier's probabilities, when it ran.
    """

    route: Route
    why: FallbackReason | None
    reason: str
    confidence: float
    calibrated: bool
    scores: dict[Route, float]
    tiers: tuple[TierContribution, ...]
    learned_probs: dict[Route, float] | None = None


def _confidence(cmap: IsotonicMap | None, raw: float, uncalibrated: float) -> float:
    return round(cmap(raw) if cmap is not None else uncalibrated, 4)


def _ranked(
    compiled: CompiledRules, counted: Sequence[tuple[Rule, float]], channel: str | None
) -> list[tuple[float, int, int, Route]]:
    """``(score, priority, -index, route)`` of every route, best first, from the evidence
    ``w`` of each counted rule (noisy-OR of the positive ones times ``1 - w`` of the negative
    ones) and the channel's hints; a score is rounded to 4 places (0.0 where no rule fired).
    Plain tuples, no key function: they sort faster."""
    miss = dict.fromkeys(compiled.routes, 1.0)
    veto = dict.fromkeys(compiled.routes, 1.0)
    for rule, w in counted:
        if rule.negative:
            veto[rule.route] *= 1.0 - w
        else:
            miss[rule.route] *= 1.0 - w
    if channel is not None:
        for route, w in compiled.channels.get(channel.lower(), ()):
            miss[route] *= 1.0 - w
    return sorted(
        [
            (0.0 if miss[r] == 1.0 else round((1.0 - miss[r]) * veto[r], 4), p, -i, r)
            for i, (r, p) in enumerate(compiled.ranking)
        ],
        reverse=True,
    )


#: The runner-up of :func:`rule_evidence` when the rules have a single route.
_NO_RUNNER_UP = (0.0, 0, 0, FALLBACK)


def rule_evidence(
    compiled: CompiledRules, norm: str, exts: tuple[str, ...], channel: str | None
) -> RuleEvidence:
    """The rules' signals and scores on the normalised text ``norm``."""
    scopes = negated_scopes(norm)
    signals: list[Signal] = []
    rule_ids: list[str] = []
    decisive: list[Rule] = []
    counted: list[tuple[Rule, float]] = []
    n_negated = 0
    for index, (sim, matched, span) in compiled.match(norm, exts, channel).items():
        rule = compiled.rules[index]
        w = rule.weight * sim
        negated = bool(
            scopes
            and span is not None
            and rule.negatable
            and not rule.negative
            and in_scopes(span, scopes)
        )
        if rule.decisive and not negated:
            decisive.append(rule)
        if negated:
            n_negated += 1
        else:
            counted.append((rule, w))
            if not rule.negative:
                rule_ids.append(rule.id)
        signals.append(
            Signal(
                rule_id=rule.id,
                route=rule.route,
                weight=round(w, 4),
                matched=matched,
                span=span,
                negative=rule.negative,
                similarity=sim,
                negated=negated,
            )
        )
    if channel is not None:
        for route, w in compiled.channels.get(channel.lower(), ()):
            signals.append(
                Signal(rule_id=f"channel.{route}", route=route, weight=w, matched=channel)
            )
    ranked = _ranked(compiled, counted, channel)
    scores = {r: score for score, _, _, r in ranked}
    # one declared route (inline rules of one route): no runner-up, so it scores 0 for fallback
    (s1, _, _, best), (s2, _, _, second) = ranked[0], (*ranked, _NO_RUNNER_UP)[1]
    return RuleEvidence(
        signals, rule_ids, n_negated, decisive, scopes, scores, s1, best, s2, second
    )


def rules_tie(
    compiled: CompiledRules, norm: str, exts: tuple[str, ...], channel: str | None
) -> bool:
    """Whether the rules' two best routes score the same (above 0) on a short text: the
    fast tier's check before it acts on a text of a few words (a tie never acts). The scores
    are :func:`rule_evidence`'s; negation is not read (a text with a negation cue never gets
    here)."""
    counted = [
        (rule, rule.weight * sim)
        for rule, sim in (
            (compiled.rules[i], m[0]) for i, m in compiled.match(norm, exts, channel).items()
        )
    ]
    ranked = _ranked(compiled, counted, channel)
    return len(ranked) > 1 and ranked[0][0] > 0.0 and ranked[0][0] == ranked[1][0]


#: Why the rules decided alone -> (the rules tier's note, the learned tier's note).
_ALONE = {
    "no model": ("no learned tier loaded", "not loaded"),
    "sure": ("sure", "not run: the rules were sure"),
    "unknown": (
        "decides: no rule fired on a text the n-grams do not know",
        "not run: no feature of the text is known (its prior is no signal)",
    ),
    "long": (
        "decides: text over the scan limit (confidence uncalibrated)",
        "not run: text over the scan limit, the rules read more of it",
    ),
}


def rules_decision(
    ev: RuleEvidence,
    t: Thresholds,
    cal: CalibrationFile | None,
    fast_tier: TierContribution,
    *,
    alone: str,
    unknown: bool,
    long_rules: bool,
) -> Decision:
    """The rules' decision when they decide alone; ``alone`` says why (a key of
    :data:`_ALONE`), ``unknown``: the n-grams know no word of the text either. Over the scan
    limit (``long_rules``) the confidence is the raw margin: the rules' calibration maps were
    fitted on sure decisions only."""
    s1, s2, best, second = ev.s1, ev.s2, ev.best, ev.second
    why: FallbackReason | None = None
    if s1 <= 0.0:
        why = "no_signal"
        reason = "no rule fired" + (
            " and no word of it is one the n-gram model knows" if unknown else ""
        )
    elif ev.tie:
        why = "ambiguous"
        reason = f"tie: {best} {s1} = {second} {s2}; a tie never acts"
    elif s1 < t.min_score:
        why = "low_confidence"
        reason = f"best route {best} scored {s1} < min_score {t.min_score}"
    elif s1 - s2 < t.ambiguity_margin:
        why = "ambiguous"
        reason = (
            f"ambiguous: {best} {s1} vs {second} {s2} "
            f"(margin {round(s1 - s2, 4)} < {t.ambiguity_margin})"
        )
    else:
        reason = f"{best} scored {s1} (runner-up {second} {s2})"
    route = FALLBACK if why else best
    cmap = cal.maps.get(route) if cal is not None and not long_rules else None
    rules_note, learned_note = _ALONE[alone]
    tiers = (
        fast_tier,
        tier_record("rules", True, ev.scores, True, rules_note + _negated_note(ev)),
        tier_record("learned", False, {}, False, learned_note),
    )
    raw = s1 if why else s1 - s2
    confidence = _confidence(cmap, raw, 1.0 - s1 if why else raw)
    return Decision(route, why, reason, confidence, cmap is not None, ev.scores, tiers)


def _negated_note(ev: RuleEvidence) -> str:
    return f", {ev.n_negated} negated" if ev.n_negated else ""


def _learned_verdict(
    ev: RuleEvidence, t: Thresholds, ranked: list[tuple[Route, float]], tie_acts: bool
) -> tuple[FallbackReason | None, str]:
    """The fallback reason (None: a route) and the reason of the learned tier's decision from
    its two most probable classes ``ranked``."""
    (c1, p1), (c2, p2) = ranked[0], ranked[1]
    if tie_acts:
        return "ambiguous", (
            f"tie in the rules: {ev.best} {ev.s1} = {ev.second} {ev.s2}; a tie never acts"
        )
    if c1 == FALLBACK:
        return "out_of_scope", (
            f"learned tier: out of scope for every route (p={p1:.4f}, next {c2} {p2:.4f})"
        )
    if p1 < t.min_score:
        return "low_confidence", (
            f"learned tier: best route {c1} p={p1:.4f} < min_score {t.min_score}"
        )
    if p1 - p2 < t.ambiguity_margin:
        return "ambiguous", (
            f"ambiguous: {c1} p={p1:.4f} vs {c2} p={p2:.4f} "
            f"(margin {p1 - p2:.4f} < {t.ambiguity_margin})"
        )
    return None, f"{c1} p={p1:.4f} (learned tier; runner-up {c2} {p2:.4f})"


def learned_decision(
    ev: RuleEvidence,
    t: Thresholds,
    cal: CalibrationFile | None,
    scorer: FastScorer,
    compiled: CompiledRules,
    read: tuple[str, tuple[str, ...], str | None],
    fast_tier: TierContribution,
    tie_acts: bool,
) -> Decision:
    """The combined learned tier's decision on ``read`` (``(norm, exts, channel)``), the
    rules' evidence among its features; a decisive rule that fired may overrule it
    (:func:`overrule`). ``tie_acts``: the rules tie and no compound was read (the result is an
    ``ambiguous`` fallback, never overruled)."""
    norm, exts, channel = read
    z, share = scorer.score(
        mask(norm, ev.scopes),
        attachments=exts,
        channel=channel,
        rule_ids=ev.rule_ids,
        rule_scores=ev.scores,
    )
    probs = softmax(z)
    learned_probs = ranked_scores(probs, scorer.classes)
    ranked = list(learned_probs.items())
    c1, p1 = ranked[0]
    p2, p_fallback = ranked[1][1], learned_probs[FALLBACK]
    why, reason = _learned_verdict(ev, t, ranked, tie_acts)
    route = FALLBACK if why else c1
    raw = p_fallback if route == FALLBACK else p1 - p2
    cmap = cal.learned_maps.get(route) if cal is not None else None
    uncalibrated = p_fallback if route == FALLBACK else p1
    overruled = (
        overrule(route, learned_probs, ev.decisive, compiled.ranking, ev.scores)
        if ev.decisive and not tie_acts
        else None
    )
    if overruled is not None:
        by, rule = overruled
        reason = f"{by} by decisive rule {rule.id}, overruling the learned tier ({reason})"
        # confidence, uncalibrated: a route rescued from fallback gets the learned tier's own
        # mass on "this route or no route" (the rule rules out no route); a veto gets the
        # negative rule's weight
        cmap = None
        uncalibrated = (
            rule.weight if by == FALLBACK else learned_probs[by] + learned_probs[FALLBACK]
        )
        route, why = by, ("out_of_scope" if by == FALLBACK else None)
    rules_note = f"unsure: {ev.best} {ev.s1}, {ev.second} {ev.s2}" + (", tie" if ev.tie else "")
    tiers = (
        fast_tier,
        tier_record("rules", True, ev.scores, False, rules_note + _negated_note(ev)),
        tier_record(
            "learned",
            True,
            learned_probs,
            True,
            f"{share:.0%} of its evidence for {c1} came from the fired rules",
        ),
    )
    out_scores = {r: p for r, p in learned_probs.items() if r != FALLBACK}
    confidence = _confidence(cmap, raw, uncalibrated)
    return Decision(
        route, why, reason, confidence, cmap is not None, out_scores, tiers, learned_probs
    )


#: The n-gram probability of a second route from which a text with a joining word is read
#: by the rules (they split the clauses).
COMPOUND_P = 0.01


def fast_declines(
    compiled: CompiledRules,
    t: Thresholds,
    read: tuple[str, tuple[str, ...], str | None],
    probs: list[float],
    flag: int,
    sheet_and_more: bool,
    classes: Sequence[Route],
) -> str:
    """Why the fast tier hands ``read`` (``(norm, exts, channel)``) on to the rules, in words;
    ``""`` when it decides. ``probs``: its probabilities (``classes`` order), ``flag``
    its cue flags (:func:`~orchestrator.classifier.learned.cues`), ``sheet_and_more``: a
    spreadsheet request of more than one clause."""
    norm, exts, channel = read
    p1 = max(probs)
    c1 = classes[probs.index(p1)]  # the first of equals, as a stable argsort
    if sheet_and_more:
        return "a spreadsheet and more than one clause: the rules read the clauses"
    if flag & NEGATION:
        return "a negation cue: the rules read its scope"
    if flag & SHORT:
        return "too short for the n-grams alone: the rules read it"
    # a second request is possible when a cue joins clauses and a second route has some
    # probability; a moderation ask may follow a request of another route, however sure the
    # n-grams are of moderation: the rules split the clauses
    if flag & COMPOUND and (
        max(
            (p for p, c in zip(probs, classes, strict=True) if c != c1 and c != FALLBACK),
            default=0.0,
        )
        >= COMPOUND_P
        or (
            c1 == compiled.wraps_content
            and (joined_before_post(norm) or joined_after_post(norm) is not None)
        )
    ):
        return "two requests may be joined: the rules read the clauses"
    if p1 < t.fast_min:
        return f"unsure: {c1} p={p1:.4f} < fast_min {t.fast_min}"
    if flag & FEW and c1 != FALLBACK and rules_tie(compiled, norm, exts, channel):
        return "a few words that the rules score as a tie: the rules call it"
    if compiled.decisive_may_fire(norm, c1):
        what = "a fallback" if c1 == FALLBACK else c1
        return f"a decisive rule may overrule {what}: the rules read it"
    return ""


def fast_decision(
    route: Route,
    p1: float,
    probs: list[float],
    scanned: tuple[tuple[int, int], ...],
    classes: Sequence[Route],
    *,
    cmap: IsotonicMap | None,
    fast_note: str,
    version: str,
    semantic_tier: TierContribution,
) -> Classification:
    """The fast tier's decision for ``route`` with probability ``p1`` (the text is within the
    scan limit: never truncated). ``cmap``: its calibration map for ``route``; the scores
    are the model's probabilities as computed (not rounded)."""
    scores = ranked_scores(probs, classes)
    shown = f"{p1:.4f}"
    head, tail = fast_reason(route)
    return Classification(
        route=route,
        confidence=cmap(p1) if cmap is not None else p1,
        scores={c: p for c, p in scores.items() if c != FALLBACK},
        reason=head + shown + tail,
        fallback_reason="out_of_scope" if route == FALLBACK else None,
        calibrated=cmap is not None,
        rules_version=version,
        tiers=(
            tier_record("fast", True, scores, True, "sure: p=" + shown + fast_note),
            SKIPPED_RULES,
            SKIPPED_LEARNED,
            semantic_tier,
        ),
        scanned=scanned,
    )


def live_decisive(decisive: Sequence[Rule]) -> list[Rule]:
    """The decisive rules that count: those no other fired rule ``overrides``."""
    overridden = {rule_id for r in decisive for rule_id in r.overrides}
    return [r for r in decisive if r.id not in overridden]


#: The learned tier's probability under which a route no rule spoke for gives way to a veto
#: marked ``elsewhere`` (:func:`overrule`): the fast tier's ``fast_min`` as calibration.toml
#: holds it (0.85), fixed here so that every threshold the fit searches sees the same rule.
UNSURE_BELOW = 0.85


def overrule(
    route: Route,
    probs: dict[Route, float],
    decisive: Sequence[Rule],
    ranking: Sequence[tuple[Route, int]],
    evidence: Mapping[Route, float] | None = None,
) -> tuple[Route, Rule] | None:
    """The decisive rules' say on a learned-tier decision: ``(new route, rule)``, or None.

    * A **fallback** becomes the route of a positive decisive rule that fired, when no
      negative decisive rule against that route fired too. With one such route, only when it
      is the learned tier's most probable *route* (the rule settles fallback-or-this-route,
      never this-route-or-another) or when the rule ``settles`` (:class:`Rule`); with
      several, the one of the highest priority (a post under review may mention anything).
    * A **route** becomes fallback when a negative decisive rule against it fired and no
      positive decisive rule of it did; that fallback then goes to a positive decisive rule
      that ``settles`` and fired too ("Flag or approve: my parcel is late": the review-queue
      framing vetoes customer service, and settles moderation).
    * A **route no rule spoke for** (its score in ``evidence`` is 0), which the learned tier
      gave less than :data:`UNSURE_BELOW`, becomes fallback when a negative decisive rule
      marked ``elsewhere`` fired against another route and no positive decisive rule of the
      decided route did (issue 46 item 9, round 11): the veto read the text as a request for
      another business ("物业说要涨停车费，这能拒绝吗"), and the learned tier's unsure content
      moderation, with no moderation rule behind it, is a guess on a service question, not
      a post under review. Without ``evidence`` this case is not read.
    * A decisive rule counts for nothing when a rule that ``overrides`` it fired too:
      "refund my bag fee for order 1234" (the order named as ours wins over the
      other-business veto on "bag fee"); "my gym keeps charging my card" (another business
      named as the owner wins over "my card").

    Args:
        route: The learned tier's decision.
        probs: Its class probabilities (fallback included).
        decisive: The decisive rules that fired outside any negation scope.
        ranking: ``(route, priority)`` of every route (:attr:`CompiledRules.ranking`).
        evidence: The rules' score of each route (0 when no rule spoke for it), or None.
    """
    live = live_decisive(decisive)
    positive = {r.route: r for r in live if not r.negative}
    against = {r.route: r for r in live if r.negative}
    if route == FALLBACK:
        candidates = [r for r in positive if r not in against]
        if not candidates:
            return None
        if len(candidates) == 1:
            best_route = max(
                (r for r in probs if r != FALLBACK), key=probs.__getitem__, default=None
            )
            if candidates[0] != best_route and not positive[candidates[0]].settles:
                return None
            return candidates[0], positive[candidates[0]]
        priority = dict(ranking)
        winner = max(candidates, key=lambda r: priority.get(r, 0))
        return winner, positive[winner]
    if route in against and route not in positive:
        then = overrule(FALLBACK, probs, decisive, ranking)
        if then is not None and then[1].settles:
            return then
        return FALLBACK, against[route]
    elsewhere = [r for r in against.values() if r.elsewhere]
    if (
        evidence is not None
        and elsewhere
        and route not in positive
        and not evidence.get(route)
        and probs.get(route, 0.0) < UNSURE_BELOW
    ):
        return FALLBACK, elsewhere[0]
    return None


#: The fast tier's probability under which a decision for a route that declares
#: ``own_things`` needs one of them named, or a positive decisive rule of it, to stand
#: (:func:`unsupported`; issue 46 item 9, round 12: chosen on the spent rounds and dev12).
OWN_UNSURE = 0.5


def unsupported(
    compiled: CompiledRules, route: Route, fast_tier: TierContribution, ev: RuleEvidence, norm: str
) -> tuple[str, float] | None:
    """Why a decision for ``route`` is an unsure guess on something else, in words, and the
    fallback's confidence (``1 - p``, ``p`` the fast tier's probability of ``route``); None
    when the decision stands.

    It is one when ``route`` declares :attr:`~orchestrator.routes.RouteSpec.own_things`, the
    fast tier ran and gave ``route`` less than :data:`OWN_UNSURE`, no positive decisive rule of
    ``route`` fired (unless overridden), and ``norm`` (the folded text) names none of the
    route's own things. A safe default, not a list of other businesses: the customer-service
    desk takes such a decision only when something of its own is asked about.
    """
    pattern = compiled.own_things.get(route)
    p = fast_tier.scores.get(route) if fast_tier.consulted else None
    if pattern is None or p is None or p >= OWN_UNSURE:
        return None
    if any(r.route == route and not r.negative for r in live_decisive(ev.decisive)):
        return None
    try:
        if pattern.search(norm, timeout=compiled.regex_timeout_s) is not None:
            return None
    except TimeoutError:
        return None  # the text was not read: the decision stands as it was
    return (
        f"unsure {route} (fast tier p={p:.4f} < {OWN_UNSURE}) with no positive decisive rule "
        f"of it and none of its own things named",
        round(1.0 - p, 4),
    )


def part_decides(
    part: Classification, whole: Classification, how: str, cut: str = ""
) -> Classification:
    """``part`` (a part of the request read alone: its ask, its framing) as the decision, its
    reason saying how the ask was read and what the whole text read as; ``truncated`` and
    ``scanned`` stay the whole text's (the part lies inside what was read)."""
    return part.model_copy(
        update={
            "reason": f"the ask read {how}: {part.reason}; the whole text read as "
            f"{whole.route}{cut}",
            "truncated": whole.truncated,
            "scanned": whole.scanned,
        }
    )


def tier_record(
    tier: TierName, consulted: bool, scores: dict[Route, float], decided: bool, note: str
) -> TierContribution:
    """A :class:`TierContribution` from its fields in declaration order."""
    return TierContribution(
        tier=tier, consulted=consulted, scores=scores, decided=decided, note=note
    )


@lru_cache(maxsize=256)
def fast_reason(route: Route) -> tuple[str, str]:
    """The fixed parts of a fast-tier decision's reason for ``route``: ``head + p + tail``."""
    if route == FALLBACK:
        return "fast tier: out of scope for every route (p=", ")"
    return (
        f"{route} p=",
        " (fast tier: n-gram model, no negation or second request for the rules to read)",
    )


def ranked_scores(probs: Sequence[float], classes: Sequence[Route]) -> dict[Route, float]:
    """Class probabilities (``classes`` order) as a dict, highest first (ties in class order,
    as a stable argsort)."""
    order = sorted(range(len(probs)), key=probs.__getitem__, reverse=True)
    return {classes[i]: probs[i] for i in order}


#: The fast tier's record when it did not run, and those of the tiers a sure fast tier spared.
NOT_LOADED_FAST = TierContribution(
    tier="fast",
    consulted=False,
    note="not run (no learned tier, fast_min > 1, or a text over the scan limit)",
)
SKIPPED_RULES, SKIPPED_LEARNED = (
    TierContribution(tier=name, consulted=False, note="not run: the fast tier was sure")
    for name in ("rules", "learned")
)


def rule_scores(c: Classification) -> dict[Route, float]:
    tier = c.tier("rules")
    return tier.scores if tier is not None else {}
