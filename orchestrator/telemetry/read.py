"""The typed read API of the telemetry store: queries that return plain values, not ORM state.

:class:`TelemetryReader` holds every query; :class:`~orchestrator.telemetry.store.
TelemetryStore` adds the writes. The analysis (:mod:`orchestrator.analysis`) reads through
these methods and types only:

* :class:`RollupRow`: one ``expert_rollups`` row, its blobs decoded into a
  :class:`~orchestrator.telemetry.rollups.RollupDelta` (:meth:`TelemetryReader.iter_rollups`).
* :class:`CallCounts`: a chunk of model calls as arrays (:meth:`TelemetryReader.
  iter_call_counts`).
* :class:`RollupStatus`: how many calls the rollups cover (:meth:`TelemetryReader.
  rollup_status`).

:meth:`TelemetryReader.calls` and :meth:`TelemetryReader.requests` return detached rows of the
schema (:class:`~orchestrator.telemetry.schema.ModelCallRecord`, :class:`~orchestrator.
telemetry.schema.RequestRecord`) for callers that want every column.

Every query is portable SQL (tested on SQLite and PostgreSQL): datetimes come back as aware UTC
where this API builds them, and JSON is read as text and decoded here, never with a
backend-specific function.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

import numpy as np
from sqlalchemy import (
    ColumnElement,
    Select,
    Text,
    and_,
    case,
    cast,
    func,
    select,
    true,
    tuple_,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, aliased, sessionmaker

from orchestrator.exceptions import UserError
from orchestrator.telemetry.codec import stack_counts
from orchestrator.telemetry.rollup_rows import (
    rollup_columns,
    rollup_sums,
    rollup_table,
    sum_call_rows,
)
from orchestrator.telemetry.rollups import RollupDelta, RollupKey, as_utc, bucket_start
from orchestrator.telemetry.schema import (
    ROLLUP_SOURCE_COLUMNS,
    ExpertPhaseRollupRecord,
    ExpertRollupRecord,
    ModelCallRecord,
    RequestRecord,
)

_Q = TypeVar("_Q", bound="Select[*tuple[Any, ...]]")


def where_given(query: _Q, *equal: tuple[Any, object]) -> _Q:
    """``query`` narrowed to ``column == value`` for each ``(column, value)`` pair whose value
    is not None (a None filter selects everything)."""
    for column, value in equal:
        if value is not None:
            query = query.where(column == value)
    return query


def in_window(query: _Q, column: Any, start: datetime | None, end: datetime | None) -> _Q:
    """``query`` narrowed to ``start <= column < end``; a None bound is open."""
    if start is not None:
        query = query.where(column >= start)
    if end is not None:
        query = query.where(column < end)
    return query


@dataclass(frozen=True)
class RollupRow:
    """One ``expert_rollups`` row: a group's sums over one UTC hour.

    Attributes:
        bucket_start: Start of the hour (aware UTC).
        workflow: Workflow name.
        node: Node name.
        expert_routing_source: ``engine``, ``replay``, ``dense``... of the summed calls.
        model: Served model name.
        shape_key: The model shape as text (:func:`~orchestrator.telemetry.rollups.shape_key`).
        moe_layers: Model-layer index of each row of the layer axis.
        num_experts: Routed experts per layer.
        top_k: Experts per token.
        sums: The row's sums as arrays (read-only views of its blobs), of the captured calls
            as they are (unweighted).
        capture_sampling_rate: Fraction of calls whose experts were captured (1.0: all); a
            reader weights ``sums`` by ``1 / rate``
            (:func:`~orchestrator.telemetry.rollups.weighted`).
        model_family: The calls' model family (``ernie45``, ``qwen3_moe``...; ``''``: not
            known); rows of two families must never be pooled.
        phase: ``''`` (every call, prefill and decode together), or ``prefill`` / ``decode``
            (that phase of the calls whose source kept them apart).
    """

    bucket_start: datetime
    workflow: str
    node: str
    expert_routing_source: str
    model: str
    shape_key: str
    moe_layers: tuple[int, ...]
    num_experts: int
    top_k: int
    sums: RollupDelta
    capture_sampling_rate: float = 1.0
    model_family: str = ""
    phase: str = ""

    @classmethod
    def of(cls, key: RollupKey, sums: RollupDelta) -> RollupRow:
        """The row of group ``key`` holding ``sums``."""
        return cls(**key.fields(), sums=sums)


class RollupStatus(NamedTuple):
    """``(calls, summed)``: calls with expert routing, and calls summed in the rollups.

    The two agree unless calls were written without rollups (by an older version, or by bulk
    inserts); :meth:`TelemetryStore.rebuild_rollups` brings them back in line.
    """

    calls: int
    summed: int


@dataclass(frozen=True)
class CallCounts:
    """A batch of model calls with expert routing, as arrays (``n`` calls, ``L`` layers, ``E``
    experts; see :meth:`TelemetryReader.iter_call_counts`).

    Attributes:
        ids: ``(n,)`` model-call ids.
        request_ids: Request id per call.
        workflows: Workflow per call.
        nodes: Node per call.
        created_at: Time of each call (aware UTC).
        routed_tokens: ``(n,)`` tokens that passed the router.
        counts: ``(n, L, E)`` int32 expert counts.
        sources: Expert-routing source per call.
        top_k: ``(n,)`` experts per token.
        moe_layers: Model-layer index of each row of the layer axis (same for every call).
        sampling_rates: ``(n,)`` capture sampling rate of each call (1.0: every call was
            captured); a call stands for ``1 / rate`` calls in aggregates.
        model_family: The calls' model family (same for every call; ``''``: not known).
    """

    ids: np.ndarray
    request_ids: list[str]
    workflows: list[str]
    nodes: list[str]
    created_at: list[datetime]
    routed_tokens: np.ndarray
    counts: np.ndarray
    sources: list[str]
    top_k: np.ndarray
    moe_layers: tuple[int, ...] = ()
    sampling_rates: np.ndarray | None = None
    model_family: str = ""

    def weights(self) -> np.ndarray:
        """``(n,)`` float64 weight of each call: ``1 / capture sampling rate`` (ones when the
        rates are unknown)."""
        if self.sampling_rates is None:
            return np.ones(len(self.ids))
        return 1.0 / self.sampling_rates


class TelemetryReader:
    """Read queries over a telemetry database at the head schema revision.

    Args:
        engine: The SQLAlchemy engine (any backend).
        url: The URL it was made from, for messages.
    """

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        #: When set, :meth:`iter_call_counts` reads only the calls of this batch's requests
        #: (:class:`~orchestrator.telemetry.batches.BatchTelemetryView`).
        self.batch_scope: str | None = None
        #: When set, the rollup queries (:meth:`rollup_status`, :meth:`rollup_workflows`,
        #: :meth:`rollup_span`, :meth:`iter_rollups`) sum the model calls this clause selects
        #: instead of reading ``expert_rollups``: a batch's calls (the batch view), or every
        #: call where the table is stale (the read-only reader).
        self.summed_calls: ColumnElement[bool] | None = None

    def _session(self) -> Session:
        return self._sessions()

    def calls(
        self,
        *,
        request_id: str | None = None,
        workflow: str | None = None,
        since: datetime | None = None,
    ) -> Sequence[ModelCallRecord]:
        """Model-call rows (detached), oldest first, optionally filtered (``since``: created at
        or after)."""
        query = where_given(
            select(ModelCallRecord).order_by(ModelCallRecord.id),
            (ModelCallRecord.request_id, request_id),
            (ModelCallRecord.workflow, workflow),
        )
        query = in_window(query, ModelCallRecord.created_at, since, None)
        with self._session() as session:
            return session.scalars(query).all()

    def requests(self, *, status: str | None = None) -> Sequence[RequestRecord]:
        """Request rows (detached) in arrival order, optionally only those with ``status``."""
        query = select(RequestRecord).order_by(RequestRecord.received_at)
        query = where_given(query, (RequestRecord.status, status))
        with self._session() as session:
            return session.scalars(query).all()

    def request_texts(self, request_ids: Sequence[str]) -> dict[str, str]:
        """Text of the given requests (those that exist), by id."""
        if not request_ids:
            return {}
        with self._session() as session:
            rows = session.execute(
                select(RequestRecord.id, RequestRecord.text).where(
                    RequestRecord.id.in_(list(request_ids))
                )
            ).all()
        return {r.id: r.text for r in rows}

    def count_calls(
        self,
        *,
        workflow: str | None = None,
        since: datetime | None = None,
        with_routing: bool | None = None,
        source: str | None = None,
    ) -> int:
        """Number of model-call rows, optionally of one workflow, created at or after
        ``since``, with (True) or without (False) expert counts, and of one expert-routing
        ``source`` (``unsupported``...)."""
        query = where_given(
            select(func.count(ModelCallRecord.id)),
            (ModelCallRecord.expert_routing_source, source),
            (ModelCallRecord.workflow, workflow),
        )
        query = in_window(query, ModelCallRecord.created_at, since, None)
        if with_routing is not None:
            column = ModelCallRecord.expert_counts
            query = query.where(column.is_not(None) if with_routing else column.is_(None))
        with self._session() as session:
            return int(session.scalar(query) or 0)

    def iter_rollups(
        self,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        workflow: str | None = None,
        model: str | None = None,
        chunk: int = 256,
        family: str | None = None,
        phase: str = "",
    ) -> Iterator[RollupRow]:
        """Rollup rows whose bucket starts in ``[start, end)``, oldest first, streamed
        (``model``, ``family``: only that served model, only that model family; ``phase``:
        ``''`` for every call, ``prefill`` or ``decode`` for that phase of the calls whose
        source kept them apart, from ``expert_phase_rollups``).

        Rows are fetched ``chunk`` at a time, so memory does not grow with the window.
        Buckets are whole UTC hours (:data:`~orchestrator.telemetry.rollups.ROLLUP_BUCKET`):
        pass hour-aligned bounds. Where :attr:`summed_calls` is set, the calls are summed
        here instead (memory grows with the number of groups, not with the calls).
        """
        if self.summed_calls is not None:
            yield from self._summed_rollups(start, end, workflow, model, family, phase=phase)
            return
        table = rollup_table(phase)
        query = select(*rollup_columns(phase)).order_by(table.bucket_start, table.id)
        if phase:
            query = query.where(ExpertPhaseRollupRecord.phase == phase)
        query = in_window(query, table.bucket_start, start, end)
        query = where_given(
            query, (table.workflow, workflow), (table.model, model), (table.model_family, family)
        )
        with self._session() as session:
            for row in session.execute(query.execution_options(yield_per=chunk)):
                yield RollupRow(
                    bucket_start=as_utc(row.bucket_start),
                    workflow=row.workflow,
                    node=row.node,
                    expert_routing_source=row.expert_routing_source,
                    model=row.model,
                    shape_key=row.shape_key,
                    moe_layers=tuple(row.moe_layers),
                    num_experts=row.num_experts,
                    top_k=row.top_k,
                    sums=rollup_sums(row),
                    capture_sampling_rate=row.capture_sampling_rate,
                    model_family=row.model_family,
                    phase=phase,
                )

    def _summed_rollups(
        self,
        start: datetime | None,
        end: datetime | None,
        workflow: str | None,
        model: str | None,
        family: str | None = None,
        chunk: int = 2000,
        phase: str = "",
    ) -> Iterator[RollupRow]:
        """:meth:`iter_rollups` summed from the calls :attr:`summed_calls` selects."""
        sums: dict[RollupKey, RollupDelta] = {}
        last_id = 0
        while True:
            query = (
                select(*ROLLUP_SOURCE_COLUMNS)
                .where(self._routed_calls(), ModelCallRecord.id > last_id)
                .order_by(ModelCallRecord.id)
                .limit(chunk)
            )
            query = where_given(
                query,
                (ModelCallRecord.workflow, workflow),
                (ModelCallRecord.model, model),
                (ModelCallRecord.model_family, family),
            )
            with self._session() as session:
                rows = session.execute(query).all()
            if not rows:
                break
            last_id = rows[-1].id
            sum_call_rows(rows, sums, start=start, end=end, phase=phase)
        for key in sorted(sums, key=lambda k: (k.bucket_start, k.workflow, k.node)):
            yield RollupRow.of(key, sums[key])

    def _routed_calls(self) -> ColumnElement[bool]:
        """The calls with expert routing that :attr:`summed_calls` selects."""
        assert self.summed_calls is not None
        return and_(ModelCallRecord.expert_counts.is_not(None), self.summed_calls)

    def rollup_workflows(self) -> list[str]:
        """Workflows that have rollup rows (or summed calls), sorted."""
        if self.summed_calls is not None:
            query = select(ModelCallRecord.workflow).where(self._routed_calls())
        else:
            query = select(ExpertRollupRecord.workflow)
        with self._session() as session:
            return sorted(session.scalars(query.distinct()).all())

    def rollup_span(self) -> tuple[datetime, datetime] | None:
        """First and last rollup bucket start (aware UTC), or None when there is no rollup."""
        if self.summed_calls is not None:
            column, where = ModelCallRecord.created_at, self._routed_calls()
        else:
            column, where = ExpertRollupRecord.bucket_start, true()
        with self._session() as session:
            first, last = session.execute(
                select(func.min(column), func.max(column)).where(where)
            ).one()
        if first is None or last is None:
            return None
        return bucket_start(first), bucket_start(last)

    def rebuild_rollups(self) -> int:
        """Rebuild the rollup table from the stored calls; returns the rows written. The store
        rebuilds, a batch view has nothing to rebuild (0), the read-only reader refuses.

        Raises:
            NotImplementedError: On a plain reader, which cannot write.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot rebuild rollups")

    def rollup_status(self) -> RollupStatus:
        """Calls with expert routing and calls summed in rollups, read in one statement
        (:func:`_status_query`: it reads indexes and the rollups, not the calls' rows, unless
        the rollups are stale).

        :meth:`TelemetryStore.record_call` writes a call and its rollup in one transaction, so
        the two agree unless calls were written without rollups (by an older version, or by
        bulk inserts); then :meth:`TelemetryStore.rebuild_rollups` brings them back in line.
        Where :attr:`summed_calls` is set, both numbers are the selected calls with routing.
        """
        if self.summed_calls is not None:
            with self._session() as session:
                calls = session.scalar(
                    select(func.count(ModelCallRecord.id)).where(self._routed_calls())
                )
            return RollupStatus(int(calls or 0), int(calls or 0))
        with self._session() as session:
            rows = session.execute(_status_query()).all()
            if not rows:  # no call at all
                summed = session.scalar(
                    select(func.coalesce(func.sum(ExpertRollupRecord.calls), 0))
                )
                return RollupStatus(0, int(summed or 0))
        return RollupStatus(sum(int(r.routed or 0) for r in rows), int(rows[0].summed_all or 0))

    def iter_call_counts(
        self,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        workflow: str | None = None,
        model: str | None = None,
        shape: tuple[tuple[int, ...], int] | None = None,
        limit: int | None = None,
        chunk: int = 4096,
        family: str | None = None,
    ) -> Iterator[CallCounts]:
        """The calls with expert routing in ``[start, end)``, newest first, as arrays in chunks.

        Memory is bounded by ``chunk`` calls (``chunk * L * E * 4`` bytes of counts).

        Args:
            start: Created at or after (UTC).
            end: Created before (UTC).
            workflow: Only this workflow.
            model: Only this served model.
            shape: ``(moe_layers, num_experts)`` the calls must have; None takes the first
                call's shape.
            family: Only this model family (``ernie45``, ``qwen3_moe``...).
            limit: At most this many calls (the newest); None for all.
            chunk: Calls per yielded batch.

        Raises:
            UserError: ``chunk`` is below 1, or a call's shape or model family differs from
                the others' (the message names both and how to select one).
            TelemetryError: A stored count blob fits no width.
        """
        if chunk < 1:
            raise UserError(f"chunk must be at least 1, got {chunk}")
        remaining = limit
        last: tuple[datetime, int] | None = None
        families: dict[str, set[str]] = {}
        while remaining is None or remaining > 0:
            # after the first chunk the cursor, not ``end``, bounds the index range from above
            # (a plain ``created_at <=``: the row-value alone left SQLite scanning down from
            # ``end`` again for every chunk)
            query = self._call_counts_query(start, end if last is None else None, workflow, model)
            query = where_given(query, (ModelCallRecord.model_family, family))
            query = query.limit(chunk if remaining is None else min(chunk, remaining))
            if last is not None:
                query = query.where(
                    ModelCallRecord.created_at <= last[0],
                    tuple_(ModelCallRecord.created_at, ModelCallRecord.id) < tuple_(*last),
                )
            with self.engine.connect() as connection:  # Core rows: no ORM loading per row
                rows = connection.execute(query).all()
            if not rows:
                return
            counts, shape = _call_counts(rows, shape, families)
            last = (rows[-1].created_at, rows[-1].id)
            if remaining is not None:
                remaining -= len(rows)
            yield counts

    def _call_counts_query(
        self,
        start: datetime | None,
        end: datetime | None,
        workflow: str | None,
        model: str | None,
    ) -> Select[*tuple[Any, ...]]:
        """:meth:`iter_call_counts`'s query, newest first, without its limit and cursor."""
        query = (
            select(
                ModelCallRecord.id,
                ModelCallRecord.request_id,
                ModelCallRecord.workflow,
                ModelCallRecord.node,
                ModelCallRecord.created_at,
                # JSON as text, decoded once per distinct value below, not once per row
                # (a cast, not a type_coerce: PostgreSQL's driver would parse json itself)
                cast(ModelCallRecord.moe_layers, Text).label("moe_layers"),
                ModelCallRecord.num_experts,
                ModelCallRecord.routed_tokens,
                ModelCallRecord.expert_counts,
                ModelCallRecord.expert_routing_source,
                ModelCallRecord.top_k,
                ModelCallRecord.capture_sampling_rate,
                ModelCallRecord.model,
                ModelCallRecord.model_family,
            )
            .where(ModelCallRecord.expert_counts.is_not(None))
            # newest first along the created_at index, which also serves the window's
            # range: ordering by id instead made SQLite sort every call in the range
            .order_by(ModelCallRecord.created_at.desc(), ModelCallRecord.id.desc())
        )
        query = in_window(query, ModelCallRecord.created_at, start, end)
        query = where_given(
            query, (ModelCallRecord.workflow, workflow), (ModelCallRecord.model, model)
        )
        if self.batch_scope is not None:
            query = query.where(
                ModelCallRecord.request_id.in_(
                    select(RequestRecord.id).where(RequestRecord.batch_id == self.batch_scope)
                )
            )
        return query


