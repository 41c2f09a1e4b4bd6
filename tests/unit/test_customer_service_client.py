"""VLLMClient's additions for customer service, on recorded-shape bodies through
``httpx.MockTransport``: tool calls (arguments kept as text) and streamed chat with the token
ids handed to the routing capture (CPU: replay of exactly the streamed tokens)."""

from __future__ import annotations

import json
from typing import Any

import httpx

from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall, TextDelta, VLLMClient
from tests.fixtures.vllm_recorded import chat_completion
from tests.unit.customer_service_double import RecordingCapture


def _client(handler, capture: RecordingCapture) -> VLLMClient:
    return VLLMClient(
        "http://vllm.test/v1",
        "ernie",
        capture,  # type: ignore[arg-type]
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )


async def test_tool_calls_are_parsed_and_the_request_names_the_tool() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        choice = {
            "index": 0,
            "finish_reason": "stop",
            "token_ids": [7, 8],
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {
                            "name": "lookup_order",
                            "arguments": '{"order_id":"ORD-100001"}',
                        },
                    }
                ],
            },
        }
        usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
        return httpx.Response(200, json=chat_completion(choice, usage, prompt_token_ids=[1, 2, 3]))

    capture = RecordingCapture()
    client = _client(handler, capture)
    tool = {"type": "function", "function": {"name": "lookup_order", "parameters": {}}}
    choice = {"type": "function", "function": {"name": "lookup_order"}}
    call = await client.chat(
        [ChatMessage(role="user", content="hi")],
        ChatOptions(max_tokens=8, tools=[tool], tool_choice=choice),
    )
    await client.aclose()
    assert sent[0]["tools"] == [tool] and sent[0]["tool_choice"] == choice
    assert [(c.name, c.arguments) for c in call.tool_calls] == [
        ("lookup_order", '{"order_id":"ORD-100001"}')
    ]
    assert capture.seen == [([1, 2, 3], [7, 8])]


async def test_stream_yields_pieces_then_the_call_with_the_streamed_ids() -> None:
    chunks = [
        {
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
            "prompt_token_ids": [4, 5, 6, 7],
        },
        {"choices": [{"index": 0, "delta": {"content": "Hel"}, "token_ids": [11]}]},
        {"choices": [{"index": 0, "delta": {"content": "lo"}, "token_ids": [12]}]},
        {
            "choices": [
                {"index": 0, "delta": {"content": "!"}, "token_ids": [13], "finish_reason": "stop"}
            ]
        },
        {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}},
    ]
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        body = (
            "".join(
                "data: "
                + json.dumps(
                    {
                        "id": "s",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "ernie",
                        **c,
                    }
                )
                + "\n\n"
                for c in chunks
            )
            + "data: [DONE]\n\n"
        )
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    capture = RecordingCapture()
    client = _client(handler, capture)
    items = [
        item
        async for item in client.stream_chat(
            [ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=8, temperature=0.1)
        )
    ]
    await client.aclose()
    assert sent[0]["stream"] is True and sent[0]["return_token_ids"] is True
    deltas = [i for i in items if isinstance(i, TextDelta)]
    assert "".join(d.text for d in deltas) == "Hello!"
    call = items[-1]
    assert isinstance(call, ModelCall) and call.text == "Hello!"
    assert call.finish_reason == "stop" and call.completion_tokens == 3
    assert call.ttft_ms is not None and call.ttft_ms <= call.latency_ms
    assert capture.seen == [([4, 5, 6, 7], [11, 12, 13])]
