"""Tables of issue 52's GPU run (capture cost per MoE family) from its ``results.json``.

``python -m benchmarks.gpu.report52 RESULTS_JSON`` prints Markdown: per family and concurrency,
each mode's output tok/s per repetition, the paired cost against the same repetition's off load
(mean ± SD, one-sided 95% upper bound, Student's t:
:func:`benchmarks.gpu_report19.paired_upper_bound`), the off server's own run-to-run spread
(coefficient of variation and range), and the per-call check of the counts. Every figure is read
from the file; nothing is typed in. ``--json OUT`` also writes the derived figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from benchmarks.gpu_report19 import paired_upper_bound

TARGETS = {"sampled10": 2.0, "counts": 5.0}
LABELS = {
    "sampled10": "10% sample (counts on a per-call 10% draw, none on the rest)",
    "counts": "counts on every call",
}


def family_figures(entry: dict[str, Any]) -> dict[str, Any]:
    """Per concurrency: the off server's mean, CV (%) and range of output tok/s, and per capture
    mode its mean tok/s, paired costs (%), their mean, SD and one-sided 95% upper bound, the
    target and whether the bound meets it; plus the counts check summed over the loads."""
    out: dict[str, Any] = {"reps_done": entry.get("reps_done", 0), "error": entry.get("error")}
    for c in (128, 32):
        summary = entry.get(f"summary_c{c}") or {}
        off = summary.get("off")
        if not off:
            continue
        each = off["output_tok_s_each"]
        fig: dict[str, Any] = {
            "off_tok_s_mean": off["output_tok_s_mean"],
            "off_tok_s_each": each,
            "off_cv_pct": round(100 * statistics.stdev(each) / statistics.fmean(each), 2)
            if len(each) > 1
            else None,
            "off_range_pct": round(100 * (max(each) - min(each)) / statistics.fmean(each), 2),
        }
        for mode, target in TARGETS.items():
            s = summary.get(mode)
            if not s:
                continue
            per = s.get("overhead_pct_each_rep", [])
            upper = paired_upper_bound(per)
            fig[mode] = {
                "tok_s_mean": s["output_tok_s_mean"],
                "tok_s_each": s["output_tok_s_each"],
                "cost_pct_each_rep": per,
                "cost_pct_mean": round(statistics.fmean(per), 2) if per else None,
                "cost_pct_sd": round(statistics.stdev(per), 2) if len(per) > 1 else None,
                "cost_pct_upper95": None if upper is None else round(upper, 2),
                "target_pct": target,
                "bound_meets_target": upper is not None and upper <= target,
                "mean_meets_target": bool(per) and statistics.fmean(per) <= target,
                "body_bytes_mean": s["body_bytes_mean"],
                "errors": s["errors"],
            }
        out[f"c{c}"] = fig
    checks = [r["check"] for r in entry.get("runs", [])]
    out["check"] = {
        "loads": len(checks),
        "calls_asking_counts": sum(k["asked_counts"] for k in checks),
        "calls_passing": sum(k["counts_ok"] for k in checks),
        "none_calls": sum(k["asked_none"] for k in checks),
        "none_calls_empty": sum(k["none_empty"] for k in checks),
        "loads_all_ok": sum(1 for k in checks if k["all_ok"]),
        "rows_seen": sorted({n for k in checks for n in k.get("rows_seen", [])}),
        "failures": [f for k in checks for f in k["failures"]][:5],
    }
    return out


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def family_table(name: str, fig: dict[str, Any]) -> str:
    """One Markdown table of a family: a row per (concurrency, mode)."""
    rows = [
        f"### {name} ({fig['reps_done']} repetitions)",
        "",
        "| c | mode | output tok/s (each rep) | mean | cost per rep (%) "
        "| cost mean ± SD | one-sided 95% upper | target | met (bound) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in (128, 32):
        f = fig.get(f"c{c}")
        if not f:
            continue
        each = ", ".join(f"{v:.0f}" for v in f["off_tok_s_each"])
        spread = f"off spread: CV {_pct(f['off_cv_pct'])}%, range {_pct(f['off_range_pct'])}%"
        rows.append(f"| {c} | off | {each} | {f['off_tok_s_mean']:.0f} | {spread} | | | | |")
        for mode in TARGETS:
            m = f.get(mode)
            if not m:
                continue
            each = ", ".join(f"{v:.0f}" for v in m["tok_s_each"])
            per = ", ".join(f"{v:.1f}" for v in m["cost_pct_each_rep"])
            rows.append(
                f"| {c} | {LABELS[mode]} | {each} | {m['tok_s_mean']:.0f} | {per} "
                f"| {_pct(m['cost_pct_mean'])} ± {_pct(m['cost_pct_sd'])} "
                f"| {_pct(m['cost_pct_upper95'])} | ≤ {m['target_pct']:.0f}% "
                f"| {'yes' if m['bound_meets_target'] else 'no'} |"
            )
    k = fig["check"]
    rows += [
        "",
        f"Counts check: {k['calls_passing']} of {k['calls_asking_counts']} calls that asked for "
        f"counts had one row per layer ({k['rows_seen']} rows seen) and every MoE row summing to "
        f"routed tokens × top-k; {k['none_calls_empty']} of {k['none_calls']} `none` calls "
        f"carried nothing; {k['loads_all_ok']} of {k['loads']} loads passed every check."
        + (f" Failures: {k['failures']}" if k["failures"] else ""),
    ]
    if fig.get("error"):
        rows.append(f"\n**Error:** {fig['error']}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    """Print the tables of RESULTS_JSON; ``--json`` writes the derived figures."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.gpu.report52")
    p.add_argument("results", type=Path)
    p.add_argument("--json", type=Path, help="write the derived figures here")
    args = p.parse_args(argv)
    results = json.loads(args.results.read_text())
    figures = {name: family_figures(e) for name, e in results.get("families", {}).items()}
    print("\n\n".join(family_table(name, fig) for name, fig in figures.items()))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
