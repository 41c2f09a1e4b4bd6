"""What the reply says when a write is mentioned but not asked for now (the fail-safe gate).

Code's answer (:func:`intent_answer`) never offers to confirm a write the message does not ask
for: it says what code can read and how to ask ("Say 'refund ORD-…'"), in the customer's
language; a refused write is acknowledged, and a genuine ask is still offered.
"""

from __future__ import annotations

import pytest

from tests.unit.case_tables import cases
from workflows.customer_service.replying import how_to_ask, intent_answer

#: (intent, message, lang): a write mentioned, not asked for now.
MENTIONS = cases("asks_gate_replies.toml", "mentions")


@pytest.mark.parametrize(("intent", "message", "lang"), MENTIONS)
def test_a_mention_gets_a_read_and_how_to_ask_never_an_offer(
    intent: str, message: str, lang: str
) -> None:
    answer = intent_answer([], None, intent, lang, message)  # type: ignore[arg-type]
    assert answer is not None
    assert "confirm" not in answer and "确认" not in answer  # nothing waits for a yes
    assert "ORD-100200" in answer
    word = {"refund": ("refund", "退款"), "cancel": ("cancel", "取消")}[intent]
    assert (f"“{word[1]}ORD-100200”" if lang == "zh" else f'"{word[0]} ORD-100200"') in answer
    # after a read (eligibility / status) only the how-to-ask sentence is added
    read = [{"tool": "check_refund_eligibility", "ok": True, "facts": {}}]
    after = intent_answer(read, None, "eligibility", lang, message)  # type: ignore[arg-type]
    assert after is not None and after in answer


def test_someone_elses_words_get_no_offer_and_no_hint() -> None:
    message = "My brother insists we cancel ORD-100200"
    assert how_to_ask(message, "en") is None  # their words, not the customer's: no prompt
    answer = intent_answer([], None, "cancel", "en", message)
    assert answer is not None and "confirm" not in answer


def test_no_hint_after_a_write_or_on_an_ask_or_a_where_is_question() -> None:
    wrote = [{"tool": "start_refund", "ok": True, "facts": {}}]
    assert intent_answer(wrote, None, "refund", "en", "Is ORD-100200 refundable?") is None
    assert how_to_ask("Please refund ORD-100200", "en") is None  # asked: offered, not hinted
    assert how_to_ask("Where is my refund for ORD-100200?", "en") is None
    answer = intent_answer([], None, "refund", "en", "Where is my refund for ORD-100200?")
    assert answer is not None and "confirm" not in answer


def test_a_refusal_is_acknowledged_and_an_ask_still_offered() -> None:
    refused = intent_answer([], None, "refund", "en", "I don;t want a refund for ORD-100200")
    assert refused is not None and refused.startswith("Understood")
    asked = intent_answer([], None, "refund", "en", "Please refund ORD-100200")
    assert asked is not None and "confirm" in asked


@pytest.mark.parametrize(
    ("message", "lang"),
    [
        ("Is ORD-100200 refundable?", "en"),
        ("ORD-100200还能退款吗", "zh"),
        ("Can I get a refund on ORD-100200?", "en"),
    ],
)
def test_no_hint_to_ask_after_a_read_that_says_it_cannot_be_done(message: str, lang: str) -> None:
    """e2e7 (c3 f5): "this order cannot be refunded (delivered over 30 days ago)" was followed by
    "to refund, just say 退款ORD-…", which contradicts it."""
    facts = {"order_id": "ORD-100200", "reason": "delivered over 30 days ago"}
    refused = [{"tool": "check_refund_eligibility", "ok": False, "facts": facts}]
    assert intent_answer(refused, None, "eligibility", lang, message) is None  # type: ignore[arg-type]
