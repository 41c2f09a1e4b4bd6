"""Alerts (issue 51 item 2): the skew gauges, the example rules, and a planted drift firing.

The rules file is parsed with PyYAML and its expressions must name exported gauges; where
Debian's ``prometheus`` package is installed, ``promtool check rules`` and ``promtool test
rules`` run too (the drift test then feeds promtool the gauge values two real reports wrote).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from orchestrator import TelemetryStore
from orchestrator.analysis.skew import ReportOptions, build_report
from orchestrator.analysis.skew.alerts import write_prom_file
from orchestrator.observability.skew_metrics import SKEW_REGISTRY
from tests.unit.skew_data import T0, add_request, freeze_time, trace, uniform

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian: prometheus)")


def _exported() -> set[str]:
    return {m.name for m in SKEW_REGISTRY.collect()}


def test_every_rule_expression_names_exported_gauges_and_every_alert_is_described() -> None:
    groups = yaml.safe_load(RULES.read_text(encoding="utf-8"))["groups"]
    rules = [rule for group in groups for rule in group["rules"]]
    assert {r["alert"] for r in rules} >= {"ExpertRoutingDrift", "ExpertHot", "ExpertDead"}
    exported = _exported()
    for rule in rules:
        names = set(re.findall(r"\b(orchestrator_[a-z_]+)", rule["expr"]))
        assert names and names <= exported, (rule["alert"], names - exported)
        assert rule["labels"]["severity"] in {"info", "warning", "critical"}
        assert rule["annotations"]["summary"]


@needs_promtool
def test_promtool_accepts_the_rules_and_their_unit_tests() -> None:
    assert PROMTOOL is not None
    for args in (["check", "rules", RULES.name], ["test", "rules", "alerts_test.yml"]):
        done = subprocess.run(
            [PROMTOOL, *args], cwd=RULES.parent, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout + done.stderr


def _hour(store: TelemetryStore, rng: np.random.Generator, hour: int, drifted: bool) -> None:
    clean = uniform()
    moved = clean.copy()
    moved[1, 9] *= 5.0  # layer 2: expert 9 five times as busy
    moved[1] /= moved[1].sum()
    with pytest.MonkeyPatch.context() as mp:
        for i in range(60):
            freeze_time(mp, store, T0 + timedelta(hours=hour, minutes=i % 60))
            for workflow in ("billing_zh", "abuse_reports"):
                shares = moved if drifted and workflow == "abuse_reports" else clean
                add_request(
                    store, f"{workflow} {hour} {i}", workflow, [("n", trace(rng, shares, 60))]
                )


def _gauges(path: Path) -> dict[tuple[str, str], float]:
    out = {}
    for family in text_string_to_metric_families(path.read_text(encoding="utf-8")):
        for sample in family.samples:
            out[(sample.name, sample.labels.get("workflow", ""))] = sample.value
    return out


def test_a_planted_drift_fires_within_one_window(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    rng = np.random.default_rng(5)
    for hour, drifted in ((0, False), (1, False), (2, True)):
        _hour(store, rng, hour, drifted)
    values = []
    try:
        for end in (2, 3):  # the report of hour 1 (clean), then of hour 2 (drifted)
            report = build_report(
                store, ReportOptions(window="1h", until=T0 + timedelta(hours=end))
            )
            values.append(_gauges(write_prom_file(report, tmp_path / f"skew{end}.prom")))
    finally:
        store.close()
    before, after = values
    key = ("orchestrator_expert_drifted_layers", "abuse_reports")
    assert before[key] == 0 and after[key] >= 1  # within the first window that holds it
    assert after[("orchestrator_expert_drifted_layers", "billing_zh")] == 0  # no false alarm
    assert after[("orchestrator_expert_hot_experts", "all")] == 0
    if PROMTOOL is not None:  # the real rule on the real values, one report an hour apart
        _promtool_fires(tmp_path, before[key], after[key])


def _promtool_fires(folder: Path, first: float, second: float) -> None:
    assert PROMTOOL is not None
    shutil.copy(RULES, folder / "alerts.yml")
    test = {
        "rule_files": ["alerts.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1h",
                "input_series": [
                    {
                        "series": 'orchestrator_expert_drifted_layers{workflow="abuse_reports"}',
                        "values": f"{first:g} {second:g}",
                    }
                ],
                "alert_rule_test": [
                    {"eval_time": "0m", "alertname": "ExpertRoutingDrift", "exp_alerts": []},
                    {
                        "eval_time": "1h",
                        "alertname": "ExpertRoutingDrift",
                        "exp_alerts": [
                            {
                                "exp_labels": {"severity": "warning", "workflow": "abuse_reports"},
                                "exp_annotations": {
                                    "summary": "Expert routing of abuse_reports drifted in "
                                    f"{second:g} MoE layer(s)"
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }
    (folder / "drift_test.yml").write_text(yaml.safe_dump(test), encoding="utf-8")
    done = subprocess.run(
        [PROMTOOL, "test", "rules", "drift_test.yml"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
