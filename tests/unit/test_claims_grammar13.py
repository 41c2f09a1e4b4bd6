"""Model prose that is not clearly well formed is dropped (cs13; tester12 H, tester13 H): an id
called by another kind's noun ("订单 RF-…") or equated with "it" ("if it is 1Z…"), an English
word run into Chinese (已approved), a clause that stops at an auxiliary ("…, and you can."),
a question with a full stop ("Could you trouble."), three words said twice ("let me know if
me know if"); the same kinds well formed are kept (``claim_grammar``). Cases in
``tests/data/cases/claims_grammar13.toml``."""

from __future__ import annotations

import pytest
from test_claims_truth10 import misjudged


@pytest.mark.parametrize("table", ["garbled", "kept"])
def test_ill_formed_prose_is_dropped_and_well_formed_kept(table: str) -> None:
    wrong = misjudged("claims_grammar13.toml", table, drop="garbled")
    assert not wrong, wrong
