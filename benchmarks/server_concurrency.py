"""Latency and throughput of the co-hosted vLLM server from 1 to 32 concurrent requests.

For each concurrency level C, C workers send chat completions back to back (each with the
same kind of prompt, ``--max-tokens`` output tokens, ``ignore_eos`` so every reply has the same
length) for ``--requests-per-level`` requests, after a warm-up. Figures per level: the
median and p99 request latency, requests per second and generated tokens per second, and the
server's own view from ``/metrics`` (running/waiting/KV-cache at the end, through
:class:`orchestrator.observability.HealthMonitor`).

Where it bends: the *knee* of requests/s over concurrency, found with Kneedle (Satopää et al.,
"Finding a 'Kneedle' in a Haystack: Detecting Knee Points in System Behavior", ICDCS
workshops 2011; the ``kneed`` library): the level where the curve is farthest above the chord
from the first level to the last, so past it each request added in flight buys less throughput
than before. When the curve has no knee in the range (it rises as steeply to the end), the
smallest level at 90 % of the best. That level is the suggested default concurrency
(``Settings.concurrency``).

Run against a server that is up (``orchestrator serve``)::

    python -m benchmarks.server_concurrency --server-url http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from benchmarks.harness import BenchParser, host_info, percentile, write_results
from orchestrator.observability import HealthMonitor

LEVELS = (1, 2, 4, 8, 16, 32)
PROMPTS = (
    "I was charged twice for order 12345, please help",
    "Where is my parcel? It has been two weeks",
    "请帮我查一下订单的退款进度",
    "Can I change the delivery address of my order?",
)


async def _one(client: httpx.AsyncClient, url: str, model: str, i: int, max_tokens: int) -> float:
    started = time.perf_counter()
    response = await client.post(
        f"{url}/chat/completions",
        json={
            "model": model,
            "messages": [{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}],
            "max_tokens": max_tokens,
            "temperature": 0.7,
            "ignore_eos": True,
        },
    )
    response.raise_for_status()
    return time.perf_counter() - started


async def level(url: str, model: str, concurrency: int, n: int, max_tokens: int) -> dict[str, Any]:
    """Send ``n`` requests with ``concurrency`` in flight; latency in seconds."""
    latencies: list[float] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(n):
        queue.put_nowait(i)

    async with httpx.AsyncClient(timeout=600) as client:

        async def worker() -> None:
            while not queue.empty():
                i = queue.get_nowait()
                latencies.append(await _one(client, url, model, i, max_tokens))

        await asyncio.gather(*(_one(client, url, model, i, max_tokens) for i in range(2)))
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
    return {
        "concurrency": concurrency,
        "requests": n,
        "wall_s": round(wall, 3),
        "p50_latency_s": round(percentile(latencies, 50) or 0, 3),
        "p99_latency_s": round(percentile(latencies, 99) or 0, 3),
        "requests_per_s": round(n / wall, 2),
        "generated_tokens_per_s": round(n * max_tokens / wall, 1),
    }


def knee(rows: list[dict[str, Any]], fraction: float = 0.9) -> int:
    """Where the throughput curve bends (see the module docstring).

    Args:
        rows: One per level, with ``concurrency`` and ``requests_per_s``.
        fraction: Without a knee, the share of the best throughput the level must reach.

    Raises:
        ValueError: No rows.
    """
    if not rows:
        raise ValueError("no concurrency levels measured")
    from kneed import KneeLocator  # a benchmark (dev) dependency, imported when needed

    ordered = sorted(rows, key=lambda r: r["concurrency"])
    x = [r["concurrency"] for r in ordered]
    y = [r["requests_per_s"] for r in ordered]
    if max(y) == min(y):
        return x[0]  # flat: one in flight does as well (and Kneedle cannot scale a flat curve)
    if len(x) >= 3:
        found = KneeLocator(x, y, curve="concave", direction="increasing").knee
        if found is not None:
            return int(found)
    best = max(y)
    return min(c for c, v in zip(x, y, strict=True) if v >= fraction * best)


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        "benchmarks.server_concurrency",
        "Latency and throughput of the co-hosted vLLM server, 1 to 32 concurrent requests.",
        repeat=3,
        repeat_help="Runs of the whole sweep (figures are the medians over runs).",
    )
    parser.add_argument("--server-url", default="http://127.0.0.1:8000/v1")
    parser.add_argument("--model", default="ernie")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--requests-per-level", type=int, default=64)
    args = parser.parse_args(argv)
    levels = (1, 4, 16) if args.quick else LEVELS
    n = 8 if args.quick else args.requests_per_level
    runs: list[list[dict[str, Any]]] = []
    for _ in range(1 if args.quick else args.repeat):
        runs.append(
            [
                asyncio.run(level(args.server_url, args.model, c, max(n, c), args.max_tokens))
                for c in levels
            ]
        )
        print("run", len(runs), [(r["concurrency"], r["requests_per_s"]) for r in runs[-1]])
    rows = []
    for i, c in enumerate(levels):
        per = [run[i] for run in runs]
        rows.append(
            {
                "concurrency": c,
                **{
                    key: percentile([p[key] for p in per], 50)
                    for key in (
                        "p50_latency_s",
                        "p99_latency_s",
                        "requests_per_s",
                        "generated_tokens_per_s",
                    )
                },
            }
        )
    monitor = HealthMonitor(args.server_url)
    server = monitor.poll().sample.model_dump()
    monitor.close()
    suggested = knee(rows)
    data = {
        "host": host_info(),
        "server_url": args.server_url,
        "max_tokens": args.max_tokens,
        "requests_per_level": n,
        "runs": len(runs),
        "levels": rows,
        "per_run": runs,
        "knee_concurrency": suggested,
        "server_after": server,
    }
    lines = [
        "# Co-hosted vLLM server: latency and throughput by concurrency",
        "",
        f"{args.max_tokens} generated tokens per request, {n} requests per level, median of "
        f"{len(runs)} runs.",
        "",
        "| concurrency | p50 latency s | p99 latency s | requests/s | generated tok/s |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['concurrency']} | {r['p50_latency_s']:.2f} | {r['p99_latency_s']:.2f} | "
            f"{r['requests_per_s']:.2f} | {r['generated_tokens_per_s']:.0f} |"
        )
    lines += [
        "",
        f"Knee of requests/s over concurrency (Kneedle; without one, the smallest level at 90% "
        f"of the best): **{suggested}**.",
    ]
    json_path, _ = write_results(
        args.out, "server_concurrency", data, "\n".join(lines), command=args.command
    )
    print("\n".join(lines))
    print("wrote", json_path)


if __name__ == "__main__":
    main()
