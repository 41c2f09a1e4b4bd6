"""tester4 finding 8: a question no route of this shop serves (a flight, a mortgage, the
weather), asked in a customer's conversation, gets a short honest reply in the customer's
language; it is never empty, never shows the operator's command, and opens no waiting case,
however often it is asked on one thread. The real rule classifier, the customer-service
workflow on a real SQLite order store, and ScriptedModel as the model's test double.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from starlette.testclient import TestClient

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.cli import chat as chat_cli
from orchestrator.config import Settings
from orchestrator.testing import ScriptedModel
from orchestrator.textnorm import to_simplified
from orchestrator.ui import build_app
from orchestrator.ui.auth import Caller, sign_caller
from tests.unit.customer_service_double import ScriptedToolModel
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.store import OrderStore

HAN = re.compile("[\u4e00-\u9fff]")

#: (message, the reply's language): English, Simplified and Traditional Chinese.
OUT_OF_SCOPE = [
    ("Can I add a bag to my flight?", "en"),
    ("Can you recommend a good mortgage?", "en"),
    ("how do I bake sourdough bread", "en"),
    ("能给我的航班加一件行李吗", "zh"),
    ("能給我的航班加一件行李嗎", "zh"),
    ("今天天气怎么样", "zh"),
]


@pytest.fixture
def orch(tmp_path: Path) -> Iterator[tuple[Orchestrator, OrderStore]]:
    orders = OrderStore(f"sqlite:///{tmp_path / 'cs.db'}")
    orders.seed(5, seed=1)  # the handoff queue lives in the order store
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    model = ScriptedToolModel(replies=["Thanks for writing."])
    yield Orchestrator(model, telemetry, [CustomerServiceWorkflow(orders)]), orders
    telemetry.close()
    orders.close()


async def _say(orch: Orchestrator, text: str, thread: str) -> tuple[str, str]:
    """The customer's view of one turn (what ``orchestrator chat`` prints) and its status."""
    buffer = io.StringIO()
    old = chat_cli.console
    chat_cli.console = Console(file=buffer, width=300)
    try:
        request = Request(text=text, thread_id=thread, customer_id="C00001")
        await chat_cli._turn(orch, request, False)
    finally:
        chat_cli.console = old
    rows = orch.store.requests()
    return buffer.getvalue().strip(), rows[-1].status if rows else ""


@pytest.mark.parametrize(("text", "lang"), OUT_OF_SCOPE)
async def test_out_of_scope_gets_an_honest_reply_and_no_case(
    orch: tuple[Orchestrator, OrderStore], text: str, lang: str
) -> None:
    o, orders = orch
    for _ in range(3):  # asked again and again on one thread
        shown, status = await _say(o, text, "t-oos")
        assert shown, "the customer got an empty reply"
        assert "handoff resume" not in shown and "orchestrator" not in shown
        assert bool(HAN.search(shown)) is (lang == "zh"), shown
        assert status == "succeeded"
    first, _ = await _say(o, text, "t-oos-fresh")
    shop = "orders from this shop" if lang == "en" else "本店订单"
    assert shop in to_simplified(first), first
    assert orders.handoffs() == []


async def test_a_service_question_is_still_answered_and_a_person_still_reached(
    orch: tuple[Orchestrator, OrderStore],
) -> None:
    o, orders = orch
    shown, _ = await _say(o, "Where is my parcel? Please track my order.", "t-track")
    assert "orders from this shop" not in shown
    shown, status = await _say(o, "I want to speak to a human agent right now!", "t-human")
    assert status == "needs_human" and "a colleague will reply here" in shown
    assert "handoff resume" not in shown
    assert [h["thread_id"] for h in orders.handoffs()] == ["t-human"]
    shown, status = await _say(o, "hello? anyone?", "t-human")  # the thread waits: no new case
    assert status == "needs_human" and "waits for a person" in shown
    assert "handoff resume" not in shown
    assert len(orders.handoffs()) == 1


UI_SECRET = "chat-out-of-scope-test-secret-0123456789"
#: A fresh thread id (a UUID4, as Chainlit makes): the only kind a conversation starts on.
FRESH = "9f0c6a52-5a3e-4c1b-9d7e-2f6a8b1c3d4e"


@pytest.mark.parametrize(("text", "lang"), [OUT_OF_SCOPE[0], OUT_OF_SCOPE[4]])
def test_the_ui_chat_page_gets_the_same_reply(ui_settings: Settings, text: str, lang: str) -> None:
    """The UI's chat page (``POST /api/turn``, what the page reads): the same honest reply, no
    waiting case for an operator, asked twice on one thread."""
    caller = Caller(name="ann", role="customer", customer_id="C00001")
    ann = {"Authorization": f"Bearer {sign_caller(UI_SECRET, caller, ttl_s=86_400)}"}
    ops_caller = Caller(name="ops", role="operator", customer_id=None)
    ops = {"Authorization": f"Bearer {sign_caller(UI_SECRET, ops_caller, ttl_s=86_400)}"}
    app = build_app(ui_settings, client=ScriptedModel(replies=["Thanks."]), secret=UI_SECRET)
    with TestClient(app) as client:
        for turn in range(2):
            answer = client.post("/api/turn", json={"text": text, "thread_id": FRESH}, headers=ann)
            assert answer.status_code == 200, answer.text
            events = [json.loads(line) for line in answer.text.splitlines() if line.strip()]
            # the first turn is told the shop cannot help (deciding.out_of_scope: first turn
            # only, as "what about the other one?" later reads out of scope on its own); the
            # second gets a reply of its own, never a waiting case
            kinds = ("reply_facts",) if turn == 0 else ("reply_facts", "reply_token")
            said = "".join(e["text"] for e in events if e["kind"] in kinds).strip()
            assert said and bool(HAN.search(said)) is (lang == "zh"), events
            if turn == 0:
                shop = "orders from this shop" if lang == "en" else "本店订单"
                assert shop in to_simplified(said), said
            assert next(e for e in events if e["kind"] == "done")["status"] == "succeeded"
            assert "orchestrator handoff" not in answer.text
        assert client.get("/api/handoffs", headers=ops).json() in ([], {"handoffs": []})
