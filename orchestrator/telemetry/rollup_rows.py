"""The ``expert_rollups`` rows in the database: read their sums, add calls to them, and sum
model-call rows into them.

The arithmetic is :mod:`orchestrator.telemetry.rollups` (no database); this module maps it to
the table's columns and blobs. The writer (:mod:`orchestrator.telemetry.store`), the routing
fill (:mod:`orchestrator.telemetry.fill`) and the readers that sum calls themselves
(:class:`~orchestrator.telemetry.read.TelemetryReader` over a batch, or over stale rollups)
all go through it, so a rollup's key is built from a call row in one place
(:func:`call_key`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, cast

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.telemetry.codec import (
    decode_float64,
    decode_int64,
    decode_layer_confidence,
    encode_float64,
    encode_int64,
    stack_counts,
)
from orchestrator.telemetry.rollups import CONFIDENCE_BINS, RollupDelta, RollupKey, bucket_start
from orchestrator.telemetry.schema import (
    ROLLUP_GROUP_COLUMNS,
    ExpertPhaseRollupRecord,
    ExpertRollupRecord,
)

#: The ``expert_rollups`` columns that :func:`rollup_sums` reads, in a Core ``select``.
ROLLUP_COLUMNS = (
    ExpertRollupRecord.bucket_start,
    ExpertRollupRecord.workflow,
    ExpertRollupRecord.node,
    ExpertRollupRecord.expert_routing_source,
    ExpertRollupRecord.model,
    ExpertRollupRecord.shape_key,
    ExpertRollupRecord.moe_layers,
    ExpertRollupRecord.num_experts,
    ExpertRollupRecord.top_k,
    ExpertRollupRecord.calls,
    ExpertRollupRecord.routed_tokens,
    ExpertRollupRecord.counts,
    ExpertRollupRecord.sq_counts,
    ExpertRollupRecord.conf_calls,
    ExpertRollupRecord.conf_tokens,
    ExpertRollupRecord.conf_sum,
    ExpertRollupRecord.conf_hist,
    ExpertRollupRecord.layer_conf_sum,
    ExpertRollupRecord.capture_sampling_rate,
    ExpertRollupRecord.model_family,
)


def rollup_table(phase: str) -> type[ExpertRollupRecord] | type[ExpertPhaseRollupRecord]:
    """The table of a rollup row of ``phase``: ``expert_rollups`` for ``''`` (every call),
    ``expert_phase_rollups`` for ``prefill`` / ``decode``."""
    return ExpertPhaseRollupRecord if phase else ExpertRollupRecord


def rollup_columns(phase: str) -> tuple[Any, ...]:
    """:data:`ROLLUP_COLUMNS` of the table of ``phase`` (see :func:`rollup_table`)."""
    table = rollup_table(phase)
    return tuple(getattr(table, c.key) for c in ROLLUP_COLUMNS)


def rollup_sums(row: Any) -> RollupDelta:
    """The sums held by one ``expert_rollups`` row (an ORM record or a Core row of
    :data:`ROLLUP_COLUMNS`), as arrays: read-only views of its blobs."""
    layers, experts = len(row.moe_layers), row.num_experts
    return RollupDelta(
        calls=row.calls,
        routed_tokens=row.routed_tokens,
        counts=decode_int64(row.counts, (layers, experts)),
        sq_counts=decode_float64(row.sq_counts, (layers, experts)),
        conf_calls=row.conf_calls,
        conf_tokens=row.conf_tokens,
        conf_sum=row.conf_sum,
        conf_hist=decode_int64(row.conf_hist, (CONFIDENCE_BINS,)),
        layer_conf_sum=decode_float64(row.layer_conf_sum, (layers,)),
    )


def new_rollup(key: RollupKey, delta: RollupDelta) -> ExpertRollupRecord | ExpertPhaseRollupRecord:
    """A new row for ``key`` holding ``delta``, in the table of ``key.phase``."""
    fields = {**key.fields(), "moe_layers": list(key.moe_layers)}
    if not key.phase:
        del fields["phase"]
    return rollup_table(key.phase)(
        **fields,
        calls=delta.calls,
        routed_tokens=delta.routed_tokens,
        counts=encode_int64(delta.counts),
        sq_counts=encode_float64(delta.sq_counts),
        conf_calls=delta.conf_calls,
        conf_tokens=delta.conf_tokens,
        conf_sum=delta.conf_sum,
        conf_hist=encode_int64(delta.conf_hist),
        layer_conf_sum=encode_float64(delta.layer_conf_sum),
    )


def add_delta(record: ExpertRollupRecord | ExpertPhaseRollupRecord, delta: RollupDelta) -> None:
    """Add ``delta`` to an existing rollup row in place."""
    total = rollup_sums(record)
    total.merge(delta)
    record.calls = total.calls
    record.routed_tokens = total.routed_tokens
    record.counts = encode_int64(total.counts)
    record.sq_counts = encode_float64(total.sq_counts)
    record.conf_calls = total.conf_calls
    record.conf_tokens = total.conf_tokens
    record.conf_sum = total.conf_sum
    record.conf_hist = encode_int64(total.conf_hist)
    record.layer_conf_sum = encode_float64(total.layer_conf_sum)


def add_to_rollup(session: Session, key: RollupKey, delta: RollupDelta) -> None:
    """Add ``delta`` to the key's rollup row, creating it when missing (inside a transaction)."""
    table = rollup_table(key.phase)
    fields = key.fields()
    where = [getattr(table, c) == fields[c] for c in ROLLUP_GROUP_COLUMNS]
    if key.phase:
        where.append(ExpertPhaseRollupRecord.phase == key.phase)
    found = session.scalars(select(table).where(*where).with_for_update()).first()
    record = cast("ExpertRollupRecord | ExpertPhaseRollupRecord | None", found)
    if record is None:
        session.add(new_rollup(key, delta))
    else:
        add_delta(record, delta)


