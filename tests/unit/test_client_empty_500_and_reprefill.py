"""VLLMClient on mock bodies: an empty HTTP 5xx names vLLM's request-logging flag, and the GPU
re-prefill after a stream sends exactly the call's routed tokens (prompt + completion[:-1])."""

from __future__ import annotations

import json
from typing import Any

import httpx
import numpy as np
import pytest

from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall, VLLMClient
from orchestrator.exceptions import ModelCallError
from orchestrator.testing import SCRIPTED_ARCH
from serving.capture import EngineCapture
from serving.engine_capture import encode_routed_experts
from serving.expert_routing import ExpertRoutingSource
from serving.probe import LOG_REQUESTS_FLAG


def _client(handler: Any) -> VLLMClient:
    return VLLMClient(
        "http://vllm.test/v1",
        "ernie",
        EngineCapture(SCRIPTED_ARCH),
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        max_retries=0,
    )


def _error(status: int, message: str) -> httpx.Response:
    # vLLM's error body shape
    return httpx.Response(
        status,
        json={"error": {"message": message, "type": "InternalServerError", "code": status}},
    )


@pytest.mark.parametrize("status", [500, 503])
async def test_an_empty_5xx_names_the_request_logging_flag(status: int) -> None:
    client = _client(lambda request: _error(status, ""))
    with pytest.raises(ModelCallError, match=rf"HTTP {status}.*{LOG_REQUESTS_FLAG}"):
        await client.chat([ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=4))
    await client.aclose()


async def test_an_empty_500_on_a_stream_names_the_flag_too() -> None:
    client = _client(lambda request: _error(500, ""))
    with pytest.raises(ModelCallError, match=LOG_REQUESTS_FLAG):
        async for _ in client.stream_chat(
            [ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=4)
        ):
            pass
    await client.aclose()


@pytest.mark.parametrize(("status", "message"), [(500, "CUDA out of memory"), (400, "")])
async def test_a_5xx_with_a_reason_or_a_4xx_gets_no_flag_hint(status: int, message: str) -> None:
    client = _client(lambda request: _error(status, message))
    with pytest.raises(ModelCallError) as err:
        await client.chat([ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=4))
    await client.aclose()
    assert f"HTTP {status}" in str(err.value) and LOG_REQUESTS_FLAG not in str(err.value)


async def test_an_empty_500_on_a_schema_request_names_both_ways_out() -> None:
    client = _client(lambda request: _error(500, ""))
    with pytest.raises(ModelCallError) as err:
        await client.chat(
            [ChatMessage(role="user", content="hi")],
            ChatOptions(
                max_tokens=4,
                json_schema={"type": "object", "properties": {"a": {"type": "string"}}},
            ),
        )
    await client.aclose()
    assert LOG_REQUESTS_FLAG in str(err.value)
    assert "ORCH_STRUCTURED_OUTPUT=false" in str(err.value)


def _sse(chunks: list[dict[str, Any]]) -> str:
    head = {"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "ernie"}
    return "".join(f"data: {json.dumps({**head, **c})}\n\n" for c in chunks) + "data: [DONE]\n\n"


@pytest.mark.parametrize("completion", [[11, 12, 13], [11], []])
async def test_the_reprefill_sends_prompt_and_all_but_the_last_sampled_token(
    completion: list[int],
) -> None:
    prompt = [4, 5, 6, 7]
    layers, top_k = len(SCRIPTED_ARCH.moe_layers), SCRIPTED_ARCH.top_k
    prefills: list[list[int]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path.endswith("/chat/completions"):
            chunks: list[dict[str, Any]] = [
                {
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
                    "prompt_token_ids": prompt,
                }
            ]
            chunks += [
                {"choices": [{"index": 0, "delta": {"content": f"t{t}"}, "token_ids": [t]}]}
                for t in completion
            ]
            chunks += [
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {
                    "choices": [],
                    "usage": {
                        "prompt_tokens": len(prompt),
                        "completion_tokens": len(completion),
                        "total_tokens": len(prompt) + len(completion),
                    },
                },
            ]
            return httpx.Response(
                200, text=_sse(chunks), headers={"content-type": "text/event-stream"}
            )
        # /completions with max_tokens=1, as vLLM answers it: one routing row per prompt token
        # (the one sampled token is never fed back)
        ids = body["prompt"]
        prefills.append(list(ids))
        rows = np.arange(len(ids) * layers * top_k, dtype=np.int16).reshape(len(ids), layers, top_k)
        choice = {
            "index": 0,
            "text": "x",
            "finish_reason": "length",
            "routed_experts": encode_routed_experts(rows % SCRIPTED_ARCH.num_experts),
        }
        usage = {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1}
        return httpx.Response(
            200,
            json={
                "id": "p",
                "object": "text_completion",
                "created": 0,
                "model": "ernie",
                "choices": [choice],
                "usage": usage,
            },
        )

    client = _client(handler)
    items = [
        item
        async for item in client.stream_chat(
            [ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=8)
        )
    ]
    await client.aclose()
    assert prefills == [prompt + completion[:-1]]
    call = items[-1]
    assert isinstance(call, ModelCall) and call.routing.source is ExpertRoutingSource.ENGINE
    want = len(prompt) + max(len(completion) - 1, 0)
    assert call.routing.expert_ids is not None
    assert call.routing.expert_ids.shape == (want, layers, top_k)
