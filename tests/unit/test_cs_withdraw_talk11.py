"""Talk of withdrawing a refund that waits for a person is no withdrawal (cs11; tester11 I).
"should I withdraw my refund request?", "cancel my refund? no way", "if you can't do it today,
I withdraw my refund request", 撤回退款申请？不可能, 以后还能撤回退款申请吗？, "Is my refund request
still open?" withdrew the waiting refund (as a change: any message of no benign kind made it
stale); so did a message about something else ("where is ORD-<another>?", "can I speak to a
human?", 运费怎么算？). Now a message that names the write beside a withdrawal word but is no
withdrawal (``withdrawing.talks_of_withdrawing``: a question, a refusal, a condition; someone
else's words are kind O's) keeps it waiting, noted for the person; "if you can't …" is a
condition; "open", "pending" are status words; a message with no word that may change a
write, no figure, no negation and not the waiting order (``withdrawing.elsewhere``) keeps it
waiting. The customer's own withdrawals and changes still end it, and so do cs10's changes
(``cs_waiting10.toml``). Cases in ``tests/data/cases/cs_withdraw_talk11.toml``.
"""

from __future__ import annotations

from case_tables import tables
from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _turn, _waiting, shop  # noqa: F401 (shop: the fixture)

from workflows.customer_service.withdrawing import waiting_decision

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

CASES = tables("cs_withdraw_talk11.toml")
_REFUND = {"tool": "start_refund", "arguments": {"order_id": "ORD-100555"}}


def test_talk_of_withdrawing_keeps_the_refund_waiting() -> None:
    kept = CASES["kept"] + CASES["elsewhere"]
    ended = [m for m in kept if waiting_decision(m, _REFUND) != "kept"]
    assert not ended, (f"{len(ended)} of {len(kept)} ended the refund", ended)
    kept = [m for m in CASES["not_kept"] if waiting_decision(m, _REFUND) == "kept"]
    assert not kept, (f"{len(kept)} of {len(CASES['not_kept'])} kept waiting", kept)
    changes = tables("cs_waiting10.toml")["change"]
    kept = [(t, m) for t, m in changes if waiting_decision(m, {**_REFUND, "tool": t}) == "kept"]
    assert not kept, (f"{len(kept)} of cs10's {len(changes)} changes kept waiting", kept)


async def test_a_person_can_still_approve_after_such_talk(shop: Shop) -> None:
    store, orch = shop(1)
    ((customer, order),) = refundable_orders(store, 60, 1)
    await _waiting(orch, customer, order, "i")
    for said in (CASES["kept"][1], CASES["kept"][8], CASES["kept"][10]):
        result = await _turn(orch, said, customer, "i")
        assert result["status"] == "needs_human", (said, result)
    await orch.resume("i", approve=True, note="ok", by="olga")
    assert store.tools(customer).refund_count(order) == 1
