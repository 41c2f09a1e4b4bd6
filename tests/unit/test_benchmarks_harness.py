"""The shared benchmark harness (benchmarks/harness.py) and the rules every benchmark keeps."""

from __future__ import annotations

import ast
import errno
import importlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from benchmarks import harness
from benchmarks.harness import (
    QUICK_DIR,
    BenchParser,
    atomic_write_text,
    percentile,
    summarise,
    time_repeated,
    write_results,
)
from orchestrator.exceptions import UserError

BENCHMARKS = Path(harness.__file__).resolve().parent
PROJECT_PACKAGES = {"orchestrator", "serving", "skills", "workflows"}
MODULES = sorted(
    ".".join(p.relative_to(BENCHMARKS.parent).with_suffix("").parts)
    for p in BENCHMARKS.rglob("*.py")
    if p.name != "__main__.py"
)
SCRIPTS = [
    "benchmarks.classifier_bench",
    "benchmarks.skew_bench",
    "benchmarks.spreadsheet_read_bench",
    "benchmarks.moderation_throughput",
    "benchmarks.gpu_decode",
    "benchmarks.gpu_report",
    "benchmarks.gpu_faults",
    "benchmarks.gpu.cli",
]


@pytest.mark.parametrize("method", ["linear", "nearest", "lower"])
@pytest.mark.parametrize("n", [1, 2, 7, 100, 1001])
def test_percentile_matches_numpy(method: str, n: int) -> None:
    values = np.random.default_rng(n).lognormal(size=n)
    for q in (0, 1, 10, 50, 90, 99, 100):
        expected = float(np.percentile(values, q, method=method))
        assert percentile(values.tolist(), q, method=method) == pytest.approx(expected)


def test_percentile_of_nothing_is_none_and_q_is_checked() -> None:
    assert percentile([], 50) is None
    with pytest.raises(ValueError, match=r"outside 0\.\.100"):
        percentile([1.0], 101)


def test_summary_scales_to_the_unit_in_its_names() -> None:
    seconds = np.random.default_rng(0).uniform(0.001, 0.01, 200)
    out = summarise(seconds.tolist(), "us")
    assert out["n"] == 200
    assert out["mean_us"] == pytest.approx(seconds.mean() * 1e6)
    assert out["p50_us"] == pytest.approx(np.median(seconds) * 1e6)
    assert out["p99_us"] == pytest.approx(np.percentile(seconds, 99) * 1e6)


def test_time_repeated_warms_up_then_times_each_call() -> None:
    calls: list[int] = []
    timing = time_repeated(lambda: calls.append(1), 5, warmup=2)
    assert len(calls) == 7
    assert len(timing.samples_s) == 5
    assert all(s >= 0 for s in timing.samples_s)
    assert set(timing.summary("ms")) == {"n", "mean_ms", "p50_ms", "p99_ms"}


def test_results_that_are_not_json_leave_no_file(tmp_path: Path) -> None:
    (tmp_path / "bench.json").write_text('{"old": true}\n')
    with pytest.raises(TypeError):
        write_results(tmp_path, "bench", {"bad": object()}, "# md", command="python -m x")
    assert json.loads((tmp_path / "bench.json").read_text()) == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench.json"]  # no .md, no temp file


def test_a_failed_write_keeps_the_old_file_and_no_temp_file(
    tmp_path: Path, failing_replace: Callable[[int], None]
) -> None:
    target = tmp_path / "r.md"
    target.write_text("old")
    failing_replace(errno.ENOSPC)
    with pytest.raises(UserError, match=r"cannot write .*r\.md: No space left on device"):  # 1 line
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]


def test_the_reproducing_command_and_date_are_recorded(tmp_path: Path) -> None:
    parser = BenchParser("benchmarks.example", "An example.", repeat=3, repeat_aliases=("--runs",))
    args = parser.parse_args(["--runs", "5", "--out", str(tmp_path)])
    assert args.repeat == 5
    assert args.command == f"python -m benchmarks.example --runs 5 --out {tmp_path}"
    json_path, md_path = write_results(
        args.out, "example", {"median_s": 1.5}, "# Example\n", command=args.command
    )
    data = json.loads(json_path.read_text())
    assert data["median_s"] == 1.5
    assert data["reproduce"]["command"] == args.command
    assert data["reproduce"]["date"][:4].isdigit()
    assert md_path is not None
    assert md_path.read_text().rstrip().endswith(f"`{args.command}`")


def test_a_script_passes_its_name_and_docstring() -> None:
    parser = BenchParser("example", "An example.\n\nMore about it.\n", repeat=None, quick=False)
    assert parser.prog == "python -m benchmarks.example"
    assert parser.description == "An example."
    assert parser.parse_args([]).command == "python -m benchmarks.example"


