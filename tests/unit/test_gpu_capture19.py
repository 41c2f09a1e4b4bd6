"""The issue-19 GPU phases' pure parts: the capture summary (overhead of each encoding against
routed experts off) and the report tables, on the committed H200 results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.gpu.capture19 import ORDERS, SAMPLE_RATE, rotated_orders, summarise
from benchmarks.gpu_report19 import (
    agreement_text,
    capture_table,
    orch_table,
    paired_upper_bound,
    stream_table,
)

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "gpu_2026-11-30.json"


def _run(mode: str, rep: int, tok_s: float) -> dict:
    return {
        "mode": mode,
        "rep": rep,
        "output_tok_s": tok_s,
        "body_bytes_mean": 100.0,
        "latency_p50_s": 0.5,
        "errors": 0,
        "ttft_values_s": [0.1, 0.2],
    }


def test_every_repetition_runs_every_mode_once() -> None:
    for n, orders in ORDERS.items():
        assert len(orders) == 3
        assert all(sorted(o) == sorted(orders[0]) and len(o) == n for o in orders)
        assert len({tuple(o) for o in orders}) == 3  # the order changes


@pytest.mark.parametrize("modes", [["off", "counts", "none", "sampled"], ["off", "sampled"]])
@pytest.mark.parametrize("reps", [1, 3, 5, 8])
def test_rotated_orders_run_every_mode_once_per_repetition(modes: list[str], reps: int) -> None:
    orders = rotated_orders(modes, reps)
    assert len(orders) == reps
    assert all(sorted(o) == sorted(modes) for o in orders)
    if reps >= len(modes):  # every mode leads at least once
        assert {o[0] for o in orders} == set(modes)
    if reps >= 2:
        assert orders[0] != orders[1]


def test_rotated_orders_refuse_bad_input() -> None:
    for modes, reps in ((["off", "off"], 3), ([], 3), (["off"], 0)):
        with pytest.raises(ValueError, match="distinct modes"):
            rotated_orders(modes, reps)


def test_overhead_of_the_means_and_per_repetition() -> None:
    runs = [_run("off", 0, 1000), _run("counts", 0, 950), _run("off", 1, 1100)]
    runs += [_run("counts", 1, 1100), _run("ids", 0, 800)]
    s = summarise(runs, ["off", "ids", "counts"])
    assert s["off"]["output_tok_s_mean"] == 1050
    assert s["counts"]["overhead_pct"] == pytest.approx(100 * (1 - 1025 / 1050), abs=0.01)
    assert s["counts"]["overhead_pct_each_rep"] == [5.0, 0.0]
    assert s["ids"]["overhead_pct_each_rep"] == [20.0]
    assert s["counts"]["overhead_pct_median_of_reps"] == 2.5
    sampled = summarise([_run("off", 0, 100), _run("sampled", 0, 99)], ["off", "sampled"])
    assert sampled["sampled"]["sample_rate"] == SAMPLE_RATE
    assert s["off"].get("overhead_pct") is None
    assert summarise([_run("ids", 0, 1)], ["off", "ids"])["ids"].get("overhead_pct") is None


@pytest.fixture(scope="module")
def results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_report_tables_read_the_recorded_run(results: dict) -> None:
    table = capture_table(results)
    c128 = results["capture_c128"]["summary"]
    assert f"{c128['counts']['output_tok_s_mean']:.0f}" in table
    assert f"{c128['counts']['overhead_pct']:.1f}%" in table
    assert table.count("\n| 128 |") == 4 and table.count("\n| 32 |") == 3
    ratio = results["orchestration"]["summary"]["ratio_full_over_plain"]
    assert f"**{ratio:.3f}**" in orch_table(results)
    assert "512/512" in stream_table(results)
    assert "| 16 |" in agreement_text(results)
    assert agreement_text({}) == "(not run)"


def test_paired_upper_bound_is_the_one_sided_t_bound() -> None:
    # mean 3, SD sqrt(8 / 3) = 1.633, n 4: t(0.95, 3) = 2.3534 -> 3 + 2.3534 * 1.633 / 2
    assert paired_upper_bound([1.0, 3.0, 5.0, 3.0]) == pytest.approx(3 + 2.3534 * 0.8165, abs=0.01)
    assert paired_upper_bound([4.0]) is None
    assert paired_upper_bound([2.0, 2.0]) == pytest.approx(2.0)


def test_report_reads_the_sampled_rates_of_2026_12_01c() -> None:
    path = RESULTS.with_name("gpu_2026-12-01c.json")
    results = json.loads(path.read_text(encoding="utf-8"))
    table = capture_table(results)
    for c in (32, 128):
        s = results[f"capture_c{c}"]["summary"]["sampled10"]
        assert f"| {c} | sampled10 " in table
        assert f"{s['overhead_pct']:.1f}%" in table
    assert results["orchestration"]["capture_sample_rate"] == 0.1


def test_run_d_tables_show_both_capture_rates_with_tools() -> None:
    """Run d (2026-12-01d) repeated the orch phase at two capture rates: each table comes from
    its own entry, and both runs offered tools."""
    run_d = json.loads((RESULTS.parent / "gpu_2026-12-01d.json").read_text(encoding="utf-8"))
    for key in ("orchestration", "orchestration_rate0.1"):
        entry = run_d[key]
        assert entry["calls_with_tools"] > 0 and not entry["json_schema_dropped"]
        ratio = entry["summary"]["ratio_full_over_plain"]
        assert f"**{ratio:.3f}**" in orch_table(run_d, key)
    assert orch_table(run_d) != orch_table(run_d, "orchestration_rate0.1")
