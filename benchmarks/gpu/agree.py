"""``agree`` phase: record real responses (token ids + routed_experts) from the routed-experts
server for the replay, small fixtures for the unit tests, and a check of the project's own
``VLLMClient`` on the same server."""

from __future__ import annotations

import asyncio
import gzip
import json
from argparse import Namespace
from typing import Any

from benchmarks.gpu.common import MAX_TOKENS, Workspace, log, messages_for, texts
from benchmarks.gpu.load import one_call, run_load

Urls = dict[str, str | None]


def run(ws: Workspace, args: Namespace, urls: Urls) -> None:
    """Send ``args.agree_n`` requests at concurrency ``args.agree_c``, keep the bodies in
    ``<state>/agree.jsonl.gz`` (copied to ``<out>``), record fixtures, check the client.

    Raises:
        RuntimeError: The routed-experts server is not available.
    """
    import httpx

    base = urls["on"]
    if base is None:
        raise RuntimeError("routed-experts server is not available")
    items = texts(ws.data, args.agree_n, seed=7)
    batch = [messages_for(t, f"A{i:04d}") for i, t in enumerate(items)]
    log(f"agree: {len(batch)} requests at concurrency {args.agree_c}")
    load = asyncio.run(run_load(base, batch, args.agree_c, stream_every=0, keep_bodies=True))
    bodies = load.pop("bodies")
    with gzip.open(ws.agree_file, "wt", encoding="utf-8") as handle:
        for i, body in enumerate(bodies):
            if body is not None:
                handle.write(json.dumps({"i": i, "text": items[i], "body": body}) + "\n")
    ws.out.mkdir(parents=True, exist_ok=True)
    (ws.out / ws.agree_file.name).write_bytes(ws.agree_file.read_bytes())
    has_field = sum(1 for b in bodies if b and b["choices"][0].get("routed_experts"))
    log(f"agree: {load['ok']} ok, {has_field} with routed_experts, {load['output_tok_s']} tok/s")

    # Small fixtures (vLLM 0.24.0 as recorded): short calls with routing, a streamed call.
    async def fixtures() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with httpx.AsyncClient(timeout=120) as client:
            for name, text, n in (
                ("chat_en_routed", "Where is my refund?", 4),
                ("chat_zh_routed", "我的退款什么时候到账？", 3),
            ):
                r = await one_call(
                    client,
                    base,
                    [{"role": "user", "content": text}],
                    n,
                    False,
                    {"ignore_eos": False},
                )
                out[name] = r["body"]
            body = {
                "model": "ernie",
                "messages": [{"role": "user", "content": "Hello"}],
                "max_tokens": 3,
                "temperature": 0.0,
                "stream": True,
                "return_token_ids": True,
                "stream_options": {"include_usage": True},
            }
            chunks = []
            async with client.stream("POST", f"{base}/chat/completions", json=body) as resp:
                async for line in resp.aiter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        chunks.append(json.loads(line[6:]))
            out["chat_streamed_chunks"] = chunks
        return out

    fx = asyncio.run(fixtures())
    old = json.loads(ws.fixtures_file.read_text()) if ws.fixtures_file.is_file() else {}
    old.update(fx)
    ws.write_state_and_out(ws.fixtures_file.name, json.dumps(old, indent=1))

    # The project's own client on the same server (EngineCapture -> ExpertRoutingTrace).
    client_check = asyncio.run(project_client_check(ws, base, items[:8]))
    ws.save_results(
        {
            "agree_capture": {
                **{k: v for k, v in load.items() if k != "ttft_values_s"},
                "with_routed_experts": has_field,
                "max_tokens": MAX_TOKENS,
            },
            "project_client_check": client_check,
        }
    )


async def project_client_check(ws: Workspace, base: str, items: list[str]) -> dict[str, Any]:
    """Each of ``items`` through ``VLLMClient`` + ``EngineCapture``: the trace's source, shape,
    token counts, whether the expert counts sum to routed tokens x top-k, and the top experts."""
    from orchestrator.core.client import ChatMessage, ChatOptions, VLLMClient
    from serving import EngineCapture, MoEArchitecture

    arch = MoEArchitecture.from_checkpoint(ws.ckpt)
    client = VLLMClient(base, "ernie", EngineCapture(arch), timeout_s=300)
    out = []
    try:
        for i, text in enumerate(items):
            msgs = [ChatMessage(**m) for m in messages_for(text, f"K{i:04d}")]
            call = await client.chat(msgs, ChatOptions(max_tokens=16))
            trace = call.routing
            out.append(
                {
                    "source": trace.source.value,
                    "shape": list(trace.expert_ids.shape) if trace.expert_ids is not None else None,
                    "prompt_tokens": call.prompt_tokens,
                    "completion_tokens": call.completion_tokens,
                    "reason": trace.reason,
                    "counts_sum_ok": bool(
                        trace.expert_ids is not None
                        and (
                            trace.expert_counts().sum(axis=1) == trace.routed_tokens * arch.top_k
                        ).all()
                    ),
                    "top_experts": trace.top_experts(3),
                }
            )
    finally:
        await client.aclose()
    return {"moe_layers": list(arch.moe_layers), "calls": out}