def test_quick_runs_write_outside_the_committed_results(tmp_path: Path) -> None:
    parser = BenchParser("benchmarks.example", "An example.", repeat=1)
    assert parser.parse_args(["--quick"]).out == QUICK_DIR
    assert parser.parse_args([]).out == harness.RESULTS_DIR
    json_path, md_path = write_results(tmp_path / "x.json", "ignored", {}, None, command="c")
    assert json_path == tmp_path / "x.json"
    assert md_path is None


@pytest.mark.parametrize("path", sorted(BENCHMARKS.rglob("*.py")), ids=lambda p: p.name)
def test_benchmarks_import_no_private_project_names(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    private = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] not in PROJECT_PACKAGES:
                continue
            private += [node.module] if any(p.startswith("_") for p in parts) else []
            private += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in PROJECT_PACKAGES and any(p.startswith("_") for p in parts):
                    private.append(alias.name)
    assert private == [], f"{path} imports private project names: {private}"


@pytest.mark.parametrize("module", MODULES)
def test_every_benchmark_module_imports_on_a_cpu_machine(module: str) -> None:
    assert importlib.import_module(module).__doc__


@pytest.mark.parametrize("module", SCRIPTS)
def test_every_script_answers_help(module: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        importlib.import_module(module).main(["--help"])
    assert exit_info.value.code == 0
    assert "usage: python -m benchmarks." in capsys.readouterr().out


def test_dense_layer_check_uses_the_public_decoder() -> None:
    from benchmarks.gpu.replay import dense_rows_all_zero
    from benchmarks.gpu_decode import ERNIE_21B, synthetic_body
    from serving import encode_routed_experts

    body = synthetic_body(prompt=5, completion=4)
    choice = body["choices"][0]
    assert dense_rows_all_zero(choice, body, 5, ERNIE_21B)
    ids = np.zeros((8, 28, 6), dtype=np.uint8)
    ids[3, 0, 2] = 9  # a non-zero row in dense layer 0
    choice["routed_experts"] = encode_routed_experts(ids)
    assert not dense_rows_all_zero(choice, body, 5, ERNIE_21B)


def test_load_percentiles_keep_the_nearest_sample_rule() -> None:
    from benchmarks.gpu.load import pct

    values = np.random.default_rng(3).random(37).tolist()
    ordered = sorted(values)
    for q in (0.5, 0.99):
        assert pct(values, q) == ordered[min(36, round(q * 36))]
    assert pct([], 0.5) is None


def test_real_requests_interleave_the_sources_and_stop_when_they_run_out(tmp_path: Path) -> None:
    lengths = (3, 1, 2, 0, 1)
    for k, ((folder, name), rows) in enumerate(zip(harness.REQUEST_SOURCES, lengths, strict=True)):
        (tmp_path / folder).mkdir(exist_ok=True)
        body = "".join(f"s{k}r{r}{'x' * 600 if r == 0 else ''}\n" for r in range(rows))
        (tmp_path / folder / name).write_text("text\n" + body, encoding="utf-8")
    texts = harness.real_requests(tmp_path, 100)  # more than the 7 rows there are
    assert [t[:4] for t in texts] == ["s0r0", "s1r0", "s2r0", "s4r0", "s0r1", "s2r1", "s0r2"]
    assert max(map(len, texts)) == 500  # each text cut to 500 characters
    assert harness.real_requests(tmp_path, 2) == texts[:2]


def test_real_requests_name_a_missing_source(tmp_path: Path) -> None:
    from orchestrator.exceptions import UserError

    with pytest.raises(UserError, match=r"banking77_sample\.csv"):
        harness.real_requests(tmp_path, 5)


@pytest.mark.parametrize(
    ("ignores_ctrl_c", "status"),
    [(False, None), (True, -signal.SIGKILL)],
    ids=["stops-on-ctrl-c", "killed-after-grace"],
)
def test_stop_process_group_sends_ctrl_c_then_kills_what_ignores_it(
    ignores_ctrl_c: bool, status: int | None
) -> None:
    ignore = "signal.signal(signal.SIGINT, signal.SIG_IGN); " if ignores_ctrl_c else ""
    code = f"import signal, time; {ignore}print('ready', flush=True); time.sleep(60)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    started = time.monotonic()
    harness.stop_process_group(proc, grace_s=1.0)
    proc.stdout.close()
    assert proc.returncode is not None and time.monotonic() - started < 30
    if status is None:  # Ctrl-C: Python's KeyboardInterrupt exit, not a kill
        assert proc.returncode not in (0, -signal.SIGKILL)
    else:
        assert proc.returncode == status
