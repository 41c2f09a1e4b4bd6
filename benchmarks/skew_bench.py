"""Expert-skew report at scale: 1M model-call rows of the 21B-A3B shape (27 MoE layers x 64).

Usage::

    python -m benchmarks.skew_bench [--calls 1000000] [--repeat 3] [--dir /tmp] [--keep]
    python -m benchmarks.skew_bench --quick   # 20,000 calls, one report run, under a minute

Steps:

1. **Generate** ``--calls`` rows in a new SQLite file through SQLAlchemy Core bulk inserts
   (``record_call`` would take one transaction per row): 28 days of traffic over 3 workflows
   and 7 nodes, each node with its own expert profile; per-call counts are multinomial draws of
   ``routed_tokens * 6`` activations (tokens log-normal, median ~150), stored with the
   store's own :func:`~orchestrator.telemetry.encode_counts` (uint8 when it fits). Planted: a
   hot expert (layer 5, e12), a dead one (layer 9, e40), a drift in the last week
   (content_moderation, layer 3), and 0.1% outlier calls. Generated in chunks: bounded memory.
2. **Rollups**: :meth:`TelemetryStore.rebuild_rollups` (what a database written in bulk, or by
   an older version, needs once; ``record_call`` keeps them current on its own). Timed once.
3. **Report** ``--repeat`` times (``--runs`` is the older spelling), each in a fresh
   process: ``build_report`` (last 7 days against the 7 before; outliers over the newest
   50,000 calls of the window) + HTML + JSON + the terminal summary; wall time in seconds and
   peak RSS in MiB (``ru_maxrss``) of that process. Then once with
   ``--window all``.
4. **Write path**: time of ``record_call`` (row + rollup update) for 300 calls of this shape
   (30 with ``--quick``).

Results go to ``benchmarks/results/skew_bench.{json,md}`` (``--out``; a ``--quick`` run writes
under ``/tmp/benchmarks-quick``); the generated database is deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import (
    BenchParser,
    host_info,
    median,
    percentile,
    record_routed_call,
    write_results,
)

LAYERS = tuple(range(1, 28))
EXPERTS = 64
TOP_K = 6
DAYS = 28
NODES = (
    ("customer_service", "triage_issue"),
    ("customer_service", "draft_reply"),
    ("content_moderation", "judge_post"),
    ("content_moderation", "explain"),
    ("excel_report", "read_sheet"),
    ("excel_report", "summarise"),
    ("excel_report", "write_report"),
)
START = datetime(2026, 10, 1, tzinfo=UTC)
NAME = "skew_bench"
MODULE = f"benchmarks.{NAME}"
REPO = Path(__file__).resolve().parent.parent
QUICK_CALLS = 20_000


def _profiles(rng: np.random.Generator) -> np.ndarray:
    """``(nodes, L, E)`` expert shares: a shared base, tilted per node, with planted experts."""
    base = rng.dirichlet(np.full(EXPERTS, 8.0), size=len(LAYERS))
    tilt = rng.dirichlet(np.full(EXPERTS, 8.0), size=(len(NODES), len(LAYERS)))
    shares = 0.7 * base[None] + 0.3 * tilt
    shares[:, 4, 12] += 0.12  # layer 5: expert 12 hot everywhere
    shares[:, 8, 40] = 0.0  # layer 9: expert 40 dead everywhere
    return shares / shares.sum(axis=-1, keepdims=True)


def generate(path: Path, calls: int, seed: int = 0, chunk: int = 20_000) -> dict[str, float]:
    """Write ``calls`` model-call rows (and one request row per two calls) to ``path``."""
    from sqlalchemy import insert

    from orchestrator.telemetry import ModelCallRecord, RequestRecord, TelemetryStore, encode_counts

    store = TelemetryStore(f"sqlite:///{path}")
    rng = np.random.default_rng(seed)
    profiles = _profiles(rng)
    drifted = profiles.copy()
    moderation = [i for i, (w, _) in enumerate(NODES) if w == "content_moderation"]
    drifted[moderation, 2, :8] *= 3.0  # last week: layer 3 moves toward experts 0-7
    drifted /= drifted.sum(axis=-1, keepdims=True)
    odd = np.zeros((len(LAYERS), EXPERTS))
    odd[:, 56:] = 1 / 8  # outlier calls use experts 56-63 only
    span = DAYS * 86400
    offsets = np.sort(rng.uniform(0, span, calls))
    started = time.perf_counter()
    from rich.progress import track

    steps = range(0, calls, chunk)
    for lo in track(steps, description="generating", transient=True):  # a transaction each
        n = min(chunk, calls - lo)
        when = [START + timedelta(seconds=float(s)) for s in offsets[lo : lo + n]]
        node = rng.integers(0, len(NODES), n)
        tokens = np.clip(rng.lognormal(np.log(150), 0.5, n), 8, 4000).astype(np.int64)
        late = offsets[lo : lo + n] >= span - 7 * 86400
        pvals = np.where(late[:, None, None], drifted[node], profiles[node])
        outlier = rng.random(n) < 0.001
        pvals[outlier] = odd
        counts = rng.multinomial((tokens * TOP_K)[:, None], pvals)
        conf = np.clip(rng.normal(0.45, 0.08, (n, len(LAYERS))), 0.05, 1).astype("<f4")
        request_ids = [f"bench-{(lo + i) // 2:08d}" for i in range(n)]
        with store.engine.begin() as conn:
            conn.execute(
                insert(RequestRecord).prefix_with("OR IGNORE"),
                [
                    {
                        "id": rid,
                        "received_at": w,
                        "text": f"benchmark request {rid}",
                        "channel": "bench",
                        "source": None,
                        "route": NODES[nd][0],
                        "route_confidence": 0.9,
                        "classifier_signals": [],
                        "workflow": NODES[nd][0],
                        "status": "succeeded",
                    }
                    for rid, w, nd in zip(request_ids, when, node, strict=True)
                ],
            )
            conn.execute(
                insert(ModelCallRecord),
                [
                    {
                        "created_at": when[i],
                        "request_id": request_ids[i],
                        "route": NODES[node[i]][0],
                        "route_confidence": 0.9,
                        "classifier_signals": [],
                        "workflow": NODES[node[i]][0],
                        "node": NODES[node[i]][1],
                        "model": "ernie-bench",
                        "prompt_tokens": int(tokens[i]) - 20,
                        "completion_tokens": 21,
                        "latency_ms": 100.0,
                        "finish_reason": "stop",
                        "expert_routing_source": "replay",
                        "routing_note": None,
                        "moe_layers": list(LAYERS),
                        "num_experts": EXPERTS,
                        "top_k": TOP_K,
                        "routed_tokens": int(tokens[i]),
                        "expert_counts": encode_counts(counts[i]),
                        "layer_confidence": conf[i].tobytes(),
                        "mean_router_confidence": float(conf[i].mean()),
                    }
                    for i in range(n)
                ],
            )
    generate_s = time.perf_counter() - started
    started = time.perf_counter()
    store.rebuild_rollups()
    rollup_s = time.perf_counter() - started
    store.close()
    return {"generate_s": generate_s, "rebuild_rollups_s": rollup_s}


def report_once(path: Path, window: str, out: Path) -> dict[str, float]:
    """One full report in this process: build, HTML, JSON, terminal summary."""
    from rich.console import Console

    from orchestrator.analysis.skew import ReportOptions, build_report
    from orchestrator.analysis.skew.report_html import write_html
    from orchestrator.analysis.skew.report_json import write_json
    from orchestrator.analysis.skew.terminal import print_summary
    from orchestrator.telemetry import TelemetryStore

    store = TelemetryStore(f"sqlite:///{path}")
    started = time.perf_counter()
    report = build_report(store, ReportOptions(window=window))
    built = time.perf_counter()
    write_html(report, out / "skew.html")
    write_json(report, out / "skew.json")
    with open(os.devnull, "w") as sink:
        print_summary(Console(file=sink, width=160), report)
    done = time.perf_counter()
    store.close()
    return {
        "build_s": built - started,
        "outputs_s": done - built,
        "total_s": done - started,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "calls_in_window": report.overall.calls,
        "outlier_calls_scored": report.outliers.scored_calls,
        "outliers_flagged": report.outliers.flagged_requests,
        "hot": report.overall.hot(),
        "dead": report.overall.dead(),
        "drifted": {s.name: s.drifted_layers for s in report.drift.scopes} if report.drift else {},
        "html_mib": (out / "skew.html").stat().st_size / 2**20,
    }


def write_path(calls: int = 300) -> dict[str, float]:
    """Median ``record_call`` time (call row + rollup update) at the 27 x 64 shape."""
    import tempfile

    from orchestrator import Request, RuleClassifier, TelemetryStore
    from serving import ExpertRoutingSource, ExpertRoutingTrace

    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as folder:
        store = TelemetryStore(f"sqlite:///{folder}/w.db")
        request = Request(text="benchmark")
        classification = RuleClassifier().classify(request)
        store.start_request(request, classification, "customer_service")
        times = []
        for _ in range(calls):
            ids = np.argsort(rng.random((150, len(LAYERS), EXPERTS)), axis=-1)[..., :TOP_K]
            trace = ExpertRoutingTrace(
                source=ExpertRoutingSource.REPLAY,
                moe_layers=LAYERS,
                num_experts=EXPERTS,
                top_k=TOP_K,
                prompt_tokens=130,
                completion_tokens=21,
                expert_ids=ids.astype(np.int16),
                router_confidence=np.full((150, len(LAYERS)), 0.4, np.float32),
            )
            trace.expert_counts()
            started = time.perf_counter()
            record_routed_call(
                store, request.id, classification, trace, node="triage_issue", model="m"
            )
            times.append(time.perf_counter() - started)
        store.close()
    return {
        "record_call_p50_ms": median(times) * 1e3,
        "record_call_p90_ms": percentile(times, 90) * 1e3,
    }


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        MODULE,
        __doc__.splitlines()[0],
        repeat=3,
        repeat_help="Report runs over the 7d window, each in a fresh process.",
        repeat_aliases=("--runs",),
    )
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--keep", action="store_true", help="Keep the generated database.")
    parser.add_argument("--report-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--window", default="7d", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.report_only is not None:  # child process: one report, JSON on stdout
        out = args.report_only.parent / f"out-{os.getpid()}"
        out.mkdir(exist_ok=True)
        print(json.dumps(report_once(args.report_only, args.window, out)))
        shutil.rmtree(out)
        return
    calls = min(args.calls, QUICK_CALLS) if args.quick else args.calls
    runs_wanted = 1 if args.quick else args.repeat
    write_calls = 30 if args.quick else 300

    need = calls * 2600 * 1.5  # ~2.2 KB a row with index, plus the rollups, with margin
    free = shutil.disk_usage(args.dir).free
    if free < need:
        sys.exit(f"{args.dir} has {free / 2**30:.1f} GiB free; {need / 2**30:.1f} GiB needed")
    path = args.dir / f"skew-bench-{os.getpid()}.db"
    load_at_start = os.getloadavg()[0]
    try:
        print(f"generating {calls:,} calls in {path} ...", flush=True)
        gen = generate(path, calls)
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
        print(
            f"generated in {gen['generate_s']:.0f} s, rollups {gen['rebuild_rollups_s']:.0f} s, "
            f"{size / 2**30:.2f} GiB",
            flush=True,
        )

        def child(window: str) -> dict[str, Any]:
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", MODULE, "--report-only", str(path), "--window", window],
                check=True,
                capture_output=True,
                text=True,
                cwd=REPO,
            )
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result["process_wall_s"] = time.perf_counter() - started
            print(
                f"  report ({window}): {result['total_s']:.2f} s, "
                f"peak RSS {result['peak_rss_mib']:.0f} MiB",
                flush=True,
            )
            return result

        runs = [child("7d") for _ in range(runs_wanted)]
        whole = child("all")
        writes = write_path(write_calls)
    finally:
        if not args.keep:
            for p in path.parent.glob(path.name + "*"):
                p.unlink()
    host = host_info()
    summary = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{host['machine']}, {host['cpus']} CPU cores, "
        f"{host['memory_gib']:.0f} GiB, load average at start {load_at_start:.1f}",
        "python": platform.python_version(),
        "host": host,
        "calls": calls,
        "shape": {"moe_layers": len(LAYERS), "experts": EXPERTS, "top_k": TOP_K},
        "database_gib": size / 2**30,
        **gen,
        "report_7d_runs": runs,
        "report_7d_median_s": median(r["total_s"] for r in runs),
        "report_7d_median_build_s": median(r["build_s"] for r in runs),
        "report_7d_max_peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "report_all": whole,
        **writes,
    }
    text = _markdown(summary)
    write_results(args.out, NAME, summary, text, command=args.command)
    print(text)


def _markdown(s: dict[str, Any]) -> str:
    r = s["report_7d_runs"]
    lines = [
        "# Expert-skew report benchmark",
        "",
        f"{s['date']} · {s['machine']} · Python {s['python']}",
        "",
        f"{s['calls']:,} model-call rows, {s['shape']['moe_layers']} MoE layers × "
        f"{s['shape']['experts']} experts, top-{s['shape']['top_k']}, 28 days, 7 nodes; "
        f"database {s['database_gib']:.2f} GiB (counts stored as uint8 where they fit).",
        "",
        "| step | figure |",
        "|---|---|",
        f"| generate rows (bulk insert) | {s['generate_s']:.0f} s |",
        "| rebuild rollups once (bulk-loaded or older database) | "
        f"{s['rebuild_rollups_s']:.0f} s |",
        f"| **full report, window 7d + 7d baseline** (median of {len(r)}) | "
        f"**{s['report_7d_median_s']:.2f} s** (runs: "
        + ", ".join(f"{x['total_s']:.2f}" for x in r)
        + ") |",
        f"| of which build_report | {s['report_7d_median_build_s']:.2f} s |",
        "| peak RSS of the report process (max of runs) | "
        f"{s['report_7d_max_peak_rss_mib']:.0f} MiB |",
        f"| calls in the 7d window / outlier calls scored | {r[0]['calls_in_window']:,} / "
        f"{r[0]['outlier_calls_scored']:,} |",
        f"| full report, window all | {s['report_all']['total_s']:.2f} s, peak RSS "
        f"{s['report_all']['peak_rss_mib']:.0f} MiB |",
        f"| record_call with rollup update, p50 / p90 | {s['record_call_p50_ms']:.1f} / "
        f"{s['record_call_p90_ms']:.1f} ms |",
        "",
        f"Found: hot {r[0]['hot']}, dead {r[0]['dead']}, drifted layers {r[0]['drifted']}, "
        f"{r[0]['outliers_flagged']} outlier requests flagged; HTML {r[0]['html_mib']:.1f} MiB.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
