"""Issue 47, item 2: the learned scorer does not send a post to review on its own below the
probability from which its dev precision on such posts (no lexicon term above low) reached the
policy's floor (``policy.toml`` ``[scorer]``); posts with a term, and ``high``, are unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from workflows.content_moderation.judgement import solo_weighed
from workflows.content_moderation.policy import load_policy
from workflows.content_moderation.verdict import ScorerJudgement


def _scored(p: float, state: str = "medium", lang: str = "zh") -> ScorerJudgement:
    return ScorerJudgement(status="ok", lang=lang, flagged=p, state=state)  # type: ignore[arg-type]


def test_the_packaged_policy_measures_a_chinese_floor() -> None:
    policy = load_policy()
    assert policy.scorer_min_precision == pytest.approx(0.75)
    start = policy.scorer_solo_from["zh"]
    assert 0.0 < start < 1.0
    assert not policy.scorer_may_review_alone("zh", start - 0.01)
    assert policy.scorer_may_review_alone("zh", start)


@pytest.mark.parametrize(
    ("p", "l_state", "state", "expected"),
    [(0.50, "none", "medium", "low"), (0.50, "mention", "medium", "low"),
     (0.50, "low", "medium", "low"), (0.60, "none", "medium", "medium"),
     (0.50, "medium", "medium", "medium"), (0.50, "none", "high", "high"),
     (0.30, "medium", "clear", "clear")],
)  # fmt: skip
def test_below_the_floor_the_scorer_alone_reads_low(
    p: float, l_state: str, state: str, expected: str
) -> None:
    policy = dataclasses.replace(load_policy(), scorer_solo_from={"zh": 0.55})
    assert solo_weighed(state, l_state, _scored(p, state), policy) == expected  # type: ignore[arg-type]


def test_a_language_with_no_measured_floor_keeps_the_scorer_threshold() -> None:
    policy = dataclasses.replace(load_policy(), scorer_solo_from={"zh": 0.55})
    assert solo_weighed("medium", "none", _scored(0.40, lang="en"), policy) == "medium"
