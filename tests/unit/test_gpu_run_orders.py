"""The GPU benchmarks' repetition loop (benchmarks/gpu/common.py ``run_orders``): every mode
of every repetition once, resumed where a previous command stopped, and stopped (saved,
``complete: False``) when the budget would be exceeded."""

from __future__ import annotations

from typing import Any

from benchmarks.gpu.common import run_orders

ORDERS = [("off", "on"), ("on", "off")]


class Saved:
    """A stand-in workspace that keeps every save."""

    def __init__(self) -> None:
        self.saves: list[dict[str, Any]] = []

    def save_results(self, update: dict[str, Any]) -> dict[str, Any]:
        self.saves.append(update)
        return update


def _run(done: dict[str, Any], budget_s: float) -> tuple[bool, Saved, list[tuple[int, str]]]:
    ws, measured = Saved(), []

    def measure(rep: int, mode: str) -> dict[str, Any]:
        measured.append((rep, mode))
        return {"wall_s": 1.0}

    finished = run_orders(
        ws,  # type: ignore[arg-type]
        "bench_c8",
        done,
        ORDERS,
        measure,
        lambda r: f"{r['wall_s']} s",
        c=8,
        budget_s=budget_s,
        first_estimate_s=5.0,
    )
    return finished, ws, measured


def test_every_mode_of_every_repetition_runs_once_in_order() -> None:
    done: dict[str, Any] = {}
    finished, ws, measured = _run(done, budget_s=1e9)
    assert finished and measured == [(0, "off"), (0, "on"), (1, "on"), (1, "off")]
    assert [(r["rep"], r["mode"]) for r in done["runs"]] == measured
    assert len(ws.saves) == 4 and ws.saves[-1]["bench_c8"]["complete"] is False
    # each run: max(half the estimate, 1.1 x its wall time): 5 -> 2.5 -> 1.25 -> 1.1 -> 1.1
    assert done["est_s"] == 1.1


def test_a_resumed_loop_skips_the_runs_already_done() -> None:
    done: dict[str, Any] = {"runs": [{"rep": 0, "mode": "off", "wall_s": 1.0}]}
    finished, _, measured = _run(done, budget_s=1e9)
    assert finished and measured == [(0, "on"), (1, "on"), (1, "off")]
    assert len(done["runs"]) == 4


def test_out_of_budget_stops_before_a_run_and_saves_it_incomplete() -> None:
    done: dict[str, Any] = {}
    finished, ws, measured = _run(done, budget_s=0.0)
    assert not finished and measured == []
    assert ws.saves == [{"bench_c8": {"runs": [], "complete": False}}]
