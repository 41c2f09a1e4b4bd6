"""A sign-off is a whole word and then a name, never the start of a longer word or a possessive
(tester14 K14: "Brad's housekeeper writing" was read as "br" (best regards) and the name "ad's
housekeeper writing", so the conversation stayed plain and a cancel was self-served). Cases in
``tests/data/cases/cs_signoff14.toml``."""

from __future__ import annotations

import pytest
from case_tables import cases

from workflows.customer_service.plain_talk import unusual_reason


@pytest.mark.parametrize("message", cases("cs_signoff14.toml", "not_plain"))
def test_a_possessive_or_a_longer_word_is_no_sign_off(message: str) -> None:
    assert unusual_reason(message) is not None


@pytest.mark.parametrize("message", cases("cs_signoff14.toml", "plain"))
def test_a_sign_off_with_a_name_is_plain(message: str) -> None:
    assert unusual_reason(message) is None
