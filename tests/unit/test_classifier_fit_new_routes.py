"""``classifier fit --examples`` adds a new route to a fitted model (fit_routes.fit_new_routes): the
built-in routes keep their weights, thresholds and calibration maps; the new route gets a column
of its own (an offset over where the built-in model sends its examples) and maps of its own; it
routes phrasings of its own it was not fitted on above a floor; a file with no new route, or a
model whose routes are no longer declared, is refused in one line."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.fit_routes import anchors, fit_new_routes, recalibrated
from orchestrator.classifier.fitting import _decide, gather
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.classifier.learned_fit import train
from orchestrator.classifier.models import CalibrationFile, Thresholds
from orchestrator.classifier.oof import OutOfFold, load_oof
from orchestrator.exceptions import UserError
from orchestrator.routes import FALLBACK, Route, RouteSpec

LIBRARY = Route("library")
SPEC = RouteSpec(
    name=LIBRARY,
    description="Questions about the town library: loans, opening hours, reading rooms.",
    rules=({"id": "library.words", "weight": 0.6, "keywords": ["library card", "图书馆"]},),
)
BUILT_IN = {
    "customer_service": [
        "where is my refund for order 1234",
        "my parcel never arrived, please help",
        "cancel my order please",
        "i was charged twice for the same order",
        "我的订单还没到",
        "退款什么时候到账",
    ],
    "content_moderation": [
        "is this comment ok to post: you are all idiots",
        "please review this post for hate speech",
        "should this review be removed: total garbage, liars",
        "这条评论违规吗：你们都是骗子",
    ],
    FALLBACK: [
        "what's the capital of australia",
        "tell me a joke about cats",
        "how tall is mount everest",
        "今天天气怎么样",
    ],
}
MINE = [
    "how many books can I borrow at once",
    "when does the library open on sunday",
    "can I renew a loan online",
    "I lost my library card, how do I get a new one",
    "is there a quiet reading room",
    "how long can I keep a borrowed novel",
    "do you lend e-books and audiobooks",
    "what is the late fee for an overdue book",
    "图书馆周日几点开门",
    "借的书可以续借吗",
    "逾期还书要罚款吗",
    "一次最多能借几本书",
]


def _row(i: int, text: str, route: str, source: str) -> LabelledRequest:
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"
    return LabelledRequest(
        id=f"{source}:{i}",
        text=text,
        route=Route(route),
        lang=lang,
        source=source,
        split="tune",
        family=f"{source}:{i}",
    )


def _base_rows() -> list[LabelledRequest]:
    return [
        _row(i, text, route, f"base/{route}")
        for route, texts in BUILT_IN.items()
        for i, text in enumerate(texts)
    ]


@pytest.fixture(scope="module")
def fitted():
    base_rows = _base_rows()
    clf = RuleClassifier(
        calibration_path=False, model_path=False, reload_interval=None, routes=[SPEC]
    )
    ev = gather(clf, base_rows)
    base = train([e.features for e in ev], [r.route for r in base_rows], min_count=1)
    calibration = CalibrationFile(thresholds=Thresholds(min_score=0.4, ambiguity_margin=0.1))
    mine = [_row(i, t, LIBRARY, "examples/library") for i, t in enumerate(MINE)]
    model, cal = fit_new_routes(
        [*base_rows, *mine], base, calibration, routes=[SPEC], folds=3, fitted_on="test"
    )
    return base, calibration, model, cal, clf


def test_the_new_route_gets_a_column_before_fallback_and_the_old_ones_are_kept(fitted) -> None:
    base, _, model, _, _ = fitted
    assert model.classes == (*base.classes[:-1], LIBRARY, FALLBACK)
    old = [model.vocab[f] for f in base.vocab]
    for new_w, old_w in ((model.w_comb, base.w_comb), (model.w_text, base.w_text)):
        assert np.array_equal(new_w[old][:, : len(base.classes) - 1], old_w[:, :-1])
        assert np.array_equal(new_w[old][:, -1], old_w[:, -1])
        # a feature the base model never saw weighs nothing for the old routes
        extra = [i for f, i in model.vocab.items() if f not in base.vocab]
        assert extra and not new_w[extra][:, [0, 1, -1]].any()
    assert model.meta["new_routes"] == [LIBRARY]


def test_the_examples_are_learned_and_the_old_routes_still_win_their_own(fitted) -> None:
    _, _, model, _, clf = fitted
    for text in MINE:  # fitted on these: each must come out as the new route
        feats, _, _ = clf.evidence(_row(0, text, LIBRARY, "x").to_request())
        assert model.classes[int(np.argmax(model.probabilities(feats)))] == LIBRARY, text
    for route, texts in BUILT_IN.items():
        for text in texts:
            feats, _, _ = clf.evidence(_row(0, text, route, "x").to_request())
            assert model.classes[int(np.argmax(model.probabilities(feats)))] == route, text


def test_thresholds_and_old_maps_are_kept_and_the_new_route_has_maps(fitted) -> None:
    _, calibration, _, cal, _ = fitted
    assert cal.thresholds == calibration.thresholds
    decided = {**cal.fast_maps, **cal.learned_maps, **cal.maps}
    assert LIBRARY in decided
    assert all(m.n >= 1 for m in decided.values())


def test_a_file_with_no_new_route_is_refused_with_the_fix(fitted) -> None:
    base, calibration, _, _, _ = fitted
    rows = [_row(i, t, "customer_service", "examples/cs") for i, t in enumerate(MINE)]
    with pytest.raises(UserError, match=r"no route the fitted model lacks.*--full"):
        fit_new_routes(rows, base, calibration, routes=[SPEC])


def test_a_model_whose_route_is_not_declared_any_more_is_refused(fitted) -> None:
    _, calibration, model, _, _ = fitted  # the fitted model has "library": undeclared here
    rows = [_row(i, t, "excel_report", "examples/x") for i, t in enumerate(MINE)]
    with pytest.raises(UserError, match="library are not declared now; refit all with --full"):
        fit_new_routes(rows, model, calibration)


def _cli_fit(tmp_path, monkeypatch, *extra: str):
    from typer.testing import CliRunner

    from orchestrator.classifier import fit_semantic
    from orchestrator.cli import classifier as cli
    from orchestrator.cli.app import app

    monkeypatch.setattr(cli, "plugin_route_specs", lambda: (SPEC,))  # an installed package's
    # as without the [semantic] extra: these test the learned tier; the meaning index is tested
    # with a stub in test_classifier_fit10 and for real in test_classifier_examples
    monkeypatch.setattr(fit_semantic, "load_encoder", lambda: None)
    path = tmp_path / "ex.csv"
    path.write_text("text,route\n" + "".join(f'"{t}",library\n' for t in MINE), encoding="utf-8")
    args = ["classifier", "fit", "--examples", str(path), "--out-dir", str(tmp_path / "o")]
    return CliRunner().invoke(app, [*args, "--cap", "15", "--jobs", "1", *extra])


def test_the_cli_adds_the_route_to_the_packaged_model_or_refits_all_with_full(
    tmp_path, monkeypatch
) -> None:
    from orchestrator.classifier.learned import load_model
    from orchestrator.classifier.paths import default_rules_path

    packaged = load_model(default_rules_path().parent / "learned.v2.npz")
    result = _cli_fit(tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    added = load_model(tmp_path / "o" / "learned.v2.npz")
    assert added.meta["new_routes"] == [LIBRARY]
    assert added.classes == (*packaged.classes[:-1], LIBRARY, FALLBACK)
    old = [added.vocab[f] for f in packaged.vocab]  # the packaged weights, unchanged
    assert np.array_equal(added.w_comb[old][:, -1], packaged.w_comb[:, -1])
    result = _cli_fit(tmp_path, monkeypatch, "--full", "--folds", "2")
    assert result.exit_code == 0, result.output
    refit = load_model(tmp_path / "o" / "learned.v2.npz")
    assert "new_routes" not in refit.meta and LIBRARY in refit.classes


def test_the_cli_without_a_fitted_model_to_add_to_says_to_pass_full(tmp_path, monkeypatch) -> None:
    from orchestrator.classifier.paths import default_rules_path

    rules = tmp_path / "rules" / "routes.toml"
    rules.parent.mkdir()
    rules.write_text(default_rules_path().read_text(encoding="utf-8"), encoding="utf-8")
    result = _cli_fit(tmp_path, monkeypatch, "--rules", str(rules))
    assert result.exit_code == 2
    assert "no fitted model and calibration in" in result.output and "--full" in result.output
    assert "Traceback" not in result.output


def _lift_case(fitted, budget: float, monkeypatch, z=None, scales=(1.0,)) -> tuple[float, float]:
    """``(scale, lift)`` chosen for two examples and one built-in fallback row (logits ``z`` by
    hand, classes of the fitted model). The default ``z``: the examples need a lift of 3 and
    of 5 to be routed, and a lift of 4 or more sends the built-in row to the new route."""
    from orchestrator.classifier import fit_routes

    _, calibration, model, _, clf = fitted
    monkeypatch.setattr(fit_routes, "NEW_LIFT_GRID", (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0))
    monkeypatch.setattr(fit_routes, "NEW_SCALE_GRID", scales)
    monkeypatch.setattr(fit_routes, "NEW_BUDGET", budget)
    rows = [
        _row(0, "first example text here", LIBRARY, "examples/library"),
        _row(1, "second example text here", LIBRARY, "examples/library"),
        _row(2, "a built-in request text", FALLBACK, "base/fallback"),
    ]
    classes = model.classes  # (customer_service, content_moderation, library, fallback)
    if z is None:
        z = np.array([[0, 0, -1.0, 1], [0, 0, -3.0, 1], [0, 0, -2.5, 1]])
    ev = gather(clf, rows)
    scale, lift = fit_routes._lift(rows, ev, (z, z), classes, calibration.thresholds, [LIBRARY])
    return float(scale[0]), float(lift[0])


def test_the_lift_routes_what_it_can_without_moving_built_in_rows(fitted, monkeypatch) -> None:
    # no built-in decision may change: 3 (the first example routed, the built-in row kept)
    assert _lift_case(fitted, 0.0, monkeypatch) == (1.0, 3.0)
    # a budget that allows the built-in row to move: 5, the smallest lift routing both
    assert _lift_case(fitted, 1.0, monkeypatch) == (1.0, 5.0)


def test_a_scale_routes_examples_near_their_words_that_a_lift_alone_cannot(
    fitted, monkeypatch
) -> None:
    # offsets over fallback: the examples +0.5 and +0.2 (half like their route), the built-in
    # row -0.2: a lift that routes the second example moves the built-in row too; a scale
    # of 3 routes both examples and keeps the built-in row
    z = np.array([[0, 0, 1.5, 1], [0, 0, 1.2, 1], [0, 0, 0.8, 1]])
    scale, lift = _lift_case(fitted, 0.0, monkeypatch, z)
    scaled = _lift_case(fitted, 0.0, monkeypatch, z, scales=(1.0, 3.0))
    assert scaled[0] == 3.0 and scaled != (scale, lift)
    assert _routed(fitted, z, *scaled) == [LIBRARY, LIBRARY, FALLBACK]
    assert _routed(fitted, z, scale, lift).count(LIBRARY) < 2


def _routed(fitted, z, scale: float, lift: float) -> list[Route]:
    """The decisions of :func:`_lift_case`'s rows under ``(scale, lift)``."""
    from orchestrator.classifier.fit_routes import _decide, recalibrated, softmax

    _, calibration, model, _, clf = fitted
    texts = ["first example text here", "second example text here", "a built-in request text"]
    ev = gather(clf, [_row(i, t, FALLBACK, "x") for i, t in enumerate(texts)])
    p = softmax(recalibrated(z, 2, np.array([scale]), np.array([lift])))
    t = calibration.thresholds
    return [_decide(e, pi, pi, t, model.classes)[0] for e, pi in zip(ev, p, strict=True)]


