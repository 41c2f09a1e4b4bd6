"""VLLMClient.stream_chat on the SDK's raw streamed path (chunks as parsed JSON, no pydantic
chunk models): what it sends, what it yields, and that every way a stream can fail maps to the
same errors as before: a cut connection or a read timeout mid-stream is
``ServerUnavailableError`` (a batch retries it, customer service hands the turn over), an HTTP
error status is ``ModelCallError`` after the SDK's retries, an error event or a malformed chunk
in the stream is ``ModelCallError``; and the connection is closed however the stream ends."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest

from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall, TextDelta, VLLMClient
from orchestrator.exceptions import ModelCallError, ServerUnavailableError, UserError
from tests.unit.customer_service_double import RecordingCapture

HI = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]


def _event(chunk: Any) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _chunks(words: Sequence[str], *, first_id: int = 20) -> list[dict[str, Any]]:
    """vLLM's chunks for ``words``: prompt ids first, one token per word, then the usage."""
    out: list[dict[str, Any]] = [
        {
            "id": "s",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
            "prompt_token_ids": [1, 2, 3],
        }
    ]
    for i, word in enumerate(words):
        last = i == len(words) - 1
        out.append(
            {
                "id": "s",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"content": word},
                        "token_ids": [first_id + i],
                        "finish_reason": "stop" if last else None,
                    }
                ],
            }
        )
    out.append(
        {
            "id": "s",
            "choices": [],
            "usage": {"prompt_tokens": 3, "completion_tokens": len(words), "total_tokens": 0},
        }
    )
    return out


class Body(httpx.AsyncByteStream):
    """A streamed response body: the events, then optionally an error raised mid-stream;
    records whether it was closed."""

    def __init__(self, events: Sequence[bytes], fail: Exception | None = None) -> None:
        self.events = list(events)
        self.fail = fail
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            yield event
        if self.fail is not None:
            raise self.fail

    async def aclose(self) -> None:
        self.closed = True


def _client(handler: Any, capture: RecordingCapture, *, max_retries: int = 0) -> VLLMClient:
    return VLLMClient(
        "http://vllm.test/v1",
        "ernie",
        capture,  # type: ignore[arg-type]
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        max_retries=max_retries,
        temperature=0.3,
    )


def _sse(body: httpx.AsyncByteStream) -> httpx.Response:
    return httpx.Response(200, stream=body, headers={"content-type": "text/event-stream"})


async def _drain(client: VLLMClient, **kwargs: Any) -> list[Any]:
    return [item async for item in client.stream_chat(HI, ChatOptions(max_tokens=8, **kwargs))]


async def test_the_request_body_is_the_plain_streamed_chat_body() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        assert request.url.path == "/v1/chat/completions"
        return _sse(Body([*map(_event, _chunks(["ok"])), b"data: [DONE]\n\n"]))

    client = _client(handler, RecordingCapture())
    await _drain(client)
    await _drain(client, temperature=0.0)
    await client.aclose()
    assert sent[0] == {
        "model": "ernie",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
        ],
        "max_tokens": 8,
        "temperature": 0.3,
        "stream": True,
        "stream_options": {"include_usage": True},
        "return_token_ids": True,
    }
    assert sent[1]["temperature"] == 0.0


@pytest.mark.parametrize("words", [["Hel", "lo", " 你好", "!"], ["x"] * 40])
async def test_pieces_then_one_call_with_every_streamed_id(words: list[str]) -> None:
    body = Body([*map(_event, _chunks(words)), b"data: [DONE]\n\n"])
    capture = RecordingCapture()
    client = _client(lambda request: _sse(body), capture)
    items = await _drain(client)
    await client.aclose()
    deltas = [i for i in items if isinstance(i, TextDelta)]
    assert [d.text for d in deltas] == words
    assert [d.token_ids for d in deltas] == [(20 + i,) for i in range(len(words))]
    assert all(isinstance(i, TextDelta) for i in items[:-1])
    call = items[-1]
    assert isinstance(call, ModelCall)
    assert call.text == "".join(words) and call.finish_reason == "stop"
    assert (call.prompt_tokens, call.completion_tokens) == (3, len(words))
    assert call.ttft_ms is not None and 0 <= call.ttft_ms <= call.latency_ms
    assert capture.seen == [([1, 2, 3], [20 + i for i in range(len(words))])]
    assert body.closed


