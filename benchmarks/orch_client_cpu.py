"""Client CPU per request of the orchestrated path vs a plain client, on this machine, against a
fast fake OpenAI-compatible server (issue 19, target 4: the local proxy of the H200 ``orch``
phase).

The server is :mod:`benchmarks.gpu.fake_server` in its own process: canned answers, schema-valid
JSON for ``response_format``, tool calls for ``tools``, and ``routed_experts`` in the plugin's
modes (``ids`` by default, as vLLM without ``ORCH_ROUTED_EXPERTS``; ``counts`` when the request
asks with ``vllm_xargs``), so it spends little CPU per request and the client's share can be
read on a 2-core box. Throughput here means nothing (the server shares the cores); the client
CPU per request (CPU time of every client process over the timed load, all threads, divided by
the requests) is the figure, and full / plain of it is the ratio that decides the GPU target
once the client, not the GPU, is the limit.

Variants, each run ``--repeat`` times in a rotated order:

* ``full-1p-ids``: the project's path as on 2026-11-30 on the H200: one client process with all
  ``c`` requests in flight, per-token ids;
* ``full-1p``: one process, per-call counts (what the client asks for now);
* ``full-Np``: ``N`` processes (``--procs``, default ``ceil(c / 16)``), counts;
* ``plain-1p``, ``plain-Np``: a plain ``openai`` client sending the same recorded calls (same
  messages, schema, tools, temperature) with one and ``N`` processes.

Usage::

    python -m benchmarks.orch_client_cpu --requests 256 --concurrency 128 --repeat 3

Writes ``benchmarks/results/orch_client_cpu.json`` and ``.md`` (``--out``), with the load
average before and after each run. ``--profile`` adds a cProfile table (cumulative) of one
``full-1p`` and one ``full-Np``-sized process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.gpu.common import texts
from benchmarks.gpu.orch import default_procs, full_path, full_path_mp, plain_path_mp
from benchmarks.harness import atomic_write_text, host_info

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_fake_server(port: int) -> subprocess.Popen[bytes]:
    """Start :mod:`benchmarks.gpu.fake_server` on ``port`` and wait for ``/health``.

    Raises:
        RuntimeError: It did not answer within 60 s (its output is in the message).
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.gpu.fake_server", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.3)
    proc.kill()
    out = proc.communicate()[0].decode(errors="replace")[-2000:]
    raise RuntimeError(f"fake server on port {port} did not start: {out}")


def write_checkpoint_config(folder: Path) -> Path:
    """``folder/config.json`` of the 21B-A3B shape (28 layers, 64 experts, top-6, MoE from
    layer 1): what the fake server's routed experts are shaped after."""
    from transformers import Ernie4_5_MoeConfig

    folder.mkdir(parents=True, exist_ok=True)
    config = Ernie4_5_MoeConfig().to_dict()
    config["architectures"] = ["Ernie4_5_MoeForCausalLM"]
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def loadavg() -> list[float]:
    """The 1/5/15-minute load average."""
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def profile_table(paths: tuple[Path, Path, Path], base: str, items: list[str], c: int) -> str:
    """cProfile (cumulative, top 45) of one process running ``items`` with ``c`` in flight."""
    asyncio.run(full_path(*paths, base, list(enumerate(items)), f"PROF{c}", c, False, profile=True))
    return (paths[2] / f"orch_profile_cum_PROF{c}.txt").read_text()


