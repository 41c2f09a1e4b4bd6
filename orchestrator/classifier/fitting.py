"""Fit the learned tier and the decision thresholds, from the tune split only.

``orchestrator classifier fit`` runs :func:`fit_all`:

1. **Evidence.** Every tune request goes through the rules (no learned tier): the rule scores,
   whether the rules tie, negations, a compound split, and the learned tier's features.
2. **Cross-fitting.** The tune split is cut into ``folds`` groups *by phrasing family* (rows
   that share a wrapper, an ask text or an intent stay together); a model fitted on the other
   folds predicts each fold. Thresholds and calibration are fitted on these out-of-fold
   probabilities, so they see the model on phrasings it was not trained on, as in use.
3. **Thresholds by cost.** ``sure_score`` (rules decide alone), ``min_score`` and
   ``ambiguity_margin`` (on the learned tier's probabilities) are chosen on a grid to minimise
   the mean decision cost: a wrong route costs ``wrong_route`` (default 5), a handoff of a
   request that had a right route costs ``handoff`` (default 1), a right decision 0. Equal cost:
   the larger ``sure_score`` share of fast-path decisions wins, then the smaller thresholds.
   The grid has no zero: ``low_confidence`` and ``ambiguous`` can fire, and a tie never acts.
4. **Calibration.** Isotonic maps (:func:`~orchestrator.classifier.calibration.fit_isotonic`)
   from the raw score to the observed rate of right decisions: per route for fast-path
   decisions (``maps``; raw = best rule score minus runner-up) and for learned decisions
   (``learned_maps``; raw = best probability minus runner-up, or the fallback probability).
5. **The model** is then fitted on the whole tune split and written next to the rules.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

import numpy as np

from orchestrator.classifier import learned as learned_tier
from orchestrator.classifier.calibration import fit_isotonic
from orchestrator.classifier.core import RuleClassifier
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.classifier.learned import CLASSES, LearnedModel, train
from orchestrator.classifier.models import CalibrationFile, Classification, Thresholds
from orchestrator.exceptions import UserError
from orchestrator.routes import Route

#: Grids of the threshold search.
SURE_GRID = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 1.01)
MIN_GRID = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
MARGIN_GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


@dataclass(frozen=True)
class Evidence:
    """What fitting needs of one tune request (see the module docstring)."""

    features: list[str]
    rules: Classification
    negated: bool


def gather(clf: RuleClassifier, rows: Sequence[LabelledRequest]) -> list[Evidence]:
    """Rule evidence and learned features of each row (``clf`` must have no learned tier).

    Raises:
        UserError: ``clf`` has a learned tier (its decisions would not be the rules').
    """
    if clf.model is not None:
        raise UserError("gather() needs a rules-only classifier (model_path=False)")
    out = []
    for row in rows:
        feats, rules, negated = clf.evidence(row.to_request())
        out.append(Evidence(feats, rules, negated))
    return out


def _fold_of(family: str, folds: int, seed: int) -> int:
    digest = hashlib.sha256(f"{seed}|{family}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % folds


def cross_fit(
    rows: Sequence[LabelledRequest], ev: Sequence[Evidence], *, folds: int = 5, seed: int = 0
) -> np.ndarray:
    """Out-of-fold class probabilities, ``(rows, 4)`` in :data:`CLASSES` order, grouped by family.

    Raises:
        UserError: Fewer than two folds hold rows.
    """
    fold = np.array([_fold_of(r.family or r.id, folds, seed) for r in rows])
    if len(set(fold.tolist())) < 2:
        raise UserError("need rows of at least two phrasing families to cross-fit")
    probs = np.zeros((len(rows), len(CLASSES)))
    for k in sorted(set(fold.tolist())):
        train_idx = np.flatnonzero(fold != k)
        test_idx = np.flatnonzero(fold == k)
        labels = [rows[i].route for i in train_idx]
        if len(set(labels)) < len(CLASSES):
            probs[test_idx] = 1.0 / len(CLASSES)
            continue
        model = train([ev[i].features for i in train_idx], labels)
        for i in test_idx:
            probs[i] = model.probabilities(ev[i].features)
    return probs


def _decide(e: Evidence, p: np.ndarray, t: Thresholds) -> tuple[Route, bool, float]:
    """``(route, fast_path, raw score)``, the way :class:`RuleClassifier` decides."""
    rules = e.rules
    ranked = list(rules.tiers[0].scores.items())
    (best, s1), (_, s2) = ranked[0], ranked[1]
    if rules.secondary_routes:
        return rules.route, False, 1.0
    if s1 >= t.sure_score and s2 <= 0.0 and not e.negated:
        if s1 < t.min_score:
            return Route.FALLBACK, True, s1
        return best, True, s1 - s2
    order = np.argsort(-p, kind="stable")
    c1 = CLASSES[order[0]]
    p1, p2 = float(p[order[0]]), float(p[order[1]])
    p_fallback = float(p[CLASSES.index(Route.FALLBACK)])
    tie = s1 > 0.0 and s1 == s2
    if tie or c1 is Route.FALLBACK or p1 < t.min_score or p1 - p2 < t.ambiguity_margin:
        return Route.FALLBACK, False, p_fallback
    return c1, False, p1 - p2


def cost(truth: Route, decided: Route, *, wrong_route: float, handoff: float) -> float:
    """Cost of one decision: 0 right, ``handoff`` for a needless fallback, else ``wrong_route``."""
    if decided == truth:
        return 0.0
    if decided is Route.FALLBACK:
        return handoff
    return wrong_route


def fit_decisions(
    rows: Sequence[LabelledRequest],
    ev: Sequence[Evidence],
    probs: np.ndarray,
    *,
    wrong_route: float = 5.0,
    handoff: float = 1.0,
    fitted_on: str = "",
    rules_sha: str = "",
) -> CalibrationFile:
    """Thresholds by cost and calibration maps, from out-of-fold probabilities.

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
    best: tuple[float, float, Thresholds] | None = None
    for sure, m, g in product(SURE_GRID, MIN_GRID, MARGIN_GRID):
        t = Thresholds(min_score=m, ambiguity_margin=g, sure_score=sure)
        total, fast = 0.0, 0
        for row, e, p in zip(rows, ev, probs, strict=True):
            route, is_fast, _ = _decide(e, p, t)
            total += cost(row.route, route, wrong_route=wrong_route, handoff=handoff)
            fast += is_fast
        key = (total / len(rows), -fast / len(rows))
        if best is None or key < (best[0], best[1]):
            best = (key[0], key[1], t)
    assert best is not None
    thresholds = best[2]
    fast_maps: dict[Route, tuple[list[float], list[bool]]] = defaultdict(lambda: ([], []))
    slow_maps: dict[Route, tuple[list[float], list[bool]]] = defaultdict(lambda: ([], []))
    right = 0
    for row, e, p in zip(rows, ev, probs, strict=True):
        route, is_fast, raw = _decide(e, p, thresholds)
        target = fast_maps if is_fast else slow_maps
        target[route][0].append(raw)
        target[route][1].append(route == row.route)
        right += route == row.route
    return CalibrationFile(
        thresholds=thresholds,
        maps={r: fit_isotonic(x, ok) for r, (x, ok) in fast_maps.items()},
        learned_maps={r: fit_isotonic(x, ok) for r, (x, ok) in slow_maps.items()},
        fitted_on=(
            f"{fitted_on}; out-of-fold accuracy {right / len(rows):.4f}, "
            f"mean cost {best[0]:.4f}, fast path {-best[1]:.1%}"
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
) -> tuple[LearnedModel, CalibrationFile]:
    """Fit the learned tier and the calibration on ``rows`` (the tune split only).

    Raises:
        UserError: A row of the held-out split is passed, or see :func:`fit_decisions`.
    """
    held = [r.id for r in rows if r.split == "test"]
    if held:
        raise UserError(
            f"{len(held)} rows of the held-out test split were passed (e.g. {held[0]}); "
            "fit on the tune split only"
        )
    clf = RuleClassifier(
        rules_path=rules_path,
        calibration_path=False,
        model_path=False,
        min_score=0.0,
        ambiguity_margin=0.0,
        reload_interval=None,
    )
    ev = gather(clf, rows)
    probs = cross_fit(rows, ev, folds=folds, seed=seed)
    calibration = fit_decisions(
        rows,
        ev,
        probs,
        wrong_route=wrong_route,
        handoff=handoff,
        fitted_on=fitted_on,
        rules_sha=clf.version,
    )
    model = train(
        [e.features for e in ev],
        [r.route for r in rows],
        meta={
            "trained_on": fitted_on,
            "rules_sha": clf.version,
            "seed": seed,
            "folds": folds,
            "window": learned_tier.WINDOW,
        },
    )
    return model, calibration