def _status_query() -> Select[*tuple[Any, ...]]:
    """Per expert-routing source: the calls with routing, and the calls summed in all rollups.

    Counting ``expert_counts IS NOT NULL`` reads every call's row (42 GiB for 10M calls in
    SQLite, where a 27 x 64 call fills a 4 KiB page). So per source the calls are counted
    from the source index, and where the rollups of that source sum as many calls, that is
    the count: rollups sum only calls with routing, each once, under the call's own source
    (the writer, the routing fill and the rebuild all key them so), and no call is ever
    deleted, so ``summed <= routed <= calls`` of a source. Only a source whose rollups sum
    fewer calls (stale rollups, or calls without routing such as ``pending``) has its rows
    read, inside a ``CASE`` of the same statement, so both numbers come from one snapshot.
    """
    calls = (
        select(ModelCallRecord.expert_routing_source.label("source"), func.count().label("calls"))
        .group_by(ModelCallRecord.expert_routing_source)
        .subquery()
    )
    sums = (
        select(
            ExpertRollupRecord.expert_routing_source.label("source"),
            func.sum(ExpertRollupRecord.calls).label("summed"),
        )
        .group_by(ExpertRollupRecord.expert_routing_source)
        .subquery()
    )
    other = aliased(ModelCallRecord)
    exact = (
        select(func.count())
        .select_from(other)
        .where(other.expert_routing_source == calls.c.source, other.expert_counts.is_not(None))
        .scalar_subquery()
    )
    summed = func.coalesce(sums.c.summed, 0)
    summed_all = select(func.coalesce(func.sum(ExpertRollupRecord.calls), 0)).scalar_subquery()
    return select(
        calls.c.source,
        case((summed == calls.c.calls, calls.c.calls), else_=exact).label("routed"),
        summed_all.label("summed_all"),
    ).select_from(calls.outerjoin(sums, sums.c.source == calls.c.source))


