"""Tuning harness for ``fit --examples`` (issue 49 item 2): cross-validation inside the user's
training examples, and the built-in rows' decisions on a half of the tune split that the new
column was not fitted on. Never reads a held-out file.

Usage, from the repository root::

    python -m benchmarks.classifier_fit_cv --route warranty --route job_applications

Per ``--route``: 4 folds of its training file (by text hash, fallback rows included); each fold
is fitted onto the packaged model with the built-in tune rows (:func:`fit_new_routes`) and its
rows decided the way the classifier decides (:func:`fitting._decide` on the fitted model's
probabilities). Then the whole file is fitted with one half of the tune split (by family) and
the other half decided with and without the new route: the change of the built-in accuracy and
the count of changed decisions. Rule evidence is computed once per row and route (cached), so
a variant costs seconds.
"""

from __future__ import annotations

import argparse
import hashlib
from collections import Counter
from collections.abc import Sequence

import numpy as np

from benchmarks.classifier_fit_examples import scenario
from orchestrator.classifier import fit_routes, fitting
from orchestrator.classifier.examples import read_examples
from orchestrator.classifier.labelled_set import LabelledRequest, load_split
from orchestrator.classifier.learned import VERSION, LearnedModel, load_model
from orchestrator.classifier.loader import load_calibration, load_rules
from orchestrator.classifier.models import CalibrationFile
from orchestrator.classifier.paths import default_rules_path
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.routes import RouteSpec

VERBOSE = False
_GATHER = fitting.gather
_CACHE: dict[tuple, fitting.Evidence] = {}


def _cached_gather(clf, rows: Sequence[LabelledRequest]) -> list[fitting.Evidence]:
    names = tuple(sorted(clf._state.compiled.routes))
    todo = [r for r in rows if (names, r.id, r.text) not in _CACHE]
    for row, ev in zip(todo, _GATHER(clf, todo), strict=True):
        _CACHE[names, row.id, row.text] = ev
    return [_CACHE[names, r.id, r.text] for r in rows]


fitting.gather = _cached_gather  # type: ignore[assignment]  # the harness's cache
fit_routes.gather = _cached_gather  # type: ignore[assignment]


def _decisions(
    model: LearnedModel,
    cal: CalibrationFile,
    spec: RouteSpec,
    rows: Sequence[LabelledRequest],
) -> list[str]:
    clf = fitting.rules_only(None, [spec])
    ev = fitting.gather(clf, rows)
    classes = model.classes
    out = []
    for e in ev:
        p = model.probabilities(e.features)
        q = model.probabilities(e.features, combined=False)
        out.append(str(fitting._decide(e, p, q, cal.thresholds, classes)[0]))
    return out


def _fit(rows, base, spec) -> tuple[LearnedModel, CalibrationFile]:
    return fit_routes.fit_new_routes(rows, *base, routes=[spec], folds=3, fitted_on="cv")


def cross_validate(name: str, tune: list[LabelledRequest], base, folds: int = 4) -> Counter:
    """Right decisions per route over ``folds`` folds of the training file of ``name``."""
    spec, train, _ = scenario(name)
    mine = [r.model_copy(update={"split": "tune"}) for r in read_examples(train, [spec.name])]
    fold = [int(hashlib.sha256(r.text.encode()).hexdigest(), 16) % folds for r in mine]
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for k in range(folds):
        fit_rows = [r for r, f in zip(mine, fold, strict=True) if f != k]
        test = [r for r, f in zip(mine, fold, strict=True) if f == k]
        model, cal = _fit([*tune, *fit_rows], base, spec)
        for row, got in zip(test, _decisions(model, cal, spec, test), strict=True):
            total[row.route] += 1
            right[row.route] += got == row.route
            if got != row.route and VERBOSE:
                print(f"  miss {row.route} -> {got}: {row.text}")
    print(f"{name} CV: " + ", ".join(f"{r} {right[r]}/{total[r]}" for r in sorted(total)))
    return right


def builtin_half(name: str, tune: list[LabelledRequest], base) -> tuple[float, int]:
    """Accuracy change and changed decisions on the half of ``tune`` not fitted on."""
    spec, train, _ = scenario(name)
    mine = [r.model_copy(update={"split": "tune"}) for r in read_examples(train, [spec.name])]
    half = [fitting._fold_of(r.family or r.id, 2, 7) for r in tune]
    fit_on = [r for r, h in zip(tune, half, strict=True) if h == 0]
    other = [r for r, h in zip(tune, half, strict=True) if h == 1]
    model, cal = _fit([*fit_on, *mine], base, spec)
    before = _decisions(base[0], base[1], spec, other)
    after = _decisions(model, cal, spec, other)
    truth = [str(r.route) for r in other]
    delta = sum((a == t) - (b == t) for a, b, t in zip(after, before, truth, strict=True))
    changed = sum(a != b for a, b in zip(after, before, strict=True))
    to_new = sum(a == spec.name for a in after)
    print(
        f"{name} built-in half n={len(other)}: accuracy change {delta / len(other):+.4f}, "
        f"{changed} changed, {to_new} to {spec.name}; lifts {model.meta.get('lifts')} "
        f"scales {model.meta.get('scales')}"
    )
    for line in model.meta.get("overlaps") or ():
        print("  overlap:", line)
    return delta / len(other), changed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--route", action="append", default=[])
    parser.add_argument("--no-builtin", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print the CV misses")
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose
    pk = default_rules_path().parent
    base = load_model(pk / f"learned.v{VERSION}.npz"), load_calibration(pk / "calibration.toml")
    assert [s.name for s in load_rules(default_rules_path())[0].route]
    tune = load_split(DEFAULT_DATA_DIR, "tune", cap=400)
    for name in args.route:
        cross_validate(name, tune, base)
        if not args.no_builtin:
            builtin_half(name, tune, base)
    print("routes:", ", ".join(args.route), "|", fitting.__file__)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
