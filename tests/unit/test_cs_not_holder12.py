"""A writer who says the account is another person's gets no write, however it is put
(tester12 A, re-test): "Logged in as my wife.", "The buyer was my late father.", "the
account is in the owner's name" wrote after a yes. ``ask_later._NOT_THE_CUSTOMER`` now reads
another person and a word of whose account or login it is in one sentence together, rather
than one more phrasing each. Cases in ``tests/data/cases/cs_not_holder12.toml``."""

from __future__ import annotations

from ask_checks import assert_gate
from case_tables import tables

from workflows.customer_service.ask_later import not_the_holder

CASES = tables("cs_not_holder12.toml")


def test_another_persons_account_is_no_write_and_is_remembered() -> None:
    assert_gate(CASES["not_holder"], CASES["own"], doubted=True)
    missed = [m for m in CASES["not_holder"] if not not_the_holder(m.lower())]
    assert not missed, missed  # the conversation remembers it (tester12 I)