def test_recalibrated_scales_and_lifts_only_the_new_routes_offset() -> None:
    from orchestrator.classifier.fit_routes import recalibrated

    z = np.array([[2.0, 0.5, -1.0, 1.0], [0.0, 0.0, 3.0, 1.0]])
    out = recalibrated(z, 2, np.array([2.0]), np.array([0.5]))
    assert np.array_equal(out[:, [0, 1, 3]], z[:, [0, 1, 3]])
    assert out[:, 2].tolist() == [1.0 + 2.0 * -2.0 + 0.5, 1.0 + 2.0 * 2.0 + 0.5]


def test_the_fitted_model_carries_its_lift(fitted) -> None:
    from orchestrator.classifier.fit_routes import NEW_LIFT_GRID

    _, _, model, _, _ = fitted
    assert len(model.meta["lifts"]) == 1 and model.meta["lifts"][0] in NEW_LIFT_GRID


def test_the_route_learns_from_its_own_declaration_too() -> None:
    from orchestrator.classifier.fit_routes import declared_rows

    spec = SPEC.model_copy(update={"examples": {"zh": ("图书馆有自习室吗",)}})
    texts = [r.text for r in declared_rows([spec])]
    # the description's clauses, the rule's keywords and the declared utterances
    assert "Questions about the town library" in texts
    assert {"loans", "opening hours", "reading rooms", "library card", "图书馆"} <= set(texts)
    assert "图书馆有自习室吗" in texts
    rows = declared_rows([spec])
    assert {r.route for r in rows} == {LIBRARY} and all(r.split == "tune" for r in rows)
    assert {r.lang for r in rows if r.text == "图书馆"} == {"zh"}
    assert all(r.source == "examples/library" for r in rows)


