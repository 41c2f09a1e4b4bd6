"""The expert trace in words (orchestrator/ui/trace.py): typical or unusual against the
workflow's own baseline from a real telemetry store's rollups, percentages explained, the
source named in plain words; and the heatmap sized to its layers, readable on both themes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from orchestrator.telemetry import TelemetryStore
from orchestrator.telemetry.rollups import RollupDelta
from orchestrator.ui.charts import expert_figure
from orchestrator.ui.trace import Baseline, describe, workflow_baseline

GRID = {
    "layers": [1, 2],
    "experts": [3, 7],
    "share": [[0.8, 0.2], [0.6, 0.4]],
    "sources": ["replay"],
}


def test_a_reply_like_its_workflows_history_is_typical() -> None:
    usual = Baseline(calls=120, share={1: {3: 0.7, 7: 0.3}, 2: {3: 0.5, 7: 0.5}})
    words = " ".join(describe(GRID, "customer_service", usual))
    assert "leaned most on expert 3 in layer 1 (80%)" in words
    assert "typical for customer service" in words and "120 earlier" in words
    assert "25% means one of every four" in words  # the percentage explained
    assert "recomputed after the reply" in words and "replay" not in words.split("These")[-1]


def test_a_reply_far_from_its_workflows_history_is_unusual_and_says_which_expert() -> None:
    usual = Baseline(calls=40, share={1: {3: 0.1, 7: 0.9}, 2: {3: 0.5, 7: 0.5}})
    words = " ".join(describe(GRID, "excel_report", usual))
    assert "unusual for excel report" in words
    assert "expert 3 in layer 1 took 80% here against 10%" in words
    assert "1 of 2 layers" in words


@pytest.mark.parametrize(
    ("source", "phrase"),
    [("engine", "measured by the model server"), ("scripted", "scripted test model")],
)
def test_each_source_is_named_in_plain_words(source: str, phrase: str) -> None:
    words = " ".join(describe({**GRID, "sources": [source]}, "customer_service", Baseline(0, {})))
    assert phrase in words and "no history of customer service replies yet" in words


def test_no_experts_no_words() -> None:
    assert (
        describe({"layers": [], "experts": [], "share": [], "sources": []}, "x", Baseline(0, {}))
        == []
    )


def test_the_baseline_sums_the_workflows_rollups(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    try:
        assert workflow_baseline(store, "customer_service") == Baseline(0, {})
        counts = np.array([[[6, 0, 2, 0], [0, 4, 0, 4]]])  # one call, 2 layers × 4 experts
        delta = RollupDelta.of_calls(
            counts, np.array([4]), 2, np.array([np.nan]), np.full((1, 2), np.nan)
        )
        _add_rollup(store, "customer_service", delta)
        _add_rollup(store, "excel_report", delta)
        base = workflow_baseline(store, "customer_service")
    finally:
        store.close()
    assert base.calls == 1
    assert base.share == {1: {0: 0.75, 2: 0.25}, 2: {1: 0.5, 3: 0.5}}


def _add_rollup(store: TelemetryStore, workflow: str, delta: RollupDelta) -> None:
    from datetime import UTC, datetime

    from orchestrator.telemetry.rollups import RollupKey

    key = RollupKey(
        bucket_start=datetime(2026, 1, 1, tzinfo=UTC),
        workflow=workflow,
        node="reply",
        expert_routing_source="replay",
        model="m",
        moe_layers=(1, 2),
        num_experts=4,
        top_k=2,
    )
    from orchestrator.telemetry.store import _add_to_rollup  # the store's own rollup upsert

    with store._session() as session:
        _add_to_rollup(session, key, delta)
        session.commit()


@pytest.mark.parametrize("layers", [1, 4, 12])
def test_the_heatmap_grows_with_its_layers_and_has_no_background_of_its_own(layers: int) -> None:
    grid = {
        "layers": list(range(1, layers + 1)),
        "experts": [0, 1],
        "share": [[0.5, 0.5]] * layers,
        "sources": ["engine"],
    }
    figure = expert_figure(grid)
    assert figure is not None
    layout = figure["layout"]
    assert layout["height"] == 110 + 30 * layers
    assert layout["paper_bgcolor"] == layout["plot_bgcolor"] == "rgba(0,0,0,0)"
    assert "template" not in layout or "plotly_white" not in str(layout.get("template"))
