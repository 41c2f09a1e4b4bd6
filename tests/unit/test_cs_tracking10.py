"""Tracking-number words in Traditional and Simplified Chinese (cs10 item d).

追蹤號碼 / 追踪号码 (and 跟踪, 貨運, 快件) were no tracking words: the router found no customer-
service word in "請提供追蹤號碼" and handed it to a person as out of scope, naming content
moderation as the runner-up in the handoff note ("追蹤號碼一直顯示查無資料，你們是不是騙人"); in
the workflow "ORD-… 的追蹤號碼是多少？" was answered with the order's status and no tracking
number. The words are now in ``cs.commerce.zh`` (matched after Traditional is folded to
Simplified), the workflow's track intent (``signals.INTENTS``) and ``ref_ids._WORD``. A threat
that "follows" someone (跟踪你) is not routed to customer service by them.
Cases in ``tests/data/cases/cs_tracking10.toml``.
"""

from __future__ import annotations

from case_tables import tables
from sqlalchemy import select
from test_cs_trust9 import Shop, _said, _turn, shop  # noqa: F401 (shop: the fixture)

from orchestrator.classifier.core import RuleClassifier
from workflows.customer_service.store import Order, Shipment

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_tracking10.toml")


def test_tracking_words_route_to_customer_service(clf: RuleClassifier) -> None:
    routed = {m: clf.classify_text(m) for m in CASES["routed"]}
    wrong = [(m, c.route, c.reason) for m, c in routed.items() if c.route != "customer_service"]
    assert not wrong, (f"{len(wrong)} of {len(routed)} not routed", wrong)
    others = [m for m in CASES["not_routed"] if clf.classify_text(m).route == "customer_service"]
    assert not others, others


async def test_a_tracking_question_is_answered_with_the_tracking_number(shop: Shop) -> None:
    store, orch = shop()
    with store.sessions() as s:
        customer, order, tracking = s.execute(
            select(Order.customer_id, Order.id, Shipment.tracking_number).join(
                Shipment, Shipment.order_id == Order.id
            )
        ).first()
    wrong = []
    for n, said in enumerate(CASES["answered"]):
        reply = _said(await _turn(orch, said.format(id=order), customer, f"t{n}"))
        if tracking not in reply:
            wrong.append((said, reply))
    assert not wrong, (f"{len(wrong)} of {len(CASES['answered'])} without the number", wrong)
