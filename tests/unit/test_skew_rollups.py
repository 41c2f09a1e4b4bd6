"""Rollups kept at write time, compact count blobs, and the rebuild for older databases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from skew_data import EXPERTS, LAYERS, add_request, trace, uniform
from sqlalchemy import delete

from orchestrator import TelemetryStore
from orchestrator.exceptions import TelemetryError, UserError
from orchestrator.telemetry import (
    ExpertRollupRecord,
    ModelCallRecord,
    RollupStatus,
    decode_counts,
    decode_counts_blob,
    encode_counts,
)


@pytest.mark.parametrize(("top", "width"), [(200, 1), (255, 1), (256, 2), (65_535, 2), (70_000, 4)])
def test_counts_use_the_smallest_width_and_decode_to_int32(top: int, width: int) -> None:
    counts = np.zeros((3, 8), dtype=np.int64)
    counts[1, 2] = top
    blob = encode_counts(counts)
    assert len(blob) == 3 * 8 * width
    decoded = decode_counts_blob(blob, 3, 8)
    assert decoded.dtype == np.int32 and (decoded == counts).all()


def test_old_int32_blobs_still_decode_and_bad_ones_are_named() -> None:
    counts = np.arange(24, dtype="<i4").reshape(3, 8)
    assert (decode_counts_blob(counts.tobytes(), 3, 8) == counts).all()
    with pytest.raises(TelemetryError, match="does not hold 3x8"):
        decode_counts_blob(b"\0" * 30, 3, 8)
    with pytest.raises(UserError, match="negative"):
        encode_counts(np.array([[-1, 2]]))


def test_write_time_rollups_equal_a_rebuild_from_the_calls(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(0)
    for i in range(6):
        add_request(
            store,
            f"refund {i}",
            "customer_service",
            [("triage", trace(rng, uniform(), 20 + i)), ("reply", trace(rng, uniform(), 9))],
        )
    busy = uniform()
    busy[:, 0] = 1e6  # expert 0 takes every token: a count of 300 needs 2 bytes
    add_request(
        store, "post", "moderation", [("judge", trace(rng, busy / busy.sum(1)[:, None], 300))]
    )

    def snapshot() -> dict:
        out = {}
        for r in store.iter_rollups():
            d = r.sums
            out[(r.workflow, r.node)] = (
                d.calls,
                d.routed_tokens,
                d.counts.copy(),
                d.sq_counts.copy(),
                d.conf_hist.copy(),
                d.conf_sum,
            )
        return out

    written = snapshot()
    assert store.rollup_status() == (13, 13)
    assert set(written) == {
        ("customer_service", "triage"),
        ("customer_service", "reply"),
        ("moderation", "judge"),
    }
    # the rollup sums what the calls hold
    triage = [
        decode_counts(c) for c in store.calls(workflow="customer_service") if c.node == "triage"
    ]
    assert (written[("customer_service", "triage")][2] == np.sum(triage, axis=0)).all()
    # a call of 300 tokens has counts above 255: stored as uint16, read back exactly
    judge = store.calls(workflow="moderation")[0]
    assert len(judge.expert_counts) == len(LAYERS) * EXPERTS * 2
    assert decode_counts(judge).sum(axis=1).tolist() == [300 * 2] * len(LAYERS)

    assert store.rebuild_rollups(chunk=4, max_pending=1) == 13
    rebuilt = snapshot()
    for key, (calls, tokens, counts, sq, hist, conf) in written.items():
        r_calls, r_tokens, r_counts, r_sq, r_hist, r_conf = rebuilt[key]
        assert (calls, tokens) == (r_calls, r_tokens)
        assert (counts == r_counts).all() and (hist == r_hist).all()
        assert sq == pytest.approx(r_sq) and conf == pytest.approx(r_conf, rel=1e-6)


def test_a_database_without_rollups_is_detected(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(1)
    add_request(store, "refund", "customer_service", [("triage", trace(rng, uniform(), 30))])
    with store.engine.begin() as connection:  # what a database of an older version looks like
        connection.execute(delete(ExpertRollupRecord))
    assert store.rollup_status() == RollupStatus(calls=1, summed=0)
    store.rebuild_rollups()
    assert store.rollup_status() == (1, 1)


def test_the_status_counts_routed_calls_per_source_from_the_index(tmp_path: Path) -> None:
    """rollup_status reads the source index, not every call's row, where a source's rollups
    cover its calls; a source with calls outside its rollups (calls without routing, or
    bulk-loaded calls) is counted exactly."""
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(3)
    for text in ("refund", "退款", "late parcel"):
        add_request(store, text, "customer_service", [("triage", trace(rng, uniform(), 20))])
    assert store.rollup_status() == (3, 3)
    columns = [c.name for c in ModelCallRecord.__table__.columns if c.name != "id"]

    def copy(source: str, *, counts: bool) -> None:
        values = [
            f"'{source}'"
            if c == "expert_routing_source"
            else ("expert_counts" if counts else "NULL")
            if c == "expert_counts"
            else c
            for c in columns
        ]
        with store.engine.begin() as connection:
            connection.exec_driver_sql(
                f"INSERT INTO model_calls ({', '.join(columns)}) "
                f"SELECT {', '.join(values)} FROM model_calls WHERE id = 1"
            )

    source = store.calls()[0].expert_routing_source
    copy("unavailable", counts=False)  # a call without routing: outside every rollup
    copy("pending", counts=False)
    assert store.rollup_status() == (3, 3)
    copy(source, counts=True)  # bulk-loaded into a source that has rollups
    assert store.rollup_status() == (4, 3)
    copy("unavailable", counts=True)  # and into a source that has none
    assert store.rollup_status() == (5, 3)
    store.rebuild_rollups()
    assert store.rollup_status() == (5, 5)
    with store.engine.begin() as connection:  # an older database: no rollup at all
        connection.execute(delete(ExpertRollupRecord))
    assert store.rollup_status() == (5, 0)
