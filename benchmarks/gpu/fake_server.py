"""A stand-in of vLLM 0.24.0's OpenAI server with routed experts and the project's plugin, for
testing the GPU run's plumbing on a CPU (``python -m benchmarks.gpu.fake_server PORT
[--no-experts]``). It answers ``/health``, ``/v1/models``, ``/v1/chat/completions`` (plain,
streamed with ``return_token_ids``, ``response_format``, ``tools``) and ``/v1/completions``
(token-id prompts), with ``routed_experts`` in the modes of :mod:`serving.vllm_plugin`. The
experts are random; nothing it returns is a measurement. Answers are canned (the routed-experts
payload is built once per (routed tokens, mode) and cached), so the server spends little CPU
per request: :mod:`benchmarks.orch_client_cpu` uses it to measure the client's CPU per request.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from serving.vllm_plugin import compact_expert_counts, mode_of

#: Hidden layers, routed experts, top-k and leading dense layers of the stand-in model:
#: ``$FAKE_SHAPE`` ("layers,experts,top_k,dense"), by default ERNIE-4.5-21B-A3B's 28,64,6,1.
LAYERS, EXPERTS, TOP_K, DENSE = (
    int(v) for v in os.environ.get("FAKE_SHAPE", "28,64,6,1").split(",")
)
#: Seconds every chat call waits before answering ($FAKE_DELAY_MS, default 0).
DELAY_S = float(os.environ.get("FAKE_DELAY_MS", "0")) / 1000.0


def _experts(rows: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ids = np.argsort(rng.random((rows, LAYERS, EXPERTS)), axis=2)[:, :, :TOP_K].astype(np.uint8)
    ids[:, :DENSE, :] = 0  # dense leading layers (ERNIE's layer 0)
    return ids


def _encode(ids: np.ndarray, mode: str) -> str | None:
    if mode == "none":
        return None
    array = compact_expert_counts(ids) if mode == "counts" else ids
    buf = io.BytesIO()
    np.save(buf, array)
    return base64.b64encode(buf.getvalue()).decode("ascii")


@functools.lru_cache(maxsize=8192)
def _payload(rows: int, mode: str) -> str | None:
    """The ``routed_experts`` field of a call with ``rows`` routed tokens (built once)."""
    return _encode(_experts(rows, rows), mode)


def _tool_calls(body: dict[str, Any]) -> list[dict[str, Any]]:
    """One call of the named tool (``tool_choice``), else of the first offered."""
    choice = body.get("tool_choice")
    name = body["tools"][0]["function"]["name"]
    if isinstance(choice, dict):
        name = choice["function"]["name"]
    args = {"order_id": "A123"}
    return [
        {
            "id": "call_0",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
    ]


def _schema_answer(schema: dict[str, Any]) -> str:
    """A JSON object that fits ``schema``'s properties: the first enum value, the minimum, false,
    an empty list or ``"x"``."""
    obj: dict[str, Any] = {}
    for key, prop in (schema.get("properties") or {}).items():
        if "enum" in prop:
            obj[key] = prop["enum"][0]
        elif prop.get("type") in ("number", "integer"):
            obj[key] = prop.get("minimum", 0)
        elif prop.get("type") == "boolean":
            obj[key] = False
        elif prop.get("type") == "array":
            obj[key] = []
        else:
            obj[key] = "x"
    return json.dumps(obj)


def _content(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The canned answer of a chat call: its text and tool calls."""
    if body.get("tools"):
        return "", _tool_calls(body)
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return _schema_answer(fmt["json_schema"]["schema"]), []
    return "Thank you for your message. " * 4, []


async def _stream(
    body: dict[str, Any], prompt_ids: list[int], comp_ids: list[int]
) -> AsyncIterator[str]:
    """The server-sent events of a streamed chat call: the prompt's token ids, the completion
    in chunks, the usage, ``[DONE]``."""
    completion = len(comp_ids)
    first = {"choices": [], "prompt_token_ids": prompt_ids}
    yield f"data: {json.dumps(first)}\n\n"
    # vLLM's per-request stream_interval: the first token at once, then chunks of that many
    # tokens (the last one shorter)
    step = max(1, int(body.get("stream_interval") or 1))
    starts = [0, *range(1, completion, step)] if completion else []
    for a, b in itertools.pairwise([*starts, completion]):
        chunk = {
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": "x" * (b - a)},
                    "token_ids": comp_ids[a:b],
                    "finish_reason": "length" if b == completion else None,
                }
            ]
        }
        yield f"data: {json.dumps(chunk)}\n\n"
    usage = {"prompt_tokens": len(prompt_ids), "completion_tokens": completion}
    yield f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n"
    yield "data: [DONE]\n\n"


def _completion(body: dict[str, Any], prompt_ids: list[int], comp_ids: list[int]) -> dict[str, Any]:
    """The JSON answer of a non-streamed chat call (without ``routed_experts``)."""
    text, tool_calls = _content(body)
    prompt, completion = len(prompt_ids), len(comp_ids)
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": text, "tool_calls": tool_calls},
        "finish_reason": "tool_calls" if tool_calls else "length",
        "token_ids": comp_ids if body.get("return_token_ids") else None,
    }
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "ernie",
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "prompt_token_ids": prompt_ids if body.get("return_token_ids") else None,
    }


def app(experts: bool, default_mode: str = "counts") -> Any:
    """The Starlette app."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
    from starlette.routing import Route

    async def health(_: Request) -> PlainTextResponse:
        return PlainTextResponse("")

    async def models(_: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": "ernie", "root": "/fake"}]})

    async def chat(request: Request) -> Any:
        body = await request.json()
        if DELAY_S:  # a stand-in for the GPU's time per call ($FAKE_DELAY_MS)
            await asyncio.sleep(DELAY_S)
        prompt = max(8, len(json.dumps(body.get("messages"))) // 6)
        completion = int(body.get("max_tokens") or 16)
        prompt_ids = list(range(prompt))
        comp_ids = list(range(100, 100 + completion))
        if body.get("stream"):
            return StreamingResponse(
                _stream(body, prompt_ids, comp_ids), media_type="text/event-stream"
            )
        mode = mode_of(body.get("vllm_xargs"), default_mode)
        answer = _completion(body, prompt_ids, comp_ids)
        if experts:
            answer["choices"][0]["routed_experts"] = _payload(prompt + completion - 1, mode)
        return JSONResponse(answer)

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        prompt = len(body["prompt"])
        completion = int(body.get("max_tokens") or 1)
        mode = mode_of(body.get("vllm_xargs"), default_mode)
        choice: dict[str, Any] = {"index": 0, "text": "x", "finish_reason": "length"}
        if body.get("return_token_ids"):  # canned ids, as vLLM's field (tokdiag.align)
            choice["token_ids"] = list(range(3, 3 + completion))
        if experts:
            choice["routed_experts"] = _payload(prompt + completion - 1, mode)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        return JSONResponse({"id": "y", "choices": [choice], "usage": usage})

    return Starlette(
        routes=[
            Route("/health", health),
            Route("/v1/models", models),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/completions", completions, methods=["POST"]),
        ]
    )


if __name__ == "__main__":
    import uvicorn

    port = int(sys.argv[1])
    mode = "counts" if "--counts" in sys.argv else "ids"
    uvicorn.run(
        app("--no-experts" not in sys.argv, mode), host="127.0.0.1", port=port, log_level="warning"
    )
