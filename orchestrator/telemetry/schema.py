"""The telemetry tables as SQLAlchemy 2.0 ORM classes (the head revision of the migrations).

Seven tables; every change to them is an Alembic migration in
``orchestrator/telemetry/migrations/versions`` (see :mod:`orchestrator.telemetry.migrate`):

* ``requests`` (:class:`RequestRecord`): one row per handled request.
* ``model_calls`` (:class:`ModelCallRecord`): one row per model call, with the call's expert
  counts as a blob (:mod:`orchestrator.telemetry.codec`), never one row per token.
* ``expert_rollups`` (:class:`ExpertRollupRecord`): hourly sums of the calls' counts
  (:mod:`orchestrator.telemetry.rollups`), so reports read a few aggregates.
* ``expert_phase_rollups`` (:class:`ExpertPhaseRollupRecord`): the same sums for prefill and
  decode apart, of the calls whose source kept them apart.
* ``pending_expert_routing`` (:class:`PendingExpertRoutingRecord`): the token ids of calls
  whose expert routing is ``pending`` (replay deferred off the request path), until the
  replay worker (:mod:`orchestrator.telemetry.fill`) fills the call and deletes the row.
* ``batches`` and ``batch_rows`` (:class:`BatchRecord`, :class:`BatchRowRecord`): the
  progress of batch jobs, one row per finished input row (:mod:`orchestrator.telemetry.batches`).

Types are portable: ``JSON`` is SQLite text or PostgreSQL ``json``; ``LargeBinary`` is a SQLite
blob or ``bytea``; ``DateTime(timezone=True)`` is a naive UTC text in SQLite (read back naive:
see :func:`orchestrator.telemetry.rollups.as_utc`) and ``timestamptz`` in PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    """Declarative base of the telemetry tables (``Base.metadata`` is the head schema)."""


class RequestRecord(Base):
    """One handled request: its route, its workflow and how it ended.

    ``status`` is ``running`` from :meth:`TelemetryStore.start_request` until
    :meth:`TelemetryStore.finish_request` sets the final one (``succeeded``, ``failed``,
    ``needs_human``, ``cancelled``...).
    """

    __tablename__ = "requests"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    text: Mapped[str] = mapped_column(Text)
    channel: Mapped[str | None] = mapped_column(String(64))
    source: Mapped[str | None] = mapped_column(String(255))
    route: Mapped[str] = mapped_column(String(64), index=True)
    route_confidence: Mapped[float] = mapped_column(Float)
    classifier_signals: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    workflow: Mapped[str | None] = mapped_column(String(64), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)
    error: Mapped[str | None] = mapped_column(Text)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    #: The batch job that sent the request (``Request.metadata["batch_id"]``), or NULL.
    batch_id: Mapped[str | None] = mapped_column(String(64), index=True)
    #: The classifier tier whose scores decided the route (``fast``, ``rules``, ``learned``,
    #: ``semantic``: ``Classification.decided_by``); NULL when unknown (migration 0005).
    decided_by: Mapped[str | None] = mapped_column(String(16))


class ModelCallRecord(Base):
    """One model call's metadata and expert-routing aggregates.

    * ``expert_counts``: activations per (MoE layer, routed expert), shape
      ``(len(moe_layers), num_experts)``, packed by :func:`~orchestrator.telemetry.codec.
      encode_counts`; NULL when the call has no expert routing (dense, unavailable).
    * ``layer_confidence``: mean router confidence per MoE layer, float32 ``(len(moe_layers),)``,
      NULL when the source returns none (vLLM's engine capture).
    * ``capture_sampling_rate``: the fraction of calls whose experts were captured when this
      call was made (1.0: all). A captured call stands for ``1 / rate`` calls in aggregates;
      a call left out of the sample has source ``unavailable`` and no counts (migration 0005).
    * ``decided_by``: the classifier tier that decided the request's route (NULL: unknown).
    * ``checks``: what code's checks dropped from the call's output, a list of
      ``{"reason", "sentence"}`` (NULL: no check ran; migration 0006).
    * ``model_family``: the served model's family (``MoEArchitecture.family``: ``ernie45``,
      ``qwen3_moe``, ``deepseek_v2``, ``mixtral``, ``olmoe``, ``gpt_oss``, ``dense``,
      ``unsupported``); ``''`` when the call names none (a test double). With ``moe_layers``,
      ``num_experts`` and ``top_k`` it says which expert shape the counts have; analyses never
      pool two families (migration 0007).
    * ``prefill_counts``: the prompt tokens' part of ``expert_counts`` (same shape and
      codec), where the source kept prefill and decode apart (the plugin's ``phase_counts``
      mode, per-token ids); decode is ``expert_counts - prefill_counts``. NULL when the
      source summed the phases (``counts`` mode) and for every row written before migration
      0008: such a call's phase is unknown, never split after the fact.
    * ``expert_routing_source``: ``engine``, ``replay``, ``dense``, ``unavailable`` or
      ``scripted`` or ``unsupported`` (:class:`serving.expert_routing.ExpertRoutingSource`;
      ``unsupported``: an MoE of no supported family, recorded without experts); a replay is an
      estimate. Named ``routing_source`` before migration 0002. Or :data:`PENDING_SOURCE`
      (``pending``): the replay was deferred; ``expert_counts`` is NULL until the replay
      worker fills it and sets ``replay`` (its token ids wait in ``pending_expert_routing``).
    """

    __tablename__ = "model_calls"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    request_id: Mapped[str] = mapped_column(ForeignKey("requests.id"), index=True)
    route: Mapped[str] = mapped_column(String(64), index=True)
    route_confidence: Mapped[float] = mapped_column(Float)
    classifier_signals: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    workflow: Mapped[str] = mapped_column(String(64), index=True)
    node: Mapped[str] = mapped_column(String(64), index=True)
    model: Mapped[str] = mapped_column(String(255))
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    latency_ms: Mapped[float] = mapped_column(Float)
    finish_reason: Mapped[str | None] = mapped_column(String(32))
    expert_routing_source: Mapped[str] = mapped_column(String(16), index=True)
    routing_note: Mapped[str | None] = mapped_column(Text)
    moe_layers: Mapped[list[int]] = mapped_column(JSON)
    num_experts: Mapped[int] = mapped_column(Integer)
    top_k: Mapped[int] = mapped_column(Integer)
    routed_tokens: Mapped[int] = mapped_column(Integer)
    expert_counts: Mapped[bytes | None] = mapped_column(LargeBinary)
    layer_confidence: Mapped[bytes | None] = mapped_column(LargeBinary)
    mean_router_confidence: Mapped[float | None] = mapped_column(Float)
    capture_sampling_rate: Mapped[float] = mapped_column(Float, server_default=text("1.0"))
    decided_by: Mapped[str | None] = mapped_column(String(16))
    checks: Mapped[list[dict[str, str]] | None] = mapped_column(JSON, nullable=True)
    model_family: Mapped[str] = mapped_column(String(32), server_default=text("''"))
    prefill_counts: Mapped[bytes | None] = mapped_column(LargeBinary)


class _RollupColumns:
    """The columns of a rollup row: its group and its sums (shared by
    :class:`ExpertRollupRecord` and :class:`ExpertPhaseRollupRecord`)."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bucket_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    workflow: Mapped[str] = mapped_column(String(64), index=True)
    node: Mapped[str] = mapped_column(String(64))
    expert_routing_source: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(255))
    shape_key: Mapped[str] = mapped_column(String(255))
    moe_layers: Mapped[list[int]] = mapped_column(JSON)
    num_experts: Mapped[int] = mapped_column(Integer)
    top_k: Mapped[int] = mapped_column(Integer)
    calls: Mapped[int] = mapped_column(Integer)
    routed_tokens: Mapped[int] = mapped_column(Integer)
    counts: Mapped[bytes] = mapped_column(LargeBinary)
    sq_counts: Mapped[bytes] = mapped_column(LargeBinary)
    conf_calls: Mapped[int] = mapped_column(Integer)
    conf_tokens: Mapped[int] = mapped_column(Integer)
    conf_sum: Mapped[float] = mapped_column(Float)
    conf_hist: Mapped[bytes] = mapped_column(LargeBinary)
    layer_conf_sum: Mapped[bytes] = mapped_column(LargeBinary)
    capture_sampling_rate: Mapped[float] = mapped_column(Float, server_default=text("1.0"))
    #: The calls' model family (see ``ModelCallRecord``), part of the group (migration 0007).
    model_family: Mapped[str] = mapped_column(String(32), server_default=text("''"))


