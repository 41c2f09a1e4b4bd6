"""While a turn waits on a person, the customer reads that a colleague will take over, never
the internal reason the operator sees (workflows.customer_service.notes.waiting_text)."""

import pytest

from workflows.customer_service.notes import waiting_text

REASONS = [
    "the model server is unavailable",
    "the model's tool arguments were invalid twice",
    "refund over the automatic limit",
    "classifier: out of scope (p=0.54)",
]


@pytest.mark.parametrize("reason", REASONS)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_reason_is_not_shown(reason: str, lang: str) -> None:
    text = waiting_text({"reason": reason}, lang)
    assert text and reason not in text and "(" not in text
