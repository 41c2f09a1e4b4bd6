"""Issue 47, three more insult kinds (session 8), with posts written for this file and ordinary
posts of the same words that stay allowed, judged on the lexicon + scorer path by
``tests/unit/test_moderation_disguise_kinds7.py`` (one table with the kinds before them):

* a remark on the reader's body or looks with a degree word (你也太胖了吧, 你真是丑得可以,
  你怎么这么胖, 你胖得像头猪);
* English insults with "you're" misspelled ("your so fat", "ur a loser", "u r ugly");
* an insult emoji aimed at a person by handle or before "you" ("@user 🐀", "🐷 you"), while
  the same emoji on a farm or in a handle's ordinary post stays allowed."""

from __future__ import annotations

from tests.data.moderation_cases import flag_cases

DEGREE_LOOKS = [
    "你也太胖了吧",
    "你真是丑得可以",
    "你怎么这么胖",
    "你咋那么丑啊",
    "你胖得像头猪",
    "楼主也太丑了吧",
    "你们也太矮了吧哈哈哈",
    "你简直丑爆了",
    "你可真是胖得离谱",
    "你这么丑还好意思发照片",
    "楼上长得也太磕碜了吧",
    "你真的好丑啊",
    "你咋长这么丑",
    "你怎么胖成这样",
    "你真够丑的",
    "你也太胖了点吧",
    "妳也太醜了吧",
]
DEGREE_ORDINARY = [
    "这件衣服也太贵了吧",
    "你也太厉害了吧",
    "你真是美得可以",
    "这只猫也太胖了吧，好可爱",
    "我最近也太胖了，要减肥",
    "你画的猪也太丑了吧哈哈",
    "你家的狗也太胖了吧",
    "你真是瘦得可以，多吃点",
    "胖得不行的猫咪好可爱",
    "你长这么高了，真好",
    "你胖了好多，看来过得不错",
    "这个菜也太咸了吧",
]
MISSPELT = [
    "your so fat",
    "ur fat af",
    "u r ugly",
    "your so stupid",
    "youre disgusting",
    "you so ugly lol",
    "your a pig",
    "ur gross",
    "u r such a loser",
    "ur a looser",
    "ur an idoit",
    "your so dum",
    "u are so ugly",
]
MISSPELT_ORDINARY = [
    "your order is on its way",
    "your so welcome",
    "ur kind af",
    "is your fat intake too high?",
    "your fat loss plan looks solid",
    "your dog is so fat lol",
    "u r so sweet lol",
    "your pig is the cutest at the fair",
    "ur looser jeans look great",
    "ur a legend",
    "your so funny lol",
]
AIMED_EMOJI = [
    "🐷 you",
    "🤡 you!",
    "@user 🐀",
    "@john_doe 🤡🤡",
    "lol @mike 🐷🐷",
    "@kevin: 🐍",
    "@小明 🐷",
    "@阿强 🤡",
    "🤡 @user",
    "@user is a 🐀",
    "hey @user, 🤡",
]
AIMED_EMOJI_ORDINARY = [
    "🐷 on the farm today",
    "the farm has 🐷🐷 and 🐄",
    "@user thanks for the 🐷 photos from the farm",
    "@user 🐷 farm tour was great",
    "🐷 you know, pigs are smart",
    "@阿强 猪肉多少钱一斤",
    "@小红 🐷年快乐",
    "@user 👍",
    "@user is a 🐶 lover",
    "@user 🐷 plush toy is on sale",
    "@老王 🐷肉今天打折",
]


#: The three kinds as one parametrize table of ``(post, flagged)``.
KINDS8 = [
    *flag_cases(DEGREE_LOOKS, DEGREE_ORDINARY),
    *flag_cases(MISSPELT, MISSPELT_ORDINARY),
    *flag_cases(AIMED_EMOJI, AIMED_EMOJI_ORDINARY),
]