#: The group columns of a rollup row (its unique constraint), without the phase.
ROLLUP_GROUP_COLUMNS = (
    "bucket_start",
    "workflow",
    "node",
    "expert_routing_source",
    "model",
    "shape_key",
    "capture_sampling_rate",
    "model_family",
)


class ExpertRollupRecord(_RollupColumns, Base):
    """Expert-routing sums of the calls of one (hour, workflow, node, source, model, shape,
    capture sampling rate, model family), prefill and decode together (every call).

    The sums are of the captured calls as they are; a reader weights a row by
    ``1 / capture_sampling_rate`` (:mod:`orchestrator.analysis`), so rates never mix unweighted.

    Blobs are C-order little-endian; ``L = len(moe_layers)``, ``E = num_experts``:

    * ``counts``: int64 ``(L, E)``, summed ``expert_counts``.
    * ``sq_counts``: float64 ``(L, E)``, the sum over calls of ``count**2 / activations`` (the
      call's ``routed_tokens * top_k``). With ``counts`` it gives the between-call dispersion of
      the multinomial model (Pearson's statistic), see :mod:`orchestrator.analysis.skew.drift`.
    * ``conf_hist``: int64 ``(CONFIDENCE_BINS,)``, calls per bin of their mean router confidence.
    * ``layer_conf_sum``: float64 ``(L,)``, the sum of ``layer_confidence * routed_tokens``.

    ``conf_calls`` and ``conf_tokens`` count the calls (and their routed tokens) that carry a
    router confidence; ``conf_sum`` is the sum of ``mean_router_confidence * routed_tokens``.
    """

    __tablename__ = "expert_rollups"
    __table_args__ = (UniqueConstraint(*ROLLUP_GROUP_COLUMNS, name="uq_expert_rollup_group"),)


