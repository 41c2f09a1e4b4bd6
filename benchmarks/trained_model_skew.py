"""Skew report of a main-job database served by the trained checkpoint (issue 20).

Runs ``orchestrator skew`` on the database (its JSON report is written beside the results) and
summarises, from the ``model_calls`` rows themselves, which routed experts each workflow, each
node and each language uses: per MoE layer the top experts by load share, and the
Jensen-Shannon divergence (bits, mean over MoE layers) of each group's load against all
calls' and between the workflows. The language of a call is the language of its request's text
(:func:`workflows.content_moderation.dataset.language`: ``zh`` when Han characters dominate).

Made with::

    .venv/bin/orchestrator run --limit 24 --database-url sqlite:///runs/main_trained.db
    .venv/bin/orchestrator run --limit 24 --kind moderation --database-url sqlite:///runs/main_trained.db
    .venv/bin/python benchmarks/trained_model_skew.py runs/main_trained.db

Writes ``benchmarks/results/trained_skew_<date>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sqlite3
import subprocess
import sys
from collections import defaultdict
from datetime import date
from pathlib import Path

import numpy as np

from orchestrator.analysis.skew.fingerprint import jsd
from orchestrator.telemetry.codec import decode_counts_blob
from workflows.content_moderation.dataset import language

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def calls(db: Path) -> list[dict]:
    """Every model call with its workflow, node, language and ``(layers, experts)`` counts."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "select c.workflow, c.node, r.text, c.moe_layers, c.num_experts, c.expert_counts, "
        "c.expert_routing_source, c.model from model_calls c join requests r on "
        "r.id = c.request_id where c.expert_counts is not null"
    ).fetchall()
    out = []
    for workflow, node, text, layers, experts, blob, source, model in rows:
        n_layers = len(json.loads(layers))
        out.append({"workflow": workflow, "node": node, "lang": language(text or ""),
                    "counts": decode_counts_blob(blob, n_layers, experts), "source": source,
                    "model": model})  # fmt: skip
    return out


def summarise(rows: list[dict], top: int = 5) -> dict:
    total = sum(r["counts"] for r in rows)
    groups: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
    sizes: dict[str, dict[str, int]] = defaultdict(dict)
    for key in ("workflow", "node", "lang"):
        for name in sorted({r[key] for r in rows}):
            part = [r["counts"] for r in rows if r[key] == name]
            groups[key][name] = sum(part)
            sizes[key][name] = len(part)
    vs_all = {
        key: {name: round(float(jsd(c, total).mean()), 4) for name, c in part.items()}
        for key, part in groups.items()
    }
    pairs = {
        key: {
            f"{a}|{b}": round(float(jsd(groups[key][a], groups[key][b]).mean()), 4)
            for a, b in itertools.combinations(sorted(groups[key]), 2)
        }
        for key in ("workflow", "lang")
    }
    tops = {
        key: {
            name: [
                [int(e) for e in np.argsort(-layer)[:top]]
                for layer in c / np.maximum(c.sum(axis=-1, keepdims=True), 1)
            ]
            for name, c in part.items()
        }
        for key, part in groups.items()
    }
    shares = {
        key: {
            name: [
                [round(float(s), 3) for s in np.sort(layer / max(layer.sum(), 1))[::-1][:top]]
                for layer in c
            ]
            for name, c in part.items()
        }
        for key, part in groups.items()
    }
    return {"calls": len(rows), "sizes": sizes, "vs_all_jsd": vs_all, "pair_jsd": pairs,
            "top_experts": tops, "top_shares": shares,
            "sources": sorted({r["source"] for r in rows}),
            "models": sorted({r["model"] for r in rows})}  # fmt: skip


def markdown(db: str, s: dict, moe_layers: list[int]) -> str:
    lines = [
        f"# Expert skew of a main-job database, trained checkpoint ({date.today().isoformat()})",
        "",
        f"Database `{db}`: {s['calls']} model calls; routing source {s['sources']}; model "
        f"{s['models']}. JSD in bits, mean over the MoE layers {moe_layers}; routed experts "
        "only (the 2 shared experts are always on and never counted).",
        "",
        "| scope | calls | JSD vs all calls |",
        "|---|---|---|",
    ]
    for key in ("workflow", "node", "lang"):
        for name, value in s["vs_all_jsd"][key].items():
            lines.append(f"| {key} {name} | {s['sizes'][key][name]} | {value} |")
    lines += ["", "| pair | JSD |", "|---|---|"]
    for key in ("workflow", "lang"):
        for pair, value in s["pair_jsd"][key].items():
            lines.append(f"| {key} {pair} | {value} |")
    lines += ["", "## Top routed experts per layer (load share)", "",
              "| scope | " + " | ".join(f"layer {i}" for i in moe_layers) + " |",
              "|---|" + "---|" * len(moe_layers)]  # fmt: skip
    for key in ("workflow", "node", "lang"):
        for name, layers in s["top_experts"][key].items():
            cells = [
                ", ".join(f"{e} ({sh:.0%})" for e, sh in zip(top, share, strict=True))
                for top, share in zip(layers, s["top_shares"][key][name], strict=True)
            ]
            lines.append(f"| {key} {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("db", type=Path)
    args = parser.parse_args()
    if not args.db.is_file():
        sys.exit(f"{args.db}: no such database; run the main job first (see --help)")
    stem = RESULTS / f"trained_skew_{date.today().isoformat()}"
    report = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "orchestrator"), "skew", "--db", str(args.db), "--window",
         "all", "--json", str(stem) + "_report.json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    rows = calls(args.db)
    if not rows:
        sys.exit(f"{args.db}: no model call carries expert counts")
    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    moe_layers = json.loads(con.execute("select moe_layers from model_calls limit 1").fetchone()[0])
    summary = summarise(rows)
    summary["skew_cli_exit"] = report.returncode
    stem.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    text = markdown(str(args.db), summary, moe_layers)
    text += "\n## `orchestrator skew --window all` (terminal summary)\n\n```\n"
    text += report.stdout[-6000:] + "\n```\n"
    stem.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
