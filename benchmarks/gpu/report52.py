"""Tables of issue 52's GPU run (capture cost per MoE family) from its ``results.json``.

``python -m benchmarks.gpu.report52 RESULTS_JSON`` (the device's ``results.json``, or a committed
``benchmarks/results/gpu_<date>.json``, whose ``runs`` it reads) prints Markdown: per family and
concurrency, each mode's output tok/s per repetition, the paired cost against the same
repetition's off load (mean ± SD, one-sided 95% upper bound, Student's t:
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
        "deficits": _sum_counters(k.get("deficits", {}) for k in checks),
    }
    if entry.get("design", "").startswith("sequential"):
        out["sequential"] = sequential_figures(entry)
    return out


def _sum_counters(parts: Any) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in parts:
        for key, n in part.items():
            total[key] = total.get(key, 0) + n
    return total


def welch_upper_pct(off: list[float], mode: list[float], confidence: float = 0.95) -> float | None:
    """One-sided upper bound (%) of ``1 - mean(mode) / mean(off)`` for two independent blocks
    of loads (Welch's t on the difference of the means, divided by the off mean); None when a
    block has fewer than two loads."""
    if len(off) < 2 or len(mode) < 2:
        return None
    from scipy import stats  # CPU side only

    va, vb = statistics.variance(off) / len(off), statistics.variance(mode) / len(mode)
    df = (va + vb) ** 2 / (va**2 / (len(off) - 1) + vb**2 / (len(mode) - 1))
    diff = statistics.fmean(off) - statistics.fmean(mode)
    t = float(stats.t.ppf(confidence, df))
    return 100 * (diff + t * (va + vb) ** 0.5) / statistics.fmean(off)


def sequential_figures(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``--sequential`` run (off block, then on block): per concurrency and capture mode, the
    cost against the off block (unpaired: Welch bound) and against ``none`` in the same
    repetition of the on block (paired: Student's t bound)."""
    out: dict[str, Any] = {}
    for c in (128, 32):
        runs = [r for r in entry.get("runs", []) if r["concurrency"] == c]
        tok = {m: [r["output_tok_s"] for r in runs if r["mode"] == m] for m in ("off", "none")}
        fig: dict[str, Any] = {"off_each": tok["off"], "none_each": tok["none"]}
        fig["spread"] = {m: spread(vals) for m, vals in tok.items() if vals}
        for mode in ("none", *TARGETS):
            each = [r for r in runs if r["mode"] == mode]
            if not each:
                continue
            vals = [r["output_tok_s"] for r in each]
            upper = welch_upper_pct(tok["off"], vals)
            off_mean = statistics.fmean(tok["off"]) if tok["off"] else None
            m = {
                "tok_s_each": vals,
                "cost_vs_off_pct": None
                if off_mean is None
                else round(100 * (1 - statistics.fmean(vals) / off_mean), 2),
                "cost_vs_off_upper95_welch": None if upper is None else round(upper, 2),
            }
            if mode != "none":
                per = [
                    round(100 * (1 - r["output_tok_s"] / n["output_tok_s"]), 2)
                    for r in each
                    for n in runs
                    if n["mode"] == "none" and n["rep"] == r["rep"]
                ]
                bound = paired_upper_bound(per)
                m.update(
                    cost_vs_none_each_rep=per,
                    cost_vs_none_mean=round(statistics.fmean(per), 2) if per else None,
                    cost_vs_none_upper95=None if bound is None else round(bound, 2),
                )
            fig[mode] = m
        out[f"c{c}"] = fig
    return out


def spread(each: list[float]) -> dict[str, float | None]:
    """Run-to-run spread of one server's loads: mean tok/s, coefficient of variation (%, None
    under two loads) and range (max - min, % of the mean)."""
    mean = statistics.fmean(each)
    return {
        "mean": round(mean, 1),
        "cv_pct": round(100 * statistics.stdev(each) / mean, 2) if len(each) > 1 else None,
        "range_pct": round(100 * (max(each) - min(each)) / mean, 2),
    }


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def sequential_table(name: str, fig: dict[str, Any]) -> str:
    """The table of a ``--sequential`` run: a row per (concurrency, mode); the cost against
    the off block (unpaired) and against ``none`` in the same repetition (paired)."""
    has_off = any((fig["sequential"].get(f"c{c}") or {}).get("off_each") for c in (128, 32))
    design = "off block, then on block" if has_off else "on block only (no off block)"
    rows = [
        f"### {name}: {design} (one server at a time)",
        "",
        "| c | mode | output tok/s (each load) | cost vs off block (%) | upper 95 (Welch) "
        "| cost vs none, each rep (%) | vs none mean | upper 95 (paired t) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in (128, 32):
        f = fig["sequential"].get(f"c{c}") or {}
        if f.get("off_each"):
            each = ", ".join(f"{v:.0f}" for v in f["off_each"])
            rows.append(f"| {c} | off (own block) | {each} | | | | | |")
        for name, sp in (f.get("spread") or {}).items():
            rows.append(
                f"| {c} | {name}: own spread | mean {sp['mean']:.0f} | CV {_pct(sp['cv_pct'])}%, "
                f"range {_pct(sp['range_pct'])}% | | | | |"
            )
        for mode in ("none", *TARGETS):
            m = f.get(mode)
            if not m:
                continue
            each = ", ".join(f"{v:.0f}" for v in m["tok_s_each"])
            per = ", ".join(f"{v:.1f}" for v in m.get("cost_vs_none_each_rep", []))
            rows.append(
                f"| {c} | {LABELS.get(mode, mode)} | {each} | {_pct(m['cost_vs_off_pct'])} "
                f"| {_pct(m['cost_vs_off_upper95_welch'])} | {per} "
                f"| {_pct(m.get('cost_vs_none_mean'))} | {_pct(m.get('cost_vs_none_upper95'))} |"
            )
    return "\n".join(rows)


def diag_table(name: str, diag: dict[str, Any]) -> str:
    """The :mod:`benchmarks.gpu.tokdiag` cases of a family: per case, the deficits ``P + C -
    routed tokens`` seen (1 as documented) and the finish reasons."""
    if "summary" not in diag:
        return f"### {name}: diagnosis not run ({diag.get('error', 'no result')})"
    rows = [
        f"### {name}: routed tokens by endpoint, finish and mode (P + C − routed)",
        "",
        "| case (endpoint/mode/finish/max_tokens/at once) | deficit: calls | finish | errors |",
        "|---|---|---|---|",
    ]
    for case, s in diag["summary"].items():
        errors = s.get("errors", [])
        rows.append(
            f"| {case} | {s['deficits']} | {s['finish']} | "
            f"{len(errors)}{': ' + errors[0][:120] if errors else ''} |"
        )
    a = diag.get("align")
    if a:
        rows.append(
            f"\nWhich token is left out (`tokdiag.align`): {a}"
            if "error" in a
            else f"\nWhich token is left out (`tokdiag.align`): call A ({a['P']} prompt + "
            f"{a['C']} output tokens) returned {a['rows_a']} rows; the prefill of its prompt + "
            f"first {a['C'] - 1} output tokens returned {a['rows_b']}. Top-k set agreement of "
            f"A's rows with it at shift −1 / 0 / +1: {a['shift']['-1']} / {a['shift']['0']} / "
            f"{a['shift']['1']} (prompt rows {a['prompt']}, output rows {a['decode']})."
        )
    return "\n".join(rows)


def family_table(name: str, fig: dict[str, Any]) -> str:
    """One Markdown table of a family: a row per (concurrency, mode)."""
    if "sequential" in fig:
        return sequential_table(name, fig) + "\n\n" + check_line(fig)
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
    rows += ["", check_line(fig)]
    if fig.get("error"):
        rows.append(f"\n**Error:** {fig['error']}")
    return "\n".join(rows)


def check_line(fig: dict[str, Any]) -> str:
    """The counts check of a family's loads, in one paragraph."""
    k = fig["check"]
    return (
        f"Counts check: {k['calls_passing']} of {k['calls_asking_counts']} calls that asked for "
        f"counts had one row per layer ({k['rows_seen']} rows seen) and every MoE row summing to "
        f"routed tokens × top-k; {k['none_calls_empty']} of {k['none_calls']} `none` calls "
        f"carried nothing; {k['loads_all_ok']} of {k['loads']} loads passed every check. "
        f"P + C − routed tokens, calls: {k.get('deficits')}."
        + (f" Failures: {k['failures']}" if k["failures"] else "")
        + (f"\n\n**Error:** {fig['error']}" if fig.get("error") else "")
    )


def main(argv: list[str] | None = None) -> None:
    """Print the tables of RESULTS_JSON; ``--json`` writes the derived figures."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.gpu.report52")
    p.add_argument("results", type=Path)
    p.add_argument("--json", type=Path, help="write the derived figures here")
    args = p.parse_args(argv)
    results = json.loads(args.results.read_text())
    # a device's results.json names its families; a committed gpu_<date>.json its runs
    entries = results.get("families") or results.get("runs", {})
    figures = {name: family_figures(e) for name, e in entries.items()}
    measured = {name: fig for name, fig in figures.items() if fig["check"]["loads"]}
    print("\n\n".join(family_table(name, fig) for name, fig in measured.items()))
    for name, entry in entries.items():
        if "diag" in entry:
            print("\n" + diag_table(name, entry["diag"]))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