def test_the_fitted_model_learned_the_declared_words(fitted) -> None:
    _, _, model, _, _ = fitted
    # "reading room(s)" is in the description only, not in any example
    assert "wreading" in model.vocab
    assert "wrooms" in model.vocab


def _overlap_case(fitted, before_route: int, n: int) -> list[str]:
    """``n`` examples of the new route that the built-in columns give to class
    ``before_route`` (by hand-made logits), and 4 they leave to fallback."""
    from orchestrator.classifier import fit_routes

    _, calibration, model, _, clf = fitted
    rows = [_row(i, f"example number {i}", LIBRARY, "examples/library") for i in range(n + 4)]
    ev = gather(clf, rows)
    z = np.zeros((len(rows), len(model.classes)))
    z[:n, before_route] = 5.0  # the base model is sure of a built-in route ...
    z[:n, 2] = 9.0  # ... and, fitted, the new column takes them
    z[n:, -1] = 5.0
    return fit_routes.overlaps(rows, ev, (z, z), model.classes, calibration, [LIBRARY])


def test_a_route_whose_examples_a_built_in_route_owns_is_warned_about(fitted) -> None:
    lines = _overlap_case(fitted, 0, 5)  # 5 of 9 to customer_service
    assert len(lines) == 1
    line = lines[0]
    assert "'library' overlaps 'customer_service'" in line
    assert "5 of the route's 9 examples" in line and "0 of them still go there" in line
    assert "--full" in line and "Leave the topic to 'customer_service'" in line


