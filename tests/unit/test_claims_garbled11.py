"""Garbled model prose of known words is dropped by the reply checker (cs11, open item 2).
The small model (random weights on CPU) writes word salad; the checker's sentence kinds
recognised "Sorry the for inconvenience.", "Thank you for your order order." and
很抱歉给您的带来不便。 as courtesy. Now a word said twice in a row, a determiner or possessive
before what cannot follow it (another determiner, a preposition, a pronoun, an auxiliary, a
conjunction, its clause's end; 您的 before a pronoun, a preposition, an adverb or 带来 / 造成)
is garbled (``claim_allowed.garbled``). Cases in ``tests/data/cases/claims_garbled11.toml``."""

from __future__ import annotations

import pytest
from test_claims_truth10 import misjudged


@pytest.mark.parametrize("table", ["garbled", "kept"])
def test_garbled_prose_is_dropped_and_the_same_kinds_well_formed_are_kept(table: str) -> None:
    wrong = misjudged("claims_garbled11.toml", table, drop="garbled")
    assert not wrong, wrong
