"""Issue 47, item 3: speech about harm is not harm. A post that reports or quotes someone
else's slur, threat or insult, that judges a quoted claim as bias, or that condemns a harm,
is a mention at most
(allowed, with the lexicon + scorer path); the same words said to the reader are still
flagged. Inputs written for this file, English and Chinese."""

from __future__ import annotations

import pytest

from tests.data.moderation_cases import flag_cases, judged
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.mention import load_mention_rules
from workflows.content_moderation.service import moderate_lexicon_only

SPEECH_ABOUT_HARM = [
    'The coach was suspended after he called a player a "retard" during practice.',
    'Someone spray-painted "go back to your country" on the mosque wall last night.',
    'Please remove this comment, the user wrote "stupid bitch" under my photo.',
    'Headline: fans chanted "faggot" at the goalkeeper; the club was fined.',
    'In the video the man shouted "I will kill you" at the driver.',
    '"Women can\'t drive" is a sexist myth and the crash data shows it.',
    "有网友在评论区骂她“贱人”，已经举报了。",
    "新闻里那个司机对乘客喊“乡巴佬滚回去”，真是太过分了。",
    "他们把外地人叫作“蝗虫”，这个称呼很侮辱人。",
    "据报道，球迷高喊“黑鬼”，俱乐部被罚款。",
    "老师说“女生学不好数学”，这种说法是偏见。",
    "“河南人都是骗子”这种话就是地域黑。",
    # speech that condemns or doubts a harm
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
    # a slur named as a word, documented or reported (single straight quotes too; critical
    # terms under the stricter cues), and abuse reported to someone who can act
    "The museum label explains that the word 'coon' was printed on old minstrel posters.",
    "A neighbour found 'kike' scratched into her car door and called the police.",
    "The survey lists 'chink' among the slurs students heard most often.",
    "He was suspended for writing 'faggot' on a classmate's locker.",
    "I reported the user who kept calling people retards in the chat.",
    "Please stop using 'gay' as an insult at practice.",
    "My grandfather was called a 'wop' at school in the 1950s, he told me.",
    # Chinese (Simplified and Traditional): telling others not to mock or joke about a group,
    # calling it wrong, asking why anyone would discriminate, reporting abuse or research
    "請不要再拿原住民開玩笑了",
    "我已经把那条骂少数民族的评论举报了",
    "調查發現，許多移工在租屋時遭到歧視",
    "欺负新来的同学是不对的",
    "為什麼要歧視外地人？每個地方都有好人也有壞人",
    "报告指出，农村女性在就业中仍受到不平等对待和歧视。",
    "我表妹被同学说“你们乡下人就是脏”，回家哭了好久，很难过。",
    "有人在评论区发“外地人滚出去”，我已经截图举报了。",
    "取笑别人的方言真的很不礼貌。",
    # a victim says a stereotype hurts; "one can't judge … because"; owning a past prejudice
    "小时候总被同学叫“四眼”，现在想起来还是很难过",
    "我是广西人，老被人开玩笑说吃老鼠，其实挺伤心的",
    "不能因为一个人说方言就觉得他没文化",
    "我以前觉得东北人都爱打架，去了沈阳才知道是我太无知",
]


SAID_TO_THE_READER = [
    'I said "you are a stupid bitch" and I meant it.',
    '"you stupid bitch"',
    'He called me a "retard", you faggot.',
    "我就说你是“傻逼”怎么了",
    "反对地域黑，你这个河南骗子",
    "被房东歧视，这种事不该发生，你们这些乡巴佬懂什么",
    '"河南人都是骗子"，说得太对了',
    "you are a 'faggot' and everyone knows it",
    "The word for you is 'nigger'.",
    "all those kikes should leave this country",
    "我已经举报你了，你这个死基佬",
    "黑鬼都该滚回非洲",
]


@pytest.mark.parametrize(
    ("post", "flagged"), [*flag_cases(SAID_TO_THE_READER), *flag_cases((), SPEECH_ABOUT_HARM)]
)
def test_speech_about_harm_is_a_mention_at_most_and_the_same_words_aimed_are_flagged(
    post: str, flagged: bool, workflow: ContentModerationWorkflow
) -> None:
    lexicon = judged(post, flagged, workflow).lexicon
    assert flagged or (lexicon is not None and lexicon.speech_about_harm)


def test_a_quoted_critical_slur_keeps_its_severity(workflow: ContentModerationWorkflow) -> None:
    # a quote is an easy wrapper for the worst words: critical terms are never mentions
    v = moderate_lexicon_only('He said "kike" at dinner and everyone laughed.', workflow)
    assert v.decision.value == "block"


@pytest.mark.parametrize(
    ("before", "addressed"),
    [("you stupid ", True), ("you are a ", True), ("你这个", True), ("你们这些", True),
     ("the word ", False), ("他们把外地人叫作“", False), ("你说的“", False)],
)  # fmt: skip
def test_addressed_reads_the_words_just_before_a_term(before: str, addressed: bool) -> None:
    text = before + "TERM"
    assert load_mention_rules().is_addressed(text, len(before)) is addressed


def test_a_quote_without_a_reporting_cue_is_no_mention() -> None:
    rules = load_mention_rules()
    text = 'ok "bitch" ok'
    assert not rules.is_quoted(text, text.index("bitch"), text.index("bitch") + 5)
    text = 'she wrote "bitch" on my car'
    assert rules.is_quoted(text, text.index("bitch"), text.index("bitch") + 5)
    text = 'she wrote "bitch" but whatever'  # a "but" cue cancels the report
    assert not rules.is_quoted(text, text.index("bitch"), text.index("bitch") + 5)