def main(argv: list[str] | None = None) -> int:
    """Run the variants and write the results; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--procs", type=int, default=0, help="0: ceil(concurrency / 16)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--variants", default="full-1p-ids,full-1p,full-Np,plain-1p,plain-Np")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.concurrency < 1 or args.repeat < 1:
        parser.error("--requests, --concurrency and --repeat must be at least 1")
    if not (args.data / "customer_service").is_dir():
        parser.error(f"{args.data}/customer_service not found: pass --data (a copy of shared/data)")
    variants = args.variants.split(",")
    unknown = set(variants) - {"full-1p-ids", "full-1p", "full-Np", "plain-1p", "plain-Np"}
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}")
    procs = args.procs or default_procs(args.concurrency)
    c, n = args.concurrency, args.requests
    items = texts(args.data, n, seed=3)
    port = _free_port()
    base = f"http://127.0.0.1:{port}/v1"
    server = start_fake_server(port)
    runs: list[dict[str, Any]] = []
    profiles: dict[str, str] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="orch_cpu_") as tmp:
            state = Path(tmp)
            paths = (write_checkpoint_config(state / "ckpt"), state, state / "out")
            # recorded calls for the plain client (an unmeasured full run, also a warm-up)
            _, recorded = full_path_mp(paths, base, items, "REC", c, False, procs)
            for rep in range(args.repeat):
                order = variants[rep % len(variants) :] + variants[: rep % len(variants)]
                for variant in order:
                    p = 1 if "-1p" in variant else procs
                    before = loadavg()
                    tag = f"R{rep}{variant.replace('-', '')}"
                    if variant.startswith("full"):
                        enc = "ids" if variant.endswith("ids") else "counts"
                        r, _ = full_path_mp(paths, base, items, tag, c, False, p, encoding=enc)
                    else:
                        r = plain_path_mp(base, recorded, "REC", tag, c, p)
                    r.update(
                        variant=variant, rep=rep, loadavg_before=before, loadavg_after=loadavg()
                    )
                    runs.append(r)
                    print(
                        f"rep {rep} {variant:12s} cpu {r['client_cpu_ms_per_request']:7.2f} ms/req"
                        f"  wall {r['wall_s']:6.2f} s  load {before[0]:.2f}",
                        flush=True,
                    )
            if args.profile:
                profiles["full-1p"] = profile_table(paths, base, items[:128], c)
                profiles["full-Np"] = profile_table(paths, base, items[:128], max(1, c // procs))
    finally:
        server.terminate()
        server.wait(timeout=30)
    summary = summarise(runs, variants)
    result = {
        "benchmark": "orch_client_cpu",
        "command": "python -m benchmarks.orch_client_cpu " + " ".join(argv or sys.argv[1:]),
        "host": host_info(),
        "cpu_count": os.cpu_count(),
        "requests": n,
        "concurrency": c,
        "client_processes": procs,
        "server": "benchmarks.gpu.fake_server (canned answers, one uvicorn process)",
        "runs": runs,
        "summary": summary,
        "profiles": profiles,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out / "orch_client_cpu.json", json.dumps(result, indent=1))
    atomic_write_text(args.out / "orch_client_cpu.md", report(result))
    print(report(result))
    return 0


def summarise(runs: list[dict[str, Any]], variants: list[str]) -> dict[str, Any]:
    """Median client CPU ms per request of each variant and the full / plain ratios."""
    med: dict[str, float] = {}
    for v in variants:
        values = [r["client_cpu_ms_per_request"] for r in runs if r["variant"] == v]
        if values:
            med[v] = round(statistics.median(values), 2)
    out: dict[str, Any] = {"client_cpu_ms_per_request_median": med}
    for full, plain in (
        ("full-1p-ids", "plain-1p"),
        ("full-1p", "plain-1p"),
        ("full-Np", "plain-Np"),
    ):
        if full in med and plain in med:
            out[f"{full}/{plain}"] = round(med[full] / med[plain], 2)
    return out


def report(result: dict[str, Any]) -> str:
    """The Markdown report of one run."""
    lines = [
        "# Client CPU per request, orchestrated vs plain (local proxy of the H200 `orch` phase)",
        "",
        f"- Command: `{result['command']}`",
        f"- Machine: {result['cpu_count']} CPU cores, host `{result['host'].get('host')}`, "
        f"Python {result['host'].get('python')}; server: {result['server']}",
        f"- {result['requests']} requests (real customer-service texts), {result['concurrency']} "
        f"in flight; `-Np` variants: {result['client_processes']} client processes with "
        f"{result['concurrency'] // result['client_processes']} in flight each, on both sides",
        "- Client CPU = CPU time of every client process (all threads) over the timed load / "
        "requests. Wall times are not a throughput figure: the fake server shares the 2 cores.",
        "",
        "| rep | variant | client CPU ms / request | wall s | model calls | load before |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['rep']} | {r['variant']} | {r['client_cpu_ms_per_request']:.2f} | "
            f"{r['wall_s']:.2f} | {r['model_calls']} | {r['loadavg_before'][0]:.2f} |"
        )
    s = result["summary"]
    lines += ["", "| variant | median client CPU ms / request |", "|---|---|"]
    for v, m in s["client_cpu_ms_per_request_median"].items():
        lines.append(f"| {v} | {m} |")
    lines.append("")
    for k, v in s.items():
        if "/" in k:
            lines.append(f"- CPU per request {k}: **{v}**")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
