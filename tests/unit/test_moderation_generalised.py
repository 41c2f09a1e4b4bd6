"""Issue 47: contempt for a whole group is flagged with no lexicon word, in English,
Simplified and Traditional Chinese (generalised.py); the same claim denied, reported or
condemned, and ordinary statements about groups, stay allowed. Inputs written for this file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.data.moderation_cases import flag_cases, judged
from workflows.content_moderation.generalised import (
    GeneralisedError,
    generalisations,
    load_generalised_rules,
)
from workflows.content_moderation.graph import ContentModerationWorkflow

GENERALISED = [
    "穆斯林都是恐怖分子",
    "黑人都是罪犯，离他们远点",
    "東北人個個都是騙子",
    "外地人全是小偷，别让他们进小区",
    "農村人天生就是低素質",
    "难民都是寄生虫",
    "immigrants are all criminals",
    "muslims are just terrorists",
    "refugees are nothing but parasites",
    "All jews are liars.",
]

NOT_GENERALISED = [
    "不是所有穆斯林都是恐怖分子",
    "说河南人都是骗子是地域黑",
    "有人在评论里写“黑人都是罪犯”，我已经举报了",
    "中国人都爱吃饺子",
    "农村人都养猪",
    "移工都是做脏活累活，很辛苦",
    "Not all immigrants are criminals.",
    '"Immigrants are all criminals" is a racist lie.',
    "Immigrants are the backbone of the farm economy.",
    "Women are underrepresented in engineering.",
]


@pytest.mark.parametrize(("post", "flagged"), flag_cases(GENERALISED, NOT_GENERALISED))
def test_contempt_for_a_whole_group_is_flagged_a_denied_or_reported_one_allowed(
    post: str, flagged: bool, workflow: ContentModerationWorkflow
) -> None:
    judged(post, flagged, workflow, how="generalised")


def test_a_negation_or_an_ordinary_sense_is_no_generalisation() -> None:
    # (the learned scorer alone still reviews the last two: 0.99 and 0.74 on its own)
    assert generalisations("河南人都是骗子") != []
    assert generalisations("河南人都不是骗子") == []
    assert generalisations("并非河南人都是骗子") == []
    assert generalisations("外地人都不是骗子，别乱说") == []
    assert generalisations("女生都懒得理他") == []


def test_a_bad_list_file_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "generalised.toml"
    bad.write_text('version = "x"\nseverity = "medium"\n', encoding="utf-8")
    with pytest.raises(GeneralisedError, match=r"generalised\.toml"):
        load_generalised_rules(bad)
