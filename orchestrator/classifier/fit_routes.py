"""New routes onto a fitted learned tier: what ``orchestrator classifier fit --examples`` runs
(:func:`fit_new_routes`), split out of :mod:`orchestrator.classifier.fitting` (at the 800-line
limit); the evidence, decision and calibration parts it shares with the full fit stay there."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from itertools import product

import numpy as np

from orchestrator.classifier.calibration import fit_isotonic
from orchestrator.classifier.fitting import Evidence, _decide, _fold_of, gather, rules_only
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.classifier.learned import LearnedModel
from orchestrator.classifier.learned_fit import (
    ColumnDesign,
    anchored,
    class_order,
    column_design,
    column_logits,
    extended_model,
    fit_columns,
    softmax,
)
from orchestrator.classifier.models import CalibrationFile, Thresholds
from orchestrator.classifier.oof import OutOfFold
from orchestrator.exceptions import UserError
from orchestrator.routes import FALLBACK, Route, RouteSpec

#: A Chinese character (a declared row's language).
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


# ---------------------------------------------------------------- new routes on a fitted model
#
# ``fit --examples`` adds the user's routes to the packaged learned tier instead of refitting
# it: the built-in routes' weights, thresholds and calibration maps are the packaged ones
# (fitted once on the ~6,000 built-in tune rows); only one new column of weights per new route
# is fitted, with the built-in columns held fixed (a softmax whose other logits are
# constants). That is a few thousand weights instead of half a million: seconds, not minutes,
# and the built-in routes change only where a new route's probability takes their place.
#
# A few dozen examples (fewshot49): a user's route is a part of what the built-ins call
# fallback, so its logit is fallback's plus an offset over its own examples' features; a
# request the packaged model gives to a built-in route keeps a low fallback logit. Such a
# column is sure of the phrasings it saw and unsure of new ones (held-out misses fell back at
# p ~0.1-0.4 < min_score 0.6), so its bias is lifted (:func:`_lift`) as far as the built-in
# rows' out-of-fold decisions allow: a per-route threshold, chosen by cost like the packaged
# ones, with decide.py unchanged. Tried and not kept: see the results file below.

#: L2 penalty of a new route's weights (sample weights sum to 1, as in :func:`.learned_fit.train`);
#: chosen by cross-validation (examples' folds, and built-in rows' decisions on a half the
#: column was not fitted on; benchmarks/results/classifier_fit_examples_2026-12-05c.md).
NEW_L2 = 1e-5
#: Share of the total row weight that a new route's examples carry together.
NEW_SHARE = 0.6
#: Bias lifts (logit units) :func:`_lift` chooses from, per new route.
NEW_LIFT_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0)
#: Scales of a new route's offset over fallback (:func:`recalibrated`) :func:`_lift` chooses from.
NEW_SCALE_GRID = (1.0, 1.5, 2.0, 3.0)
#: Share of the built-in rows whose out-of-fold decision a lift may change.
NEW_BUDGET = 0.001
#: Least share of a new route's examples' probability that makes a base class part of the
#: route's anchor (:func:`anchors`).
ANCHOR_MIN = 0.1
#: The source of the user's own fallback rows (:func:`~.examples.read_examples`): hard
#: negatives of the new columns (:func:`_new_weights`; on 12 spent routes, 3 more of 48 near
#: misses kept and 1 more of 172 phrasings routed; benchmarks/results/
#: classifier_fit_examples_2026-12-06e.md).
_USER_FALLBACK = f"examples/{FALLBACK}"


def _new_weights(
    labels: Sequence[Route], new: Sequence[Route], share: float, hard: np.ndarray | None = None
) -> np.ndarray:
    """1 per row, except a new route's rows: together ``share`` of all the rows' weight; and
    the ``hard`` rows (bool per row: the user's own fallback rows, near misses among them),
    each as much as a new route's row on average, so that they teach the new columns what is
    not theirs instead of weighing 1 among thousands of built-in rows."""
    weight = np.ones(len(labels))
    for route in new:
        mine = np.array([r == route for r in labels])
        weight[mine] = share * len(labels) / mine.sum()
    ours = np.array([r in new for r in labels], dtype=bool)
    if hard is not None and hard.any() and ours.any():
        weight[hard] = weight[ours].mean()
    return weight


def _fit_new(
    design: ColumnDesign,
    rows: Sequence[int] | np.ndarray,
    y: np.ndarray,
    sw: np.ndarray,
    mask: np.ndarray,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The new columns of the combined and of the text-only model, fitted on ``rows``."""
    idx = np.asarray(rows)
    out = []
    for fixed, x in zip(design.fixed, design.x, strict=True):
        out.append(fit_columns(fixed[idx], x[idx], y[idx], sw[idx], mask, NEW_L2, design.anchor))
    return out[0], out[1]


def anchors(
    fixed: np.ndarray, labels: Sequence[Route], new: Sequence[Route], learn_from: Sequence[int]
) -> np.ndarray:
    """``(base classes, len(new))``: where the fitted model sends each new route's own
    examples (``fixed``: its logits, ``(rows, base classes)``): the mean of its probabilities
    over the route's rows of ``learn_from``, classes under :data:`ANCHOR_MIN` dropped, the rest
    summing to 1. A route carved out of customer service (gift cards, points) is an offset
    over customer service's logit, one that the built-ins call fallback over fallback's: the
    offset then learns what tells the route from its parent, and a phrasing of the topic
    without the examples' words keeps the parent's share instead of none."""
    out = np.zeros((fixed.shape[1], len(new)))
    for j, route in enumerate(new):
        own = [i for i in learn_from if labels[i] == route]
        mean = softmax(fixed[own]).mean(axis=0) if own else np.eye(fixed.shape[1])[-1]
        mean[mean < ANCHOR_MIN] = 0.0
        if mean.sum() <= 0.0:
            mean[-1] = 1.0
        out[:, j] = mean / mean.sum()
    return out


def _own_features(
    cols: Sequence[str], docs: Sequence[Sequence[str]], labels: Sequence[Route], new, learn_from
) -> np.ndarray:
    """``(len(cols), len(new))`` bool: a new route's column weighs the features of its own
    examples only (not those of the user's other rows)."""
    at = {f: j for j, f in enumerate(cols)}
    mask = np.zeros((len(cols), len(new)), dtype=bool)
    for k, route in enumerate(new):
        for i in learn_from:
            if labels[i] == route:
                mask[[at[f] for f in docs[i] if f in at], k] = True
    return mask


def recalibrated(
    z: np.ndarray,
    new_at: int,
    scales: np.ndarray,
    lifts: np.ndarray,
    anchor: np.ndarray | None = None,
) -> np.ndarray:
    """Logits ``z`` ``(..., classes)`` with each new route's offset over its anchor (columns
    ``new_at`` onward, fallback last; ``anchor`` ``(base classes, new)`` mixes the other
    columns, :func:`anchors`; None: fallback's) scaled and lifted:
    ``a + scale * (z - a) + lift``."""
    z = np.array(z, dtype=np.float64, copy=True)
    n = len(scales)
    if anchor is None:
        a = np.repeat(z[..., -1:], n, axis=-1)
    else:
        a = np.concatenate([z[..., :new_at], z[..., new_at + n :]], axis=-1) @ anchor
    for j, (scale, lift) in enumerate(zip(scales, lifts, strict=True)):
        z[..., new_at + j] = a[..., j] + scale * (z[..., new_at + j] - a[..., j]) + lift
    return z


def _lift(
    rows: Sequence[LabelledRequest],
    ev: Sequence[Evidence],
    logits: tuple[np.ndarray, np.ndarray],
    classes: Sequence[Route],
    t: Thresholds,
    new: Sequence[Route],
    anchor: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(scales, lifts)``, each ``(len(new),)``: per new route, the scale of its offset over
    fallback (:data:`NEW_SCALE_GRID`) and its bias lift (:data:`NEW_LIFT_GRID`, logits) that
    route most of the user's rows right (``logits``: out-of-fold, combined and text-only,
    ``(rows, classes)``; :func:`recalibrated`) while at most :data:`NEW_BUDGET` of the built-in
    rows change decision against the model without new columns (rows whose new-route
    probability stays under 0.02 at every setting are taken as unchanged); ties: the smaller
    scale, then the smaller lift. A scale over 1 sharpens the column: sure where a text has
    its examples' words, no surer where it has none (a lift raises both)."""
    zc, zt = logits
    mine = np.array([r.source.startswith("examples/") for r in rows])
    k0 = len(classes) - 1 - len(new)
    keep = [i for i in range(len(classes)) if not k0 <= i < k0 + len(new)]
    base = [classes[i] for i in keep]
    budget = NEW_BUDGET * (len(rows) - mine.sum())
    scales, lifts = np.ones(len(new)), np.zeros(len(new))
    for j in range(len(new)):
        col, one = k0 + j, np.eye(len(new))[j]
        extremes = [
            softmax(recalibrated(zc, k0, np.where(one, s, 1.0), one * max(NEW_LIFT_GRID), anchor))
            for s in NEW_SCALE_GRID
        ]
        reach = np.max([x[:, col] for x in extremes], axis=0)
        own = np.flatnonzero(mine)
        # the built-in rows a setting may move, likeliest first (a setting over the budget is
        # found out early); the user's rows first: a setting that routes no more of them than
        # the best so far cannot win, and its built-in rows are not decided at all
        others = [
            int(i) for i in np.argsort(-reach, kind="stable") if not mine[i] and reach[i] >= 0.02
        ]
        ref = {
            i: _decide(ev[i], softmax(zc[i, keep]), softmax(zt[i, keep]), t, base)[0]
            for i in others
        }
        best = (-1, 1.0, 0.0)  # none within the budget: the column as fitted
        for scale, lift in product(NEW_SCALE_GRID, NEW_LIFT_GRID):
            sc, lf = np.where(one, scale, scales), np.where(one, lift, lifts)

            def decided(i: int, sc: np.ndarray = sc, lf: np.ndarray = lf) -> Route:
                p = softmax(recalibrated(zc[i], k0, sc, lf, anchor))
                q = softmax(recalibrated(zt[i], k0, sc, lf, anchor))
                return _decide(ev[i], p, q, t, classes)[0]

            right = sum(decided(i) == rows[i].route for i in own)
            if right <= best[0]:
                continue
            changed = 0
            for i in others:
                changed += decided(i) != ref[i]
                if changed > budget:
                    break
            if changed <= budget:
                best = (right, scale, lift)
        scales[j], lifts[j] = best[1], best[2]
    return scales, lifts


def fit_new_routes(
    rows: Sequence[LabelledRequest],
    base: LearnedModel,
    base_calibration: CalibrationFile,
    *,
    rules_path: str | None = None,
    routes: Sequence[RouteSpec] = (),
    folds: int = 5,
    fitted_on: str = "",
    oof: OutOfFold | None = None,
) -> tuple[LearnedModel, CalibrationFile]:
    """Add the routes of ``rows`` that ``base`` lacks to the fitted model ``base``.

    The base model's weights, the calibration's thresholds and its maps stay as they are; each
    new route gets a column: fallback's logit plus weights over the features of its own
    examples (:data:`NEW_L2`, its rows weighing :data:`NEW_SHARE` of all together, the user's
    fallback rows each as much as one of them), fitted
    with the base columns fixed, then its bias lifted as far as the built-in rows allow
    (:func:`_lift`; the lifts in ``meta["lifts"]``, logit units). Calibration maps for each
    new route come from decisions (:func:`_decide`, the base thresholds) on out-of-fold
    probabilities of every row (``folds`` folds by phrasing family), lift included. Each new
    route also learns from its own declaration (:func:`declared_rows`: description, keywords,
    example utterances), and ``meta["overlaps"]`` holds a warning per new route that overlaps
    a built-in route's territory (:func:`overlaps`; empty when none).

    Args:
        rows: The built-in tune rows and the user's fitting rows (``source`` ``examples/...``).
        base: The fitted model (fallback its last class).
        base_calibration: Its calibration.
        oof: ``base``'s out-of-fold logits on its own tune rows (:mod:`.oof`): the lift's
            budget is checked on them where ``rows`` has such a row (:func:`budget_logits`);
            None: on ``base``'s logits, which are sure of the rows it was fitted on.

    Raises:
        UserError: A held-out row, no route new to ``base``, a base class not declared, or
            ``oof`` of other classes than ``base``'s.
    """
    clf = rules_only(rules_path, routes)
    declared = set(clf._state.compiled.routes) | {FALLBACK}
    new = [r for r in class_order(r.route for r in rows) if r not in base.classes]
    _check_new(rows, base, new, declared)
    rows = [*rows, *declared_rows([s for s in clf.route_specs if s.name in new])]
    ev = gather(clf, rows)
    docs = [e.features for e in ev]
    labels = [r.route for r in rows]
    learn_from = [i for i, r in enumerate(rows) if r.source.startswith("examples/")]
    vocab, design = column_design(base, docs, learn_from)
    design = replace(design, anchor=anchors(design.fixed[0], labels, new, learn_from))
    classes = (*base.classes[:-1], *new, FALLBACK)
    k0 = len(base.classes) - 1
    y = np.array([classes.index(r) for r in labels])
    mask = _own_features(design.cols, docs, labels, new, learn_from)
    sw = _new_weights(labels, new, NEW_SHARE, np.array([r.source == _USER_FALLBACK for r in rows]))
    fitted = _fit_new(design, range(len(rows)), y, sw, mask)
    zc, zt = column_logits(design, fitted)
    fold = np.array([_fold_of(r.family or r.id, folds, 0) for r in rows])
    for k in range(folds):  # out-of-fold logits of every row
        test = np.flatnonzero(fold == k)
        if len(test):
            train = np.flatnonzero(fold != k)
            pc, pt = column_logits(design, _fit_new(design, train, y, sw, mask))
            zc[test], zt[test] = pc[test], pt[test]
    scales, lifts = _lift(
        rows,
        ev,
        budget_logits(rows, (zc, zt), design, base, oof),
        classes,
        base_calibration.thresholds,
        new,
        design.anchor,
    )
    (wc, bc), (wt, bt) = fitted
    fitted = ((wc * scales, bc * scales + lifts), (wt * scales, bt * scales + lifts))
    zc, zt = (recalibrated(z, k0, scales, lifts, design.anchor) for z in (zc, zt))
    probs, fast = softmax(zc), softmax(zt)
    model = extended_model(base, vocab, design, fitted, new)
    model.meta.update({"trained_on": fitted_on, "rules_sha": clf.version, "new_routes": new})
    model.meta["lifts"] = lifts.tolist()
    model.meta["scales"] = scales.tolist()
    model.meta["overlaps"] = overlaps(rows, ev, (zc, zt), classes, base_calibration, new)
    calibration = _new_maps(rows, ev, probs, fast, classes, base_calibration, set(new))
    calibration = calibration.model_copy(update={"rules_sha": clf.version, "fitted_on": fitted_on})
    return model, calibration


def budget_logits(
    rows: Sequence[LabelledRequest],
    logits: tuple[np.ndarray, np.ndarray],
    design: ColumnDesign,
    base: LearnedModel,
    oof: OutOfFold | None,
) -> tuple[np.ndarray, np.ndarray]:
    """``logits`` (combined, text-only, ``(rows, classes)``, the new columns before fallback)
    with the base columns of each row that ``oof`` has replaced by its out-of-fold ones, and
    the new columns moved with their anchor (a new column is its anchor's logit plus an
    offset, :func:`~.learned_fit.column_logits`; the offset is kept). Rows it lacks (the
    user's examples, which ``base`` never saw) keep theirs; None: ``logits`` as given."""
    if oof is None:
        return logits
    found, *base_oof = oof.lookup(rows, base.classes)
    if not found.any():
        return logits
    k0 = len(base.classes) - 1
    out = []
    for z, fixed, other in zip(logits, design.fixed, base_oof, strict=True):
        n = z.shape[1] - len(base.classes)
        offset = z[:, k0 : k0 + n] - anchored(fixed, design.anchor, n)
        moved = np.concatenate(
            [other[:, :-1], anchored(other, design.anchor, n) + offset, other[:, -1:]], axis=1
        )
        out.append(np.where(found[:, None], moved, z))
    return out[0], out[1]


#: Separators of a description's clauses (:func:`declared_rows`).
_CLAUSE = re.compile(r"[:;,.!?()，。；：、！？（）]|\s(?:and|or)\s")


def declared_rows(specs: Sequence[RouteSpec]) -> list[LabelledRequest]:
    """Rows learnt beside each route's examples, from its own declaration: the clauses of its
    description (cut at punctuation, "and" and "or"; of at least 4 characters), its positive
    rules' keywords (a stem's ``*`` dropped) and its declared example utterances. A user names
    the topic's words there ("repairs", "proof of purchase") that a few dozen examples may
    lack; cross-validation on the examples of three routes routed 4 more of 108 with them
    (benchmarks/results/classifier_fit_examples_2026-12-05d.md). ``source``
    ``examples/<route>``, ``family`` ``declared:<route>:<i>``."""
    out = []
    for spec in specs:
        texts = [c.strip() for c in _CLAUSE.split(spec.description) if len(c.strip()) >= 4]
        for rule in spec.rules:
            if not rule.get("negative"):
                texts += [str(k).rstrip("*") for k in rule.get("keywords", ())]
        texts += [t for utterances in spec.examples.values() for t in utterances]
        for i, text in enumerate(dict.fromkeys(t for t in texts if t)):
            out.append(
                LabelledRequest(
                    id=f"declared:{spec.name}:{i}",
                    text=text,
                    route=spec.name,
                    lang="zh" if _HAN.search(text) else "en",
                    source=f"examples/{spec.name}",
                    split="tune",
                    family=f"declared:{spec.name}:{i}",
                )
            )
    return out


#: ``fit`` warns that a new route overlaps a built-in one (:func:`overlaps`) when the built-in
#: classifier gives that route at least this many of its examples and this share of them
#: (0.2: set on training files only; gift_cards 25/36, loyalty_points 20/36 and warranty 8/36
#: go to customer service, which owns cards, points and faulty goods; job_applications 5/36
#: and store_info under 3 do not warn).
OVERLAP_MIN = 3
OVERLAP_SHARE = 0.2


def overlaps(
    rows: Sequence[LabelledRequest],
    ev: Sequence[Evidence],
    logits: tuple[np.ndarray, np.ndarray],
    classes: Sequence[Route],
    calibration: CalibrationFile,
    new: Sequence[Route],
) -> list[str]:
    """One line per new route that overlaps a built-in route's territory: the built-in
    classifier (the base columns of ``logits``: out-of-fold, lifts included, combined and
    text-only, ``(rows, classes)``) gives that route at least :data:`OVERLAP_MIN` and
    :data:`OVERLAP_SHARE` of the new route's examples. An added route keeps the built-in
    decisions (its logit is fallback's plus an offset), so it takes such requests only where
    they carry its examples' words: the line says how many of those examples still go to the
    built-in route held out of the fit, and what to do. Empty: no overlap."""
    zc, zt = logits
    k0 = len(classes) - 1 - len(new)
    keep = [i for i in range(len(classes)) if not k0 <= i < k0 + len(new)]
    base = [classes[i] for i in keep]
    t = calibration.thresholds
    went: dict[Route, dict[Route, list[tuple[str, bool]]]] = {r: defaultdict(list) for r in new}
    total: dict[Route, int] = defaultdict(int)
    for row, e, c, x in zip(rows, ev, zc, zt, strict=True):
        if row.route in went and not (row.family or "").startswith("declared:"):
            total[row.route] += 1
            before = _decide(e, softmax(c[keep]), softmax(x[keep]), t, base)[0]
            if before != FALLBACK and before not in went:
                after = _decide(e, softmax(c), softmax(x), t, classes)[0]
                went[row.route][before].append((row.text, after == before))
    lines = []
    for route, by in went.items():
        for other, got in sorted(by.items(), key=lambda kv: -len(kv[1])):
            if len(got) >= max(OVERLAP_MIN, OVERLAP_SHARE * total[route]):
                lines.append(
                    f"route {route!r} overlaps {other!r}: the built-in classifier gives "
                    f"{other!r} {len(got)} of the route's {total[route]} examples (e.g. "
                    f"{got[0][0]!r}); fitted, {sum(k for _, k in got)} of them still go there "
                    f"when held out of the fit, and so will phrasings of that topic without "
                    f"your examples' words (an added route keeps the built-in decisions). "
                    f"Leave the topic to {other!r}, or refit every route on your examples "
                    "with --full (minutes; the built-in routes change too: measure them)"
                )
    return lines


def _check_new(
    rows: Sequence[LabelledRequest], base: LearnedModel, new: Sequence[Route], declared: set[Route]
) -> None:
    held = [r.id for r in rows if r.split == "test"]
    if held:
        raise UserError(f"{len(held)} held-out rows were passed (e.g. {held[0]}); fit on tune only")
    if not new:
        raise UserError(
            "the examples name no route the fitted model lacks; to refit the built-in routes on "
            "them as well, pass --full"
        )
    gone = [c for c in base.classes if c not in declared]
    if gone or base.classes[-1] != FALLBACK:
        raise UserError(
            f"the fitted model's routes {', '.join(gone)} are not declared now; refit all with "
            "--full"
        )


def _new_maps(
    rows: Sequence[LabelledRequest],
    ev: Sequence[Evidence],
    probs: np.ndarray,
    fast: np.ndarray,
    classes: Sequence[Route],
    base: CalibrationFile,
    new: set[Route],
) -> CalibrationFile:
    """``base`` with calibration maps for the new routes (fast, rules and learned decisions
    of each new route, right or wrong)."""
    maps: dict[str, dict[Route, tuple[list[float], list[bool]]]] = {
        tier: defaultdict(lambda: ([], [])) for tier in ("fast", "rules", "learned", "decisive")
    }
    for row, e, p, q in zip(rows, ev, probs, fast, strict=True):
        route, tier, raw = _decide(e, p, q, base.thresholds, classes)
        if route in new:
            maps[tier][route][0].append(raw)
            maps[tier][route][1].append(route == row.route)

    def merged(old: dict, tier: str) -> dict:
        return {**old, **{r: fit_isotonic(x, ok) for r, (x, ok) in maps[tier].items()}}

    return base.model_copy(
        update={
            "maps": merged(base.maps, "rules"),
            "learned_maps": merged(base.learned_maps, "learned"),
            "fast_maps": merged(base.fast_maps, "fast"),
        }
    )
