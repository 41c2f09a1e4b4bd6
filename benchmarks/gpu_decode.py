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

Runs on any CPU, from the repository root::

    python -m benchmarks.gpu_decode --out runs/decode.json [--recorded agree.jsonl.gz]
    python -m benchmarks.gpu_decode --quick      # 30 repetitions, under /tmp/benchmarks-quick

Times are per call in milliseconds (mean, p50 = median, p99 over ``--repeat`` calls, after one
warm-up call; :func:`benchmarks.harness.time_repeated`). ``--out`` is a folder (default
``benchmarks/results``, files ``gpu_decode.{json,md}``) or a ``.json`` path naming the files.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import (
    BenchParser,
    host_info,
    record_routed_call,
    time_repeated,
    write_results,
)
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from serving import MoEArchitecture, decode_routed_experts, encode_routed_experts

NAME = "gpu_decode"
QUICK_REPEAT = 30

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


def _classify(request: Request) -> Any:
    """The classifier's decision on ``request``, or a fixed customer-service one when the rule
    set cannot load (its optional deps, rapidfuzz and re2, may be missing on the GPU machine):
    the telemetry row needs only the decision's fields."""
    try:
        from orchestrator.classifier import RuleClassifier

        return RuleClassifier().classify(request)
    except Exception:
        from orchestrator.classifier import Classification
        from orchestrator.routes import Route

        return Classification(
            route=Route("customer_service"),
            confidence=1.0,
            scores={Route("customer_service"): 1.0},
            reason="benchmark row",
        )


def measure(
    bodies: list[dict[str, Any]], arch: MoEArchitecture, repeat: int, db_dir: Path
) -> dict[str, Any]:
    """Time decode, aggregate and write over ``bodies`` (round-robin), per call, in ms.

    Returns:
        Set sizes (calls, mean routed tokens, mean body and payload bytes) and, per step,
        ``{"n", "mean_ms", "p50_ms", "p99_ms"}``; plus all three steps per 1k routed tokens.
    """
    request = Request(text="Where is my refund? I was charged twice.")
    classification = _classify(request)

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

    def record(trace: Any) -> int:
        return record_routed_call(
            store,
            request.id,
            classification,
            trace,
            node="draft_reply",
            model="ernie",
            finish_reason="length",
        )

    def write() -> Any:
        return record(next_trace())

    def all_three() -> Any:
        body, p, c = pick()
        trace = decode_routed_experts(
            body["choices"][0], prompt_tokens=p, completion_tokens=c, arch=arch, response=body
        )
        trace.expert_counts()
        return record(trace)

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
        "decode": time_repeated(decode, repeat).summary("ms"),
        "aggregate_expert_counts": time_repeated(aggregate, repeat).summary("ms"),
        "telemetry_write_sqlite": time_repeated(write, repeat).summary("ms"),
        "decode_aggregate_write": time_repeated(all_three, repeat).summary("ms"),
        "json_parse_of_body": time_repeated(parse_json, repeat).summary("ms"),
    }
    scale = 1000.0 / result["routed_tokens_mean"]
    result["decode_aggregate_write_per_1k_tokens_mean_ms"] = (
        result["decode_aggregate_write"]["mean_ms"] * scale
    )
    store.engine.dispose()
    return result


def run(recorded: list[dict[str, Any]] | None = None, repeat: int = 300) -> dict[str, Any]:
    """Synthetic 1k-token calls, and the recorded bodies when given (see :func:`measure`)."""
    host = host_info()
    out: dict[str, Any] = {
        "host": host["host"],
        "python": host["python"],
        "machine": host,
        "shape": "28 layers (27 MoE), 64 experts, top-6, uint8 payload as vLLM 0.24.0",
    }
    with tempfile.TemporaryDirectory() as tmp:
        bodies = [synthetic_body(seed=s) for s in range(8)]
        out["synthetic_1k_token_call"] = measure(bodies, ERNIE_21B, repeat, Path(tmp))
        if recorded:
            out["recorded_responses"] = measure(recorded, ERNIE_21B, repeat, Path(tmp))
    return out


STEPS = (
    ("decode", "decode_routed_experts"),
    ("aggregate_expert_counts", "expert_counts"),
    ("telemetry_write_sqlite", "record_call (SQLite row, own transaction)"),
    ("decode_aggregate_write", "all three"),
    ("json_parse_of_body", "(json.loads of the body, for scale)"),
)


def markdown(result: dict[str, Any]) -> str:
    """One table per body set: step, mean / p50 / p99 ms."""
    lines = [f"# Routing decode + aggregate + telemetry write (`{result['host']}`)", ""]
    for key, title in (
        ("synthetic_1k_token_call", "Synthetic 1k-token call"),
        ("recorded_responses", "Recorded responses"),
    ):
        part = result.get(key)
        if not part:
            continue
        lines += [
            f"## {title}: {part['calls_in_set']} bodies, "
            f"{part['routed_tokens_mean']:.0f} routed tokens on average",
            "",
            "| step | mean ms | p50 ms | p99 ms |",
            "|---|---|---|---|",
        ]
        for step, name in STEPS:
            t = part[step]
            lines.append(f"| {name} | {t['mean_ms']:.2f} | {t['p50_ms']:.2f} | {t['p99_ms']:.2f} |")
        lines += [
            "",
            "All three per 1k routed tokens: "
            f"{part['decode_aggregate_write_per_1k_tokens_mean_ms']:.2f} ms (mean).",
            "",
        ]
    return "\n".join(lines)


def load_recorded(path: Path) -> list[dict[str, Any]]:
    """Response bodies of a ``.jsonl`` or ``.jsonl.gz`` of ``{"body": ...}`` lines (the GPU
    run's ``agree.jsonl.gz``)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line)["body"] for line in handle if line.strip()]


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        f"benchmarks.{NAME}",
        __doc__.split("\n")[0],
        repeat=300,
        repeat_help="Timed calls per step (after one warm-up call).",
    )
    parser.add_argument("--recorded", type=Path, default=None, help="jsonl(.gz) of bodies")
    args = parser.parse_args(argv)
    recorded = load_recorded(args.recorded) if args.recorded else None
    result = run(recorded, QUICK_REPEAT if args.quick else args.repeat)
    write_results(args.out, NAME, result, markdown(result), command=args.command, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
