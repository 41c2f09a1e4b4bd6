"""Issue 14: what a personal assistant does for its owner falls back; a customer's own request
with the same words stays customer service.

The kind: a virtual assistant's non-banking intents (payroll and time off, car care, the
kitchen, timers and lists, messages to a contact, the assistant's settings and meta commands)
that the n-gram tier reads as customer service, since they name pay, cancelling, orders or
phones. The decisive rule ``neg.cs.personal_assistant.en`` turns them to fallback unless a
positive customer-service decisive rule (the customer's own order, account, direct deposit)
fires too. Both lists were written for this test, in forms that neither the labelled set nor
the other kind tests hold; measured with the shipped model: 24/24 and 14/15 with the rule,
18/24 and 14/15 without it.
"""

from __future__ import annotations

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.routes import Route
from tests.unit.classifier_helpers import routed_to, share_test

ASSISTANT: list[tuple[str, Route]] = routed_to(
    Route("fallback"),
    "what day is payday this month",
    "how many vacation days do i have left",
    "can you pull up my last pay stub",
    "my tire pressure light came on, what should i do",
    "how often should i get an oil change",
    "is it safe to drive with the check engine light on",
    "what can i use instead of baking soda",
    "how many teaspoons are in a tablespoon",
    "i don't have any yeast, what now",
    "set a timer for ten minutes",
    "remind me to water the plants tomorrow",
    "add milk to my grocery list",
    "put eggs on the shopping list",
    "flip a coin for me",
    "message sarah and say i'm running late",
    "share my current location with mom",
    "switch to a british accent",
    "turn up the volume please",
    "never mind",
    "say that again",
    "how much will i earn this year after the raise",
    "when do we get paid this month",
    "cancel my alarm for tomorrow",
    "start a timer for the pasta",
)

CUSTOMER_SAME_WORDS: list[tuple[str, Route]] = routed_to(
    Route("customer_service"),
    "my paycheck deposit hasn't shown up in my account",
    "can i set up direct deposit with you",
    "i was charged twice for my order",
    "the delivery driver never showed up",
    "cancel my order please",
    "cancel that order i placed yesterday",
    "my card was declined at the shop",
    "the courier says he can't find my address",
    "i want to change my delivery address",
    "how do i reset my password",
    "the timer on your checkout page ran out before i could pay",
    "can i replace the item i ordered with a different size",
    "i need a refund, the eggs in my grocery order arrived broken",
    "when will my refund be paid",
    "how much do i pay for express shipping",
)


test_personal_assistant_requests_fall_back = share_test(ASSISTANT, 0.9)

test_customer_requests_with_the_same_words_stay_customer_service = share_test(
    CUSTOMER_SAME_WORDS, 0.85
)


@pytest.mark.parametrize(
    "text", ["when is my next paycheck coming", "text jo and tell her the meeting moved"]
)
def test_the_decisive_rule_overrules_customer_service_and_says_so(
    clf: RuleClassifier, text: str
) -> None:
    got = clf.classify_text(text)
    assert got.route == Route("fallback")
    assert any(s.rule_id == "neg.cs.personal_assistant.en" for s in got.signals), got.reason


def test_a_customer_s_own_account_wins_over_the_assistant_rule(clf: RuleClassifier) -> None:
    got = clf.classify_text("transfer my paycheck into my savings account")
    assert got.route == Route("customer_service"), got.reason
