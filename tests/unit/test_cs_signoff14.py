"""A sign-off is a whole word and then a name, never the start of a longer word or a possessive
(tester14 K14: "Brad's housekeeper writing" was read as "br" (best regards) and the name "ad's
housekeeper writing", so the conversation stayed plain and a cancel was self-served)."""

from __future__ import annotations

import pytest

from workflows.customer_service.plain_talk import unusual_reason

NOT_PLAIN = [
    "Brad's housekeeper writing",
    "Brady's butler writing",
    "Bryony's cleaner here, cancel ORD-102091",
    "Bestie's nanny typing this",
    "Cheryl's PA writing on her behalf",
    "Thanks, Brad's assistant",
    "Regards, Brad's housekeeper",
    "Sincerely, Tom's carer",
    "- Ann's gardener",
]
PLAIN = [
    "Regards, Tom",
    "Kind regards, Sean O'Brien",
    "Best wishes, Mary Ann Smith",
    "br, Tom",
    "- Ann",
    "Cheers mate",
    "Thanks so much",
    "It arrived broken. Refund ORD-100076. Thanks, Brad",
]


@pytest.mark.parametrize("message", NOT_PLAIN)
def test_a_possessive_or_a_longer_word_is_no_sign_off(message: str) -> None:
    assert unusual_reason(message) is not None


@pytest.mark.parametrize("message", PLAIN)
def test_a_sign_off_with_a_name_is_plain(message: str) -> None:
    assert unusual_reason(message) is None
