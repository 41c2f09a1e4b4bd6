"""Issue 47, three insult kinds, each with varied posts written for this file (English and
Chinese) and ordinary posts of the same words that stay allowed, lexicon + scorer path:

* body and looks insults aimed at the reader or at another user of the thread (楼上的…);
* animal emoji used as insults (🐀, 🐄, 🐢 …), while farm, pet and zoo posts stay allowed;
* leetspeak: digits for letters in the words around an insult ("y0u r a m0r0n")."""

from __future__ import annotations

import pytest

from tests.data.moderation_cases import flag_cases, judged
from tests.data.moderation_kinds8 import KINDS8
from workflows.content_moderation.addressed import addressed_insults
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.normalize import normalize, unleet_words

BODY_INSULTS = [
    "楼主这个丑八怪还好意思发自拍",
    "楼下那个矮子懂什么，闭嘴吧",
    "层主就是个肥婆，别装了",
    "楼上的秃子又来了",
    "你这个死肥宅天天在这刷屏",
    "你们这群丑八怪",
    "你长得真丑，别发照片了",
    "你好胖啊，还穿这个",
    "妳長得真醜",  # Traditional script
    "up主这个大饼脸笑死人",
    "you fat lardass, nobody asked",
    "shut up, you ugly fatso",
    "ur such a porker lol",
    "shut up fatso",
    "get lost, lardass",
    "楼上长得跟猪一样",
    "你长得像头猪",
    "楼主长得真丑",
    "二楼的死胖子",
    "你真是丑到家了",
    "you look like a pig",
    "you sound like a moron",
]
BODY_ORDINARY = [
    "我楼上的邻居养了一只狗，一直叫",
    "楼上说得对，我也这么觉得",
    "胖子也有春天，这部电影挺好看",
    "你好胖虎，好久不见",
    "你胖了一点，最近伙食不错吧",
    "这件衣服显胖，换一件吧",
    "the fat content of this milk is 3%",
    "my cat is a little chubby but healthy",
    "shut up and dance with me",
    "get lost in a good book this weekend",
    "you, pigs and goats are welcome at the fair",
    "你长得像你妈",
    "你长得跟明星一样",
    "楼上的狗长得像猪",
    "他长得真丑，但是演技很好",
    "you look like a million dollars",
    "it looks like a pig from here",
    "you looked like a snake charmer",
]
ANIMAL_EMOJI = [
    "you 🐀",
    "shut up you 🐄",
    "you filthy 🐀🐀",
    "ur a 🪳",
    "you're nothing but a 🐛",
    "你个🐀",
    "你这个🐢",
    "你们这群🐀",
    "你这头🐗",
]
ANIMAL_EMOJI_ORDINARY = [
    "our farm has 3 🐄 and 2 🐖",
    "look at this cute 🐄 on our farm",
    "my pet 🐀 loves cheese",
    "the 🐀 in the subway were huge",
    "我家的🐢今天吃了好多菜",
    "你看这只🐄好可爱",
    "you should see my 🐢, he is 40 years old",
    "这个牛排🐄太好吃了",
]
LEET = [
    "y0u r a m0r0n",
    "y0u 1d10t",
    "ur such an 1d10t lol",
    "y0u ar3 such a l0s3r",
    "y0u r tr4sh",
    "u r a p4th3tic cl0wn",
    "sh0ut up, l0s3r",
    "y0u st00pid p1g",
    "stfu 1d10t",
]
LEET_ORDINARY = [
    "1 think y0u r right",
    "my r00m is 404 and y0u r welcome",
    "h3ll0 fr13nds, y0u r awesome",
    "the b1ke has 3 g3ars",
    "I was born in 1999 and live in room 4b",
]


@pytest.mark.parametrize(
    ("post", "flagged"),
    [
        *flag_cases(BODY_INSULTS, BODY_ORDINARY),
        *flag_cases(ANIMAL_EMOJI, ANIMAL_EMOJI_ORDINARY),
        *flag_cases(LEET, LEET_ORDINARY),
        *KINDS8,
    ],
)
def test_insult_kinds_are_flagged_and_ordinary_posts_allowed(
    post: str, flagged: bool, workflow: ContentModerationWorkflow
) -> None:
    judged(post, flagged, workflow, category="harassment")


def test_leetspeak_words_are_read_as_letters_with_offsets_kept() -> None:
    text = "y0u r a m0r0n at 9pm in room 101"
    assert unleet_words(text) == "you r a moron at 9pm in room 101"
    assert len(unleet_words(text)) == len(text)
    assert [t for _, _, t in addressed_insults(unleet_words(text))] == ["you moron"]
    assert addressed_insults(normalize("楼上的狗一直叫").text) == []