def test_a_route_that_a_built_in_route_seldom_takes_is_not_warned_about(fitted) -> None:
    assert _overlap_case(fitted, 0, 2) == []  # under OVERLAP_MIN
    assert _overlap_case(fitted, 1, 0) == []


def test_the_cli_prints_each_overlap_and_a_missing_extra(tmp_path, monkeypatch) -> None:
    from orchestrator.classifier import fit_routes, fit_semantic

    line = "route 'library' overlaps 'customer_service': [b]5[/b] of ..."
    monkeypatch.setattr(fit_routes, "overlaps", lambda *a, **k: [line])
    result = _cli_fit(tmp_path, monkeypatch)  # as without the extra
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "warning: route 'library' overlaps 'customer_service': [b]5[/b] of" in text
    assert "note: the [semantic] extra (MiniLM) is not installed" in text
    assert "pip install 'moe-orchestrator[semantic]'" in text
    assert not (tmp_path / "o" / fit_semantic.FILE).exists()


#: Phrasings of the library route that are in none of the fitted examples (``MINE``), each
#: sharing at least one content word with them and none with the built-in rows.
HELD_OUT = [
    "can I borrow an audiobook for my holiday",
    "what time does the library close on saturday",
    "how do I renew a book I borrowed",
    "I need a new library card, mine is lost",
    "逾期的书怎么还",
    "周日可以借书吗",
]
#: At least 5 of the 6. Each shares a word that only the route's examples have, and the new
#: column weighs exactly those words; the real held-out files' own cuts (phrasings like the
#: examples) score 0.5-1.0 per route (benchmarks/results/classifier_fit_examples_2026-12-06.md),
#: and this small world is easier than those, so one miss is allowed, two mean it broke.
FLOOR = 5


def test_the_fitted_route_routes_its_own_held_out_phrasings_above_the_floor(fitted) -> None:
    _, _, model, cal, clf = fitted
    decided = []
    for text in HELD_OUT:
        (e,) = gather(clf, [_row(0, text, LIBRARY, "held")])
        p = np.array(model.probabilities(e.features))
        q = np.array(model.probabilities(e.features, combined=False))
        decided.append(_decide(e, p, q, cal.thresholds, model.classes)[0])
    assert sum(d == LIBRARY for d in decided) >= FLOOR, list(zip(HELD_OUT, decided, strict=True))


