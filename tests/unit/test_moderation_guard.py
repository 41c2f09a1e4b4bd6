"""Issue 16: ordinary sentences are never blocked and rarely reviewed (false-positive guard),
and a term that names a harm in a sentence that condemns it is a mention, not a verdict."""

from __future__ import annotations

import pytest

from tests.unit.moderation_data import DATA
from workflows.content_moderation.dataset import load_ordinary_set
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only

#: Scunthorpe-type sentences: ordinary words that contain, or sit next to, a lexicon term.
SCUNTHORPE = [
    "Good night, see you tomorrow.",
    "Last night was fun.",
    "I had a nightmare about exams.",
    "France vs Spain kicks off at nine.",
    "Open the folder in VS Code.",
    "Hoe is het met je?",
    "Hoe gaat het vandaag?",
    "I hoe to meet you soon.",
    "The transmission tranny on my truck is slipping.",
    "My class starts at eight.",
    "We need to assess the risk.",
    "I am reading Dickens.",
    "She lives in Sussex near Essex.",
    "A cocktail at the bar.",
    "Shiitake mushrooms are tasty.",
    "The analysis is done.",
    "Scunthorpe United won.",
    "He is a classic assassin in the game.",
    "The knight rode at nightfall.",
    "Hancock signed it.",
    "Cockpit checks are complete.",
    "The peacock spread its tail.",
    "Please pass the grapes.",
    "I assume the therapist is in.",
    "Massive bass in this track.",
    "Cumulative sales rose.",
    "Arsenal play tonight.",
    "你好，请问怎么操作？",
    "我想买鸡蛋。",
    "这个操作很简单。",
    "晚上好，谢谢你。",
    "请帮我查一下订单。",
    "今天天气不错。",
]


def _customer_service_rows(limit_per_file: int = 150) -> list[str]:
    """Up to ``limit_per_file`` evenly spaced ordinary sentences of each customer-service file,
    from its TEST half only: the scorer's fit reads the tune half as negatives, so these are
    sentences it never saw (Bitext rows flagged as offensive are left out by the loader)."""
    by_file: dict[str, list[str]] = {}
    for post in load_ordinary_set(DATA, "test"):
        by_file.setdefault(post.source, []).append(post.text)
    rows: list[str] = []
    for texts in by_file.values():
        rows += texts[:: max(1, len(texts) // limit_per_file)][:limit_per_file]
    return rows


def test_guard_set_has_no_block_and_few_reviews(workflow: ContentModerationWorkflow) -> None:
    if not (DATA / "customer_service").is_dir():
        pytest.skip("../shared/data/customer_service is not beside the repository")
    posts = _customer_service_rows() + SCUNTHORPE
    assert len(posts) >= 500
    verdicts = [moderate_lexicon_only(p, workflow) for p in posts]
    blocked = [p for p, v in zip(posts, verdicts, strict=True) if v.decision.value == "block"]
    reviewed = [p for p, v in zip(posts, verdicts, strict=True) if v.decision.value == "review"]
    assert blocked == []
    assert len(reviewed) <= 0.005 * len(posts), reviewed


def test_guard_set_lexicon_alone_has_no_block_and_few_reviews(
    workflow: ContentModerationWorkflow,
) -> None:
    if not (DATA / "customer_service").is_dir():
        pytest.skip("../shared/data/customer_service is not beside the repository")
    posts = _customer_service_rows() + SCUNTHORPE
    verdicts = [moderate_lexicon_only(p, workflow, scorer=False) for p in posts]
    decisions = [v.decision.value for v in verdicts]
    assert decisions.count("block") == 0
    assert decisions.count("review") <= 0.005 * len(posts)


@pytest.mark.parametrize("post", SCUNTHORPE)
def test_scunthorpe_sentences_have_no_lexicon_hit_above_low(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    v = moderate_lexicon_only(post, workflow, scorer=False)
    assert v.decision.value == "allow", (post, v.rationale)


@pytest.mark.parametrize(
    "post",
    [
        "我们要反对歧视，人人平等。",
        "拒绝地域黑，从我做起。",
        "歧视是不对的。",
        "她在公司被歧视了。",
        "不要地域黑好吗",
    ],
)
def test_a_condemned_harm_term_is_a_mention(post: str, workflow: ContentModerationWorkflow) -> None:
    v = moderate_lexicon_only(post, workflow, scorer=False)
    assert v.lexicon.mentions >= 1 and any(s.mention for s in v.spans)
    assert v.decision.value == "allow", v.rationale
    assert "mention" in v.rationale


@pytest.mark.parametrize("post", ["我不歧视，但是河南人就是爱骗人", "就是要歧视他们"])
def test_a_harm_term_used_is_no_mention(post: str, workflow: ContentModerationWorkflow) -> None:
    v = moderate_lexicon_only(post, workflow, scorer=False)
    assert v.lexicon.mentions == 0
    assert v.decision.value != "allow"


def test_rationale_names_each_signal_and_never_claims_the_model(
    workflow: ContentModerationWorkflow,
) -> None:
    v = moderate_lexicon_only("have a nice day", workflow)
    assert "Model: not called." in v.rationale
    assert "Scorer (en)" in v.rationale
    assert "does not object" not in v.rationale
