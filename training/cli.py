"""Training of the offline ERNIE-MoE (issue 20): ``orchestrator train ...``.

A command plugin like a workflow's own commands: ``train_app`` is mounted as ``orchestrator
train`` through the ``moe_orchestrator.commands`` entry point ``train`` (pyproject.toml), so
the core's CLI never imports this package (it reads the built-ins' prompts and data sets).

Commands:
    train prepare  build the training data (training split only), the tokenizer and the
                   held-out prompts into a folder (seeded; data hashes in data.json)
    train fit      train a checkpoint from a prepared folder (GPU when present, else CPU:
                   slow, see README), balancing experts with the gate correction bias
    train card     write the model card (README.md) and manifest into a trained checkpoint
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.common import DataDirOption, console, fail, settings_from_flags
from orchestrator.exceptions import OrchestratorError

train_app = typer.Typer(help="Train the offline ERNIE-MoE on the project's labelled sets.")


@train_app.command("prepare")
def prepare_cmd(
    out: Annotated[Path, typer.Option(help="Folder to write.")] = Path(".train20"),
    data_dir: DataDirOption = None,
    seed: Annotated[int, typer.Option(help="Seed of every draw.")] = 0,
    per_task: Annotated[int, typer.Option(min=1, help="Held-out prompts per task.")] = 200,
) -> None:
    """Build training examples from the training split only, and held-out test prompts."""
    from training.data import DataSpec
    from training.prepare import prepare

    settings = settings_from_flags(data_dir=data_dir)
    try:
        info = prepare(settings.data_dir, out, DataSpec(seed=seed), per_task=per_task)
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    console.print(json.dumps({"out": str(out), **info["counts"]}, ensure_ascii=False))


@train_app.command("fit")
def fit_cmd(
    data: Annotated[Path, typer.Option(help="Folder written by `train prepare`.")] = Path(
        ".train20"
    ),
    out: Annotated[Path, typer.Option(help="Checkpoint folder to write.")] = Path(
        "runs/ernie45-moe-trained"
    ),
    steps: Annotated[int, typer.Option(min=1)] = 4000,
    max_seconds: Annotated[float, typer.Option(min=1, help="Training time limit.")] = 330.0,
    batch: Annotated[int, typer.Option(min=1)] = 64,
    seed: Annotated[int, typer.Option()] = 0,
    device: Annotated[str | None, typer.Option(help="cuda or cpu (default: cuda if any).")] = None,
) -> None:
    """Train (serving/training/train.py) and write the model card."""
    if not (data / "train.jsonl").is_file() or not (data / "tokenizer").is_dir():
        raise fail(f"{data} is not a prepared folder; run `orchestrator train prepare` first", 2)
    from serving.training import train, write_card

    argv = ["--data", str(data), "--out", str(out), "--steps", str(steps), "--max-seconds",
            str(max_seconds), "--batch", str(batch), "--seed", str(seed)]  # fmt: skip
    if device:
        argv += ["--device", device]
    log = train.main(argv)
    info = json.loads((data / "data.json").read_text(encoding="utf-8"))
    card = write_card(out, log, info)
    console.print(f"checkpoint: {out}  card: {card}")


@train_app.command("card")
def card_cmd(
    checkpoint: Annotated[Path, typer.Argument(help="Trained checkpoint folder.")],
    data: Annotated[Path, typer.Option(help="Prepared folder (its data.json).")] = Path(".train20"),
    evaluation: Annotated[
        Path | None, typer.Option(help="Evaluation JSON (benchmarks/trained_model_eval.py).")
    ] = None,
    shape: Annotated[
        Path | None, typer.Option(help="Shape measurement JSON (trained_model_shape.py).")
    ] = None,
) -> None:
    """(Re)write the model card and manifest of a trained checkpoint."""
    from serving.training import write_card

    try:
        log = json.loads((checkpoint / "training_log.json").read_text(encoding="utf-8"))
        info = json.loads((data / "data.json").read_text(encoding="utf-8"))
        result = json.loads(evaluation.read_text(encoding="utf-8")) if evaluation else None
        choice = json.loads(shape.read_text(encoding="utf-8")) if shape else None
    except (OSError, ValueError) as exc:
        raise fail(
            f"cannot read the training log, data.json, evaluation or shape JSON: {exc}", 2
        ) from exc
    console.print(f"card: {write_card(checkpoint, log, info, result, choice)}")
