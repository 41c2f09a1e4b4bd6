"""A stream that ends with no finish reason (the server stopped mid-answer) is a failed call:
``TruncatedStreamError`` from the client, a ``truncated`` row in telemetry through the gateway,
and never a whole reply (issue 43 item 5). Handcrafted SSE bodies through an
``httpx.MockTransport``, as in ``test_client_stream.py``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from orchestrator.classifier import RuleClassifier
from orchestrator.core.client import (
    TRUNCATED,
    ChatMessage,
    ChatOptions,
    ModelCall,
    TextDelta,
    TruncatedStreamError,
    VLLMClient,
)
from orchestrator.core.gateway import ModelGateway
from orchestrator.exceptions import ModelCallError
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from orchestrator.telemetry.schema import ModelCallRecord
from tests.unit.customer_service_double import RecordingCapture

HI = [ChatMessage(role="user", content="hi")]


class Body(httpx.AsyncByteStream):
    def __init__(self, events: Sequence[bytes]) -> None:
        self.events = list(events)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            yield event


def _event(chunk: Any) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _piece(text: str, token: int, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "token_ids": [token]}
    return _event({"id": "s", "choices": [{**choice, "finish_reason": finish}]})


def _client(events: Sequence[bytes]) -> VLLMClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, stream=Body(events), headers={"content-type": "text/event-stream"}
        )

    return VLLMClient(
        "http://vllm.test/v1",
        "ernie",
        RecordingCapture(),  # type: ignore[arg-type]
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        max_retries=0,
    )


#: A reply cut after "Your order has": no finish reason, then the body ends (with or without
#: ``[DONE]``: either way no whole answer arrived).
CUT = [_piece("Your order ", 5), _piece("has", 6)]


@pytest.mark.parametrize("tail", [[], [b"data: [DONE]\n\n"]], ids=["no-done", "done-only"])
async def test_a_stream_without_a_finish_reason_is_truncated(tail: list[bytes]) -> None:
    client = _client([*CUT, *tail])
    seen: list[Any] = []
    with pytest.raises(TruncatedStreamError, match="without a finish reason") as caught:
        async for item in client.stream_chat(HI, ChatOptions(max_tokens=8)):
            seen.append(item)
    await client.aclose()
    assert all(isinstance(i, TextDelta) for i in seen)  # no ModelCall: not a success
    assert caught.value.call.finish_reason == TRUNCATED
    assert caught.value.call.text == "Your order has"
    assert isinstance(caught.value, ModelCallError)  # every caller's failure path applies


async def test_a_whole_stream_is_not_truncated() -> None:
    client = _client([*CUT, _piece(" shipped.", 7, "stop"), b"data: [DONE]\n\n"])
    items = [item async for item in client.stream_chat(HI, ChatOptions(max_tokens=8))]
    await client.aclose()
    assert isinstance(items[-1], ModelCall) and items[-1].finish_reason == "stop"


async def test_the_gateway_records_a_cut_stream_as_truncated(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    request = Request(text="where is my order")
    classification = RuleClassifier().classify(request)
    await store.astart_request(request, classification, "test")
    client = _client(CUT)
    gateway = ModelGateway(
        client, store, request_id=request.id, classification=classification, workflow="test"
    )
    with pytest.raises(TruncatedStreamError, match="draft_reply"):
        async for _ in gateway.stream("draft_reply", HI):
            pass
    await client.aclose()
    with store.engine.connect() as connection:
        rows = connection.execute(select(ModelCallRecord.node, ModelCallRecord.finish_reason)).all()
    assert [tuple(r) for r in rows] == [("draft_reply", "truncated")]
    store.close()
