"""``fit --examples`` round 14 (issue 49 item 2): a Chinese request that the other tiers left to
fallback is taken by a new route when the route's examples are the nearest of everything the
character index holds (the user's fallback rows and the built-in reference requests too) and
its score reaches a threshold fitted on the Chinese built-in requests whose nearest label the
route is (:func:`~orchestrator.classifier.fit_lexical.nearest_of_all`,
:func:`~orchestrator.classifier.fit_lexical.fit_nearest`); English requests have no such rule,
and an index written before it never applies it. The user's own fallback rows (near misses
among them) weigh in the new columns' fit as much as a route example each
(:func:`~orchestrator.classifier.fit_routes._new_weights`)."""

from __future__ import annotations

import numpy as np
import pytest

from orchestrator.classifier import fit_lexical
from orchestrator.classifier.fit_lexical import (
    BUILT_IN_FALLBACK,
    ZH_NEAREST,
    LexicalIndex,
    ThresholdFit,
    fit_nearest,
    nearest_of_all,
)
from orchestrator.classifier.fit_routes import _new_weights
from orchestrator.routes import FALLBACK, Route
from tests.unit.test_classifier_fit13 import CS, GIFT
from tests.unit.test_classifier_fit13 import index as index  # the fitted index fixture

PENS = Route("pens")


@pytest.mark.parametrize(
    ("scores", "route"),
    [
        ({GIFT: 0.08, CS: 0.05, FALLBACK: 0.01}, GIFT),  # nearest of all, over its 0.06
        ({GIFT: 0.05, CS: 0.01}, None),  # nearest, but under its threshold
        ({CS: 0.09, GIFT: 0.08}, None),  # a built-in route's requests are nearer
        ({FALLBACK: 0.09, GIFT: 0.08}, None),  # the user's fallback rows are nearer
        ({BUILT_IN_FALLBACK: 0.09, GIFT: 0.08}, None),  # built-in out-of-scope requests too
        ({PENS: 0.5, GIFT: 0.08}, None),  # a route with no such threshold
        ({}, None),
    ],
)
def test_a_new_route_is_taken_only_when_its_examples_are_the_nearest_of_all(
    scores: dict[Route, float], route: Route | None
) -> None:
    assert nearest_of_all(scores, {GIFT: 0.06}) == route


def _unit(rows: list[list[float]]) -> np.ndarray:
    x = np.array(rows, dtype=float)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_the_threshold_counts_only_the_sample_requests_whose_nearest_label_the_route_is() -> None:
    index = _unit([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    labels = [GIFT, CS, BUILT_IN_FALLBACK]
    fit = ThresholdFit(budget=0.25, floor=0.05, sample=4)
    # each sample row is nearer CS's requests than the gift examples: no row counts, the floor
    near_cs = _unit([[0.3, 1, 0], [0.4, 1, 0], [0.5, 1, 0.1], [0.2, 1, 0]])
    assert fit_nearest(near_cs, index, labels, [GIFT], fit=fit) == {GIFT: 0.05}
    # the same rows' gift scores would put a plain threshold well over the floor
    assert fit.threshold((near_cs @ index.T)[:, 0].tolist()) > 0.25
    # rows nearest the gift examples count with their scores
    near_gift = _unit([[1, 0.2, 0], [1, 0.9, 0], [0.3, 1, 0], [0.2, 0, 1]])
    got = fit_nearest(near_gift, index, labels, [GIFT], fit=fit)[GIFT]
    assert got == fit.threshold([float(near_gift[0, 0]), float(near_gift[1, 0]), 0.0, 0.0])
    assert got > 0.05
    # an index of the route's examples alone (no fallback rows, no built-in requests kept)
    alone = fit_nearest(near_gift, index[:1], [GIFT], [GIFT], fit=fit)[GIFT]
    assert alone == fit.threshold((near_gift @ index[:1].T)[:, 0].tolist())


def test_the_fitted_index_has_a_chinese_nearest_threshold_at_most_its_plain_one(index) -> None:
    assert set(index.zh_nearest) == {GIFT}
    assert ZH_NEAREST.floor <= index.zh_nearest[GIFT] <= index.zh_thresholds[GIFT]


def _strict(index: LexicalIndex, zh_nearest: dict[Route, float]) -> LexicalIndex:
    """``index`` with plain thresholds no request reaches, and ``zh_nearest``."""
    never = {GIFT: 0.99}
    return LexicalIndex(index.texts, index.labels, index.idf, never, never, zh_nearest=zh_nearest)


@pytest.mark.parametrize(
    ("text", "route"),
    [
        ("礼品卡的余额在哪看", GIFT),  # Chinese, nearest the gift examples
        ("禮品卡的餘額在哪看", GIFT),  # Traditional, folded to Simplified
        ("我的订单1234什么时候到", None),  # Chinese, nearer the built-in requests
        ("gift card balance please", None),  # English: no such rule
    ],
)
def test_decide_takes_a_chinese_request_nearest_a_new_routes_examples(
    index, text: str, route: Route | None
) -> None:
    strict = _strict(index, {GIFT: 0.01})
    assert strict.decide(text)[0] == route
    assert _strict(index, {}).decide(text)[0] is None  # no nearest thresholds: never


def test_the_least_score_said_for_a_chinese_text_is_the_lower_threshold(index) -> None:
    strict = _strict(index, {GIFT: 0.01})
    assert strict.least_for("礼品卡的余额在哪看") == {GIFT: 0.01}
    assert strict.least_for("gift card balance please") == {GIFT: 0.99}


def test_the_nearest_thresholds_are_saved_and_an_older_index_has_none(index, tmp_path) -> None:
    path = tmp_path / fit_lexical.FILE
    index.save(path)
    assert LexicalIndex.load(path).zh_nearest == index.zh_nearest
    LexicalIndex(index.texts, index.labels, index.idf, index.thresholds, index.zh_thresholds).save(
        path
    )
    old = LexicalIndex.load(path)
    assert old.zh_nearest == {}
    assert old.least_for("礼品卡的余额在哪看") == index.zh_thresholds


def test_the_users_fallback_rows_weigh_like_a_route_example_in_the_new_columns_fit() -> None:
    labels = [CS] * 6 + [GIFT] * 2 + [FALLBACK] * 3
    hard = np.array([False] * 8 + [True, True, False])  # the user's two, a built-in one
    plain = _new_weights(labels, [GIFT], 0.5)
    weighed = _new_weights(labels, [GIFT], 0.5, hard)
    assert plain[8] == plain[10] == 1.0 and plain[6] > 1.0
    assert weighed[8] == weighed[9] == weighed[6] == plain[6]  # as much as a gift example
    assert weighed[10] == 1.0 and (weighed[:8] == plain[:8]).all()  # the rest unchanged
    assert (_new_weights(labels, [], 0.5, hard) == 1.0).all()  # no new route: nothing to weigh
