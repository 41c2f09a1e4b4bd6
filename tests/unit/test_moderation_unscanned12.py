"""A post longer than the lexicon's scan is never passed as clean (tester12 E).

Posts over ``limits.scan_chars`` were scanned only up to the limit: 200,000 harmless characters
and then a threat came out ``allow``, severity none, with or without the model. Now an allowed
post whose end was not read goes to a person (rule ``unscanned-tail``); a block found in the
part read still blocks, and a post within the limit is judged as before. The policy here scans
2,000 characters so the posts stay small.
"""

from __future__ import annotations

import dataclasses

import pytest

from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.policy import load_policy
from workflows.content_moderation.service import moderate_lexicon_only
from workflows.content_moderation.verdict import Decision

SCAN = 2_000


@pytest.fixture(scope="module")
def workflow() -> ContentModerationWorkflow:
    policy = load_policy()
    limits = policy.limits.model_copy(update={"scan_chars": SCAN})
    return ContentModerationWorkflow(policy=dataclasses.replace(policy, limits=limits))


def _padded(filler: str, tail: str) -> str:
    return filler * (SCAN // len(filler) + 5) + tail


#: (post, decision)
CASES = [
    (_padded("The weather is nice today. ", "you are worthless, go kill yourself"), "review"),
    (_padded("今天天气很好。", "你就是个傻逼，去死吧"), "review"),
    (_padded("今天天氣很好。", "你這個廢物"), "review"),
    (_padded("Thanks for the parcel, it arrived fine. ", "Have a nice day!"), "review"),
    ("go kill yourself " + "lorem ipsum " * (SCAN // 12 + 5), "block"),  # found in the part read
    ("The weather is nice today. " * 20, "allow"),  # within the scan: judged as before
]


@pytest.mark.parametrize(("post", "decision"), CASES)
def test_what_the_lexicon_did_not_read_is_never_passed_as_clean(
    workflow: ContentModerationWorkflow, post: str, decision: str
) -> None:
    verdict = moderate_lexicon_only(post, workflow)
    assert verdict.decision is Decision(decision), verdict.rationale
    assert verdict.input.scan_truncated is (len(post) > SCAN)
    if decision == "review":
        assert verdict.policy_rule == "unscanned-tail"
        assert f"read the first {SCAN:,}" in verdict.rationale
