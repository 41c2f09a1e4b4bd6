"""A yes whose "no" is part of a set phrase of assent is a yes ("yes, no problem", "sure, no
worries", 好的，沒問題); an answer that negates or changes the offer is not ("yes, no, wait",
"yes but to another address instead"), and the reply to it asks back plainly what the customer
wants: no refusal, no "a colleague can look at other options" (tester7 F13). A ScriptedToolModel
writes the model's prose; the order store is a real seeded SQLite file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator import Orchestrator
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.answers import is_yes
from workflows.customer_service.confirm import is_no

sys.path.insert(0, str(Path(__file__).parent))
import test_customer_service_safety as safety
from case_tables import cases
from customer_service_double import ScriptedToolModel
from test_customer_service_safety import _find, _say, _writes

store = safety.store  # the fixture

ASSENT = cases("customer_service8.toml", "assent")
NOT_ASSENT = cases("customer_service8.toml", "not_assent")


@pytest.mark.parametrize("answer", ASSENT)
def test_a_set_phrase_of_assent_is_a_yes(answer: str) -> None:
    assert is_yes(answer) and not is_no(answer)


@pytest.mark.parametrize("answer", NOT_ASSENT)
def test_an_answer_that_negates_or_changes_the_offer_is_no_yes(answer: str) -> None:
    assert not is_yes(answer)


async def test_yes_no_problem_confirms_the_offered_cancel(store, telemetry) -> None:
    customer, order = _find(store, want="processing")
    orch = Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow(store)])
    await _say(orch, f"please cancel {order}", customer, thread="a")
    done = await _say(orch, "yes, no problem", customer, thread="a")
    assert done.result["tool_results"][-1]["tool"] == "cancel_order"
    assert done.result["tool_results"][-1]["ok"]


#: The model's prose after an answer that was no yes: a refusal and a colleague's options.
REFUSING = (
    "I am sorry, I cannot do that for order {id}. A colleague can look at other options with you."
)


@pytest.mark.parametrize(
    ("answer", "asked_back"),
    [
        ("yes but to 9 Elm Road, Leeds LS2 7AA instead", "What would you like me to do instead?"),
        ("oui", "I did not take that as a yes"),  # nothing else said: asked again (cs14)
        ("yes, no, wait", "What would you like me to do instead?"),
        ("是的，不过寄到上海市浦东新区世纪大道100号", "您希望我改为怎么处理？"),
    ],
)
async def test_an_answer_that_is_no_yes_is_asked_back_not_refused(
    store, telemetry, answer: str, asked_back: str
) -> None:
    customer, order = _find(store, want="processing")
    before = _writes(store)
    model = ScriptedToolModel(replies=[REFUSING.format(id=order)])
    orch = Orchestrator(model, telemetry, [CustomerServiceWorkflow(store)])
    new = "4 Mill Lane, Leeds LS1 4AB"
    await _say(orch, f"Please change the address of {order} to {new}", customer, thread="b")
    done = await _say(orch, answer, customer, thread="b")
    reply = done.result["reply"]["text"]
    assert asked_back in reply, reply
    for refusal in ("cannot do", "other options", "I am sorry", "抱歉", "无法"):
        assert refusal not in reply, reply
    assert _writes(store) == before
