"""`print_load` names calls whose expert routing is still pending, and how to fill them."""

from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from orchestrator.analysis.load import ExpertLoad, layer_load
from orchestrator.cli.console import print_load


def _load(pending: int) -> ExpertLoad:
    counts = np.array([30, 10, 0, 20])
    layer = layer_load(1, counts, hot_factor=2.0, dead_min_expected=5.0, top_k=2)
    return ExpertLoad(
        calls=3,
        routed_tokens=30,
        num_experts=4,
        top_k=2,
        sources={"replay": 3},
        skipped=pending + 1,
        layers=[layer],
        pending=pending,
    )


@pytest.mark.parametrize("pending", [1, 7])
def test_pending_calls_are_printed_with_the_fill_command(pending: int) -> None:
    console = Console(record=True, width=200)
    print_load(console, _load(pending))
    text = console.export_text()
    assert f"{pending} calls with expert routing pending" in text
    assert "orchestrator telemetry fill-routing" in text


def test_no_pending_line_when_nothing_is_pending() -> None:
    console = Console(record=True, width=200)
    print_load(console, _load(0))
    assert "pending" not in console.export_text()
