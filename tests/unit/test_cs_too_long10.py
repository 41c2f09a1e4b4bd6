"""A message the model server refuses as longer than the model's context (vLLM's HTTP 400,
tester10 kind J): the customer is asked to send the question on its own, the turn is not
handed to a person, and no reason blames the server. Inputs of our own: repeated greetings,
emoji, Chinese, digits; the model refuses the first, second or third call of the turn."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import openai
import pytest

from orchestrator import Orchestrator, TelemetryStore
from orchestrator.core.client import VLLMClient
from orchestrator.core.events import StreamDone
from orchestrator.exceptions import ModelCallError, PromptTooLongError
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.store import OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import RecordingCapture, ScriptedToolModel, stream_turn

#: vLLM's own words for a prompt over --max-model-len (renderer, engine input processor).
REFUSALS = [
    "This model's maximum context length is 2048 tokens. However, your prompt contains 9000 "
    "characters (more than 8192 characters, which is the upper bound for 2048 input tokens). "
    "Please reduce the length of the input prompt.",
    "The decoder prompt (length 2301) is longer than the maximum model length of 2048. "
    "Make sure that `max_model_len` is no smaller than the number of text tokens.",
]


def _bad_request(message: str, status: int = 400) -> openai.APIStatusError:
    response = httpx.Response(status, request=httpx.Request("POST", "http://x/v1/chat"))
    body = {"error": {"message": message, "type": "BadRequestError", "code": status}}
    return openai.APIStatusError(message, response=response, body=body)


@pytest.mark.parametrize("message", REFUSALS)
def test_a_context_refusal_is_a_prompt_too_long_error(message: str) -> None:
    client = VLLMClient("http://127.0.0.1:9/v1", "m", RecordingCapture())
    assert isinstance(client._status_error(_bad_request(message)), PromptTooLongError)


@pytest.mark.parametrize(
    ("message", "status"),
    [("Invalid tool_choice", 400), (REFUSALS[0], 500), ("maximum of 3 tools", 400)],
)
def test_other_errors_stay_model_call_errors(message: str, status: int) -> None:
    client = VLLMClient("http://127.0.0.1:9/v1", "m", RecordingCapture())
    error = client._status_error(_bad_request(message, status))
    assert type(error) is ModelCallError


def _shop(orders_url: Callable[[int, int], str]) -> tuple[OrderStore, str, str]:
    """This test's seeded store, a customer of it and that customer's newest order id."""
    store = OrderStore(orders_url(60, 6))
    return store, "C00002", store.tools("C00002").order_ids(1)[0]


def _reply(done: StreamDone) -> str:
    """The text the customer read at the end of a streamed turn."""
    return str((done.result or {}).get("reply", {}).get("text", ""))


#: ``(text, the reply's language)``: each ends with a question about the customer's order.
LONG = [
    ("Hi! " * 1200 + "Where is {order}?", "en"),
    ("😀" * 1500 + " Where is my order {order}?", "en"),
    ("你好" * 1500 + "订单{order}到哪了？", "zh"),
    ("1234567890" * 600 + " where is {order}", "en"),
    ("請問" * 1400 + "訂單{order}在哪裡？", "zh"),
]


@pytest.mark.parametrize("refused_call", [1, 2, 3])
def test_a_refused_long_message_is_asked_back_never_handed_on(
    orders_url: Callable[[int, int], str], telemetry: TelemetryStore, refused_call: int
) -> None:
    store, customer, order = _shop(orders_url)
    for i, (text, lang) in enumerate(LONG):
        model = ScriptedToolModel(
            fail_on_call=(refused_call, lambda: PromptTooLongError(REFUSALS[1], status_code=400))
        )
        orch = Orchestrator(model, telemetry, [CustomerServiceWorkflow(store)])
        message = text.format(order=order)
        _, done = asyncio.run(stream_turn(orch, message, customer, thread=f"t{refused_call}-{i}"))
        reply = _reply(done)
        assert done.status == "succeeded", (message[-40:], done)
        assert "unavailable" not in reply and "不可用" not in reply, reply
        if refused_call < 3:  # nothing read: the customer is told why and what to do
            marker = "too long for me to read" if lang == "en" else "您的消息太"
            assert marker in reply, reply
        else:  # the facts were read by code; code's words replace the model's
            assert order in reply, reply
    assert store.handoffs("waiting") == []


#: Long texts whose question, with its order id, is the last thing said (tester10: "Which
#: order do you mean?" when the id lay past the readers' limit). ``{order}``: the id.
LONG_READS = [
    "I have been waiting and waiting. " * 150 + "Where is {order}?",
    "Story time. " * 420 + "What is the status of order {order}",
    "我等了很久很久。" * 560 + "请问订单{order}到哪了？",
]


@pytest.mark.parametrize("text", LONG_READS)
def test_a_long_read_keeps_its_order_id_at_the_end(
    orders_url: Callable[[int, int], str], telemetry: TelemetryStore, text: str
) -> None:
    store, customer, order = _shop(orders_url)
    message = text.format(order=order)
    assert len(message) > 4000
    orch = Orchestrator(ScriptedToolModel(), telemetry, [CustomerServiceWorkflow(store)])
    _, done = asyncio.run(stream_turn(orch, message, customer, thread="t-read"))
    reply = _reply(done)
    assert order in reply and "Which order" not in reply and "哪一个订单" not in reply, reply
    again = f"Please refund {order}" + " so annoyed" * 400  # a write in a cut text: asked back
    _, done = asyncio.run(stream_turn(orch, "x " * 2100 + again, customer, thread="t-write"))
    assert done.result is not None and done.result.get("pending") is None
    assert store.handoffs("waiting") == []