def test_a_route_is_anchored_where_the_built_in_model_sends_its_examples() -> None:
    # three base classes (a, b, fallback); the route's rows go to b (0.85) and fallback
    # (0.13): its anchor is b's logit mostly; a (0.02, under 0.1) is dropped
    fixed = np.log(np.array([[0.02, 0.83, 0.15], [0.02, 0.87, 0.11], [0.9, 0.05, 0.05]]))
    labels = [Route("mine"), Route("mine"), Route("other")]
    out = anchors(fixed, labels, [Route("mine")], [0, 1])
    assert out.shape == (3, 1) and out[0, 0] == 0.0
    assert out[1, 0] == pytest.approx(0.85 / 0.98) and out[:, 0].sum() == pytest.approx(1)
    # recalibrated scales and lifts the offset over that anchor, not over fallback
    z = np.array([[0.0, 2.0, 1.0, 2.5]])  # a, b, mine, fallback
    a = z[0, [0, 1, 3]] @ out[:, 0]
    got = recalibrated(z, 2, np.array([2.0]), np.array([0.5]), out)
    assert got[0, 2] == pytest.approx(a + 2.0 * (1.0 - a) + 0.5)
    assert np.array_equal(got[0, [0, 1, 3]], z[0, [0, 1, 3]])


def test_the_saved_model_gives_the_fitted_columns_logits(fitted) -> None:
    # the saved weights (the anchor's columns mixed in) give what the fit's own logits gave:
    # an example it was fitted on comes out as the route, through LearnedModel alone
    _, _, model, _, clf = fitted
    (e,) = gather(clf, [_row(0, "how many books can I borrow at once", LIBRARY, "x")])
    p = model.probabilities(e.features)
    assert model.classes[int(np.argmax(p))] == LIBRARY
    assert np.isclose(sum(p), 1.0)


def _oof_of(base, rows, p: float) -> OutOfFold:
    """Out-of-fold logits of ``rows`` that give each row's own route ``p`` (the rest shared)."""
    n = len(base.classes)
    rest = (1 - p) / (n - 1)
    probs = np.array([[p if c == r.route else rest for c in base.classes] for r in rows])
    return OutOfFold.of(rows, probs, probs, base.classes)


def test_the_budget_is_checked_on_the_base_models_out_of_fold_logits(fitted, tmp_path) -> None:
    from orchestrator.classifier.fit_routes import budget_logits
    from orchestrator.classifier.learned_fit import anchored, column_design

    base, *_ = fitted
    rows = _base_rows()
    oof = _oof_of(base, rows, 0.4)
    oof.save(tmp_path / "learned.oof.npz")
    oof = load_oof(tmp_path / "learned.oof.npz")
    assert oof is not None and load_oof(tmp_path / "none.npz") is None
    mine = _row(0, MINE[0], LIBRARY, "examples/library")
    docs = [["w:a"], ["w:b"]] * (len(rows) // 2) + [["w:a"]] * (len(rows) % 2 + 1)
    _, design = column_design(base, docs, [len(rows)])
    anchor = np.zeros((len(base.classes), 1))
    anchor[0, 0] = 1.0  # an offset over customer service's logit
    design = replace(design, anchor=anchor)
    z = np.hstack([design.fixed[0][:, :-1], np.full((len(docs), 1), 0.7), design.fixed[0][:, -1:]])
    z[:, -2] += anchored(design.fixed[0], anchor, 1)[:, 0]
    zc, _ = budget_logits([*rows, mine], (z, z), design, base, oof)
    k = len(base.classes) - 1
    found, want, _ = oof.lookup(rows, base.classes)
    assert found.all()
    assert np.allclose(zc[: len(rows), [*range(k), k + 1]], want, atol=1e-6)
    assert np.allclose(zc[: len(rows), k] - zc[: len(rows), 0], 0.7)  # the offset moves along
    assert np.array_equal(zc[-1], z[-1])  # a user's row (never fitted on) keeps its logits
    assert budget_logits(rows, (z, z), design, base, None)[0] is z
    with pytest.raises(UserError, match="refit"):
        oof.lookup(rows, [*base.classes[:-1], LIBRARY, FALLBACK])


def test_an_unsure_out_of_fold_model_holds_the_lift_back(fitted) -> None:
    # the base model is sure of its own rows; out of fold, with the built-in rows only 0.4
    # their own route's, a lift tips them sooner: the chosen lift is no larger
    base, calibration, model, _, _ = fitted
    rows = [*_base_rows(), *(_row(i, t, LIBRARY, "examples/library") for i, t in enumerate(MINE))]
    unsure, _ = fit_new_routes(
        rows, base, calibration, routes=[SPEC], folds=3, oof=_oof_of(base, _base_rows(), 0.4)
    )
    assert unsure.meta["lifts"][0] < model.meta["lifts"][0]
