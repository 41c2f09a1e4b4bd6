"""What importing the classifier's result costs: ``Classification`` lives in the light
:mod:`orchestrator.classification`, so the telemetry package, which records it, loads neither
RE2, rapidfuzz, the ``regex`` module nor the learned tier (issue 48). Each check runs in a fresh
interpreter and reads ``sys.modules`` after the import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Modules that only classifying needs (the matcher, the n-gram tier and their libraries).
HEAVY = ("re2", "_re2", "rapidfuzz", "regex", "orchestrator.classifier.core",
         "orchestrator.classifier.engine", "orchestrator.classifier.learned")  # fmt: skip


def _loaded_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import orchestrator.telemetry",
        "from orchestrator.classifier import Classification",
        "from orchestrator.classification import Classification",
    ],
)
def test_the_result_loads_without_the_classifier(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_the_classifier_itself_still_loads_them() -> None:
    """The check above can fail: classifying does load the matcher and the learned tier."""
    loaded = _loaded_after("from orchestrator.classifier import RuleClassifier")
    assert {"re2", "rapidfuzz", "orchestrator.classifier.learned"} <= loaded


def test_one_class_under_both_names() -> None:
    from orchestrator.classification import Classification as Light
    from orchestrator.classifier import Classification
    from orchestrator.classifier.models import Classification as FromModels

    assert Classification is Light is FromModels
