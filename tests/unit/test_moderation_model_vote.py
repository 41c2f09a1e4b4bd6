"""The model's vote alone (issue 44, item 4): with the CPU default model's measured precision
(policy.toml: ``solo_review_precision`` under ``solo_review_min_precision``), a flag from the
model on a post the lexicon and the scorer pass is a note, not a review; a flag with a
measured precision that supports it, or a flag with the scorer's support, still reviews."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows.content_moderation import ContentModerationWorkflow, Decision
from workflows.content_moderation.policy import load_policy
from workflows.content_moderation.service import Moderator

HARASSMENT_AT_70 = json.dumps(
    {
        "decision": "review",
        "severity": "medium",
        "categories": [{"category": "harassment", "score": 70}],
        "confidence": 70,
        "rationale": "may be harassment",
        "evidence": [],
    }
)
CLEAN_POSTS = [
    "The delivery was quick and the packaging was nice. Would buy again.",
    "Could you tell me when my refund will arrive? Thanks.",
    "送餐很快，包装也很好，下次还点这家。",
    "请问我的退款什么时候到账？谢谢。",
]


@pytest.fixture
def store(tmp_path: Path) -> TelemetryStore:
    return TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")


def test_the_packaged_policy_states_a_measured_precision_under_its_threshold() -> None:
    policy = load_policy()
    assert policy.solo_review_precision is not None
    assert policy.solo_review_precision < policy.solo_review_min_precision
    assert not policy.model_may_review_alone
    assert policy.model_vote("none", "review") == "noted"
    assert policy.model_vote("low", "block") == "noted"
    assert policy.model_vote("medium", "block") == "block"  # not alone: the lexicon flags too
    assert policy.model_vote("absent", "review") == "review"  # the model-alone evaluation


@pytest.mark.parametrize("post", CLEAN_POSTS)
async def test_a_model_flag_alone_is_a_note_not_a_review(
    post: str, workflow: ContentModerationWorkflow, store: TelemetryStore
) -> None:
    moderator = Moderator(ScriptedModel(json_reply=HARASSMENT_AT_70), store, workflow=workflow)
    verdict = (await moderator.moderate(post)).verdict
    assert verdict is not None and verdict.assessment is not None
    assert verdict.assessment.decision is Decision.REVIEW  # the model did flag it
    assert verdict.scorer is not None and verdict.scorer.state in ("low", "clear")  # clear: zh
    assert verdict.decision is Decision.ALLOW
    assert verdict.policy_rule == "clean-text-allowed"
    assert "a note only" in verdict.rationale


async def test_a_model_with_enough_measured_precision_still_sends_to_review(
    store: TelemetryStore,
) -> None:
    policy = dataclasses.replace(load_policy(), solo_review_precision=0.93)
    trusted = ContentModerationWorkflow(policy=policy)
    moderator = Moderator(ScriptedModel(json_reply=HARASSMENT_AT_70), store, workflow=trusted)
    verdict = (await moderator.moderate(CLEAN_POSTS[0])).verdict
    assert verdict is not None
    assert verdict.decision is Decision.REVIEW
    assert verdict.policy_rule == "model-flags-clean-text"
