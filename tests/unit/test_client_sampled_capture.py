"""Sampled expert capture through VLLMClient (mock transport): each call carries its own draw,
a call left out is labelled and costs no re-prefill, and every trace states the rate."""

from __future__ import annotations

import json
from typing import Any

import httpx
import numpy as np
import pytest

from orchestrator.config import Settings
from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall, VLLMClient
from orchestrator.core.runtime import make_client
from orchestrator.testing import SCRIPTED_ARCH
from serving.capture import EngineCapture
from serving.engine_capture import encode_routed_experts
from serving.expert_routing import ExpertRoutingSource
from tests.fixtures.vllm_recorded import chat_completion

PROMPT, COMPLETION = [4, 5, 6], [11, 12]
LAYERS, TOP_K = len(SCRIPTED_ARCH.moe_layers), SCRIPTED_ARCH.top_k


def _routing(tokens: int) -> str:
    rows = np.arange(tokens * LAYERS * TOP_K, dtype=np.int16).reshape(tokens, LAYERS, TOP_K)
    return encode_routed_experts(rows % SCRIPTED_ARCH.num_experts)


class _Server:
    """A stand-in vLLM that records what each call asked for and answers it: routed experts
    only when the call asked for an encoding other than ``none``."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.prefills = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        mode = (body.get("vllm_xargs") or {}).get("routed_experts")
        usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
        if request.url.path.endswith("/completions") and "prompt" in body:  # re-prefill
            self.prefills += 1
            self.asked.append(mode)
            ids = body["prompt"]
            choice = {"index": 0, "text": "x", "finish_reason": "length"}
            if mode != "none":
                choice["routed_experts"] = _routing(len(ids))
            return httpx.Response(200, json={"choices": [choice], "usage": usage})
        if body.get("stream"):
            head = {"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "ernie"}
            chunks = [
                {
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}],
                    "prompt_token_ids": PROMPT,
                },
                *(
                    {"choices": [{"index": 0, "delta": {"content": "t"}, "token_ids": [t]}]}
                    for t in COMPLETION
                ),
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {"choices": [], "usage": usage},
            ]
            text = "".join(f"data: {json.dumps({**head, **c})}\n\n" for c in chunks)
            return httpx.Response(
                200, text=text + "data: [DONE]\n\n", headers={"content-type": "text/event-stream"}
            )
        self.asked.append(mode)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": "ok"},
            "finish_reason": "stop",
            "token_ids": COMPLETION,
        }
        if mode != "none":
            choice["routed_experts"] = _routing(len(PROMPT) + len(COMPLETION) - 1)
        return httpx.Response(200, json=chat_completion(choice, usage, prompt_token_ids=PROMPT))


def _client(server: _Server, rate: float) -> VLLMClient:
    return VLLMClient(
        "http://vllm.test/v1",
        "ernie",
        EngineCapture(SCRIPTED_ARCH, "ids", sample_rate=rate, seed=7),
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(server)),
        max_retries=0,
    )


async def test_each_call_asks_for_its_own_draw_and_is_labelled_by_it() -> None:
    server = _Server()
    client = _client(server, 0.5)
    calls = [
        await client.chat([ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=4))
        for _ in range(40)
    ]
    await client.aclose()
    assert set(server.asked) == {"ids", "none"}  # one draw per call, not one per client
    for asked, call in zip(server.asked, calls, strict=True):
        assert call.routing.capture_sampling_rate == 0.5
        if asked == "none":
            assert call.routing.source == ExpertRoutingSource.UNAVAILABLE
            assert "not in the expert-capture sample" in (call.routing.reason or "")
        else:
            assert call.routing.source == ExpertRoutingSource.ENGINE
            assert call.routing.expert_ids.shape == (4, LAYERS, TOP_K)


async def test_a_streamed_call_left_out_of_the_sample_sends_no_reprefill() -> None:
    server = _Server()
    client = _client(server, 0.5)
    traces = []
    for _ in range(30):
        async for item in client.stream_chat(
            [ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=4)
        ):
            if isinstance(item, ModelCall):
                traces.append(item.routing)
    await client.aclose()
    sampled = sum(t.source == ExpertRoutingSource.ENGINE for t in traces)
    assert 0 < sampled < 30
    assert server.prefills == sampled and set(server.asked) == {"ids"}


async def test_every_call_captured_at_rate_one_sends_the_fields_of_the_client() -> None:
    server = _Server()
    client = _client(server, 1.0)
    for _ in range(5):
        call = await client.chat(
            [ChatMessage(role="user", content="hi")], ChatOptions(max_tokens=4)
        )
        assert call.routing.source == ExpertRoutingSource.ENGINE
    await client.aclose()
    assert server.asked == ["ids"] * 5


def test_the_setting_reaches_the_gpu_capture(tmp_path: Any) -> None:
    from serving.checkpoint import CheckpointSpec, build_checkpoint

    model = build_checkpoint(
        tmp_path / "m", CheckpointSpec(num_hidden_layers=2, tokenizer_vocab_size=512)
    )
    settings = Settings(profile="gpu", gpu_model=str(model), capture_sample_rate=0.25)
    capture = make_client(settings).capture
    assert isinstance(capture, EngineCapture) and capture.sample_rate == 0.25


@pytest.mark.parametrize("rate", [0.0, 1.5, -0.1])
def test_a_rate_outside_zero_to_one_is_refused_by_the_settings(rate: float) -> None:
    with pytest.raises(ValueError, match="capture_sample_rate"):
        Settings(capture_sample_rate=rate)
