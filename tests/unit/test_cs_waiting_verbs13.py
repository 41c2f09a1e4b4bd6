"""A refund that waits for a person is withdrawn by "don't send / issue / process" only when
the refund is what is not to be sent (tester13 D residue: "don't send a technician" withdrew
it). Cases in ``tests/data/cases/cs_waiting_verbs13.toml``."""

from __future__ import annotations

from case_tables import tables

from workflows.customer_service.withdrawing import waiting_decision

CASES = tables("cs_waiting_verbs13.toml")
WAITING = {"tool": "start_refund", "arguments": {"order_id": "ORD-100555"}}


def test_another_thing_not_sent_keeps_the_refund_waiting() -> None:
    ended = [m for m in CASES["other_thing"] if waiting_decision(m, WAITING) != "kept"]
    assert not ended, ended


def test_the_refund_not_sent_withdraws_it() -> None:
    kept = [m for m in CASES["the_refund"] if waiting_decision(m, WAITING) != "withdrawn"]
    assert not kept, kept