def rows_delta(rows: Sequence[Any], key: RollupKey) -> RollupDelta:
    """The rollup delta of model-call rows (Core rows) of one group; for a ``key.phase``, of
    that phase of rows that have ``prefill_counts`` (the caller keeps only those), without
    router confidence (it is measured per call, not per phase)."""
    layers = len(key.moe_layers)
    counts = stack_counts([r.expert_counts for r in rows], layers, key.num_experts)
    tokens = np.fromiter((r.routed_tokens for r in rows), dtype=np.int64, count=len(rows))
    layer_conf = np.full((len(rows), layers), np.nan)
    if key.phase:
        prefill = stack_counts([r.prefill_counts for r in rows], layers, key.num_experts)
        prompt = np.fromiter((r.prompt_tokens for r in rows), dtype=np.int64, count=len(rows))
        if key.phase == "prefill":
            counts, tokens = prefill, prompt
        else:
            counts, tokens = counts - prefill, tokens - prompt
        nan = np.full(len(rows), np.nan)
        return RollupDelta.of_calls(counts, tokens, key.top_k, nan, layer_conf)
    for i, r in enumerate(rows):
        conf = decode_layer_confidence(r.layer_confidence, layers)
        if conf is not None:
            layer_conf[i] = conf
    return RollupDelta.of_calls(
        counts,
        tokens,
        key.top_k,
        np.array(
            [
                np.nan if r.mean_router_confidence is None else r.mean_router_confidence
                for r in rows
            ],
            dtype=np.float64,
        ),
        layer_conf,
    )


def call_key(row: Any, phase: str = "", *, source: str | None = None) -> RollupKey:
    """The rollup group of a model-call row (a Core row of
    :data:`~orchestrator.telemetry.schema.ROLLUP_SOURCE_COLUMNS`, or any object with its
    attributes), for ``phase``; ``source`` replaces the row's expert-routing source (a pending
    call's, once its routing is filled)."""
    return RollupKey(
        bucket_start(row.created_at),
        row.workflow,
        row.node,
        row.expert_routing_source if source is None else source,
        row.model,
        tuple(row.moe_layers),
        row.num_experts,
        row.top_k,
        row.capture_sampling_rate,
        row.model_family,
        phase,
    )


def sum_call_rows(
    rows: Iterable[Any],
    sums: dict[RollupKey, RollupDelta],
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    phase: str = "",
) -> None:
    """Add model-call rows (Core rows of ``ROLLUP_SOURCE_COLUMNS``) to ``sums`` by rollup
    group, in place; with ``start`` / ``end``, only calls whose hour is in ``[start, end)``;
    with a ``phase`` (``prefill``, ``decode``), that phase of the calls that have a split
    (``prefill_counts``) under keys of that phase."""
    groups: dict[RollupKey, list[Any]] = {}
    for row in rows:
        if phase and row.prefill_counts is None:
            continue
        key = call_key(row, phase)
        hour = key.bucket_start
        if (start is not None and hour < start) or (end is not None and hour >= end):
            continue
        groups.setdefault(key, []).append(row)
    for key, members in groups.items():
        delta = rows_delta(members, key)
        if key in sums:
            sums[key].merge(delta)
        else:
            sums[key] = delta
