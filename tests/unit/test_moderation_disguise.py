"""Issue 47, item 4: disguises are undone before matching (bidi controls, insulting emoji,
Traditional Chinese), their presence is recorded, and ordinary uses stay allowed."""

from __future__ import annotations

import unicodedata

import pytest

from workflows.content_moderation.disguise import BIDI_CONTROLS, load_emoji_words, reveal
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only

RLO, PDF, RLI, PDI = "\u202e", "\u202c", "\u2067", "\u2069"


def _lexicon(post: str, workflow: ContentModerationWorkflow):  # -> Verdict
    return moderate_lexicon_only(post, workflow, scorer=False)


def _flagged(post: str, workflow: ContentModerationWorkflow):  # -> Verdict
    """The lexicon-only verdict on ``post``, after asserting that it is not allowed."""
    v = _lexicon(post, workflow)
    assert v.decision.value != "allow", v.rationale
    return v


@pytest.mark.parametrize(
    ("post", "shown"),
    [
        # the display order, then the stored order (controls stripped) on a line of its own
        (f"go {RLO}flesruoy llik", "go kill yourself\ngo flesruoy llik"),
        (f"{RLO}uoy llik lliw i{PDF} said he", "i will kill you said he\nuoy llik lliw i said he"),
        (
            f"ok {RLI}tsil eht ni era uoy{PDI} fine",
            "ok you are in the list fine\nok tsil eht ni era uoy fine",
        ),
        ("plain\u200e text\u200f here", "plain text here"),
    ],
)
def test_bidi_runs_are_read_in_display_order(post: str, shown: str) -> None:
    r = reveal(post)
    assert r.text == shown
    assert r.bidi == sum(post.count(c) for c in BIDI_CONTROLS) > 0
    # every revealed character still points at the character it came from (the added line
    # break between the two readings points at the post's last character)
    for i, ch in enumerate(r.text):
        assert post[r.starts[i] : r.ends[i]] == ch or (ch == "\n" and r.ends[i] == len(post))


@pytest.mark.parametrize(
    "post",
    [
        f"go {RLO}flesruoy llik",
        f"you should {RLO}eid{PDF} tonight",
        f"{RLO}hctib diputs{PDF}",
        f"他说{RLO}你了杀{PDF}",
    ],
)
def test_a_bidi_disguised_insult_is_flagged_and_the_controls_reported(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    v = _flagged(post, workflow)
    assert v.input.bidi_controls >= 1
    assert "bidi control" in v.rationale
    for span in v.spans:  # spans index into the post as received
        assert 0 <= span.start < span.end <= len(post)


def test_bidi_controls_in_an_ordinary_post_are_recorded_but_allowed(
    workflow: ContentModerationWorkflow,
) -> None:
    v = _lexicon(f"Meeting at {RLI}10:30{PDI} in room {RLO}B4{PDF}.", workflow)
    assert v.decision.value == "allow"
    assert v.input.bidi_controls == 4


@pytest.mark.parametrize(
    "post",
    [
        "you 🐷 🤡, go 🖕 yourself",
        "🖕🏽 you",
        "I will 🔪 you tonight",
        "shut up you 🤡",
        "you're 💀 when I find you",
        "你这头🐷",
        "你个🤡，滚",
    ],
)
def test_insulting_emoji_read_as_words_are_flagged(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    assert _flagged(post, workflow).input.emoji_words >= 1


@pytest.mark.parametrize(
    "post",
    [
        "The 🐷 on our farm had six piglets this spring.",
        "Slice the onions with a sharp 🔪 and fry them.",
        "Halloween party: costumes 💀🎃 and a 🤡 for the kids!",
        "My 🐶 loves the park 😍",
        "Happy birthday! 🎉🎂",
        "农场里的🐷长得很快",
        "切菜要用锋利的🔪",
        "lol that joke, I'm 💀",
    ],
)
def test_ordinary_emoji_uses_stay_allowed(post: str, workflow: ContentModerationWorkflow) -> None:
    assert _lexicon(post, workflow).decision.value == "allow"
    assert moderate_lexicon_only(post, workflow).decision.value != "block"


def test_every_emoji_entry_is_one_named_character_with_words() -> None:
    table = load_emoji_words()
    assert len(table.words) >= 10
    for ch, (en, zh) in table.words.items():
        assert len(ch) == 1 and unicodedata.name(ch, "")  # a real, named character
        assert en.isascii() and en.strip() == en
        assert any("\u4e00" <= c <= "\u9fff" for c in zh)


@pytest.mark.parametrize(
    ("traditional", "simplified"),
    [("你們這些騙子", "你们这些骗子"), ("殺了你", "杀了你"), ("請審核這條評論", "请审核这条评论")],
)
def test_traditional_chinese_is_folded(traditional: str, simplified: str) -> None:
    assert reveal(traditional).text == simplified


@pytest.mark.parametrize("post", ["殺了你", "我要弄死你們", "你這頭豬"])
def test_traditional_chinese_insults_match_like_simplified(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    assert _lexicon(post, workflow).decision.value != "allow"
