"""The headline of a request on a thread that waits for a person names no operator command
(cs11): ``Orchestrator.handle(...).headline`` said "orchestrator handoff resume T
--approve|--reject", and an app that shows the raw result to the customer showed them the
operator's command. The command is now the outcome's ``operator`` field; the CLI's request
lines still print it for the operator."""

from __future__ import annotations

from handoff_races import refundable_orders
from test_cs_trust9 import Shop, _waiting, shop  # noqa: F401 (shop: the fixture)

from orchestrator import Request
from orchestrator.cli.console import request_lines

# ruff: noqa: F811  (the tests take the imported ``shop`` fixture by its name)

_OPERATOR_WORDS = ("orchestrator", "resume", "--approve", "--reject", "handoff list")


async def test_a_waiting_threads_headline_names_no_operator_command(shop: Shop) -> None:
    store, orch = shop(1)
    ((customer, order),) = refundable_orders(store, 60, 1)
    await _waiting(orch, customer, order, "h")
    for said in ("any news?", "有进展吗？", "hello??"):
        outcome = await orch.handle(Request(text=said, thread_id="h", customer_id=customer))
        assert outcome.status == "needs_human" and "waits for a person" in outcome.headline
        shown = [w for w in _OPERATOR_WORDS if w in outcome.headline]
        assert not shown, (outcome.headline, shown)
        assert outcome.operator == "orchestrator handoff resume h --approve|--reject"
    lines = request_lines(outcome, "hello??", None)  # the operator's console keeps the command
    assert "operator: orchestrator handoff resume h --approve|--reject" in lines
