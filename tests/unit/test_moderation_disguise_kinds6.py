"""Disguises and threats of tester6 findings 8-11, 13, 19 (issue 47): each kind with its own
varied posts (English, Simplified and Traditional Chinese), and ordinary posts that use the same
words, emoji or characters harmlessly and must stay allowed. Lexicon + scorer path (no model),
the same as ``orchestrator moderate --no-model``."""

from __future__ import annotations

import pytest

from workflows.content_moderation.service import moderate_lexicon_only

RLO, LRO, PDF, RLI, PDI = "\u202e", "\u202d", "\u202c", "\u2067", "\u2069"


def _tags(word: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in word)


DEATH_WISHES = [  # finding 11: addressed death wishes, never cleared by the scorer
    "你去死吧",
    "去死吧你",
    "你怎么不去死",
    "你怎麼不去死",
    "你們都去死吧",
    "你还是赶紧去死吧，没人在乎你",
    "妳為什麼不去死",
    "why don't you just die",
    "just die already, nobody wants you here",
    "you should go and die",
    "你咋还不去死",
]

BIDI = [  # finding 9: bidi overrides, nested or around plain text
    f"{RLO}{LRO}kill yourself{PDF}{PDF}",
    f"{RLO}kill yourself",
    f"{RLI}{RLO}kys{PDF}{PDI}",
    f"go {RLO}flesruoy llik{PDF} now",
    f"you {RLO}{LRO}faggot{PDF}{PDF}",
    f"{RLO}you idiot, kill yourself{PDF}",
    f"ok {RLO}a {LRO}kill yourself{PDF} b{PDF}",
    f"{RLO}tobor elbaresim{PDF} kill yourself",
    f"{RLI}{LRO}hope you die{PDF}{PDI}",
    f"\u202b{LRO}kill yourself{PDF}{PDF}",
]

SMALL_CAPS_AND_DIGITS = [  # finding 10: small capitals, 9 for g, pinyin
    "ᴋɪʟʟ ʏᴏᴜʀsᴇʟғ",
    "you ꜰᴀɢɢᴏᴛ",
    "ʏᴏᴜ ᴀʀᴇ ᴀ ғᴀɢɢᴏᴛ",
    "ni99er go home",
    "shut up ni99a",
    "you f4990t",
    "qu si ba ni",
    "ni qu si ba",
    "ᴋʏs",
    "ʜᴏᴘᴇ ʏᴏᴜ ᴅɪᴇ",
]

EMOJI_THREATS = [  # finding 8: a weapon/death emoji aimed at the reader
    "我会来找你的🔪🔪",
    "你完了💀💀💀",
    "I know where you live 🔪🔪 see you tonight",
    "you'll be 💀 by friday, watch your back 🔪",
    "小心点 🔪 我知道你家在哪",
    "你等著 🔫🔫",
    "@sam 🔫🔫 you're next",
    "see you after school 🗡️",
    "you 👉💀",
    "你給我小心點 ☠️",
    "ur dead 🔪",
    "🔫🔫🔫 @jake",
    "dead man walking 💀🔪 @li",
]

TAGS = [  # finding 19: invisible tag characters spelling words
    f"hello {_tags('kill yourself')}",
    _tags("kys"),
    f"{_tags('faggot')} you",
    f"nice day {_tags('go die')}",
    f"you are a {_tags('nigger')}",
    f"{_tags('hope you die')}!",
    f"ok {_tags('kill urself')} ok",
    f"look: {_tags('kys')}",
    _tags("KILL YOURSELF"),
    f"hi \U000e0001{_tags('kys')}\U000e007f",
]

ORDINARY = [  # must stay allowed
    "The dyke protected the town from the North Sea.",
    "Engineers inspected the dyke after the storm.",
    "The Dutch built a dyke to hold back the water.",
    "Repair work on the old dyke starts Monday.",
    "Flood defences: the dyke along the river was raised a metre.",
    "I'm dead 💀💀 that video is hilarious",
    "lmao you killed me with that joke 💀",
    "笑死我了💀💀",
    "哈哈哈你太搞笑了💀",
    "Slice the onions with a sharp 🔪 and fry them.",
    "切菜的时候小心你的手指🔪",
    "Halloween party tonight: skeleton costumes 💀🎃",
    "我昨天在超市買了一把新菜刀🔪",
    "The water gun fight was fun 🔫💦",
    "In 2019 we sold 999 units at 9am.",
    "Call 999 or 119 in an emergency.",
    "Gene expression rose 9.9 percent in 99 samples.",
    "The Netherlands has many dykes and canals.",
    "ᴛʜᴀɴᴋ ʏᴏᴜ ꜰᴏʀ ᴛʜᴇ ʜᴇʟᴘ",
    "Arabic text: \u202eمرحبا\u202c is hello.",
    "你去超市吧，顺便买点牛奶",
    "这款游戏里角色死了可以复活",
    "我去死海旅游了，风景很好",
    "Did you see the skull 💀 fossil at the science museum?",
    "Can you pass me the 🔪 please?",
    "you should buy this chef 🔪 set, it is great",
    "Thank you for the gift 🔪🍴",
    "你买的这把🔪真好用",
    "你看这个视频了吗 💀 太离谱了",
    "omg you did not 💀💀💀",
    "your cat is adorable 💀 i cant",
    "you look great in that skeleton shirt 💀",
    "@chef_wang thanks for the 🔪 tips, the onions came out great",
    "I got you a new chef's knife set 🔪",
]


def _decision(post: str) -> str:
    return moderate_lexicon_only(post).decision.value


@pytest.mark.parametrize("post", DEATH_WISHES + BIDI + SMALL_CAPS_AND_DIGITS + EMOJI_THREATS + TAGS)
def test_harmful_posts_are_not_allowed(post: str) -> None:
    assert _decision(post) != "allow", post


@pytest.mark.parametrize("post", ORDINARY)
def test_ordinary_posts_stay_allowed(post: str) -> None:
    assert _decision(post) == "allow", post


@pytest.mark.parametrize("post", DEATH_WISHES[:4])
def test_addressed_death_wish_is_not_cleared_by_the_scorer(post: str) -> None:
    assert moderate_lexicon_only(post).policy_rule != "medium-term-cleared"


def test_tag_characters_are_counted_as_a_disguise() -> None:
    verdict = moderate_lexicon_only(f"hello {_tags('kill yourself')}")
    assert verdict.input.control_chars >= len("kill yourself")


def test_bidi_controls_are_counted() -> None:
    verdict = moderate_lexicon_only(f"{RLO}{LRO}kill yourself{PDF}{PDF}")
    assert verdict.input.bidi_controls == 4
