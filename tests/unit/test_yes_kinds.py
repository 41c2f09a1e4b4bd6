"""The answer to a confirmation question (tester5 finding 8): a yes asked back as a question
("yes?", "確定？") is not a yes, so nothing is written; a plain Cantonese yes (係, 得, 好嘅) is one,
so a Cantonese speaker is not asked again for ever."""

from __future__ import annotations

import pytest

from workflows.customer_service.asks import is_yes

QUESTIONS = [
    "yes?", "Yes??", "ok?", "okay ?", "sure?", "y?", "嗯？", "確定？", "确认?", "好的？", "是？",
    "go ahead?", "係？", "可以?", "do it?", "yes ¿",
]  # fmt: skip
CANTONESE_AND_PARTICLES = [
    "係", "係呀", "系啊", "得", "得啦", "好嘅", "可以啊", "冇問題", "是啊", "ok lah", "好呀",
    "確定", "行啦",
]  # fmt: skip
PLAIN = ["yes", "Yes please!", "ok do it", "好的", "是的", "确认", "go ahead", "yep"]
NOT_YES = ["yes but refund the other one", "是吗", "好吗", "是的吧", "啊", "maybe", "no", "算了"]


@pytest.mark.parametrize("answer", QUESTIONS)
def test_a_yes_asked_back_is_not_a_yes(answer: str) -> None:
    assert not is_yes(answer)


@pytest.mark.parametrize("answer", CANTONESE_AND_PARTICLES + PLAIN)
def test_plain_yes_in_english_mandarin_and_cantonese(answer: str) -> None:
    assert is_yes(answer)


@pytest.mark.parametrize("answer", NOT_YES)
def test_anything_else_stays_not_a_yes(answer: str) -> None:
    assert not is_yes(answer)
