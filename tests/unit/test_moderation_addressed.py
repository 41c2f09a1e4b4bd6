"""Issue 47: everyday insults aimed at the reader ("you <contempt words> <insult noun>") are
reviewed as a KIND, not as a list of phrases; the same nouns about animals, things or jobs stay
allowed. Inputs written for this file (none of them is the issue's example), English and
Chinese, lexicon + scorer path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.data.moderation_cases import flag_cases, judged
from workflows.content_moderation.addressed import (
    AddressedError,
    addressed_insults,
    load_addressed_rules,
)
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.service import moderate_lexicon_only

AIMED_AT_THE_READER = [
    "You greedy little leeches, give the money back.",
    "get lost, you spineless worms",
    "You guys are such pathetic losers.",
    "u r all brainless sheep",
    "You're a lying weasel and everyone knows it.",
    "Shut up, you ignorant cockroach!",
    "you people are nothing but parasites",
    "You smelly rodents ruined the thread.",
    "you disgusting maggots",
    "Keep crying, you clueless buffoons.",
    "You vile, slimy snakes.",
    "ur a total degenerate",
    "Sit down, you absolute muppets.",
    "you bunch of pathetic losers",
    "You're nothing but inbred hicks.",
    "你们这群蠢猪，滚出去",
    "你就是个没用的废物",
    "你们这帮人渣懂什么",
    "你這個垃圾給我閉嘴",  # traditional script: folded before matching
]

ORDINARY = [
    "Pigs are smarter than most dogs, according to the study.",
    "Rats were trained to find landmines in Cambodia.",
    "The clowns at my niece's birthday party were great.",
    "Did you see the snakes at the reptile house?",
    "You can feed the pigs after lunch.",
    "If you keep rats as pets, give them a big cage.",
    "You pig farmers deserve a fair price for your pork.",
    "Thank you clowns for making the kids laugh!",
    "Have you ever seen cockroaches in the kitchen?",
    "Your dogs are adorable.",
    "Did you rat me out to the teacher?",
    "You trash the kitchen every time you cook.",
    "I told you the worms are good for the soil.",
    "Are you a clown at the party or a guest?",
    "You guys are animals in the gym, great session!",
    "You're such a beast at chess.",
    "We saw a bunch of rats near the station.",
    "迷你猪在农场里很受欢迎。",
    "送你狗粮和猫砂，记得收。",
    "你们这群孩子真可爱。",
]
#: Low-severity insults aimed at the reader (a second person just before, or said as a form of
#: address after a comma) count as medium: written for this file (issue 47).
LOW_INSULTS_AIMED = [
    "@maria you're the stupidest person in this thread",
    "Kevin, you are worthless and ugly",
    "nobody asked you, loser.",
    "get off my page, freak!",
    "@老李 你真是蠢死了",
    "你们真是太蠢了",
    "你这个死胖子，看了就想吐",
    "那个丑八怪又来了，看着就烦",
]
#: The same words not aimed at anyone, or said of oneself.
LOW_INSULTS = [
    "That was the dumbest idea of the year, and I had it.",
    "What a pathetic excuse for a bus timetable.",
    "I feel so stupid for forgetting my keys again.",
    "ok, stupid question: where is the station?",
    "这道题我做错了，真蠢",
    "我昨天真蠢，把钥匙锁在车里了",
]
#: Ordinary Chinese posts with no lexicon term that the Chinese scorer rates 0.47 and 0.44: over
#: its 0.43 threshold, but under the probability from which it may review alone (policy.toml
#: [scorer], its dev precision), so they are allowed.
SCORER_REVIEWS = [
    "你是狗主人吗？请给狗拴绳。",
    "你是垃圾分类志愿者吗？",
]


@pytest.mark.parametrize(
    ("post", "flagged"),
    [*flag_cases(AIMED_AT_THE_READER, ORDINARY), *flag_cases(LOW_INSULTS_AIMED, LOW_INSULTS)],
)
def test_an_insult_aimed_at_the_reader_is_reviewed_the_same_words_otherwise_allowed(
    post: str, flagged: bool, workflow: ContentModerationWorkflow
) -> None:
    judged(post, flagged, workflow, category="harassment")
    assert flagged or post in LOW_INSULTS or addressed_insults(normalize(post).text) == []


@pytest.mark.parametrize("post", SCORER_REVIEWS)
def test_the_scorer_alone_under_its_dev_precision_floor_allows_these_ordinary_posts(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    # no lexicon or addressed hit: only the scorer could review them, and it may not alone
    assert judged(post, False, workflow).spans == ()


def test_a_reported_insult_stays_a_mention() -> None:
    """Quoted in a report of someone else's words, the addressed insult is a mention."""
    post = 'The driver yelled "you filthy rats" at the kids, so I reported him.'
    verdict = moderate_lexicon_only(post, ContentModerationWorkflow())
    assert verdict.decision.value == "allow"


def test_the_hit_names_the_insult_and_its_span() -> None:
    text = normalize("well, you pathetic clowns lost again").text
    [(start, end, term)] = addressed_insults(text)
    assert term == "you clown"
    assert text[start:end] == "you pathetic clowns"


def test_a_bad_list_file_is_named_with_its_problem(tmp_path: Path) -> None:
    bad = tmp_path / "addressed.toml"
    bad.write_text('version = "x"\nseverity = "loud"\nopeners_en = ["you"]\n', encoding="utf-8")
    with pytest.raises(AddressedError, match=r"addressed\.toml"):
        load_addressed_rules(bad)
