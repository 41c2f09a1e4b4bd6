"""An outside workflow package (tests/fixtures/faq_workflow), installed by a real install into
a folder of its own: found by its entry point, its route declared by the package alone, routed
by its rules, run (ScriptedModel), recorded, with its own skew fingerprint and its rows in a
batch's results. Nothing in the project's code names it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tests" / "fixtures" / "faq_workflow"


def _run(args: list[str], pythonpath: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_the_project_imports_the_outside_package_nowhere() -> None:
    imports = re.compile(r"^\s*(from|import)\s+faq_workflow\b", re.MULTILINE)
    for folder in ("orchestrator", "workflows", "skills", "serving"):
        for path in (ROOT / folder).rglob("*.py"):
            assert imports.search(path.read_text(encoding="utf-8")) is None, path


def test_an_outside_package_is_routed_run_recorded_and_reported(tmp_path: Path) -> None:
    site, source = tmp_path / "site", tmp_path / "source"
    # built from a copy: the build leaves build/ and an .egg-info beside its source, and an
    # .egg-info on sys.path would register the workflow for every later test of the session
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    built = _run([*pip, "--no-build-isolation", "--target", str(site), str(source)], "", ROOT)
    assert built.returncode == 0, built.stderr
    assert (site / "faq_workflow" / "faq.toml").exists()  # its data file went with it
    run = _run(
        [sys.executable, str(PACKAGE / "run_outside.py"), str(tmp_path)], str(site), tmp_path
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert "faq" in seen["found"]
    assert (seen["route"], seen["workflow"], seen["status"]) == ("faq", "faq", "succeeded")
    # the scripted wording did not state the FAQ's fact, so the FAQ's own answer was kept
    assert seen["result"]["entry"] == "printing"
    assert seen["result"]["answer"].startswith("The printer is on the second floor")
    assert seen["result"]["worded_by_model"] is False
    assert seen["nodes"] == ["word_answer"]  # its model call, recorded
    assert "workflow:faq" in seen["fingerprints"]
    assert "node:faq/word_answer" in seen["fingerprints"]
    routes = {route: (status, output) for route, status, output in seen["batch"]}
    assert routes["faq"][0] == "succeeded"
    assert routes["faq"][1].startswith("The printer is on the second floor")
    assert routes["customer_service"][0] == "succeeded"
