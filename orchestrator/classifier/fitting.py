"""Fit the learned tier and the decision thresholds, from the tune split only.

``orchestrator classifier fit`` runs :func:`fit_all`:

1. **Evidence.** Every tune request goes through the rules (no learned tier): the rule scores,
   whether the rules tie, negations, a compound split, and the learned tier's features.
2. **Cross-fitting.** The tune split is cut into ``folds`` groups *by phrasing family* (rows
   that share a wrapper, an ask text or an intent stay together); a model fitted on the other
   folds predicts each fold. Thresholds and calibration are fitted on these out-of-fold
   probabilities, so they see the model on phrasings it was not trained on, as in use.
3. **Thresholds by cost.** ``fast_min`` (the fast tier, the text-only model's out-of-fold
   probabilities, decides alone), ``sure_score`` (rules decide alone), ``min_score`` and
   ``ambiguity_margin`` (on the learned tier's probabilities) are chosen on a grid to minimise
   the mean decision cost: a wrong route costs ``wrong_route`` (default 5), a handoff of a
   request that had a right route costs ``handoff`` (default 1), a right decision 0. Equal cost:
   the larger share of fast-tier decisions wins, then the larger share of rules-alone ones.
   The grid has no zero: ``low_confidence`` and ``ambiguous`` can fire, and a tie never acts.
4. **Calibration.** Isotonic maps (:func:`~orchestrator.classifier.calibration.fit_isotonic`)
   from the raw score to the observed rate of right decisions: per route for fast-tier
   decisions (``fast_maps``; raw = its best probability), rules-alone decisions (``maps``;
   raw = best rule score minus runner-up) and for learned decisions
   (``learned_maps``; raw = best probability minus runner-up, or the fallback probability).
5. **The model** is then fitted on the whole tune split and written next to the rules.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path

import numpy as np

from orchestrator.classifier import learned as learned_tier
from orchestrator.classifier.calibration import fit_isotonic
from orchestrator.classifier.core import RuleClassifier
from orchestrator.classifier.decide import COMPOUND_P, overrule
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.classifier.learned import LearnedModel
from orchestrator.classifier.learned_fit import (
    class_order,
    train_many,
)
from orchestrator.classifier.models import CalibrationFile, Classification, Rule, Thresholds
from orchestrator.classifier.parts import scan
from orchestrator.exceptions import UserError
from orchestrator.routes import FALLBACK, Route, RouteSpec

#: Grids of the threshold search.
SURE_GRID = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 1.01)
MIN_GRID = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
MARGIN_GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
#: Evidence flag: the text is over the scan limit (the fast tier does not decide it).
_LONG = 1 << 8
FAST_GRID = (0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999, 1.01)


@dataclass(frozen=True)
class Evidence:
    """What fitting needs of one tune request (see the module docstring)."""

    features: list[str]
    rules: Classification
    negated: bool
    cues: int = 0
    #: the decisive rules that fired outside a negation scope (:func:`~.decide.overrule`)
    decisive: tuple[Rule, ...] = ()
    #: ``(route, priority)`` of every route, for :func:`~.decide.overrule`
    ranking: tuple[tuple[Route, int], ...] = ()


def rules_only(
    rules_path: str | Path | None = None, routes: Sequence[RouteSpec] = ()
) -> RuleClassifier:
    """The classifier whose evidence fitting reads: the rules (the packaged ones when
    ``rules_path`` is None, with ``routes`` declared besides), no learned tier, no calibration,
    thresholds at zero, no hot reload."""
    return RuleClassifier(
        rules_path=rules_path,
        calibration_path=False,
        model_path=False,
        min_score=0.0,
        ambiguity_margin=0.0,
        reload_interval=None,
        routes=routes,
    )


def gather(clf: RuleClassifier, rows: Sequence[LabelledRequest]) -> list[Evidence]:
    """Rule evidence and learned features of each row (``clf`` must have no learned tier).

    Raises:
        UserError: ``clf`` has a learned tier (its decisions would not be the rules').
    """
    if clf.model is not None:
        raise UserError("gather() needs a rules-only classifier (model_path=False)")
    out = []
    compiled = clf._state.compiled
    limit = compiled.max_scan_chars
    decisive = {r.id: r for r in compiled.rules if r.decisive}
    for row in rows:
        feats, rules, negated = clf.evidence(row.to_request())
        cue = learned_tier.cues(learned_tier.window(scan(row.text, limit)[0]))
        if len(row.text) > limit:
            cue |= _LONG  # the fast tier leaves a text over the scan limit to the rules
        fired = tuple(
            decisive[s.rule_id] for s in rules.signals if s.rule_id in decisive and not s.negated
        )
        out.append(Evidence(feats, rules, negated, cue, fired, compiled.ranking))
    return out


def _fold_of(family: str, folds: int, seed: int) -> int:
    digest = hashlib.sha256(f"{seed}|{family}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % folds


def cross_fit(
    rows: Sequence[LabelledRequest],
    ev: Sequence[Evidence],
    *,
    folds: int = 5,
    seed: int = 0,
    classes: Sequence[Route] | None = None,
    workers: int = 1,
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold class probabilities of the combined and of the text-only (fast tier) model,
    each ``(rows, classes)`` in ``classes`` order (default: :func:`class_order` of the rows);
    folds grouped by phrasing family; the folds' models fitted in ``workers`` processes.

    Raises:
        UserError: Fewer than two folds hold rows.
    """
    probs, fast, _ = _cross_fit(rows, ev, folds, seed, classes, workers, final=False)
    return probs, fast


def _cross_fit(
    rows: Sequence[LabelledRequest],
    ev: Sequence[Evidence],
    folds: int,
    seed: int,
    classes: Sequence[Route] | None,
    workers: int,
    *,
    final: bool,
    row_weight: Sequence[float] | None = None,
) -> tuple[np.ndarray, np.ndarray, LearnedModel | None]:
    """:func:`cross_fit`, and with ``final`` the model of all rows too (fitted alongside)."""
    fold = np.array([_fold_of(r.family or r.id, folds, seed) for r in rows])
    if len(set(fold.tolist())) < 2:
        raise UserError("need rows of at least two phrasing families to cross-fit")
    classes = tuple(classes or class_order(r.route for r in rows))
    labels = [r.route for r in rows]
    probs = np.zeros((len(rows), len(classes)))
    fast = np.zeros((len(rows), len(classes)))
    fitted: list[tuple[np.ndarray, list[int]]] = []
    for k in sorted(set(fold.tolist())):
        train_idx = np.flatnonzero(fold != k)
        test_idx = np.flatnonzero(fold == k)
        if len({labels[i] for i in train_idx}) < len(classes):
            probs[test_idx] = fast[test_idx] = 1.0 / len(classes)
            continue
        fitted.append((test_idx, train_idx.tolist()))
    parts = [p for _, p in fitted] + ([list(range(len(rows)))] if final else [])
    docs = [e.features for e in ev]
    models = train_many(parts, docs, labels, classes, workers=workers, row_weight=row_weight)
    for (test_idx, _), model in zip(fitted, models, strict=False):
        for i in test_idx:
            probs[i] = model.probabilities(docs[i])
            fast[i] = model.probabilities(docs[i], combined=False)
    return probs, fast, models[-1] if final else None


def _fast(
    e: Evidence, q: np.ndarray, t: Thresholds, classes: Sequence[Route]
) -> tuple[Route, float] | None:
    """The fast tier's decision ``(route, p)``, or None when it hands the request on."""
    top = int(np.argmax(q))
    if e.cues & (learned_tier.NEGATION | learned_tier.SHORT | _LONG):
        return None
    routes = [float(q[i]) for i in range(len(classes)) if i != top and classes[i] != FALLBACK]
    if e.cues & learned_tier.COMPOUND and max(routes, default=0.0) >= COMPOUND_P:
        return None
    if float(q[top]) < t.fast_min:
        return None
    if e.decisive:  # a decisive rule may overrule it: the classifier hands such a text on
        c = classes[top]
        if any(
            (c == FALLBACK and not r.negative) or (r.negative and r.route == c) for r in e.decisive
        ):
            return None
    if e.cues & learned_tier.FEW and classes[top] != FALLBACK:
        rules = e.rules.tier("rules")  # a few words that the rules tie on: the rules call it
        top2 = sorted(rules.scores.values(), reverse=True) if rules is not None else []
        if len(top2) > 1 and top2[0] > 0.0 and top2[0] == top2[1]:
            return None
    return classes[top], float(q[top])


def _decide(
    e: Evidence, p: np.ndarray, q: np.ndarray, t: Thresholds, classes: Sequence[Route]
) -> tuple[Route, str, float]:
    """``(route, tier, raw score)``, the way :class:`RuleClassifier` decides; ``tier`` is
    ``fast``, ``rules`` or ``learned``; ``p`` and ``q`` in ``classes`` order."""
    fast = _fast(e, q, t, classes)
    if fast is not None:
        return fast[0], "fast", fast[1]
    rules = e.rules
    scores = rules.tier("rules")
    ranked = list(scores.scores.items()) if scores is not None else []
    (best, s1), (_, s2) = ranked[0], (*ranked, (FALLBACK, 0.0))[1]
    if rules.secondary_routes:
        return rules.route, "learned", 1.0
    if (s1 >= t.sure_score and s2 <= 0.0 and not e.negated) or (e.cues & _LONG and s1 > 0.0):
        if s1 > 0.0 and s1 == s2:
            return FALLBACK, "rules", s1
        if s1 < t.min_score or s1 - s2 < t.ambiguity_margin:
            return FALLBACK, "rules", s1
        return best, "rules", s1 - s2
    order = np.argsort(-p, kind="stable")
    c1 = classes[order[0]]
    p1, p2 = float(p[order[0]]), float(p[order[1]])
    p_fallback = float(p[classes.index(FALLBACK)])
    tie = s1 > 0.0 and s1 == s2
    route = c1
    if tie or c1 == FALLBACK or p1 < t.min_score or p1 - p2 < t.ambiguity_margin:
        route = FALLBACK
    if e.decisive and not tie:
        overruled = overrule(
            route, dict(zip(classes, p.tolist(), strict=True)), e.decisive, e.ranking, dict(ranked)
        )
        if overruled is not None:
            return overruled[0], "decisive", overruled[1].weight
    if route == FALLBACK:
        return FALLBACK, "learned", p_fallback
    return c1, "learned", p1 - p2


class _SlowTable:
    """What :func:`_decide` decides without the fast tier, for every row at once: the few
    outcomes a row can have are worked out once, so each point of the threshold grid costs a
    handful of numpy operations instead of a Python call per row (the search had taken most of
    a fit's time). :meth:`costs` gives what ``_decide`` with ``fast_min`` above 1 gives."""

    def __init__(
        self,
        rows: Sequence[LabelledRequest],
        ev: Sequence[Evidence],
        probs: np.ndarray,
        classes: Sequence[Route],
        costs: tuple[float, float],
    ) -> None:
        wrong, handoff = costs

        def price(truth: Route, decided: Route) -> float:
            return cost(truth, decided, wrong_route=wrong, handoff=handoff)

        cols: dict[str, list[float]] = defaultdict(list)
        for row, e, p in zip(rows, ev, probs, strict=True):
            scores = e.rules.tier("rules")
            ranked = list(scores.scores.items()) if scores is not None else []
            (best, s1), (_, s2) = ranked[0], (*ranked, (FALLBACK, 0.0))[1]
            order = np.argsort(-p, kind="stable")
            c1, p1, p2 = classes[order[0]], float(p[order[0]]), float(p[order[1]])
            tie = s1 > 0.0 and s1 == s2
            as_fb, as_c1 = FALLBACK, c1
            if e.decisive and not tie:
                named = dict(zip(classes, p.tolist(), strict=True))
                said = dict(ranked)
                as_fb = (overrule(FALLBACK, named, e.decisive, e.ranking, said) or (FALLBACK,))[0]
                as_c1 = (overrule(c1, named, e.decisive, e.ranking, said) or (c1,))[0]
            for key, value in (
                ("secondary", float(bool(e.rules.secondary_routes))),
                ("cost_secondary", price(row.route, e.rules.route)),
                ("s1", s1),
                ("s2", s2),
                ("alone", float(s2 <= 0.0 and not e.negated)),
                ("long", float(bool(e.cues & _LONG) and s1 > 0.0)),
                ("tie", float(tie)),
                ("c1_fallback", float(c1 == FALLBACK)),
                ("p1", p1),
                ("p2", p2),
                ("cost_rules_fb", price(row.route, FALLBACK)),
                ("cost_rules_best", price(row.route, best)),
                ("cost_learned_fb", price(row.route, as_fb)),
                ("cost_learned_c1", price(row.route, as_c1 if c1 != FALLBACK else as_fb)),
            ):
                cols[key].append(value)
        self.a = {k: np.array(v) for k, v in cols.items()}
        for flag in ("secondary", "alone", "long", "tie", "c1_fallback"):
            self.a[flag] = self.a[flag].astype(bool)

    def costs(self, t: Thresholds) -> tuple[np.ndarray, np.ndarray]:
        """Each row's decision cost under ``t`` (no fast tier), and whether the rules decided
        it alone."""
        a = self.a
        s1, s2, p1, p2 = a["s1"], a["s2"], a["p1"], a["p2"]
        rules = ~a["secondary"] & (((s1 >= t.sure_score) & a["alone"]) | a["long"])
        rules_fb = a["tie"] | (s1 < t.min_score) | (s1 - s2 < t.ambiguity_margin)
        learned_fb = (
            a["tie"] | a["c1_fallback"] | (p1 < t.min_score) | (p1 - p2 < t.ambiguity_margin)
        )
        learned = np.where(learned_fb, a["cost_learned_fb"], a["cost_learned_c1"])
        by_rules = np.where(rules_fb, a["cost_rules_fb"], a["cost_rules_best"])
        slow = np.where(rules, by_rules, learned)
        return np.where(a["secondary"], a["cost_secondary"], slow), rules


def cost(truth: Route, decided: Route, *, wrong_route: float, handoff: float) -> float:
    """Cost of one decision: 0 right, ``handoff`` for a needless fallback, else ``wrong_route``."""
    if decided == truth:
        return 0.0
    if decided == FALLBACK:
        return handoff
    return wrong_route


def fit_decisions(
    rows: Sequence[LabelledRequest],
    ev: Sequence[Evidence],
    probs: np.ndarray,
    fast_probs: np.ndarray | None = None,
    *,
    wrong_route: float = 5.0,
    handoff: float = 1.0,
    fitted_on: str = "",
    rules_sha: str = "",
    classes: Sequence[Route] | None = None,
) -> CalibrationFile:
    """Thresholds by cost and calibration maps, from out-of-fold probabilities.

    ``fast_min`` is searched on :data:`FAST_GRID` (the fast tier's decision depends on it
    alone), the other three thresholds on their grids; the cost of a row is its fast decision's
    when the fast tier decides, else the rules' or learned tier's. Equal cost: the larger share
    of fast-tier decisions wins, then the larger share of rules-alone decisions.

    Args:
        probs: Out-of-fold probabilities of the combined model (:func:`cross_fit`).
        fast_probs: Those of the text-only model (the fast tier); None: no fast tier
            (``fast_min`` above 1).
        classes: The columns' routes (default: :func:`class_order` of the rows).

    Raises:
        UserError: No rows, or costs that do not make a wrong route dearer than a handoff.
    """
    if not rows:
        raise UserError("no labelled requests to fit on")
    if not wrong_route > handoff > 0:
        raise UserError(
            f"costs must satisfy wrong_route > handoff > 0 (got {wrong_route}, {handoff}): "
            "a wrong route costs more than a handoff to a person"
        )
    n = len(rows)
    classes = tuple(classes or class_order(r.route for r in rows))
    q = fast_probs if fast_probs is not None else np.zeros_like(probs)
    grid = FAST_GRID if fast_probs is not None else (1.01,)
    # the fast tier's candidate decision per row: (route, p) when its cues allow it to decide
    everyone = Thresholds(fast_min=0.0)
    fast = [_fast(e, qi, everyone, classes) for e, qi in zip(ev, q, strict=True)]
    fast_p = np.array([f[1] if f is not None else -1.0 for f in fast])
    fast_cost = np.array(
        [
            cost(r.route, f[0], wrong_route=wrong_route, handoff=handoff) if f is not None else 0.0
            for r, f in zip(rows, fast, strict=True)
        ]
    )
    best: tuple[tuple[float, float, float], Thresholds] | None = None
    table = _SlowTable(rows, ev, probs, classes, (wrong_route, handoff))
    for sure, m, g in product(SURE_GRID, MIN_GRID, MARGIN_GRID):
        t = Thresholds(min_score=m, ambiguity_margin=g, sure_score=sure, fast_min=1.01)
        slow_cost, by_rules = table.costs(t)
        for fm in grid:
            use = fast_p >= fm
            total = float(np.where(use, fast_cost, slow_cost).sum())
            key = (round(total / n, 9), -float(use.mean()), -float((by_rules & ~use).mean()))
            if best is None or key < best[0]:
                best = (key, t.model_copy(update={"fast_min": fm}))
    assert best is not None
    thresholds = best[1]
    maps: dict[str, dict[Route, tuple[list[float], list[bool]]]] = {
        tier: defaultdict(lambda: ([], [])) for tier in ("fast", "rules", "learned", "decisive")
    }
    right = 0
    for row, e, p, qi in zip(rows, ev, probs, q, strict=True):
        route, tier, raw = _decide(e, p, qi, thresholds, classes)
        maps[tier][route][0].append(raw)
        maps[tier][route][1].append(route == row.route)
        right += route == row.route
    (mean_cost, fast_share, rules_share), _ = best
    overruled = [ok for _, oks in maps["decisive"].values() for ok in oks]
    decisive_note = (
        f", decisive rules overrule {len(overruled)} (right {sum(overruled)})" if overruled else ""
    )
    return CalibrationFile(
        thresholds=thresholds,
        maps={r: fit_isotonic(x, ok) for r, (x, ok) in maps["rules"].items()},
        learned_maps={r: fit_isotonic(x, ok) for r, (x, ok) in maps["learned"].items()},
        fast_maps={r: fit_isotonic(x, ok) for r, (x, ok) in maps["fast"].items()},
        fitted_on=(
            f"{fitted_on}; out-of-fold accuracy {right / n:.4f}, mean cost {mean_cost:.4f}, "
            f"fast tier decides {-fast_share:.1%}, rules alone {-rules_share:.1%}" + decisive_note
        ),
        rules_sha=rules_sha,
        cost={"wrong_route": wrong_route, "handoff": handoff},
    )


def fit_all(
    rows: Sequence[LabelledRequest],
    *,
    rules_path: str | None = None,
    folds: int = 5,
    seed: int = 0,
    wrong_route: float = 5.0,
    handoff: float = 1.0,
    fitted_on: str = "",
    routes: Sequence[RouteSpec] = (),
    workers: int = 1,
    row_weight: Sequence[float] | None = None,
    oof_out: Path | None = None,
) -> tuple[LearnedModel, CalibrationFile]:
    """Fit the learned tier and the calibration on ``rows`` (the tune split only).

    ``routes``: routes declared outside the rules file (a workflow package's
    :class:`~orchestrator.routes.RouteSpec`): their rules join the rules file's. The model's
    classes are the routes of ``rows`` in declared order, then ``fallback``. The folds' models
    and the final one are fitted in ``workers`` processes (the same models either way);
    ``row_weight``: a weight per row for the model fits (:func:`~.learned_fit.train`);
    ``oof_out``: where to write the rows' out-of-fold logits (:mod:`.oof`, which ``fit
    --examples`` checks its budget on), when given.

    Raises:
        UserError: A row of the held-out split is passed, or see :func:`fit_decisions`.
    """
    held = [r.id for r in rows if r.split == "test"]
    if held:
        raise UserError(
            f"{len(held)} rows of the held-out test split were passed (e.g. {held[0]}); "
            "fit on the tune split only"
        )
    clf = rules_only(rules_path, routes)
    ev = gather(clf, rows)
    classes = class_order((r.route for r in rows), clf._state.compiled.routes)
    probs, fast_probs, model = _cross_fit(
        rows, ev, folds, seed, classes, workers, final=True, row_weight=row_weight
    )
    assert model is not None
    if oof_out is not None:
        from orchestrator.classifier.oof import OutOfFold

        OutOfFold.of(rows, probs, fast_probs, classes).save(oof_out)
    calibration = fit_decisions(
        rows,
        ev,
        probs,
        fast_probs,
        wrong_route=wrong_route,
        handoff=handoff,
        fitted_on=fitted_on,
        rules_sha=clf.version,
        classes=classes,
    )
    model.meta.update(
        {"trained_on": fitted_on, "rules_sha": clf.version, "seed": seed, "folds": folds}
    )
    return model, calibration
