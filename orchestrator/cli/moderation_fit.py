"""Command: ``orchestrator moderation fit`` — train the learned risk scorer.

Mounted on the ``moderation`` group of :mod:`orchestrator.cli.moderation` by :func:`register`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from orchestrator.cli.common import console, fail, settings_from_flags, working
from orchestrator.exceptions import OrchestratorError
from workflows.content_moderation.evaluation import fit_and_save
from workflows.content_moderation.scorer import DEFAULT_SCORER_PATH, SEED


def fit(
    data_dir: Annotated[Path | None, typer.Option(help="Folder holding moderation/.")] = None,
    out: Annotated[Path, typer.Option(help="Scorer file to write.")] = DEFAULT_SCORER_PATH,
    seed: Annotated[int, typer.Option(help="Seed of the folds and the solver.")] = SEED,
) -> None:
    """Fit the learned risk scorer (logistic regression over words and Chinese character
    n-grams, cues and lexicon hits) on the TRAIN part of COLD, Davidson and Jigsaw, calibrate
    it and choose its thresholds on the DEV part, with customer_service/ as ordinary (negative)
    sentences, and write it."""
    settings = settings_from_flags(data_dir=data_dir)
    try:
        with working("fitting the risk scorer on the tune split"):
            scorer = fit_and_save(settings.data_dir, out, seed=seed)
    except (OrchestratorError, ValueError) as exc:
        raise fail(exc, 2) from exc
    console.print(f"risk scorer {scorer.version} written to {out}")
    for key, m in scorer.meta["models"].items():
        console.print(
            f"  {key}: n={m['n']} positive={m['positives']} review≥{m['review']:.2f} "
            f"high≥{m['high']:.2f}; with the lexicon on {m['oof'].get('on', 'tune')}: {m['oof']}"
        )


def register(group: typer.Typer) -> None:
    """Mount ``fit`` on the ``moderation`` group."""
    group.command("fit")(fit)
