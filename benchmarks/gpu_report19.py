"""Tables of the issue-19 GPU run from its ``results.json`` (``benchmarks/gpu/run19.sh``).

``python -m benchmarks.gpu_report19 RESULTS_JSON`` prints the Markdown tables that
``benchmarks/results/gpu_2026-11-30.md`` holds: capture cost by encoding at each concurrency,
the streamed-call expert record, counts vs ids agreement, the orchestrated workload and the
probe. Every figure is read from the file; nothing is typed in.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

LABELS = {
    "off": "off (no `--enable-return-routed-experts`)",
    "ids": "ids (vLLM's per-token `.npy`)",
    "counts": "counts (plugin, per-call layer x expert)",
    "none": "none (capture on, nothing returned)",
    "sampled": "sampled (counts on a per-request 25% draw, none on the rest)",
    "sampled10": "sampled10 (counts on a per-request 10% draw, none on the rest)",
}


def paired_upper_bound(per_rep: list[float], confidence: float = 0.95) -> float | None:
    """One-sided upper confidence bound (%) of the mean paired overhead: each repetition's
    overhead against the same repetition's off load, mean + t(confidence, n - 1) x SD / sqrt(n)
    (Student's t; the paired design removes the drift both servers share over the run).

    Args:
        per_rep: Overheads in % (``overhead_pct_each_rep``), one per repetition.
        confidence: One-sided confidence level, in ``(0, 1)``.

    Returns:
        The bound in %, or None with fewer than two repetitions.
    """
    if len(per_rep) < 2:
        return None
    from scipy import stats  # CPU side only (the report runs here, not on the device)

    n = len(per_rep)
    se = statistics.stdev(per_rep) / n**0.5
    return statistics.fmean(per_rep) + float(stats.t.ppf(confidence, n - 1)) * se


def capture_table(results: dict[str, Any]) -> str:
    """One row per (concurrency, mode): tok/s of each repetition, mean, overhead vs off (of the
    means, and per repetition against the same repetition's off), body bytes, TTFT p50/p99."""
    rows = [
        "| c | mode | output tok/s (each rep) | mean | overhead vs off | per rep "
        "| paired mean ± SD (95% upper) | body bytes | TTFT p50 / p99 (ms) | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in (32, 128):
        summary = results.get(f"capture_c{c}", {}).get("summary", {})
        for mode in ("off", "ids", "counts", "none", "sampled", "sampled10"):
            s = summary.get(mode)
            if not s:
                continue
            each = ", ".join(f"{v:.0f}" for v in s["output_tok_s_each"])
            over = f"{s['overhead_pct']:.1f}%" if "overhead_pct" in s else ""
            each_rep = s.get("overhead_pct_each_rep", [])
            per = ", ".join(f"{v:.1f}" for v in each_rep)
            upper = paired_upper_bound(each_rep)
            paired = (
                f"{statistics.fmean(each_rep):.1f} ± {statistics.stdev(each_rep):.1f} ({upper:.1f})"
                if upper is not None
                else ""
            )
            ttft = f"{1000 * s['ttft_p50_s']:.0f} / {1000 * s['ttft_p99_s']:.0f}"
            rows.append(
                f"| {c} | {LABELS[mode]} | {each} | {s['output_tok_s_mean']:.0f} | {over} | {per} "
                f"| {paired} | {s['body_bytes_mean']:.0f} | {ttft} | {s['errors']} |"
            )
    return "\n".join(rows)


def stream_table(results: dict[str, Any]) -> str:
    """Streamed calls with and without the re-prefill: each run and the cost."""
    st = results.get("stream_experts", {})
    rows = [
        "| rep | re-prefill | output tok/s | wall s | TTFT p50 ms | re-prefill p50 / p99 ms "
        "| re-prefill body bytes | records decoded | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in st.get("runs", []):
        re_ms = (
            f"{1000 * r['reprefill_p50_s']:.0f} / {1000 * r['reprefill_p99_s']:.0f}"
            if r["with_reprefill"]
            else ""
        )
        rows.append(
            f"| {r['rep']} | {'yes' if r['with_reprefill'] else 'no'} | {r['output_tok_s']:.0f} "
            f"| {r['wall_s']:.2f} | {1000 * r['ttft_p50_s']:.0f} | {re_ms} "
            f"| {r.get('reprefill_bytes_mean') or ''} "
            f"| {str(r.get('decoded', '')) + '/' + str(r['ok']) if r['with_reprefill'] else ''} "
            f"| {', '.join(r.get('sources', []))} |"
        )
    s = st.get("summary", {})
    if "cost_pct" in s:
        rows.append(
            f"\nMean output tok/s: stream only {s['stream_only']:.0f}, with re-prefill "
            f"{s['with_reprefill']:.0f}: cost **{s['cost_pct']:.1f}%** at concurrency "
            f"{st.get('concurrency')}."
        )
    return "\n".join(rows)


def agreement_text(results: dict[str, Any]) -> str:
    """Counts vs ids, and re-prefill vs ids, split by whether the two calls produced the same
    completion tokens (greedy decoding is not batch-invariant in vLLM)."""
    a = results.get("counts_agreement", {})
    rows = a.get("rows", [])
    if not rows:
        return "(not run)"
    same = [r for r in rows if r["same_tokens"]]
    same_s = [r for r in rows if r["stream_same_tokens"]]

    def med_max(values: list[float]) -> str:
        if not values:
            return "-"
        return f"median {statistics.median(values):.4f}, max {max(values):.4f}"

    return "\n".join(
        [
            "| comparison | calls | same completion tokens | identical counts "
            "| load-share TVD, same tokens | TVD, all |",
            "|---|---|---|---|---|---|",
            f"| plugin counts vs counts of the engine's ids (two calls) | {len(rows)} "
            f"| {len(same)} | {a['counts_equal_ids']} "
            f"| {med_max([r['tvd_counts_vs_ids'] for r in same])} "
            f"| {med_max([r['tvd_counts_vs_ids'] for r in rows])} |",
            f"| streamed + re-prefill vs counts of the engine's ids | {len(rows)} "
            f"| {len(same_s)} | {a['reprefill_equal_ids']} "
            f"| {med_max([r['tvd_reprefill_vs_ids'] for r in same_s])} "
            f"| {med_max([r['tvd_reprefill_vs_ids'] for r in rows])} |",
        ]
    )


def orch_table(results: dict[str, Any], key: str = "orchestration") -> str:
    """Full path vs plain client: requests/s and client CPU ms per request of each run
    (``key``: the results entry; a run that repeats the phase at another capture rate keeps
    the earlier one under ``orchestration_rate<r>``)."""
    o = results.get(key, {})
    rows = [
        "| rep | path | requests/s | output tok/s | wall s | client CPU ms / request "
        "| statuses | routing sources |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in o.get("runs", []):
        rows.append(
            f"| {r['rep']} | {r['mode']} | {r['requests_s']:.1f} | {r['output_tok_s']:.0f} "
            f"| {r['wall_s']:.1f} | {r['client_cpu_ms_per_request']:.1f} "
            f"| {r.get('statuses') or ''} | {r.get('routing_sources') or ''} |"
        )
    s = o.get("summary", {})
    if s and "ratio_wall_plain_over_full" in s:  # 2026-12-01 on: same calls, output tok/s
        rows.append(
            f"\n{o['requests']} requests, {o['concurrency_requests']} in flight over "
            f"{o.get('client_processes', 1)} client processes on each side; the plain client "
            f"sends the full path's recorded calls. Full {s['full_output_tok_s_mean']:.0f} "
            f"output tok/s vs plain {s['plain_output_tok_s_mean']:.0f}: ratio "
            f"**{s['ratio_full_over_plain']:.3f}** (wall for the same calls: plain "
            f"{s['plain_wall_s_mean']:.2f} s / full {s['full_wall_s_mean']:.2f} s = "
            f"{s['ratio_wall_plain_over_full']:.3f}); client CPU per request, median: full "
            f"{s['full_client_cpu_ms_per_request_median']:.1f} ms, plain "
            f"{s['plain_client_cpu_ms_per_request_median']:.1f} ms; model calls with a JSON "
            f"schema {o.get('calls_with_schema')}, with tools {o.get('calls_with_tools')}; "
            f"schema dropped: {o.get('json_schema_dropped')}."
        )
    elif s:
        rows.append(
            f"\n{o['requests']} requests, {o['concurrency_requests']} in flight; full "
            f"{s['full_requests_s_mean']:.1f} req/s vs plain {s['plain_requests_s_mean']:.1f}: "
            f"ratio **{s['ratio_full_over_plain']:.3f}**; model calls with a JSON schema "
            f"{o.get('calls_with_schema')}, with tools {o.get('calls_with_tools')} (over the "
            f"recorded repetitions); schema dropped: {o.get('json_schema_dropped')}."
        )
    return "\n".join(rows)


def probe_table(results: dict[str, Any]) -> str:
    """Structured output and tool calls on each server."""
    rows = [
        "| server | json_schema probe | tool_choice required | tool_choice named |",
        "|---|---|---|---|",
    ]
    for name, p in results.get("probe", {}).items():
        s = p["structured"]

        def tool(t: dict[str, Any]) -> str:
            names = [c.get("name") for c in t.get("tool_calls", [])]
            return f"{t['status']}, tool_calls {names}"

        rows.append(
            f"| {name} | {s['status']}, ok={s['ok']}, {s['seconds']:.2f} s, reply "
            f"`{s.get('content')}` | {tool(p['tool_required'])} | {tool(p['tool_named'])} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    """Print every table of the run in ``argv[0]`` (a ``results.json``)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m benchmarks.gpu_report19 RESULTS_JSON")
    results = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    for title, text in (
        ("Probe", probe_table(results)),
        ("Capture cost", capture_table(results)),
        ("Streamed calls", stream_table(results)),
        ("Agreement", agreement_text(results)),
        ("Orchestration", orch_table(results)),
    ):
        print(f"### {title}\n\n{text}\n")
    for key in sorted(k for k in results if k.startswith("orchestration_")):
        print(f"### Orchestration ({key})\n\n{orch_table(results, key)}\n")


if __name__ == "__main__":
    main()
