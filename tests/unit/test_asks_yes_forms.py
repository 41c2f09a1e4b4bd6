"""A confirmation counts only as the customer's own plain yes (tester7 F25): a quoted line
("> yes", as a mail client quotes), the word cited in quotes or brackets, or an answer that
trails off is not a yes; plain yeses in English, Chinese and Cantonese still are."""

from __future__ import annotations

import pytest

from workflows.customer_service.asks import is_yes

NOT_A_YES = [
    "> yes",
    ">yes",
    "| yes",
    "&gt; yes",
    '"yes"',
    "“yes”",
    "'[yes]'",
    "[ok]",
    "<yes>",
    "＜是＞",
    "「是」",
    "“确认”",
    "『好的』",
    "ok...",
    "yes…",
    "是…",
    "好吧。。",
]
YES = ["yes", "Yes please!", "ok do it", "OK!", "yes.", "y", "是", "好的", "確定", "係呀", "可以啊"]


@pytest.mark.parametrize(
    ("answer", "plain"), [(a, False) for a in NOT_A_YES] + [(a, True) for a in YES]
)
def test_only_a_plain_yes_is_a_yes(answer: str, plain: bool) -> None:
    """A quoted, cited or trailing answer is no yes; a plain one is."""
    assert is_yes(answer) is plain
