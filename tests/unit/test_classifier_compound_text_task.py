"""Tester7 F15: a text after a colon or in quotes is no moderation request by itself.

"重复这句话：您的订单ORD-…已退款999元，已经到账。" (repeat this sentence: ...) read as content
moderation, so a customer-service conversation handed a bogus "content moderation" part to a
person every time. A quoted or colon-introduced text is a (primary or secondary) moderation
request only when the request asks to judge it (a review, flag, keep-or-delete, may-it-be-posted
word aimed at it); a request to repeat, say, read back, copy, translate or explain it is not,
and goes by what its other clauses or the text itself ask ("帮我看看这句话：..." is decided as
such a task: a customer asking what a message about their order means; "check this *comment*"
names a post and stays moderation). Phrasings written for this test (English, Simplified and
Traditional Chinese), none from the labelled set; no labelled request (tune 6,212, test 5,651)
changes route.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator import Orchestrator
from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.compound import material, own_words, text_task
from orchestrator.core.compound import other_parts
from orchestrator.routes import Route
from orchestrator.telemetry import TelemetryStore
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.store import OrderStore, RefundPolicy

CS, MOD = Route("customer_service"), Route("content_moderation")

#: Asks to repeat, say, translate or explain a text: never a moderation request.
TEXT_TASKS = [
    "重复这句话：您的订单ORD-100200已退款999元，已经到账。",
    "重复這句話：您的訂單ORD-100311已退款999元，已經到賬。",
    "客服，重复一下这句话：退款已经原路返回",
    "帮我看看这句话：您的订单已退款999元",
    "請幫我翻譯這句話：您的退款已到賬",
    "把这句话翻译成英文：这条评论被删除了",
    "請複述這段話：您的帖子已經發布",
    "這句話什麼意思：您的留言正在審核中",
    "repeat this: your refund for ORD-100200 is done",
    "repeat after me: you are all idiots",
    'Read this back to me: "refund approved for ORD-100200"',
    'Say this back to me: "this comment is garbage"',
    'Translate to Chinese: "please delete my post"',
    'What does this mean: "your comment was removed"',
    'Can you explain this message: "post pending review"',
    "Type this out for me: the post was deleted",
    'quote this back: "great comment"',
    "用英文怎么说：这条评论很好",
    "复述一下：您的评论已通过审核",
    "請將以下句子翻譯成英文：「這則留言已被刪除」",
]

#: A request of another route plus a text task: that route only, no moderation part.
WITH_A_TEXT_TASK = [
    "where is my parcel? also repeat this sentence: your post is live",
    "帮我查一下快递，另外重复这句话：这条评论很好",
    'Refund ORD-100200, and also translate this: "comment approved"',
    'cancel my order, and tell me what this means: "your comment violates our policy"',
]

#: Asks to judge the text (alone, or besides another request): moderation stays.
REVIEWS = [
    ("Flag or approve: you are all idiots", {MOD}),
    ("Flag or approve: your order has been refunded", {MOD}),
    ("请审核这句话：你们都是骗子", {MOD}),
    ("審核這句話：你們都是騙子", {MOD}),
    ("这句话违规吗：你们都是骗子", {MOD}),
    ('Translate this comment and tell me if it violates the rules: "vete a la mierda"', {MOD}),
    ("翻译一下，看看违不违规：你们都是骗子", {MOD}),
    ("Check this comment: you are all idiots", {MOD}),
    ('Moderate this: "where is my refund and my money" please', {MOD}),
    ("where is my parcel? also please moderate this post: you are all idiots", {CS, MOD}),
    ("我的快递到哪了？此外这条留言可以公开吗：服务太差", {CS, MOD}),
    ("帮我取消订单，再看看这条评论能不能发：味道不错", {CS, MOD}),
    ('my friend wrote: "you are all idiots" - should I report it?', {MOD}),
    ("他说：“这个帖子太烂了”，你们能删掉吗？", {MOD}),
]


@pytest.mark.parametrize("text", TEXT_TASKS)
def test_a_text_task_is_no_moderation_request(clf: RuleClassifier, text: str) -> None:
    got = clf.classify_text(text)
    assert MOD not in (got.route, *got.secondary_routes), (got.route, got.reason)
    # a customer-service conversation hands no part of it to a person as moderation
    assert MOD not in other_parts(CS, got)


@pytest.mark.parametrize("text", WITH_A_TEXT_TASK)
def test_the_other_request_is_kept(clf: RuleClassifier, text: str) -> None:
    got = clf.classify_text(text)
    assert (got.route, got.secondary_routes) == (CS, ()), (got.route, got.reason)


@pytest.mark.parametrize(("text", "want"), REVIEWS)
def test_a_review_stays_moderation(clf: RuleClassifier, text: str, want: set[Route]) -> None:
    got = clf.classify_text(text)
    assert {got.route, *got.secondary_routes} == want, (got.route, got.reason)


def test_what_a_colon_or_quotation_frames() -> None:
    assert own_words("重复这句话：退款已到账") == "重复这句话："
    assert material("重复这句话：退款已到账") == "退款已到账"
    assert own_words('say "hello there" twice') == 'say "…" twice'
    assert material('say "hello there" and “bye now”') == "hello there bye now"
    assert own_words("no colon, no quotes") is None
    assert own_words("ends with a colon:") is None


def test_text_task_needs_a_task_and_no_review_word(clf: RuleClassifier) -> None:
    compiled = clf._live.get().compiled  # the shipped rules
    assert text_task(compiled, "translate this: hola", ()) == "translate this:"
    assert text_task(compiled, "translate and flag it if rude: hola", ()) is None
    assert text_task(compiled, "my friend wrote: hola", ()) is None  # reported speech: no task
    assert text_task(compiled, "translate this sentence", ()) is None  # nothing it frames


async def test_a_conversation_hands_no_moderation_part_to_a_person(
    orders_url: Callable[[int, int], str], telemetry: TelemetryStore
) -> None:
    """End to end (scripted model, real SQLite stores): the tester's turns in a customer's
    conversation write no ``<id>.part1 content_moderation`` record and no note of one."""
    sys.path.insert(0, str(Path(__file__).parent))
    from customer_service_double import ScriptedToolModel, stream_turn

    store = OrderStore(orders_url(40, 5), policy=RefundPolicy(auto_limit_cents=20_000))
    orch = Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow(store)])
    for n, text in enumerate(
        ["重复这句话：您的订单ORD-100200已退款999元，已经到账。", "repeat this: your post is live"]
    ):
        _, done = await stream_turn(orch, text, "C00002", thread=f"f15-{n}")
        assert "also asked" not in done.headline, done.headline
    parts = [r for r in telemetry.requests() if ".part" in r.id]
    assert parts == [], [(r.id, r.route) for r in parts]
