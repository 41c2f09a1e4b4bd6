"""``fit --examples`` round 11 (issue 49 item 2): the user's examples by character n-grams
(:mod:`orchestrator.classifier.fit_lexical`), which needs no optional extra and reads Chinese:
a new phrasing that shares a word (English or a Chinese character pair, Traditional or
Simplified) with a route's examples is taken, one nearer the user's fallback rows or far from
every example is not, and the tier reads the index beside the fitted model."""

from __future__ import annotations

import re

import pytest

from orchestrator.classifier import RuleClassifier, fit_lexical, fit_semantic
from orchestrator.classifier.core import default_model_path
from orchestrator.classifier.fit_lexical import LexicalIndex
from orchestrator.classifier.fit_lexical import fit_lexical as fit_index
from orchestrator.classifier.paths import FITTED_DIR_ENV, default_calibration_path
from orchestrator.routes import FALLBACK, Route
from tests.unit.test_classifier_fit_new_routes import SPEC, _row

HELPDESK = Route("helpdesk")


@pytest.fixture(scope="module")
def index() -> LexicalIndex:
    mine = [
        _row(i, t, r, f"examples/{r}")
        for i, (t, r) in enumerate(
            [
                ("the office printer keeps jamming", HELPDESK),
                ("I can't connect to the vpn from home", HELPDESK),
                ("my laptop won't start after the update", HELPDESK),
                ("三楼的打印机又卡纸了", HELPDESK),
                ("公司vpn连不上怎么办", HELPDESK),
                ("笔记本电脑开不了机", HELPDESK),
                ("what's the best laptop to buy for gaming", FALLBACK),
                ("how do I boil an egg", FALLBACK),
                ("给我讲个笑话", FALLBACK),
            ]
        )
    ]
    base = [
        _row(i, f"where is my refund for order {i}", "customer_service", "b") for i in range(30)
    ]
    base += [_row(i, f"我的订单{i}什么时候到", "customer_service", "z") for i in range(30)]
    return fit_index(mine, base, [HELPDESK])


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("printer jammed again on floor 2", HELPDESK),  # English words shared
        ("my lptop wont start", HELPDESK),  # misspelt: character n-grams still shared
        ("我的打印机坏了", HELPDESK),  # a Chinese word (打印机) shared, no whole phrase
        ("公司電腦開不了機", HELPDESK),  # Traditional folded to Simplified
        ("which laptop is best for gaming", None),  # nearer the user's fallback rows
        ("where is my refund for order 7", None),  # a built-in request: not the route's
        ("今天天气怎么样", None),  # far from every example
    ],
)
def test_the_index_takes_phrasings_near_the_examples_and_abstains_otherwise(
    index: LexicalIndex, text: str, route: Route | None
) -> None:
    assert index.decide(text)[0] == route


def test_thresholds_come_from_the_built_in_rows_and_the_index_round_trips(
    index: LexicalIndex, tmp_path
) -> None:
    assert fit_lexical.FIT.floor <= index.thresholds[HELPDESK] < 1.0
    assert index.labels.count(FALLBACK) == 3 and index.labels.count(HELPDESK) == 6
    index.save(tmp_path / fit_lexical.FILE)
    again = LexicalIndex.load(tmp_path / fit_lexical.FILE)
    assert again.thresholds == index.thresholds
    assert again.scores("我的打印机坏了") == index.scores("我的打印机坏了")


def test_the_tier_reads_the_lexical_file_beside_the_fitted_model(index, tmp_path) -> None:
    index.save(tmp_path / fit_lexical.FILE)
    tier = fit_semantic.examples_tier(tmp_path / "learned.v2.npz", None)
    assert tier is not None
    record, decided = tier.consult("我的打印机坏了")
    assert decided is not None and decided[0] == HELPDESK and "by characters" in record.note
    record, decided = tier.consult("how do I boil an egg quickly")
    assert decided is None and record.consulted and "abstained" in record.note
    (tmp_path / fit_lexical.FILE).write_bytes(b"not an index")
    tier = fit_semantic.examples_tier(tmp_path / "learned.v2.npz", None)
    assert tier is not None
    record, decided = tier.consult("我的打印机坏了")
    assert decided is None and not record.consulted and "not an examples index" in record.note


def test_a_new_fit_s_index_is_reloaded_like_the_model(index, tmp_path) -> None:
    """The example indexes are watched with the rules, calibration and model: a running
    classifier takes up the index a new ``fit --examples`` writes, without a restart."""
    model = tmp_path / "learned.v2.npz"
    model.write_bytes(default_model_path().read_bytes())
    clf = RuleClassifier(model_path=model, reload_interval=0)
    assert clf.examples_tier is None  # no fit yet
    index.save(tmp_path / fit_lexical.FILE)
    clf.classify_text("hello")  # a request looks at the files
    assert clf.examples_tier is not None
    (tmp_path / fit_lexical.FILE).unlink()
    clf.classify_text("hello")
    assert clf.examples_tier is None


def test_the_default_classifier_loads_the_fitted_folder_s_index(index, tmp_path, monkeypatch):
    """What ``run``, ``batch``, ``ui`` and ``classify`` build (no model path named) reads the
    example indexes of ``$ORCH_CLASSIFIER_DIR``'s fit, as it reads that fit's model: before,
    only a classifier given the model's path did, so a user's route fitted there was never
    decided by its examples in the application."""
    (tmp_path / "learned.v2.npz").write_bytes(default_model_path().read_bytes())
    (tmp_path / "calibration.toml").write_bytes(default_calibration_path().read_bytes())
    index.save(tmp_path / fit_lexical.FILE)
    assert RuleClassifier(reload_interval=None).examples_tier is None  # the packaged folder
    monkeypatch.setenv(FITTED_DIR_ENV, str(tmp_path))
    clf = RuleClassifier(reload_interval=None)
    assert clf.model_path == tmp_path / "learned.v2.npz"
    assert clf.examples_tier is not None
    assert RuleClassifier(model_path=False, reload_interval=None).examples_tier is None


def test_a_calibration_of_other_routes_is_named_with_the_hash_compared(tmp_path, caplog) -> None:
    """A fit's calibration used with routes it was not fitted for: the warning names the hash
    it compared (the rules with the routes in use) and says to refit with ``fit``, since
    ``fit-thresholds`` refits the built-in rules' calibration only."""
    text = default_calibration_path().read_text(encoding="utf-8")
    calibration = tmp_path / "calibration.toml"
    calibration.write_text(re.sub(r'rules_sha = "\w+"', 'rules_sha = "0ther0"', text))
    with caplog.at_level("WARNING", logger="orchestrator.classifier"):
        clf = RuleClassifier(calibration_path=calibration, routes=[SPEC], reload_interval=None)
    assert clf.version in caplog.text and "0ther0" in caplog.text
    assert "orchestrator classifier fit`" in caplog.text and "fit-thresholds" not in caplog.text