class MixedFamiliesError(UserError):
    """Calls of two or more model families were to be pooled. The one-line message names the
    families, their served model names, and how to select one (``--model``).

    Attributes:
        families: ``family -> served model names`` of the calls met.
    """

    def __init__(self, families: dict[str, set[str]]) -> None:
        self.families = {f: set(m) for f, m in families.items()}
        models = [m for names in self.families.values() for m in names]
        if len(models) == len(set(models)):
            fix = f"select one with --model (e.g. --model {sorted(models)[0]})"
        else:  # one served name for two families: only the database can separate them
            fix = "they share a served model name, so use one database per model"
        super().__init__(
            f"calls of {len(families)} MoE families are stored: {self.named()}. Their experts "
            f"are different experts, so their loads are never pooled; {fix}"
        )

    def named(self) -> str:
        """``"ernie45 (model a); mixtral (model b, c)"``."""
        return "; ".join(
            f"{family} (model {', '.join(sorted(models)) or '?'})"
            for family, models in sorted(self.families.items())
        )


def _call_counts(
    rows: Sequence[Any],
    shape: tuple[tuple[int, ...], int] | None,
    families: dict[str, set[str]] | None = None,
) -> tuple[CallCounts, tuple[tuple[int, ...], int]]:
    """A chunk of :meth:`TelemetryReader.iter_call_counts` as arrays, and the shape every call
    has (``shape``, or the first call's when None). ``families``: the known model families
    seen so far and their served model names (updated in place; ``''``, not known, pools with
    any family of the same shape).

    Raises:
        UserError: Two known model families are among the calls, or a call's shape differs
            from ``shape``.
        TelemetryError: A stored count blob fits no width.
    """
    families = {} if families is None else families
    for row in rows:
        if row.model_family:
            families.setdefault(row.model_family, set()).add(row.model)
    if len(families) > 1:
        raise MixedFamiliesError(families)
    layers_of = {raw: tuple(json.loads(raw)) for raw in {r.moe_layers for r in rows}}
    if shape is None:
        shape = (layers_of[rows[0].moe_layers], rows[0].num_experts)
    for row in rows:
        if (layers_of[row.moe_layers], row.num_experts) != shape:
            raise UserError(
                f"model call {row.id} has MoE layers {list(layers_of[row.moe_layers])} and "
                f"{row.num_experts} experts, others {shape}; use one database per "
                "model or filter by model"
            )
    n = len(rows)
    counts = CallCounts(
        ids=np.fromiter((r.id for r in rows), dtype=np.int64, count=n),
        request_ids=[r.request_id for r in rows],
        workflows=[r.workflow for r in rows],
        nodes=[r.node for r in rows],
        created_at=[as_utc(r.created_at) for r in rows],
        routed_tokens=np.fromiter((r.routed_tokens for r in rows), dtype=np.int64, count=n),
        counts=stack_counts([r.expert_counts for r in rows], len(shape[0]), shape[1]),
        sources=[r.expert_routing_source for r in rows],
        top_k=np.fromiter((r.top_k for r in rows), dtype=np.int64, count=n),
        moe_layers=shape[0],
        sampling_rates=np.fromiter(
            (r.capture_sampling_rate for r in rows), dtype=np.float64, count=n
        ),
        model_family=next(iter(families), ""),
    )
    return counts, shape
