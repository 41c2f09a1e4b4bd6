"""Hate vs offensive: the targeting features of the English hate model, the verdict's hate
category (a slur aimed at a group vs a slur used as an insult of a person), and the annotator
shares the hate model learns from. Sentences are written for these tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from workflows.content_moderation.dataset import read_posts
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.inputs import prepare_post
from workflows.content_moderation.judgement import build_verdict, lexicon_findings
from workflows.content_moderation.targeting import targeting_features
from workflows.content_moderation.verdict import Category, Decision, ScorerJudgement


def _lexicon(workflow: ContentModerationWorkflow, text: str):  # -> (judgement, spans)
    matcher = workflow.lexicon.matcher()
    return lexicon_findings(matcher.scan(text), matcher.version, matcher.names_harm)


def _features(workflow: ContentModerationWorkflow, text: str) -> list[str]:
    return targeting_features(text, _lexicon(workflow, text)[1])


@pytest.mark.parametrize(
    ("post", "expected", "absent"),
    [
        ("all those faggots are animals", {"slur:plural", "gen", "dehum", "slur&gen"}, {"banter"}),
        ("he is such a dyke", {"slur:label", "lex:dyke", "cat:hate"}, {"slur:plural"}),
        ("miss you too fag lol", {"banter", "slur&banter"}, {"slur:plural", "grp"}),
        ("you faggot", {"slur:address", "sev:hate:high"}, {"slur:label"}),
        ("these immigrants should be deported", {"grp", "gen", "viol", "grp&viol"}, {"cat:hate"}),
        ("fuck this traffic", {"lex:fuck", "cat:profanity"}, {"cat:hate", "grp"}),
        ("racism is wrong", set(), {"lex:racism", "cat:hate"}),  # a mention is no feature
    ],
)
def test_targeting_features_describe_who_a_post_aims_at(
    workflow: ContentModerationWorkflow, post: str, expected: set[str], absent: set[str]
) -> None:
    got = set(_features(workflow, post))
    assert expected <= got, got
    assert not absent & got, got


def _verdict(workflow: ContentModerationWorkflow, text: str, hate: float | None, state: str):
    scorer = ScorerJudgement(
        status="ok",
        lang="en" if hate is not None else "zh",
        flagged=0.5,
        hate=hate,
        state="low",
        hate_state=state,  # type: ignore[arg-type]
        version="test",
    )
    prepared = prepare_post(text, workflow.policy.limits)
    return build_verdict(
        prepared, workflow.policy, lexicon=_lexicon(workflow, text), model=None,
        source="lexicon", scorer=scorer,
    )  # fmt: skip


def test_a_slur_the_hate_model_rates_low_reads_as_harassment(
    workflow: ContentModerationWorkflow,
) -> None:
    low = _verdict(workflow, "shut up you fag", 0.05, "low")
    cats = {c.category for c in low.categories}
    assert Category.HATE not in cats and Category.HARASSMENT in cats
    assert "insult of a person" in low.rationale and "hate 0.05 → low" in low.rationale
    high = _verdict(workflow, "shut up you fag", 0.6, "medium")
    assert Category.HATE in {c.category for c in high.categories}
    assert "insult of a person" not in high.rationale
    # the category changes, the decision does not: the slur still blocks
    assert low.decision is high.decision is Decision.BLOCK
    # the spans keep the term's own category
    assert any(s.category is Category.HATE for s in low.spans)


def test_a_critical_hate_term_stays_hate_whatever_the_hate_model_says(
    workflow: ContentModerationWorkflow,
) -> None:
    v = _verdict(workflow, "gas the jews", 0.01, "low")
    assert Category.HATE in {c.category for c in v.categories}


def test_without_a_slur_the_hate_model_labels_hate_only_when_high(
    workflow: ContentModerationWorkflow,
) -> None:
    text = "you stupid bitch"

    def cats(hate: float, state: str) -> set[Category]:
        return {c.category for c in _verdict(workflow, text, hate, state).categories}

    assert Category.HATE not in cats(0.4, "medium")
    assert Category.HATE in cats(0.97, "high")


def test_chinese_hate_terms_keep_their_category(workflow: ContentModerationWorkflow) -> None:
    v = _verdict(workflow, "黑鬼滚出去", None, "absent")
    assert Category.HATE in {c.category for c in v.categories}


def test_davidson_annotator_shares_are_read(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        "id,count,hate_speech,offensive_language,neither,class,tweet\n"
        "1,3,2,1,0,0,first post\n2,6,1,5,0,1,second post\n3,3,x,0,3,2,third post\n",
        encoding="utf-8",
    )
    shares = [p.hate_share for p in read_posts(path)]
    assert shares[0] == pytest.approx(2 / 3) and shares[1] == pytest.approx(1 / 6)
    assert shares[2] is None  # an unreadable count is no share


def test_the_packaged_hate_model_separates_group_hate_from_banter(
    workflow: ContentModerationWorkflow,
) -> None:
    """Same slur, two uses: aimed at a group (plural, generalised, dehumanised) scores higher
    than banter between friends."""
    scorer = workflow.scorer
    if scorer is None:
        pytest.skip(f"no packaged scorer: {workflow.scorer_note}")
    pairs = [
        ("all those faggots are disgusting animals", "miss you too faggot lol"),
        ("these dykes are all trash", "haha love you bro you dyke"),
    ]
    for group, banter in pairs:
        g = scorer.score(group, _lexicon(workflow, group)[1]).hate
        b = scorer.score(banter, _lexicon(workflow, banter)[1]).hate
        assert g is not None and b is not None and g > b, (group, g, banter, b)
