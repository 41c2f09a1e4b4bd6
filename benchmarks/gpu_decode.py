"""Time the project's per-call routing work: decode vLLM's payload, aggregate, write the row.

Per call, the project (``VLLMClient`` → ``EngineCapture`` → ``ModelGateway``) does:

1. ``decode_routed_experts``: base64 → ``.npy`` → drop the dense layer → int16 trace (validated);
2. ``ExpertRoutingTrace.expert_counts``: per-layer expert histogram (the aggregate that is stored);
3. ``TelemetryStore.record_call``: one SQLite row in its own transaction (WAL).

This measures each step for a 28-layer, 64-expert, top-6 payload of 1,000 routed tokens (a
"1k-token call": 500 prompt + 501 completion tokens), shaped and encoded exactly as vLLM 0.24.0
returns it (uint8, all 28 layers, layer 0 zeros), and, when given, for recorded responses. The
JSON parse of the HTTP body is timed separately: the SDK does it for every response, routing or
not, but the routing field makes the body larger.

Runs on any CPU::

    python -m benchmarks.gpu_decode --out runs/decode.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from serving.architecture import MoEArchitecture
from serving.engine_capture import decode_routed_experts, encode_routed_experts

ERNIE_21B = MoEArchitecture(
    model_type="ernie4_5_moe",
    num_hidden_layers=28,
    moe_layers=tuple(range(1, 28)),
    num_experts=64,
    top_k=6,
    num_shared_experts=2,
)


def synthetic_body(prompt: int = 500, completion: int = 501, seed: int = 0) -> dict[str, Any]:
    """A chat response body as vLLM 0.24.0 returns it, with ``routed_experts`` for 28 layers."""
    rng = np.random.default_rng(seed)
    rows = prompt + completion - 1
    ids = np.zeros((rows, 28, 6), dtype=np.uint8)
    # distinct experts per (token, layer), as a real router picks them
    ids[:, 1:, :] = np.argsort(rng.random((rows, 27, 64)), axis=-1)[..., :6].astype(np.uint8)
    return {
        "id": "chatcmpl-synthetic",
        "object": "chat.completion",
        "model": "ernie",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "x" * 2000},
                "finish_reason": "length",
                "token_ids": list(range(completion)),
                "routed_experts": encode_routed_experts(ids),
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "prompt_token_ids": list(range(prompt)),
    }


def _time(fn: Callable[[], Any], repeat: int) -> dict[str, float]:
    fn()  # warm
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000.0)
    samples.sort()
    return {
        "mean_ms": statistics.fmean(samples),
        "p50_ms": samples[len(samples) // 2],
        "p99_ms": samples[min(len(samples) - 1, int(0.99 * len(samples)))],
    }


def measure(bodies: list[dict[str, Any]], arch: MoEArchitecture, repeat: int, db_dir: Path) -> dict:
    """Time decode, aggregate and write over ``bodies`` (round-robin), per call."""
    from orchestrator.request import Request
    from orchestrator.telemetry import TelemetryStore

    request = Request(text="Where is my refund? I was charged twice.")
    try:
        from orchestrator.classifier import RuleClassifier

        classification = RuleClassifier().classify(request)
    except Exception:  # the row needs only the decision's fields, not a working rule set
        from orchestrator.classifier import Classification
        from orchestrator.routes import Route

        classification = Classification(
            route=Route.CUSTOMER_SERVICE,
            confidence=1.0,
            scores={Route.CUSTOMER_SERVICE: 1.0},
            reason="benchmark row",
        )

    store = TelemetryStore(f"sqlite:///{db_dir / 'decode_bench.db'}")
    store.start_request(request, classification, "customer_service")
    raw = [json.dumps(b) for b in bodies]
    state = {"i": 0}

    def pick() -> tuple[dict[str, Any], int, int]:
        body = bodies[state["i"] % len(bodies)]
        state["i"] += 1
        usage = body["usage"]
        return body, usage["prompt_tokens"], usage["completion_tokens"]

    def decode() -> Any:
        body, p, c = pick()
        return decode_routed_experts(
            body["choices"][0], prompt_tokens=p, completion_tokens=c, arch=arch, response=body
        )

    traces = [decode() for _ in bodies]
    tstate = {"i": 0}

    def next_trace() -> Any:
        trace = traces[tstate["i"] % len(traces)]
        tstate["i"] += 1
        return trace

    def aggregate() -> Any:
        return next_trace().expert_counts()

    def write() -> Any:
        trace = next_trace()
        return store.record_call(
            request_id=request.id,
            classification=classification,
            workflow="customer_service",
            node="draft_reply",
            model="ernie",
            latency_ms=1.0,
            finish_reason="length",
            routing=trace,
        )

    def all_three() -> Any:
        body, p, c = pick()
        trace = decode_routed_experts(
            body["choices"][0], prompt_tokens=p, completion_tokens=c, arch=arch, response=body
        )
        trace.expert_counts()
        return store.record_call(
            request_id=request.id,
            classification=classification,
            workflow="customer_service",
            node="draft_reply",
            model="ernie",
            latency_ms=1.0,
            finish_reason="length",
            routing=trace,
        )

    rstate = {"i": 0}

    def parse_json() -> Any:
        s = raw[rstate["i"] % len(raw)]
        rstate["i"] += 1
        return json.loads(s)

    routed = [t.routed_tokens for t in traces]
    result = {
        "calls_in_set": len(bodies),
        "routed_tokens_mean": float(np.mean(routed)),
        "body_bytes_mean": float(np.mean([len(s) for s in raw])),
        "routed_experts_b64_bytes_mean": float(
            np.mean([len(b["choices"][0].get("routed_experts") or "") for b in bodies])
        ),
        "decode": _time(decode, repeat),
        "aggregate_expert_counts": _time(aggregate, repeat),
        "telemetry_write_sqlite": _time(write, repeat),
        "decode_aggregate_write": _time(all_three, repeat),
        "json_parse_of_body": _time(parse_json, repeat),
    }
    scale = 1000.0 / result["routed_tokens_mean"]
    result["decode_aggregate_write_per_1k_tokens_mean_ms"] = (
        result["decode_aggregate_write"]["mean_ms"] * scale
    )
    store.engine.dispose()
    return result


def run(recorded: list[dict[str, Any]] | None = None, repeat: int = 300) -> dict:
    """Synthetic 1k-token calls, and the recorded bodies when given."""
    import platform

    out: dict[str, Any] = {
        "host": platform.node(),
        "python": platform.python_version(),
        "shape": "28 layers (27 MoE), 64 experts, top-6, uint8 payload as vLLM 0.24.0",
    }
    with tempfile.TemporaryDirectory() as tmp:
        bodies = [synthetic_body(seed=s) for s in range(8)]
        out["synthetic_1k_token_call"] = measure(bodies, ERNIE_21B, repeat, Path(tmp))
        if recorded:
            out["recorded_responses"] = measure(recorded, ERNIE_21B, repeat, Path(tmp))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--recorded", type=Path, default=None, help="jsonl(.gz) of bodies")
    args = parser.parse_args()
    recorded = None
    if args.recorded:
        import gzip

        opener = gzip.open if args.recorded.suffix == ".gz" else open
        with opener(args.recorded, "rt", encoding="utf-8") as handle:
            recorded = [json.loads(line)["body"] for line in handle if line.strip()]
    result = run(recorded, args.repeat)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
