"""The skew benchmark's generator (issue 51 acceptance) writes what the product would:
its rollups equal those ``TelemetryStore.rebuild_rollups`` sums from the same call rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from benchmarks import skew_bench
from orchestrator.analysis.skew import ReportOptions, build_report
from orchestrator.telemetry import TelemetryStore
from orchestrator.telemetry.rollup_rows import rollup_columns, rollup_sums
from orchestrator.telemetry.schema import ExpertPhaseRollupRecord


def _rollups(store: TelemetryStore) -> dict[tuple[Any, ...], Any]:
    """Every rollup row's sums by its group, the phase rows' with their phase."""
    group = ("bucket_start", "workflow", "node", "expert_routing_source", "model", "shape_key")
    group += ("capture_sampling_rate", "model_family")
    out = {}
    with store.engine.connect() as connection:
        for phase in ("", "prefill", "decode"):
            query = select(*rollup_columns(phase))
            if phase:
                query = query.where(ExpertPhaseRollupRecord.phase == phase)
            for r in connection.execute(query).all():
                out[(phase, *(getattr(r, c) for c in group))] = rollup_sums(r)
    return out


def test_generated_rollups_are_the_stores_own(tmp_path: Path) -> None:
    path = tmp_path / "bench.db"
    # an odd chunk: request rows straddle chunks; fresh and pooled draws both used
    skew_bench.generate(path, 3001, chunk=777, fresh=1000, pool=32)
    store = TelemetryStore(f"sqlite:///{path}")
    assert store.rollup_status() == (3001, 3001)
    assert store.count_calls() == 3001 and len(store.requests()) == 1501
    written = _rollups(store)
    store.rebuild_rollups()
    rebuilt = _rollups(store)
    assert written.keys() == rebuilt.keys() and len(written) > 3000
    assert {k[0] for k in written} == {"", "prefill", "decode"}
    for key, mine in written.items():
        theirs = rebuilt[key]
        assert (mine.calls, mine.routed_tokens, mine.conf_calls, mine.conf_tokens) == (
            theirs.calls,
            theirs.routed_tokens,
            theirs.conf_calls,
            theirs.conf_tokens,
        )
        assert np.array_equal(mine.counts, theirs.counts)
        assert np.array_equal(mine.conf_hist, theirs.conf_hist)
        # float sums in another order: equal to rounding
        np.testing.assert_allclose(mine.sq_counts, theirs.sq_counts, rtol=1e-12)
        np.testing.assert_allclose(mine.layer_conf_sum, theirs.layer_conf_sum, rtol=1e-12)
        assert np.isclose(mine.conf_sum, theirs.conf_sum, rtol=1e-12)
    # the planted experts are what the report finds
    report = build_report(store, ReportOptions(window="all"))
    assert report.overall.dead() == [(9, 40)] and (5, 12) in report.overall.hot()
    assert report.phases is not None and report.phases.split_calls == 3001
    phases = {p.name: p for p in report.phases.profiles}
    assert (7, 30) in phases["decode"].hot() and (7, 30) not in phases["prefill"].hot()
    assert (7, 30) not in report.overall.hot()
    store.close()
