"""Issue 47: the evaluation protocol (disjoint parts, a held-out topic, logged looks), speech
about harm as a mention at most, and ordinary text in sensitive words staying allowed."""

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


SPEECH_ABOUT_HARM = [
    "我们公司坚决反对任何形式的性别歧视。",
    "别一棍子打死一个省的人，哪里都有好人和坏人。",
    "新闻里说他在地铁上被人种族歧视，太过分了。",
    "说东北人都是骗子的，请拿出证据。",
    "每个民族都有好人坏人，不能以偏概全。",
    "她因为是外地人就被房东歧视，这种事不该发生。",
    "Someone called me a racist slur on the bus today and nobody said anything.",
    "We condemn racism in every form and stand with our neighbours.",
    "Stereotyping a whole country by one tourist is lazy.",
    "Not all immigrants are criminals; the numbers say the opposite.",
]


@pytest.mark.parametrize("post", SPEECH_ABOUT_HARM)
def test_speech_about_harm_is_a_mention_at_most(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    assert _allowed(post, workflow).lexicon.speech_about_harm


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


def _allowed(post: str, workflow: ContentModerationWorkflow):  # -> Verdict
    """The lexicon-and-scorer verdict on ``post``, after asserting that it is not blocked and
    is allowed (the rationale is the failure message)."""
    v = moderate_lexicon_only(post, workflow)
    assert v.decision.value != "block", v.rationale
    assert v.decision.value == "allow", v.rationale
    return v


#: Sensitive words in ordinary senses (science, places, engineering, history, quoting).
ORDINARY = [
    "Retard the ignition timing by two degrees to stop the knocking.",
    "The flame retardant coating passed the fire test.",
    "The Niger river floods every autumn; Niger and Nigeria are neighbours.",
    "Niamey is the capital of Niger.",
    "Black holes retard the passage of time near the horizon.",
    "The gypsy moth caterpillar damages oak trees.",
    "Kill the process with SIGTERM before the upgrade.",
    "The dyke along the river was reinforced after the flood.",
    "Faggots of wood were used as fuel in medieval kitchens.",
    "Spotted dick is a traditional British pudding.",
    "The Nazi invasion of Poland began in September 1939.",
    "In 1963 Martin Luther King Jr. spoke against segregation in Washington.",
    "The novel quotes the slurs of its era so readers see the cruelty.",
    "Shoot the photos in raw format for better colour.",
    "Our chemistry class titrated the acid with sodium hydroxide.",
    "The bastard file is coarser than the smooth file.",
    "Cocktail bars in Essex close at midnight.",
    "黑人球员在这场比赛中拿下了三十分。",
    "河南是中国的人口大省，小麦产量很高。",
    "历史课讲了纳粹德国的种族灭绝政策。",
    "这篇论文研究了性别差异对薪资的影响。",
    "尼日尔河流经几内亚、马里和尼日尔。",
    "这把刀很锋利，切菜的时候小心。",
    "东北的冬天很冷，记得多穿衣服。",
    "他引用了一句古话：人不可貌相。",
    pytest.param(
        "白人和黑人的皮肤对紫外线的反应不同，这是生物学问题。",
        marks=pytest.mark.xfail(
            strict=True,
            reason="known miss (issue 47): the Chinese scorer rates two race words and a "
            "comparison 0.68, over its review threshold, with no lexicon term",
        ),
    ),
    "公司规定不得因性别、地域或民族拒绝求职者。",
    "请问上海到广州的高铁几点发车？",
]


@pytest.mark.parametrize("post", ORDINARY)
def test_ordinary_sentences_with_sensitive_words_are_allowed(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    _allowed(post, workflow)
