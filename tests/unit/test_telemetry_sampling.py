"""Sampled expert capture in the telemetry (migration 0005) and the analysis that weights it;
the classifier tier that decided each route."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from rich.console import Console
from sqlalchemy import create_engine, text

from orchestrator import Request, RuleClassifier, TelemetryStore
from orchestrator.analysis.load import expert_load
from orchestrator.analysis.sampling import sampling_label
from orchestrator.analysis.skew import ReportOptions, build_report
from orchestrator.analysis.skew.report_html import render_html
from orchestrator.analysis.skew.terminal import summary
from orchestrator.classifier import Classification
from orchestrator.telemetry.migrate import alembic_config
from orchestrator.telemetry.rollups import RollupDelta, weighted
from serving import ExpertRoutingTrace
from tests.unit.skew_data import add_request, routing_trace

LAYERS, EXPERTS, TOP_K = (1, 2), 8, 2


#: An engine trace on this file's MoE shape: ``_shaped(tokens, **data)``.
_shaped = partial(routing_trace, layers=LAYERS, experts=EXPERTS, top_k=TOP_K)


def _trace(counts: np.ndarray, rate: float = 1.0) -> ExpertRoutingTrace:
    """An engine trace carrying per-call counts ``(2, 8)`` (rows sum to tokens * top_k)."""
    tokens = int(counts[0].sum()) // TOP_K
    return _shaped(tokens, counts=counts, capture_sampling_rate=rate)


def _counts(rng: np.random.Generator, tokens: int, hot: int | None = None) -> np.ndarray:
    """Counts of ``tokens`` tokens choosing 2 distinct experts per layer; ``hot`` always one."""
    out = np.zeros((len(LAYERS), EXPERTS), dtype=np.int64)
    for layer in range(len(LAYERS)):
        for _ in range(tokens):
            pick = rng.choice(EXPERTS, size=TOP_K, replace=False)
            if hot is not None and hot not in pick:
                pick[0] = hot
            out[layer, pick] += 1
    return out


def _record(store: TelemetryStore, rid: str, calls: list[Any]) -> None:
    """Request ``rid`` ("refund my order", as the ``classification`` fixture classifies it)
    and its ``(node, trace)`` calls."""
    add_request(store, "refund my order", "cs", calls, request_id=rid, model="m")


@pytest.fixture
def classification() -> Classification:
    return RuleClassifier().classify(Request(text="refund my order"))


def test_rate_and_deciding_tier_are_stored_and_rates_get_their_own_rollup_rows(
    tmp_path: Path, classification: Classification
) -> None:
    assert classification.decided_by is not None  # the rule tier decides this one
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(0)
    a, b, c = _counts(rng, 10), _counts(rng, 7), _counts(rng, 5)
    _record(store, "r1", [("n", _trace(a, 0.25)), ("n", _trace(b, 1.0))])
    _record(store, "r2", [("n", _trace(c, 0.25))])
    calls = store.calls()
    assert sorted(r.capture_sampling_rate for r in calls) == [0.25, 0.25, 1.0]
    assert {r.decided_by for r in calls} == {classification.decided_by}
    assert {r.decided_by for r in store.requests()} == {classification.decided_by}
    rows = {r.capture_sampling_rate: r for r in store.iter_rollups()}
    assert set(rows) == {0.25, 1.0}  # same hour, node and shape: split by rate only
    assert rows[0.25].sums.calls == 2 and np.array_equal(rows[0.25].sums.counts, a + c)
    assert np.array_equal(rows[1.0].sums.counts, b)
    before = sorted((r.capture_sampling_rate, r.sums.counts.tolist()) for r in rows.values())
    assert store.rebuild_rollups() == 3
    after = sorted((r.capture_sampling_rate, r.sums.counts.tolist()) for r in store.iter_rollups())
    assert before == after
    store.close()


@pytest.mark.parametrize("rate", [0.0, -0.5, 1.5, math.nan])
def test_a_trace_refuses_a_rate_outside_0_1(rate: float) -> None:
    with pytest.raises(ValidationError, match="capture_sampling_rate"):
        _trace(np.full((2, 8), 2, dtype=np.int64), rate)


def test_weighted_scales_sums_keeps_sample_sizes_and_refuses_bad_rates() -> None:
    delta = RollupDelta.of_calls(
        np.array([[[4, 0], [2, 2]], [[1, 3], [0, 4]]]),
        np.array([2, 2]),
        2,
        np.array([0.5, np.nan]),
        np.array([[0.5, 0.5], [np.nan, np.nan]]),
    )
    assert weighted(delta, 1.0) is delta
    w = weighted(delta, 0.25)
    assert np.allclose(w.counts, delta.counts * 4) and np.allclose(w.sq_counts, delta.sq_counts * 4)
    assert (w.calls, w.conf_calls) == (delta.calls, delta.conf_calls)  # sample sizes
    assert w.routed_tokens == 16 and w.conf_sum == pytest.approx(delta.conf_sum * 4)
    for bad in (0.0, 2.0, math.nan, -1.0):
        with pytest.raises(ValueError, match=r"\(0, 1\]"):
            weighted(delta, bad)


def test_sampling_label_states_every_rate() -> None:
    assert sampling_label({1.0: 12}) == "capture sampling rate 1 (every call captured)"
    one = sampling_label({0.25: 812})
    assert "0.25" in one and "812" in one and "x4" in one
    mixed = sampling_label({1.0: 40, 0.1: 3})
    assert "0.1 (3 calls, x10)" in mixed and "1 (40 calls, x1)" in mixed and "1/rate" in mixed
    assert "no captured call" in sampling_label({})
    with pytest.raises(ValueError):
        sampling_label({0.0: 3})


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    calls=st.lists(
        st.tuples(st.sampled_from([1.0, 0.5, 0.25, 0.1]), st.integers(1, 12), st.booleans()),
        min_size=1,
        max_size=8,
    ),
    seed=st.integers(0, 2**16),
)
def test_load_shares_weight_each_call_by_the_inverse_of_its_rate(
    tmp_path_factory: pytest.TempPathFactory,
    calls: list[tuple[float, int, bool]],
    seed: int,
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path_factory.mktemp('w') / 't.db'}")
    rng = np.random.default_rng(seed)
    expected = np.zeros((len(LAYERS), EXPERTS))
    rates: dict[float, int] = {}
    traces = []
    for rate, tokens, hot in calls:
        counts = _counts(rng, tokens, hot=3 if hot else None)
        expected += counts / rate
        rates[rate] = rates.get(rate, 0) + 1
        traces.append(("n", _trace(counts, rate)))
    _record(store, "r", traces)
    load = expert_load(store)
    assert load.sampling_rates == rates and load.calls == len(calls)
    assert load.capture_sampling == sampling_label(rates)
    for i, layer in enumerate(load.layers):
        assert np.allclose(layer.shares, expected[i] / expected[i].sum())
        assert layer.activations == round(expected[i].sum())
    # the skew report reads the rollups: the same weights
    report = build_report(store, ReportOptions(window="all"))
    assert report.capture_sampling_rates == rates
    shares = np.array([layer.shares for layer in report.overall.layers])
    assert np.allclose(shares, expected / expected.sum(axis=1, keepdims=True))
    store.close()


def test_every_table_of_the_report_states_the_rate(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(1)
    _record(store, "r", [("n", _trace(_counts(rng, 40), 0.25)) for _ in range(6)])
    report = build_report(store, ReportOptions(window="all"))
    label = report.capture_sampling
    assert "0.25" in label and "x4" in label and label in report.notes
    console = Console(width=400, record=True)
    console.print(summary(report))
    printed = console.export_text()
    flat = " ".join(printed.split())  # titles wrap
    # the header, the scope, alarm and outlier tables, and the notes
    assert flat.count("capture sampling rate 0.25 (6 captured calls, each weighted x4)") == 5
    assert "Outlier requests" in printed
    page = render_html(report)
    assert page.count("<h2>") == page.count(f"({label})</span></h2>")
    assert '"capture_sampling_rates":{"0.25":6}' in report.model_dump_json()
    store.close()


def test_rollups_written_before_0005_read_as_rate_1_and_downgrade_refuses_sampled_rows(
    tmp_path: Path,
) -> None:
    from alembic import command

    url = f"sqlite:///{tmp_path / 't.db'}"
    engine = create_engine(url)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0004")
        connection.execute(
            text(
                "INSERT INTO requests (id, received_at, text, route, route_confidence, "
                "classifier_signals, status) VALUES ('old', '2026-12-01 00:00:00', 'x', "
                "'customer_service', 0.9, '[]', 'succeeded')"
            )
        )
    engine.dispose()
    store = TelemetryStore(url)  # upgrades to head
    (old,) = store.requests()
    assert old.decided_by is None  # unknown for rows written before
    _record(store, "new", [("n", _trace(np.full((2, 8), 2), 0.5))])
    store.close()
    engine = create_engine(url)
    with engine.begin() as connection, pytest.raises(RuntimeError, match="sampled calls"):
        command.downgrade(alembic_config(connection), "0004")
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM expert_rollups"))
        command.downgrade(alembic_config(connection), "0004")
        columns = [r[1] for r in connection.execute(text("PRAGMA table_info(model_calls)"))]
    assert "capture_sampling_rate" not in columns and "decided_by" not in columns
    engine.dispose()
