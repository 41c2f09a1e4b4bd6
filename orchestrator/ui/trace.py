"""The expert trace in words, for the people reading a reply.

A mixture-of-experts model sends each token, in each MoE layer, to a few of its experts (the
router picks ``top_k`` of them). A reply's *load share* of an expert in a layer is the part of
that layer's picks, over the reply's tokens, that went to the expert: 25% means one pick in
four. :func:`describe` compares one reply's shares with the same workflow's history
(:func:`workflow_baseline`: every earlier call of the workflow summed in the telemetry store's
hourly expert rollups), so a reader learns whether this reply used the experts this kind of
request usually uses, or others.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from orchestrator.telemetry.read import TelemetryReader

#: How a routing source is named to a person.
SOURCE_WORDS = {
    "engine": "measured by the model server while it wrote the reply",
    "replay": "recomputed after the reply by running its tokens through the model's router on "
    "this machine (the server does not report experts)",
    "scripted": "made up by a scripted test model (no real model answered)",
    "pending": "not computed yet (the replay runs after the reply)",
    "dense": "not applicable: the model has no experts",
}
#: A layer's top expert counts as unusual when its share is this many times its usual share.
UNUSUAL_RATIO = 2.0
#: Seconds a workflow's baseline is reused before it is read again.
BASELINE_TTL_S = 60.0


@dataclass(frozen=True)
class Baseline:
    """A workflow's usual expert load share.

    Attributes:
        calls: Earlier calls summed.
        share: ``{layer: {expert: share}}``, each layer's shares summing to 1.
    """

    calls: int
    share: dict[int, dict[int, float]]


def workflow_baseline(reader: TelemetryReader, workflow: str) -> Baseline:
    """The usual load share of ``workflow``'s calls, summed over every rollup row it has.

    Rows of different model shapes are summed per (layer, expert) index; a workflow with no
    rollups has ``Baseline(0, {})``."""
    counts: dict[int, np.ndarray] = {}
    calls = 0
    for row in reader.iter_rollups(workflow=workflow):
        calls += row.sums.calls
        for i, layer in enumerate(row.moe_layers):
            layer_counts = np.asarray(row.sums.counts[i], dtype=np.float64)
            if layer in counts and counts[layer].shape == layer_counts.shape:
                counts[layer] = counts[layer] + layer_counts
            else:
                counts.setdefault(layer, layer_counts.copy())
    share: dict[int, dict[int, float]] = {}
    for layer, values in counts.items():
        total = float(values.sum())
        if total > 0:
            share[layer] = {e: float(v) / total for e, v in enumerate(values) if v > 0}
    return Baseline(calls=calls, share=share)


class BaselineCache:
    """:func:`workflow_baseline` per workflow, read at most every :data:`BASELINE_TTL_S`."""

    def __init__(self, reader: TelemetryReader) -> None:
        self.reader = reader
        self._kept: dict[str, tuple[float, Baseline]] = {}

    def get(self, workflow: str) -> Baseline:
        """The workflow's baseline (read from the store when older than the TTL)."""
        now = time.monotonic()
        kept = self._kept.get(workflow)
        if kept is None or now - kept[0] > BASELINE_TTL_S:
            kept = (now, workflow_baseline(self.reader, workflow))
            self._kept[workflow] = kept
        return kept[1]


def _top(grid: dict[str, Any]) -> dict[int, tuple[int, float]]:
    """Each layer's most used expert and its share in the reply."""
    out: dict[int, tuple[int, float]] = {}
    for layer, row in zip(grid.get("layers", []), grid.get("share", []), strict=False):
        if row and max(row) > 0:
            j = int(np.argmax(row))
            out[int(layer)] = (int(grid["experts"][j]), float(row[j]))
    return out


def describe(grid: dict[str, Any], workflow: str, baseline: Baseline) -> list[str]:
    """A few plain sentences on one reply's experts (``grid``: :func:`~orchestrator.ui.
    service.expert_grid`'s output) against ``baseline``, ``workflow``'s usual shares.

    Returns:
        Sentences (plain text, no markup): which experts carried the most of the reply, what
        a percentage means, typical or unusual for the workflow (or that there is no history
        to compare with yet), and where the numbers come from. ``[]`` when the reply used no
        experts.
    """
    top = _top(grid)
    if not top:
        return []
    mains = sorted(top.items(), key=lambda kv: -kv[1][1])[:3]
    used = ", ".join(f"expert {e} in layer {layer} ({share:.0%})" for layer, (e, share) in mains)
    words = workflow.replace("_", " ")
    out = [
        f"This reply leaned most on {used}.",
        "A percentage is the expert's part of its layer's work on this reply: each word piece "
        "is sent to a few experts per layer, and 25% means one of every four of those picks.",
    ]
    if baseline.calls == 0 or not baseline.share:
        out.append(f"There is no history of {words} replies yet to compare with.")
    else:
        out.append(_compare(top, words, baseline))
    sources = [str(s) for s in grid.get("sources", [])]
    named = "; ".join(SOURCE_WORDS.get(s, "of an unknown origin") for s in sources) or "unknown"
    out.append(f"These numbers were {named}.")
    return out


def _compare(top: dict[int, tuple[int, float]], words: str, baseline: Baseline) -> str:
    """Typical or unusual: the reply's top expert per layer against its usual share."""
    unusual: list[tuple[float, int, int, float, float]] = []
    compared = 0
    for layer, (expert, share) in top.items():
        usual_layer = baseline.share.get(layer)
        if not usual_layer:
            continue
        compared += 1
        usual = usual_layer.get(expert, 0.0)
        if share >= UNUSUAL_RATIO * max(usual, 1e-9):
            unusual.append((share / max(usual, 1e-9), layer, expert, share, usual))
    history = f"{baseline.calls:,} earlier {words} model call{'s' if baseline.calls != 1 else ''}"
    if not compared:
        return f"The {history} used other layers, so this reply cannot be compared with them."
    if not unusual:
        return (
            f"That is typical for {words}: the same experts carry about as much in the {history}."
        )
    _, layer, expert, share, usual = max(unusual)
    return (
        f"That is unusual for {words}: expert {expert} in layer {layer} took {share:.0%} here "
        f"against {usual:.0%} in the {history} ({len(unusual)} of {compared} layers differ "
        "this much)."
    )
