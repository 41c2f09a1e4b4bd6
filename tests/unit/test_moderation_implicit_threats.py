"""Issue 47: threats with no violent verb aimed at the reader (knowing where they live,
waiting for them to be hurt, their days counted) go to review, in English, Simplified and
Traditional Chinese; the same words reported, and ordinary uses, stay allowed. Inputs
written for this file."""

from __future__ import annotations

import pytest

from tests.data.moderation_cases import flag_cases, judged
from workflows.content_moderation.graph import ContentModerationWorkflow

THREATS = [
    "我知道你家在哪，等着收尸吧",
    "你給我等著，走夜路小心點",
    "你死定了，等着挨刀",
    "We know where you live. Delete the post.",
    "Your days are numbered, snitch.",
    "keep talking, you won't see it coming",
]

ORDINARY = [
    "The film ends with 'your days are numbered' scrawled on a mirror, the article says.",
    "Count your days of leave before you book the flight.",
    "等着吧，快递明天就到",
    "我知道你喜欢吃辣，所以多放了辣椒",
]


@pytest.mark.parametrize(
    ("post", "flagged"),
    flag_cases(THREATS, ORDINARY),
)
def test_a_threat_with_no_violent_verb_goes_to_review_a_reported_one_stays_allowed(
    post: str, flagged: bool, workflow: ContentModerationWorkflow
) -> None:
    judged(post, flagged, workflow, category="threat")
