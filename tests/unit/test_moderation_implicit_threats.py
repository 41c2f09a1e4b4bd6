"""Issue 47: threats with no violent verb aimed at the reader (knowing where they live,
waiting for them to be hurt, their days counted) go to review, in English, Simplified and
Traditional Chinese; the same words reported, and ordinary uses, stay allowed. Inputs
written for this file."""

from __future__ import annotations

import pytest

from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only

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


@pytest.mark.parametrize("post", THREATS)
def test_a_threat_with_no_violent_verb_goes_to_review(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    verdict = moderate_lexicon_only(post, workflow)
    assert verdict.decision.value != "allow", verdict.rationale
    assert any(c.category.value == "threat" for c in verdict.categories)


@pytest.mark.parametrize("post", ORDINARY)
def test_reported_or_ordinary_uses_stay_allowed(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    verdict = moderate_lexicon_only(post, workflow)
    assert verdict.decision.value == "allow", verdict.rationale
