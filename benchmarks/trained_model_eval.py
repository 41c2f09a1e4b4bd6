"""Evaluate the trained offline checkpoint on the held-out split, and its specialisation.

Inputs: the held-out prompts (``orchestrator train prepare`` writes them to ``PREPARED/test.jsonl``)
and the model's greedy answers without grammar (``serving/training/generate.py``; the answers of
the committed checkpoint, made on the H200 right after training, are
``benchmarks/results/trained_model_test_outputs.jsonl``).

Specialisation: a subset of the held-out prompts (``--per-group`` per workflow and language) is
replayed through the trained checkpoint and through the random-weight default checkpoint (the
same requests; CPU, transformers), and each workflow's / language's expert fingerprint JSD
against all calls is compared.

Run: ``.venv/bin/python benchmarks/trained_model_eval.py --prepared .train20``; writes
``benchmarks/results/trained_model_<date>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from datetime import date
from pathlib import Path

from orchestrator.config import Settings
from serving import CheckpointSpec, build_checkpoint
from serving.checkpoint import corpus_from_data_dir
from training.data import WORKFLOW_OF, Example
from training.evaluate import expert_counts, score_outputs, specialisation

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TRAINED = ROOT / "serving" / "checkpoints" / "ernie45-moe-trained"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--prepared", type=Path, default=ROOT / ".train20")
    parser.add_argument(
        "--outputs", type=Path, default=RESULTS / "trained_model_test_outputs.jsonl"
    )
    parser.add_argument("--checkpoint", type=Path, default=TRAINED)
    parser.add_argument("--per-group", type=int, default=30)
    args = parser.parse_args()
    settings = Settings()
    rows = [json.loads(x) for x in (args.prepared / "test.jsonl").read_text("utf-8").splitlines()]
    examples = {r["id"]: Example.model_validate(r["example"]) for r in rows}
    # report figure lists are synthetic; held-out ones come from held_out_examples' own generator
    # (files prepared before report_example took a split still say "tune")
    examples = {
        k: e.model_copy(update={"split": "test"}) if e.task == "report" else e
        for k, e in examples.items()
    }
    prompts = {r["id"]: r["prompt"] for r in rows}
    outputs = {}
    for line in args.outputs.read_text("utf-8").splitlines():
        row = json.loads(line)
        outputs[row["id"]] = row["output"]
    scores = score_outputs(examples, outputs, settings.data_dir)

    rng = random.Random(0)
    groups: dict[tuple[str, str], list[str]] = {}
    for key, e in sorted(examples.items()):
        groups.setdefault((WORKFLOW_OF[e.task], e.lang), []).append(key)
    chosen = [
        k
        for g in sorted(groups)
        for k in rng.sample(groups[g], min(args.per_group, len(groups[g])))
    ]
    random_ckpt = build_checkpoint(
        ROOT / ".cache" / "ernie45-moe-offline-random", CheckpointSpec(),
        corpus_from_data_dir(settings.data_dir), overwrite=True,
    )  # fmt: skip
    spec: dict[str, object] = {}
    for name, folder in (("trained", args.checkpoint), ("random", random_ckpt)):
        start = time.perf_counter()
        counts, _ = expert_counts(folder, [prompts[k] for k in chosen])
        spec[name] = specialisation(counts, [examples[k] for k in chosen])
        spec[name]["replay_seconds"] = round(time.perf_counter() - start, 1)  # type: ignore[index]
    result = {"date": date.today().isoformat(), "machine": "2-core x86_64, 24 GiB, no GPU "
              "(answers generated on one H200)", "scores": scores, "specialisation": spec,
              "calls_replayed": len(chosen)}  # fmt: skip
    stem = RESULTS / f"trained_model_{date.today().isoformat()}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2))
    stem.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))


def markdown(r: dict) -> str:
    s, sp = r["scores"], r["specialisation"]
    m = s["moderation"]
    lines = [
        f"# Trained offline ERNIE-MoE: evaluation ({r['date']})",
        "",
        "Held-out (test) split only; greedy answers, no grammar. " + r["machine"] + ".",
        "",
        "| measure | value |",
        "|---|---|",
        f"| triage issue-type accuracy (n={s['triage']['n']}) | "
        f"{s['triage']['issue_type_accuracy']} |",
        f"| triage accuracy en / zh | {s['triage']['issue_type_accuracy_by_lang']['en']} / "
        f"{s['triage']['issue_type_accuracy_by_lang']['zh']} |",
        "| valid JSON without grammar (triage, risk, report, interpret, tool) | "
        f"{s['valid_json_without_grammar']} |",
        f"| valid JSON: triage / risk / report | {s['triage']['valid_json']} / "
        f"{m['valid_json']} / {s['report']['valid_json']} |",
        f"| replies whose facts equal the tool results (n={s['reply']['n']}) | "
        f"{s['reply']['facts_equal_tool_results']} |",
    ]
    if "reply_plain" in s:
        lines += [
            f"| replies with no tool result (the main job): no placeholder, no figure "
            f"(n={s['reply_plain']['n']}) | {s['reply_plain']['no_placeholder_no_figure']} |",
            f"| select_tool arguments: valid JSON / equal to the expected (model alone, no "
            f"enum grammar; n={s['tool']['n']}) | {s['tool']['valid_json']} / "
            f"{s['tool']['arguments_equal']} |",
            f"| interpret: valid JSON / every finding cites known figures "
            f"(n={s['interpret']['n']}) | {s['interpret']['valid_json']} / "
            f"{s['interpret']['findings_kept']} |",
        ]
    for lang in ("en", "zh"):
        lines.append(
            f"| moderation F1 {lang}: model alone / lexicon (n={m[lang]['model_alone']['n']}) "
            f"| {m[lang]['model_alone']['f1']} / {m[lang]['lexicon']['f1']} |"
        )
    lines += ["", f"## Specialisation ({r['calls_replayed']} held-out calls, prompt tokens, "
              "CPU replay; JSD in bits, mean over MoE layers)", "",
              "| scope | trained | random |", "|---|---|---|"]  # fmt: skip
    for key in ("workflow", "language"):
        for name in sp["trained"]["vs_all"][key]:
            lines.append(
                f"| {key} {name} vs all | {sp['trained']['vs_all'][key][name]} | "
                f"{sp['random']['vs_all'][key][name]} |"
            )
    for pair in sp["trained"]["workflow_pairs"]:
        lines.append(
            f"| pair {pair} | {sp['trained']['workflow_pairs'][pair]} | "
            f"{sp['random']['workflow_pairs'][pair]} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
