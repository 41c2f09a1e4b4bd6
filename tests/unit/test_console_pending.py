"""`print_load` names calls whose expert routing is still pending, and how to fill them; its
footer states the hot and dead rule (`orchestrator skew`'s) and unjudged layers."""

from __future__ import annotations

import numpy as np
import pytest
from rich.console import Console

from orchestrator.analysis.load import ExpertLoad, layer_load
from orchestrator.cli.console import print_load


def _load(pending: int, calls: int = 3) -> ExpertLoad:
    per_call = np.array([10.0, 3.0, 0.0, 7.0])
    counts, sq = per_call * calls, per_call**2 / per_call.sum() * calls
    layer = layer_load(1, counts, sq, calls=calls)
    return ExpertLoad(
        calls=calls,
        routed_tokens=10 * calls,
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


def test_the_footer_states_skews_rule_and_an_unjudged_layer_is_no_verdict() -> None:
    console = Console(record=True, width=400)
    print_load(console, _load(0, calls=1))  # one call: no design effect, nothing judged
    text = console.export_text()
    assert "too few calls to judge" in text and "1 of 1 layers have too few calls" in text
    assert "95% interval of the share above 4x uniform (100.0%)" in text  # E = 4
    assert "the rule of `orchestrator skew`" in text and "hot = share >" not in text
    console = Console(record=True, width=400)
    print_load(console, _load(0, calls=50))
    assert "too few" not in console.export_text()