async def test_a_stream_interval_is_sent_and_chunks_of_several_tokens_are_read_whole() -> None:
    """With ``stream_interval`` above 1 the body asks vLLM for it, and a chunk that carries
    several tokens (as vLLM then sends) yields its text and every one of its ids."""
    sent: list[dict[str, Any]] = []
    chunks = _chunks(["one two", " three"])
    chunks[1]["choices"][0]["token_ids"] = [20, 21]
    chunks[2]["choices"][0]["token_ids"] = [22]
    chunks[-1]["usage"]["completion_tokens"] = 3

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return _sse(Body([*map(_event, chunks), b"data: [DONE]\n\n"]))

    capture = RecordingCapture()
    client = VLLMClient(
        "http://vllm.test/v1",
        "ernie",
        capture,  # type: ignore[arg-type]
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        stream_interval=16,
    )
    items = await _drain(client)
    await client.aclose()
    assert sent[0]["stream_interval"] == 16
    deltas = [i for i in items if isinstance(i, TextDelta)]
    assert [d.token_ids for d in deltas] == [(20, 21), (22,)]
    call = items[-1]
    assert isinstance(call, ModelCall) and call.text == "one two three"
    assert call.completion_tokens == 3
    assert capture.seen == [([1, 2, 3], [20, 21, 22])]


def test_a_stream_interval_below_one_token_is_refused() -> None:
    with pytest.raises(UserError, match="stream_interval must be at least 1"):
        VLLMClient("http://vllm.test/v1", "ernie", RecordingCapture(), stream_interval=0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "fail",
    [
        httpx.ReadError("connection reset by peer"),
        httpx.RemoteProtocolError("peer closed connection without sending complete message"),
        httpx.ReadTimeout("timed out"),
    ],
)
async def test_a_stream_cut_midway_is_server_unavailable(fail: Exception) -> None:
    body = Body(list(map(_event, _chunks(["a", "b", "c"])[:2])), fail=fail)
    client = _client(lambda request: _sse(body), RecordingCapture())
    seen: list[Any] = []
    with pytest.raises(ServerUnavailableError, match=r"vllm\.test"):
        async for item in client.stream_chat(HI, ChatOptions(max_tokens=8)):
            seen.append(item)
    await client.aclose()
    assert [i.text for i in seen] == ["a"]  # what arrived before the cut, and no ModelCall
    assert body.closed


async def test_an_error_event_in_the_stream_is_a_model_call_error() -> None:
    events = [
        _event(_chunks(["a"])[1]),
        _event({"error": {"message": "engine died mid-generation", "code": 500}}),
    ]
    body = Body(events)
    client = _client(lambda request: _sse(body), RecordingCapture())
    with pytest.raises(ModelCallError, match="engine died mid-generation"):
        await _drain(client)
    await client.aclose()
    assert body.closed


@pytest.mark.parametrize(
    "bad",
    [
        b"data: [1, 2]\n\n",
        _event({"choices": [{"index": 0, "delta": {"content": 42}, "token_ids": [1]}]}),
    ],
)
async def test_a_malformed_chunk_is_a_model_call_error(bad: bytes) -> None:
    body = Body([_event(_chunks(["a"])[0]), bad])
    client = _client(lambda request: _sse(body), RecordingCapture())
    with pytest.raises(ModelCallError, match="malformed stream chunk"):
        await _drain(client)
    await client.aclose()
    assert body.closed


async def test_a_503_before_the_stream_is_retried_then_streamed() -> None:
    answers = [httpx.Response(503, json={"error": {"message": "busy"}})]

    def handler(request: httpx.Request) -> httpx.Response:
        if answers:
            return answers.pop()
        return _sse(Body([*map(_event, _chunks(["fine"])), b"data: [DONE]\n\n"]))

    client = _client(handler, RecordingCapture(), max_retries=1)
    items = await _drain(client)
    await client.aclose()
    assert isinstance(items[-1], ModelCall) and items[-1].text == "fine"


async def test_an_error_status_after_the_retries_is_a_model_call_error() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(429, json={"error": {"message": "too many requests"}})

    client = _client(handler, RecordingCapture(), max_retries=1)
    with pytest.raises(ModelCallError, match=r"answered HTTP 429: .*too many requests"):
        await _drain(client)
    await client.aclose()
    assert len(calls) == 2


async def test_a_consumer_that_stops_early_closes_the_connection() -> None:
    body = Body([*map(_event, _chunks(["a", "b", "c", "d"])), b"data: [DONE]\n\n"])
    client = _client(lambda request: _sse(body), RecordingCapture())
    stream = client.stream_chat(HI, ChatOptions(max_tokens=8))
    first = await anext(stream)
    assert isinstance(first, TextDelta) and first.text == "a"
    await stream.aclose()
    await client.aclose()
    assert body.closed
