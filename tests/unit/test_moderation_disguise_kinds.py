"""Issue 47, item 4: each evasion kind the issue names, tried with inputs written for this file
(not the issue's examples, not the ones of test_moderation_disguise.py), in English and Chinese:
bidi controls and other invisible formatting, emoji standing for words, Traditional Chinese.
Each kind also has ordinary posts that must stay allowed."""

from __future__ import annotations

import pytest

from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only
from workflows.content_moderation.verdict import Verdict

RLO, LRE, PDF, RLI, FSI, PDI = "\u202e", "\u202a", "\u202c", "\u2067", "\u2068", "\u2069"
ZWSP, ZWNJ, ZWJ, WJ, SHY, BOM = "\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff"


def _verdict(post: str, workflow: ContentModerationWorkflow) -> Verdict:
    return moderate_lexicon_only(post, workflow, scorer=False)


def _same_as_plain(disguised: str, plain: str, workflow: ContentModerationWorkflow) -> Verdict:
    """The disguised post gets at least the plain post's decision, and the plain one is flagged."""
    order = ("allow", "review", "block")
    shown, bare = _verdict(disguised, workflow), _verdict(plain, workflow)
    assert bare.decision.value != "allow", f"plain form not flagged: {plain!r}"
    assert order.index(shown.decision.value) >= order.index(bare.decision.value), (
        disguised,
        shown.rationale,
    )
    return shown


BIDI = [
    (f"{RLO}tihs fo eceip uoy{PDF}", "you piece of shit"),
    (f"honestly {RLO}eid dluohs uoy{PDF}, nobody cares", "honestly you should die, nobody cares"),
    (
        f"{RLI}ecnatsid ruoy peek{PDI} or {RLO}uoy llik lliw i",
        "keep your distance or i will kill you",
    ),
    (f"{RLO}蛋混个你{PDF}", "你个混蛋"),
    (f"{RLO}吧死去就你{PDF}，别回来", "你就去死吧，别回来"),
    (f"{FSI}{RLO}痴白{PDF}{PDI}一个", "白痴一个"),
]


INVISIBLE = [
    (f"you st{ZWSP}upid b{ZWSP}itch", "you stupid bitch"),
    (f"kill your{SHY}self", "kill yourself"),
    (f"f{WJ}u{WJ}c{WJ}k you", "fuck you"),
    (f"{BOM}go die{ZWNJ} in a fire", "go die in a fire"),
    (f"你个傻{ZWSP}逼", "你个傻逼"),
    (f"去{ZWJ}死吧你", "去死吧你"),
    (f"滚{WJ}出{WJ}去，垃{SHY}圾", "滚出去，垃圾"),
]


EMOJI = [
    ("🖕🖕🖕 to all of you", "fuck to all of you"),
    ("eat 💩 you 🤡", "eat shit you clown"),
    ("one more word and you're 💀", "one more word and you're dead"),
    ("keep talking and I'll 🔫 you", "keep talking and I'll shoot you"),
    ("我要🔪了你", "我要刀了你"),
    ("你就是一坨💩", "你就是一坨屎"),
    ("你这条🐶", "你这条狗"),
    ("🤬你全家", "操你全家"),
]


TRADITIONAL = [
    ("你們這群廢物", "你们这群废物"),
    ("滾出去，垃圾", "滚出去，垃圾"),
    ("去死吧你這個白癡", "去死吧你这个白痴"),
    ("你這隻🐷，閉嘴", "你这只猪，闭嘴"),
    ("我會殺了你全家", "我会杀了你全家"),
]


#: Each kind, and the input report count that must show the disguise (None: none kept).
KINDS = [
    *[pytest.param(p, plain, "bidi_controls", id=f"bidi-{i}") for i, (p, plain) in enumerate(BIDI)],
    *[pytest.param(p, plain, None, id=f"invisible-{i}") for i, (p, plain) in enumerate(INVISIBLE)],
    *[pytest.param(p, plain, "emoji_words", id=f"emoji-{i}") for i, (p, plain) in enumerate(EMOJI)],
    *[
        pytest.param(p, plain, None, id=f"traditional-{i}")
        for i, (p, plain) in enumerate(TRADITIONAL)
    ],
]


@pytest.mark.parametrize(("post", "plain", "counter"), KINDS)
def test_each_disguise_kind_is_judged_like_its_plain_form(
    post: str, plain: str, counter: str | None, workflow: ContentModerationWorkflow
) -> None:
    v = _same_as_plain(post, plain, workflow)
    if counter is not None:  # the disguise's presence is recorded
        assert getattr(v.input, counter) >= 1


ORDINARY = [
    "We saw a 🐍 at the reptile house and the kids loved it.",
    "Water 🔫 fight at the pool this Saturday!",
    "The 💀 emoji means I laughed too hard.",
    "Our new 🐒 enclosure opens to visitors on Monday.",
    "周末带孩子去动物园看🐒和🐍",
    "这把🔪切三文鱼很顺手",
    "萬聖節的💀裝飾很可愛",
    "這家餐廳的豬肉料理很好吃",
    f"Invoice{ZWSP} no. 4471 is attached{SHY} below.",
    f"会议改到{RLI}10:30{PDI}，地点不变",
    f"{BOM}請問退款多久到賬？",
]


@pytest.mark.parametrize("post", ORDINARY)
def test_ordinary_posts_with_each_disguise_character_stay_allowed(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    assert _verdict(post, workflow).decision.value == "allow"
    assert moderate_lexicon_only(post, workflow).decision.value != "block"
