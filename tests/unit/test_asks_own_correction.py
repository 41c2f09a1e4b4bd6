"""The customer's own correction of their own earlier address ("please ignore the previous
address and ship it to 12 High St", 之前的地址不要了，改成…) is their ask, not an injected
instruction: it is offered and, on their yes, written through the policy. Instructions aimed at
the assistant ("ignore previous instructions", "system:", "forget your rules", pasted text) still
block every write in the message (closing6 "Marker caution")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workflows.customer_service.asks import doubt, read_asks
from workflows.customer_service.store import Order

sys.path.insert(0, str(Path(__file__).parent))
import test_customer_service_safety as safety
from ask_checks import assert_no_write
from case_tables import cases
from test_customer_service_safety import _find, _say

orch = safety.orch  # the fixture
store = safety.store  # the fixture

OWN_CORRECTIONS = cases("customer_service8.toml", "own_corrections")
INJECTED = cases("customer_service8.toml", "injected")


@pytest.mark.parametrize(("text", "address"), OWN_CORRECTIONS)
def test_a_correction_of_the_customers_own_address_is_their_ask(text: str, address: str) -> None:
    asks = read_asks(text)
    assert asks.writes == ("change_address",), asks
    assert asks.new_address == address and doubt(text) is None


@pytest.mark.parametrize("text", INJECTED)
def test_an_instruction_to_the_assistant_still_blocks_every_write(text: str) -> None:
    assert_no_write(text)


async def test_a_corrected_address_is_offered_and_written_on_yes(store, orch) -> None:
    customer, order = _find(store, want="processing")
    asked = await _say(
        orch,
        f"please ignore the previous address and ship it to 12 High St, order {order}",
        customer,
    )
    assert '"12 High St"? Reply yes' in asked.result["reply"]["text"]
    await _say(orch, "yes", customer)
    with store.sessions() as s:
        assert s.get(Order, order).shipping_address == "12 High St"
