"""Issue 7 faults on the lent GPU: a server that cannot start fails the launcher with its log.

Builds a tiny random-weight ERNIE-4.5 MoE checkpoint on the GPU (the default 4-layer spec, so
it takes seconds), then starts the project's ``gpu_profile`` through ``VLLMServer`` twice:

* with an unknown flag (``--no-such-flag``): vLLM's argument parser rejects it;
* with ``--gpu-memory-utilization 0.001``: no room for the weights and the KV cache (the
  out-of-memory case).

Each must raise :class:`serving.ServerStartError` whose message carries the tail of the
server's log naming the cause. Results (seconds to the failure, the message's tail) go to
``$OUT/gpu_faults.json`` (``--out``)::

    python -m benchmarks.gpu_faults      # or: PYTHONPATH=. python3 benchmarks/gpu_faults.py
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks.gpu.common import default_out, device_info
from benchmarks.harness import BenchParser, write_results
from serving import (
    CheckpointSpec,
    ServerStartError,
    ServingProfile,
    VLLMServer,
    build_checkpoint,
    gpu_profile,
)

NAME = "gpu_faults"
WORK = Path("/tmp/gpufaults")


def attempt(name: str, profile: ServingProfile, timeout_s: float = 240.0) -> dict[str, Any]:
    """Start ``profile`` on port 8200; what was raised, after how many seconds, and whether
    the message carries the log's tail."""
    server = VLLMServer(
        profile, port=8200, log_path=WORK / f"{name}.log", startup_timeout_s=timeout_s
    )
    started = time.monotonic()
    try:
        server.start()
    except ServerStartError as exc:
        return {
            "raised": "ServerStartError",
            "seconds": round(time.monotonic() - started, 1),
            "message_tail": str(exc)[-1500:],
            "log_tail_in_error": exc.log_tail[-800:] in str(exc),
        }
    server.stop()
    return {"raised": None, "seconds": round(time.monotonic() - started, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(f"benchmarks.{NAME}", __doc__.splitlines()[0], repeat=None, quick=False)
    parser.set_defaults(out=default_out())
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    ckpt = build_checkpoint(
        WORK / "ckpt",
        CheckpointSpec(),
        ["refund my order", "退款"] * 50,
        overwrite=True,
        device="cuda",
    )
    base = gpu_profile(str(ckpt), gpu_memory_utilization=0.3)
    bad_flag = base.model_copy(update={"args": (*base.args, "--no-such-flag")})
    no_memory = gpu_profile(str(ckpt), gpu_memory_utilization=0.001)
    results = {
        "bad_flag": attempt("bad_flag", bad_flag),
        "out_of_memory": attempt("out_of_memory", no_memory),
        "device": device_info(),
    }
    write_results(args.out, NAME, results, None, command=args.command, indent=1)
    print(json.dumps(results, indent=1)[:6000])


if __name__ == "__main__":
    main()