class ExpertPhaseRollupRecord(_RollupColumns, Base):
    """The same sums as :class:`ExpertRollupRecord`, for one phase of the calls whose source
    kept prefill and decode apart (``model_calls.prefill_counts`` set), migration 0008.

    ``phase`` is ``prefill`` (the prompt's tokens: ``routed_tokens`` sums ``prompt_tokens``)
    or ``decode`` (the completion's routed tokens, ``completion_tokens - 1``), and is part of
    the group, so the two are never summed into one row. Per group, the ``prefill`` and
    ``decode`` rows sum to the split calls' share of the :class:`ExpertRollupRecord` row;
    calls without a split (every call written before 0008, ``counts`` mode) are in
    ``expert_rollups`` only: no split is made up for them.
    """

    __tablename__ = "expert_phase_rollups"
    __table_args__ = (
        UniqueConstraint(*ROLLUP_GROUP_COLUMNS, "phase", name="uq_expert_phase_rollup_group"),
    )

    phase: Mapped[str] = mapped_column(String(8))


#: ``model_calls.expert_routing_source`` of a call whose routing replay is still to run.
PENDING_SOURCE = "pending"


class PendingExpertRoutingRecord(Base):
    """The token ids a ``pending`` call's replay needs (one row per pending call).

    Deleted in the same transaction that fills the call's routing and adds it to its rollup
    (:mod:`orchestrator.telemetry.fill`), so a call is filled, and summed, exactly once.

    * ``prompt_ids`` / ``completion_ids``: int32 little-endian token ids, as the server
      returned them (``return_token_ids``).
    * ``checkpoint``: the resolved checkpoint folder the replay must use (the one served
      when the call was made).
    """

    __tablename__ = "pending_expert_routing"

    call_id: Mapped[int] = mapped_column(ForeignKey("model_calls.id"), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    checkpoint: Mapped[str] = mapped_column(Text)
    prompt_ids: Mapped[bytes] = mapped_column(LargeBinary)
    completion_ids: Mapped[bytes] = mapped_column(LargeBinary)


class BatchRecord(Base):
    """One batch job (``orchestrator batch``): its input, its column mapping and its size.

    The id is derived from the input's bytes and the mapping, so running the same command
    again finds the same row and resumes (:mod:`orchestrator.telemetry.batches`).
    """

    __tablename__ = "batches"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source: Mapped[str] = mapped_column(Text)
    mapping: Mapped[dict[str, Any]] = mapped_column(JSON)
    total_rows: Mapped[int] = mapped_column(Integer)


class BatchRowRecord(Base):
    """The outcome of one input row of a batch: written once the row is done or has failed.

    ``(batch_id, row_index)`` is unique, so a row is never recorded twice; ``attempts``
    counts the runs of the row (each run is its own ``requests`` row, ``request_id`` the
    newest). ``status`` is a request status (``succeeded``, ``failed``, ``rejected``...),
    and ``output`` the results-file columns of the row as JSON.
    """

    __tablename__ = "batch_rows"
    __table_args__ = (UniqueConstraint("batch_id", "row_index", name="uq_batch_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.id"), index=True)
    row_index: Mapped[int] = mapped_column(Integer)
    row_id: Mapped[str] = mapped_column(String(255))
    request_id: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), index=True)
    attempts: Mapped[int] = mapped_column(Integer)
    finished_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    output: Mapped[dict[str, Any]] = mapped_column(JSON)


#: The ``model_calls`` columns a rollup is summed from, in the order the rollup code reads them
#: (one definition for the rollup rebuild and for a batch's on-the-fly rollups).
ROLLUP_SOURCE_COLUMNS = (
    ModelCallRecord.id,
    ModelCallRecord.created_at,
    ModelCallRecord.workflow,
    ModelCallRecord.node,
    ModelCallRecord.expert_routing_source,
    ModelCallRecord.model,
    ModelCallRecord.moe_layers,
    ModelCallRecord.num_experts,
    ModelCallRecord.top_k,
    ModelCallRecord.routed_tokens,
    ModelCallRecord.expert_counts,
    ModelCallRecord.layer_confidence,
    ModelCallRecord.mean_router_confidence,
    ModelCallRecord.capture_sampling_rate,
    ModelCallRecord.model_family,
    ModelCallRecord.prompt_tokens,
    ModelCallRecord.prefill_counts,
)
