"""The customer's own plain asks that the gate set aside (cs14: closing12's over-blocks,
tester13/14 OB) read as asks, and the same shapes negated, someone else's, hypothetical,
quoted or sarcastic read as none: 退 whose object is the order (把…退了), an order said not
wanted before its cancel, 衹 folded (OpenCC hk2t), English courtesy glued to a Chinese ask, and
a negation about the goods in a sentence of its own before the ask (its scope ends with its
sentence). Cases in ``tests/data/cases/cs_own_asks14.toml``."""

from __future__ import annotations

from ask_checks import assert_gate, with_ids
from case_tables import tables

from workflows.customer_service.asks import read_asks
from workflows.customer_service.plain_talk import unusual_reason

CASES = tables("cs_own_asks14.toml")


def test_own_asks_are_read_and_their_other_forms_are_not() -> None:
    assert_gate(CASES["no_write"], CASES["own"], doubted=True)
    assert [m for m in with_ids(CASES["own"]) if unusual_reason(m)] == []  # self-served
    assert [m for m in with_ids(CASES["plain_not_ask"]) if unusual_reason(m)] == []


def test_a_request_for_the_address_reads_it() -> None:
    missed = [m for m in with_ids(CASES["address_read"]) if "address" not in read_asks(m).reads]
    assert missed == []
