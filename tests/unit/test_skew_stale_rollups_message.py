"""Stale rollups without ``--rebuild``: the error names the opt-in flag (skew no longer rebuilds by
default)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from skew_data import add_request, trace, uniform
from sqlalchemy import delete

from orchestrator import TelemetryStore
from orchestrator.analysis.skew.report import ReportOptions, build_report
from orchestrator.exceptions import UserError
from orchestrator.telemetry import ExpertRollupRecord


def test_stale_rollups_without_rebuild_say_run_with_rebuild(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(2)
    add_request(store, "refund", "customer_service", [("triage", trace(rng, uniform(), 30))])
    with store.engine.begin() as connection:  # rollups of an older version: missing
        connection.execute(delete(ExpertRollupRecord))
    with pytest.raises(UserError, match=r"cover 0 of 1 calls; run with --rebuild") as err:
        build_report(store, ReportOptions(window="all", rebuild=False))
    assert "--no-rebuild" not in str(err.value)
