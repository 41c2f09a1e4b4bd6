"""A part of a request is handed to a person only when the customer's words ask for its route
(tester13 E2; issue 46 item 7).

On a customer's conversation the thread's route (customer service) runs whatever the
classifier read, and the classifier's own route used to be recorded as a part for a person:
"Note: I am not Thomas Marsh." (content moderation at 0.94 on its n-grams) was told that its
"post review" part was recorded for a colleague. Now a part needs evidence
(:func:`orchestrator.classifier.asked.asks_for`): for moderation, a post quoted or after a
colon with the words around it asking for a decision on it; for another route, its rules'
evidence at the bar a compound clause clears. Inputs of our own, English, Simplified and
Traditional Chinese; the real classifier, the dispatcher and a ScriptedModel.
"""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator import Orchestrator, Request, RuleClassifier, TelemetryStore
from orchestrator.classifier.asked import asks_for
from orchestrator.request import Attachment
from orchestrator.routes import Route
from orchestrator.testing import ScriptedModel
from workflows import default_workflows

MOD = Route("content_moderation")
#: Lines of a conversation that ask nothing of moderation: labels before a colon, what
#: someone said, a complaint that describes; the classifier may read some as a post.
PLAIN = [
    "Note: I am not Thomas Marsh.",
    "Disclaimer: I am not a lawyer",
    "Fine: whatever.",
    "OK: thanks",
    "Just to be clear: I never agreed to that.",
    'The driver said "you people are idiots" to me',
    "Cancel order 123. Also, the driver's behaviour was inappropriate: he shouted",
    "Update: the courier came but was rude: he threw the box",
    "备注：我不是王伟。",
    "補充：我不是王偉本人。",
    "说明：快递员态度很差，把包裹扔在门口",
    "說明：我沒有收到任何通知。",
]

#: Asks for a decision on a post that the line carries.
REVIEWS = [
    "Where is my order? Also, is it ok to post this: 'you are all idiots'",
    'Please moderate this comment: "buy cheap followers"',
    '"you are all idiots" - ok to post?',
    "update my address; also, would you let this comment through: nice",
    "审核一下：你们都是垃圾",
    "請審核這條評論：你們都是垃圾",
    "这条评论能发吗：加微信返现",
]


@pytest.fixture(scope="module")
def classifier() -> RuleClassifier:
    return RuleClassifier(reload_interval=None)


@pytest.mark.parametrize("text", PLAIN)
def test_a_plain_line_asks_for_no_review(classifier: RuleClassifier, text: str) -> None:
    assert not asks_for(classifier, Request(text=text), MOD)


@pytest.mark.parametrize("text", REVIEWS)
def test_a_carried_post_with_an_ask_asks_for_a_review(
    classifier: RuleClassifier, text: str
) -> None:
    assert asks_for(classifier, Request(text=text), MOD)


def test_a_report_needs_its_rules_evidence(classifier: RuleClassifier) -> None:
    xl = Route("excel_report")
    sheet = (Attachment(filename="sales.xlsx"),)
    assert asks_for(classifier, Request(text="and summarise this", attachments=sheet), xl)
    assert asks_for(classifier, Request(text="also, please chart the attached workbook"), xl)
    assert not asks_for(classifier, Request(text="Correction: the flat number is 4B."), xl)
    assert not asks_for(classifier, Request(text="where is my parcel?"), Route("fallback"))


async def test_a_conversation_line_read_as_a_post_hands_nothing_on(
    telemetry: TelemetryStore, classifier: RuleClassifier
) -> None:
    store = telemetry
    orch = Orchestrator(ScriptedModel(replies=["Noted."]), store, default_workflows())
    asked = [
        Request(text=text, thread_id=f"t-plain-{i}", customer_id="C00001")
        for i, text in enumerate(PLAIN)
    ]
    # the classifier reads the first as a post (the case of tester13 E2): the test has teeth
    assert classifier.classify(asked[0]).route == MOD
    for request in asked:
        outcome = await orch.handle(request)
        assert outcome.handed_on == [], (request.text, outcome.headline)
        assert "also asked" not in outcome.headline
        # nor does the reply say that a part was passed to a colleague
        said = _reply(outcome.result)
        assert "recorded separately" not in said and "转交人工跟进" not in said, said
    assert all(".part" not in row.id for row in store.requests())


async def test_a_conversation_line_that_asks_for_a_review_hands_it_on(
    telemetry: TelemetryStore,
) -> None:
    store = telemetry
    orch = Orchestrator(ScriptedModel(replies=["Noted."]), store, default_workflows())
    request = Request(text=REVIEWS[0], thread_id="t-review", customer_id="C00001")
    outcome = await orch.handle(request)
    assert [h.route for h in outcome.handed_on] == [MOD]
    rows = {row.id: row for row in store.requests()}
    assert rows[f"{request.id}.part1"].status == "needs_human"
    assert "recorded separately for a colleague" in _reply(outcome.result)


def _reply(result: dict[str, Any] | None) -> str:
    """The reply's text in a customer-service result ("" when there is none)."""
    reply = (result or {}).get("reply") or {}
    return str(reply.get("text", "")) if isinstance(reply, dict) else ""
