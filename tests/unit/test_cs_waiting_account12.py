"""An account detail changed beside a refund that waits for a person keeps it waiting
(tester12 D, re-test): 把我的手机号改成…, 我的邮箱改成… ended the waiting refund, read as a
change of it (改成). A 改成 of the phone, e-mail, password or name is not; one of the refund is.
Cases in ``tests/data/cases/cs_waiting_account12.toml``."""

from __future__ import annotations

from case_tables import tables

from workflows.customer_service.withdrawing import waiting_decision

CASES = tables("cs_waiting_account12.toml")
WAITING = {"tool": "start_refund", "arguments": {"order_id": "ORD-100555"}}


def test_an_account_change_keeps_the_refund_waiting_and_a_refund_change_ends_it() -> None:
    ended = [m for m in CASES["account"] if waiting_decision(m, WAITING) != "kept"]
    assert not ended, ended
    kept = [m for m in CASES["of_the_refund"] if waiting_decision(m, WAITING) != "amended"]
    assert not kept, kept
