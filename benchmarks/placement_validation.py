"""Placement what-if against recorded calls: predicted vs measured GPU balancedness per layer.

``orchestrator skew placement`` predicts, from each workflow's measured expert load, the GPU
balancedness (mean / max GPU load, per MoE layer) of a workflow mix before and after DeepSeek's
EPLB. This script checks the prediction on calls it did not learn from. Target (issue 51):
within ±0.05 of the measured value on every layer.

Usage::

    python -m benchmarks.placement_validation DB --mix a=0.6,b=0.3,c=0.1 --gpus 8 --redundant 8
    python -m benchmarks.placement_validation DB --mix ... --batch BATCH_ID

* With ``--batch``, that batch's calls (``orchestrator batch``) are the mixed run and every
  other call of the database is what the loads are learnt from.
* Without, each workflow's requests are split in two by a hash of the request id: one half
  is learnt from; from the other half, calls are drawn per workflow (seeded) in the shares of
  ``--mix``, as many as the scarcest workflow allows, and form the mixed run. Routing is per
  token, so a call routes the same whether it ran in a mixed batch or alone.

Writes ``benchmarks/results/placement_validation.{json,md}`` (``--out``).
"""

from __future__ import annotations

import hashlib
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import BenchParser, host_info, write_results
from orchestrator.analysis.skew.eplb import (
    gpu_balancedness,
    linear_map,
    mixed_load,
    parse_mix,
    plan,
)
from orchestrator.telemetry import BatchTelemetryView, RollupDelta
from orchestrator.telemetry.readonly import open_readonly

TARGET = 0.05


def _half(request_id: str) -> int:
    return hashlib.sha1(request_id.encode()).digest()[0] & 1


def read_calls(
    db: str, batch: str | None
) -> tuple[dict[str, list[np.ndarray]], dict[str, list[np.ndarray]], list[int]]:
    """``(learn, run, layers)``: each workflow's per-call ``(L, E)`` counts of the learning
    set and of the run, and the MoE layers."""
    store = open_readonly(db)
    learn: dict[str, list[np.ndarray]] = defaultdict(list)
    run: dict[str, list[np.ndarray]] = defaultdict(list)
    layers: list[int] = []
    try:
        in_batch = (
            {r for c in BatchTelemetryView(store, batch).iter_call_counts() for r in c.request_ids}
            if batch is not None
            else set()
        )
        for chunk in store.iter_call_counts():
            layers = [int(v) for v in chunk.moe_layers]
            for i, (request, workflow) in enumerate(
                zip(chunk.request_ids, chunk.workflows, strict=True)
            ):
                to_run = request in in_batch if batch is not None else _half(request) == 1
                (run if to_run else learn)[workflow].append(chunk.counts[i].astype(np.int64))
    finally:
        store.close()
    return learn, run, layers


def draw_mix(
    run: dict[str, list[np.ndarray]], mix: dict[str, float], seed: int
) -> tuple[np.ndarray, dict[str, int]]:
    """Sum of calls drawn from ``run`` in the shares of ``mix`` (the most the scarcest
    workflow allows); returns the ``(L, E)`` counts and the calls drawn per workflow."""
    rng = np.random.default_rng(seed)
    total = min(len(run.get(w, [])) / share for w, share in mix.items())
    taken = {w: max(1, round(total * share)) for w, share in mix.items()}
    counts: list[np.ndarray] = []
    for w, n in taken.items():
        pick = rng.choice(len(run[w]), size=min(n, len(run[w])), replace=False)
        counts.extend(run[w][i] for i in pick)
    return np.sum(counts, axis=0), taken


def _delta(calls: list[np.ndarray]) -> RollupDelta:
    d = RollupDelta.zeros(*calls[0].shape)
    d.counts = np.sum(calls, axis=0)
    d.calls = len(calls)
    return d


def validate(args: Any) -> dict[str, Any]:
    learn, run, layers = read_calls(args.db, args.batch)
    mix = parse_mix(args.mix, sorted(w for w in learn if w in run))
    if args.batch is not None:
        measured = np.sum([c for w in mix for c in run[w]], axis=0)
        taken = {w: len(run[w]) for w in mix}
    else:
        measured, taken = draw_mix(run, mix, args.seed)
    predicted = plan(
        mixed_load({w: _delta(learn[w]) for w in mix}, mix), layers, args.gpus, args.redundant
    )
    before = gpu_balancedness(measured.astype(float), *linear_map(*measured.shape), args.gpus)
    after = gpu_balancedness(measured.astype(float), predicted.phy2log, predicted.logcnt, args.gpus)
    rows = [
        {
            "layer": layer,
            "predicted_before": round(float(predicted.before[i]), 4),
            "measured_before": round(float(before[i]), 4),
            "predicted_after": round(float(predicted.after[i]), 4),
            "measured_after": round(float(after[i]), 4),
        }
        for i, layer in enumerate(layers)
    ]
    error = max(
        max(abs(r["predicted_before"] - r["measured_before"]) for r in rows),
        max(abs(r["predicted_after"] - r["measured_after"]) for r in rows),
    )
    return {
        "machine": host_info(),
        "database": str(args.db),
        "mix": mix,
        "gpus": args.gpus,
        "redundant": args.redundant,
        "learnt_calls": {w: len(learn[w]) for w in mix},
        "run_calls": taken,
        "split": f"batch {args.batch}" if args.batch else "request-id hash halves",
        "layers": rows,
        "max_abs_error": round(error, 4),
        "within_target": error <= TARGET,
    }


def markdown(r: dict[str, Any]) -> str:
    lines = [
        "# Placement what-if against recorded calls",
        "",
        f"Database `{r['database']}`; mix {r['mix']} (shares of calls); {r['gpus']} GPUs, "
        f"{r['redundant']} redundant slots; split: {r['split']}.",
        f"Learnt from {r['learnt_calls']} calls; mixed run of {r['run_calls']} calls.",
        "",
        "| layer | predicted before | measured before | predicted after | measured after |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {x['layer']} | {x['predicted_before']:.3f} | {x['measured_before']:.3f} | "
        f"{x['predicted_after']:.3f} | {x['measured_after']:.3f} |"
        for x in r["layers"]
    ]
    verdict = "within" if r["within_target"] else "NOT within"
    lines += ["", f"Largest error {r['max_abs_error']:.3f}: {verdict} ±{TARGET} on every layer."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = BenchParser(
        "benchmarks.placement_validation", __doc__.splitlines()[0], repeat=None, quick=False
    )
    parser.add_argument("db", help="Telemetry database (path or SQLAlchemy URL).")
    parser.add_argument("--mix", required=True)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--redundant", type=int, default=8)
    parser.add_argument("--batch", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if "://" not in args.db:
        args.db = f"sqlite:///{Path(args.db).resolve()}"
    result = validate(args)
    print(markdown(result))
    write_results(args.out, "placement_validation", result, markdown(result), command=args.command)
    return 0 if result["within_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
