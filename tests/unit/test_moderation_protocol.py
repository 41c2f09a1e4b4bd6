"""Issue 47: the evaluation protocol (disjoint parts, a held-out topic, logged looks) and
questions about a charge of harm. Speech about harm is tested in test_moderation_speech_kinds.py,
ordinary text in sensitive words in test_moderation_guard_kinds.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.moderation_data import DATA, needs_data
from workflows.content_moderation.dataset import (
    HELDOUT_TOPIC,
    PARTS,
    load_moderation_set,
    load_ordinary_set,
    part_of,
)
from workflows.content_moderation.evaluation import evaluate_lexicon, record_look
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only


@needs_data
def test_parts_are_disjoint_and_the_heldout_topic_is_nowhere_else() -> None:
    parts = {name: load_moderation_set(DATA, name) for name in PARTS}
    ids = {name: {(p.source, p.text) for p in posts} for name, posts in parts.items()}
    for a in PARTS:
        for b in PARTS:
            if a < b:
                assert not ids[a] & ids[b], (a, b)
    assert all(p.topic == HELDOUT_TOPIC for p in parts["heldout-topic"])
    for name in ("train", "dev", "test"):
        assert all(p.topic != HELDOUT_TOPIC for p in parts[name])
    # the fine-labelled COLD file joins every part; its anti-bias posts are in test and dev
    for name in ("dev", "test", "heldout-topic"):
        assert any(p.fine == "anti-bias" for p in parts[name])
    # the old held-out half never reaches train or dev
    assert all(p.split == "tune" for p in parts["train"] + parts["dev"])


@needs_data
def test_ordinary_parts_follow_the_same_rule() -> None:
    dev = load_ordinary_set(DATA, "dev")
    assert dev and all(p.part == "dev" == part_of(p.source, p.text, None) for p in dev)


def test_part_of_is_stable_and_uses_the_topic() -> None:
    assert part_of("x.csv", "同一句话", "race") == part_of("x.csv", "同一句话", "race")
    assert part_of("x.csv", "同一句话", HELDOUT_TOPIC) in ("heldout-topic", "unused")


@needs_data
def test_a_look_at_held_out_data_is_recorded(tmp_path: Path) -> None:
    posts = load_moderation_set(DATA, "heldout-topic")[:12]
    report = evaluate_lexicon(posts, split="heldout-topic")
    log = tmp_path / "looks.log"
    record_look(log, report, "moderation eval --split heldout-topic")
    record_look(log, report, "moderation eval --split heldout-topic")
    lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2 and lines[0]["split"] == "heldout-topic"
    summary = lines[0]["summary"]["lexicon+scorer"]
    assert any(row["dataset"] == "zh (all COLD)" for row in summary)


@pytest.mark.parametrize(
    "post", ["这也能算地域黑？", "有什么歧视？会说两种话是本事", "这是歧视吗？"]
)
def test_a_question_that_doubts_the_charge_is_a_mention(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    v = moderate_lexicon_only(post, workflow, scorer=False)
    assert v.lexicon.mentions >= 1 and v.decision.value == "allow", v.rationale


@pytest.mark.parametrize("post", ["就歧视怎么样了？不满意可以不来", "我就是要歧视他们？"])
def test_a_question_that_asserts_the_harm_is_no_mention(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    v = moderate_lexicon_only(post, workflow, scorer=False)
    assert v.lexicon.mentions == 0 and v.decision.value != "allow"


@pytest.mark.parametrize(
    "post",
    [
        "我不歧视，但是河南人就是爱骗人",
        "别说我地域黑，东北人都是骗子",
        "They called me a bigot but those people really are animals, ban them all",
    ],
)
def test_a_but_after_the_cue_cancels_it(post: str, workflow: ContentModerationWorkflow) -> None:
    v = moderate_lexicon_only(post, workflow)
    assert not v.lexicon.speech_about_harm
