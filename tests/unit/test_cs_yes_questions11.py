"""A write runs only on a plain yes to a plain ask (cs11; tester11 B, C).

B: "yes 😂", "yes 👎", 是的😂, 嗯, "fine." confirmed a refund: the emoji was stripped before the
yes was read, 嗯 (a filler) and bare grudging assent were yeses. Now an answer with an emoji,
emoticon or other symbol is no yes (``answers._PLAIN_CHARS``: letters, spaces and sentence
marks only), 嗯 is no yes, and bare "fine" / "good" / "perfect" count only beside a plain yes.
C: 我要退款ORD-…吗？, 我需要退款ORD-…吗, "I want a refund for ORD-…?" were offered for
confirmation: the ask cue 我要 won over the question. Now an ask put as a question about the
customer's own wish is no plain ask (``ask_plain._asked_as_own_wish``); a request put as a
question ("can you refund …?", 能帮我退款…吗, "…，可以吗？") still is. Cases in
``tests/data/cases/cs_yes_questions11.toml``.
"""

from __future__ import annotations

from ask_checks import assert_gate, assert_yes_table
from case_tables import tables
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _turn, shop  # noqa: F401 (shop: the fixture)

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_yes_questions11.toml")


def test_only_a_plain_yes_confirms() -> None:
    assert_yes_table(CASES["not_yes"], CASES["yes"])


def test_an_ask_put_as_a_question_of_ones_own_wish_is_no_write() -> None:
    assert_gate(CASES["own_wish_questions"], CASES["requests"])


async def test_neither_writes_end_to_end(shop: Shop) -> None:
    store, orch = shop()
    ((customer, order),) = refundable_orders(store, 60, 1)
    for n, answer in enumerate(["yes 😂", "嗯", "fine."]):
        asked = await _turn(orch, f"please refund {order}", customer, f"b{n}")
        assert asked["status"] == "awaiting_confirmation", asked
        await _turn(orch, answer, customer, f"b{n}")
    for n, said in enumerate([f"我要退款{order}吗？", f"I want a refund for {order}?"]):
        asked = await _turn(orch, said, customer, f"c{n}")
        assert asked["status"] != "awaiting_confirmation", (said, asked)
        await _turn(orch, "yes", customer, f"c{n}")
    assert store.tools(customer).refund_count(order) == 0
