"""The telemetry store: one row per request and one row per model call, on SQLAlchemy 2.0.

SQLite is the default (``sqlite:///runs/telemetry.db``); any SQLAlchemy URL with a driver
works, and PostgreSQL (``postgresql+psycopg://user@host/db``) is tested like SQLite
(``tests/unit/test_storage_conformance.py``).

A ``model_calls`` row holds per-call **aggregates**, never one row per token, so millions of
calls stay queryable (columns: :mod:`orchestrator.telemetry.schema`; blobs:
:mod:`orchestrator.telemetry.codec`). An ``expert_rollups`` row sums the calls of one hour
(UTC), workflow, node, expert-routing source, model and model shape
(:mod:`orchestrator.telemetry.rollups`). :meth:`TelemetryStore.record_call` updates it in the
call's own transaction, so reports read a few aggregates instead of every call's blob;
:meth:`TelemetryStore.rebuild_rollups` fills it for databases written before it existed.
Each row is written in its own transaction, so a failure leaves no half-written row.

**Schema versions.** ``TelemetryStore(url)`` brings the database to the newest schema revision
with Alembic (:mod:`orchestrator.telemetry.migrate`): a new database is created, an older one
is upgraded in place (rows kept), and one made before migrations is adopted and upgraded.
:meth:`TelemetryStore.open_existing`, for commands that only read (``orchestrator load``,
``orchestrator skew``), never creates or upgrades anything: on a database behind the code it
raises a :class:`~orchestrator.exceptions.UserError` that says so and gives the fix,
``python -m orchestrator.telemetry upgrade URL`` (or any writing command, such as
``orchestrator run``, which upgrades on open).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, NotRequired, TypedDict, Unpack, cast

import numpy as np
from sqlalchemy import CursorResult, Table, create_engine, delete, event, null, select
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import IntegrityError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import Session
from sqlalchemy.pool import StaticPool

from orchestrator.classification import Classification
from orchestrator.databases import hold_setup_lock, write_ahead_log
from orchestrator.exceptions import TelemetryError, UserError, storage_error
from orchestrator.request import Request
from orchestrator.telemetry import migrate
from orchestrator.telemetry.codec import (
    encode_counts,
)
from orchestrator.telemetry.read import TelemetryReader
from orchestrator.telemetry.rollup_rows import add_to_rollup as _add_to_rollup
from orchestrator.telemetry.rollup_rows import sum_call_rows
from orchestrator.telemetry.rollups import (
    PHASES,
    RollupDelta,
    RollupKey,
    bucket_start,
    call_deltas,
    check_sampling_rate,
)
from orchestrator.telemetry.schema import (
    PENDING_SOURCE,
    ROLLUP_SOURCE_COLUMNS,
    BatchRowRecord,
    ExpertPhaseRollupRecord,
    ExpertRollupRecord,
    ModelCallRecord,
    PendingExpertRoutingRecord,
    RequestRecord,
)
from serving.capture import PendingReplayTrace
from serving.expert_routing import ExpertRoutingTrace


def encode_token_ids(ids: Sequence[int]) -> bytes:
    """Token ids as int32 little-endian bytes (``pending_expert_routing`` blobs).

    Raises:
        UserError: An id does not fit in int32.
    """
    array = np.asarray(ids, dtype=np.int64)
    if array.size and (array.min() < 0 or array.max() > np.iinfo(np.int32).max):
        raise UserError("a token id is negative or does not fit in int32")
    return array.astype("<i4").tobytes()


def decode_token_ids(blob: bytes) -> list[int]:
    """The ids :func:`encode_token_ids` packed."""
    ids: list[int] = np.frombuffer(blob, dtype="<i4").astype(np.int64).tolist()
    return ids


def utc_now() -> datetime:
    """The current time, aware UTC (the store's default clock)."""
    return datetime.now(UTC)


#: ``batch_rows`` columns a recorded row sets again when it is recorded a second time.
_BATCH_ROW_SET = ("row_id", "request_id", "status", "attempts", "finished_at", "output")


def _upsert(dialect: str) -> Any:
    """The dialect's own ``INSERT ... ON CONFLICT (batch_id, row_index) DO UPDATE`` of a
    ``batch_rows`` row (SQLite 3.24+ and PostgreSQL), or None for another database."""
    stmt: Any
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert

        stmt = insert(_BATCH_ROWS)
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt = pg_insert(_BATCH_ROWS)
    else:
        return None
    return stmt.on_conflict_do_update(
        index_elements=["batch_id", "row_index"],
        set_={name: stmt.excluded[name] for name in _BATCH_ROW_SET},
    )


_UPSERTS: dict[str, Any] = {}


def _apply_batch_row(session: Session, row: dict[str, Any]) -> None:
    """Record one batch row's outcome (inside a transaction): one upsert on
    ``uq_batch_row`` where the database has one (SQLite, PostgreSQL), else a Core ``UPDATE``
    and an ``INSERT`` when it matched no row; no ORM load, no unit of work.

    On the fallback, two writers inserting the same new row collide on ``uq_batch_row``; the
    loser's group is rolled back whole and retried, when its ``UPDATE`` then finds the row.
    """
    dialect = session.get_bind().dialect.name
    if dialect not in _UPSERTS:
        _UPSERTS[dialect] = _upsert(dialect)
    upsert = _UPSERTS[dialect]
    if upsert is not None:
        session.execute(upsert, row)
        return
    table = _BATCH_ROWS
    updated = session.execute(
        table.update()
        .where(table.c.batch_id == row["batch_id"], table.c.row_index == row["row_index"])
        .values(**{name: row[name] for name in _BATCH_ROW_SET})
    )
    if cast("CursorResult[Any]", updated).rowcount == 0:
        session.execute(table.insert(), row)


class CallFields(TypedDict):
    """The fields of one model call that :meth:`TelemetryStore.record_call` and
    :meth:`TelemetryStore.arecord_call` take as keyword arguments (one definition for both,
    and for the preparation they share)."""

    request_id: str
    classification: Classification
    workflow: str
    node: str
    model: str
    latency_ms: float
    finish_reason: str | None
    routing: ExpertRoutingTrace
    checks: NotRequired[list[dict[str, str]] | None]


class FinishFields(TypedDict, total=False):
    """What :meth:`TelemetryStore.finish_request` and :meth:`TelemetryStore.afinish_request`
    take besides the request id and status, as keyword arguments (one definition for both)."""

    #: Why the request did not succeed (``failed``, ``needs_human``...).
    error: str | None
    #: The workflow's result (JSON), for a request that finished with one.
    result: dict[str, Any] | None


def _finish(
    request_id: str, status: str, fields: FinishFields, finished_at: datetime
) -> tuple[Any, ...]:
    """The finish :meth:`TelemetryStore._apply_finish` writes (either twin builds it)."""
    return (request_id, status, fields.get("error"), fields.get("result"), finished_at)


@dataclass(frozen=True)
class _PreparedCall:
    """One model call ready to write: its ``model_calls`` row, its rollup keys and deltas
    (none without routing counts; with a prefill/decode split, those phases' too), and its
    ``pending_expert_routing`` row (deferred replay only)."""

    row: dict[str, Any]
    rollups: list[tuple[RollupKey, RollupDelta]]
    pending: dict[str, Any] | None


#: The tables the writer thread inserts into and updates with Core statements.
_REQUESTS = cast(Table, RequestRecord.__table__)
_CALLS = cast(Table, ModelCallRecord.__table__)
_PENDING = cast(Table, PendingExpertRoutingRecord.__table__)
_BATCH_ROWS = cast(Table, BatchRowRecord.__table__)

#: A queued write: ``("start", RequestRecord fields)``, ``("call", _PreparedCall)``,
#: ``("finish", (request_id, status, error, result, finished_at))`` or ``("row", batch_rows
#: fields)`` (:meth:`~orchestrator.telemetry.batches.BatchLedger.arecord_row`).
_Op = tuple[str, Any]


def _describe(op: _Op) -> str:
    """What a queued write is, for its error message."""
    kind, payload = op
    if kind == "start":
        return f"request {payload['id']}"
    if kind == "finish":
        return f"request {payload[0]}"
    if kind == "row":
        return f"row {payload['row_index']} of batch {payload['batch_id']}"
    return f"model call of request {payload.row['request_id']}"


def _request_row(
    request: Request, classification: Classification, workflow: str | None
) -> dict[str, Any]:
    """The ``requests`` row of a request that starts (status ``running``)."""
    return {
        "id": request.id,
        "received_at": request.received_at,
        "text": request.text,
        "channel": request.channel,
        "source": request.metadata.get("source"),
        "route": classification.route,
        "route_confidence": classification.confidence,
        "classifier_signals": [s.model_dump(mode="json") for s in classification.signals],
        "workflow": workflow,
        "status": "running",
        "batch_id": request.metadata.get("batch_id"),
        "decided_by": classification.decided_by,
    }


def _settle(
    future: asyncio.Future[int | None], value: int | None, error: BaseException | None
) -> None:
    """On the caller's loop: hand a queued write's outcome to its awaiting caller."""
    if future.done():  # the caller was cancelled; the row is written all the same
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _settle_all(items: Sequence[tuple[asyncio.Future[int | None], int | None, Any]]) -> None:
    """On the callers' loop: :func:`_settle` each ``(future, value, error)`` of a group."""
    for future, value, error in items:
        _settle(future, value, error)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    write_ahead_log(cursor)  # readers do not block the writer
    # WAL + NORMAL: a commit no longer waits for fsync (about 2 ms a row on the H200 host);
    # the database stays consistent, and a power cut loses at most the last commits.
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _parse_url(url: str) -> URL:
    try:
        return make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with no common base
        raise UserError(f"telemetry database URL {url!r} is not a SQLAlchemy URL: {exc}") from exc


def _sqlite_in_memory(parsed: URL) -> bool:
    return parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:")


class TelemetryStore(TelemetryReader):
    """Writes requests and model calls; reads them through :class:`TelemetryReader`.

    Args:
        url: A SQLAlchemy URL; a SQLite file's folder is created when missing. The database
            is created or upgraded to the newest schema revision (see the module docstring).
        clock: Returns the time stamped on new call rows and finished requests (aware UTC);
            :func:`utc_now` by default. Tests pass a fixed one.

    Raises:
        UserError: The URL cannot be parsed, has no installed driver, cannot be opened, or
            holds a ``model_calls`` table this project did not make.
        TelemetryError: From the write methods, when the database rejects a write (the
            transaction is rolled back, so no partial row remains).

    Example:
        >>> store = TelemetryStore("sqlite:///:memory:")
        >>> store.count_calls()
        0
    """

    def __init__(self, url: str, *, clock: Callable[[], datetime] = utc_now) -> None:
        self._open(url, upgrade=True)
        self.clock = clock

    def _open(self, url: str, *, upgrade: bool) -> None:
        parsed = _parse_url(url)
        backend = parsed.get_backend_name()
        in_memory = _sqlite_in_memory(parsed)
        if backend == "sqlite" and not in_memory and upgrade:
            Path(cast(str, parsed.database)).parent.mkdir(parents=True, exist_ok=True)
        shown = parsed.render_as_string(hide_password=True)
        try:
            # One shared connection for an in-memory database, so the writer thread and the
            # caller see the same database (the default pool gives each thread its own one).
            engine: Engine = (
                create_engine(
                    parsed, poolclass=StaticPool, connect_args={"check_same_thread": False}
                )
                if in_memory
                else create_engine(parsed)
            )
            if backend == "sqlite":
                event.listen(engine, "connect", _sqlite_pragmas)
            if upgrade:
                with engine.begin() as connection:
                    hold_setup_lock(connection)  # two new openers at once take turns
                    migrate.upgrade(connection)
            else:
                with engine.connect() as connection:
                    migrate.require_head(connection, shown)
        except (ImportError, NoSuchModuleError) as exc:
            raise UserError(
                f"telemetry database {shown}: SQLAlchemy has no driver for it here ({exc}); "
                "install the driver (for PostgreSQL: pip install 'psycopg[binary]' and use "
                "postgresql+psycopg://...) or use a sqlite:/// URL"
            ) from exc
        except SQLAlchemyError as exc:
            known = storage_error(exc, shown.removeprefix("sqlite:///"), "telemetry database")
            if known is not None:  # damaged, locked, full, read-only: the file and the fix
                raise known from exc
            # one line: psycopg's message goes on over a second, tab-indented line
            reason = " ".join(str(getattr(exc, "orig", None) or exc).split())
            raise UserError(
                f"cannot open telemetry database {shown}: {reason}; pass --database-url (or "
                "ORCH_DATABASE_URL) of a SQLite file or a reachable database"
            ) from exc
        super().__init__(engine, url)
        # One writer thread: async callers hand rows to it, so the event loop never waits on a
        # commit, and rows are written one at a time in arrival order (SQLite has one writer).
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="telemetry-writer")
        # calls handed over by arecord_call, written in groups by _drain_calls
        self._queue_lock = threading.Lock()
        self._queued_ops: list[
            tuple[_Op, asyncio.Future[int | None], asyncio.AbstractEventLoop]
        ] = []
        self._drain_scheduled = False

    @classmethod
    def open_existing(cls, url: str) -> TelemetryStore:
        """Open a telemetry database that must already exist at the newest schema revision,
        for commands that only read. Creates, upgrades and changes nothing.

        Opening a new SQLite path would create an empty database (and turn any file into
        one), so for SQLite the file must exist and already hold the ``model_calls`` table.

        Raises:
            UserError: The URL is malformed; the SQLite file is missing, in memory, not a
                SQLite database, or a SQLite database without telemetry tables; the database
                has no telemetry tables, or is at an older schema revision (the message gives
                ``python -m orchestrator.telemetry upgrade URL``), or a newer one.
        """
        parsed = _parse_url(url)
        if parsed.get_backend_name() == "sqlite":
            if _sqlite_in_memory(parsed):
                raise UserError("an in-memory SQLite database holds no telemetry; give a file URL")
            path = Path(cast(str, parsed.database))  # not in memory: a file name
            fix = (
                "run `orchestrator run` first, or pass --database-url (or --db) pointing at the "
                "telemetry database it wrote (runs/telemetry.db by default)"
            )
            if not path.is_file():
                raise UserError(f"telemetry database {path} does not exist; {fix}")
            with path.open("rb") as handle:
                head = handle.read(16)
            if head != b"SQLite format 3\x00":
                raise UserError(f"{path} is not a SQLite database; {fix}")
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if ModelCallRecord.__tablename__ not in tables:
                raise UserError(f"{path} is a SQLite database without telemetry tables; {fix}")
        store = cls.__new__(cls)
        store._open(url, upgrade=False)
        store.clock = utc_now
        return store

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Session]:
        try:
            with self._sessions.begin() as session:
                yield session
        except SQLAlchemyError as exc:
            # a damaged, locked or full database as one line naming the file and the fix
            known = storage_error(exc, self.url, "telemetry database")
            raise TelemetryError(
                str(known or f"could not write {what} to {self.url}: {exc}")
            ) from exc

    def start_request(
        self, request: Request, classification: Classification, workflow: str | None
    ) -> None:
        """Insert the request's row with status ``running``.

        Raises:
            TelemetryError: The database rejected the row (e.g. the id exists already).
        """
        with self._transaction(f"request {request.id}") as session:
            session.execute(_REQUESTS.insert(), _request_row(request, classification, workflow))

    def finish_request(self, request_id: str, status: str, **fields: Unpack[FinishFields]) -> None:
        """Set the request's final status (``succeeded``, ``failed``, ``needs_human``...), with
        its ``error`` or ``result`` (keyword-only, :class:`FinishFields`).

        Raises:
            TelemetryError: The request was never started, or the database rejected the write.
        """
        with self._transaction(f"request {request_id}") as session:
            self._apply_finish(session, _finish(request_id, status, fields, self.clock()))

    def _apply_finish(self, session: Session, finish: tuple[Any, ...]) -> None:
        """One Core ``UPDATE`` of the request's row (no ORM load of the row first: that
        ``SELECT`` and the unit of work were most of a finish's CPU on the writer thread).

        Raises:
            TelemetryError: No row has ``request_id`` (the request was never started).
        """
        request_id, status, error, result, finished_at = finish
        updated = session.execute(
            _REQUESTS.update()
            .where(_REQUESTS.c.id == request_id)
            .values(
                status=status,
                error=error,
                # SQL NULL for no result, as the ORM wrote it (the JSON type would write 'null')
                result=null() if result is None else result,
                finished_at=finished_at,
            )
        )
        if cast("CursorResult[Any]", updated).rowcount == 0:
            raise TelemetryError(f"request {request_id} was never started in {self.url}")

    def record_call(self, **fields: Unpack[CallFields]) -> int:
        """Insert one model call's row, add it to its rollup row (same transaction), and
        return its id.

        Args (keyword-only, :class:`CallFields`):
            request_id: The request the call served (its row must exist).
            classification: The classifier's route, confidence and signals for that request.
            workflow: Workflow name.
            node: Node (step) name within the workflow.
            model: Served model name.
            latency_ms: Wall time of the HTTP call in milliseconds.
            finish_reason: ``stop``, ``length``...
            routing: The call's expert-routing trace; its counts are aggregated here. A
                :class:`~serving.capture.PendingReplayTrace` (replay deferred) is recorded
                with source ``pending`` and its token ids in ``pending_expert_routing``, in
                the same transaction; :mod:`orchestrator.telemetry.fill` fills it later.
            checks: What code's checks dropped from the call's output (``{"reason",
                "sentence"}`` each); None when no check ran.

        Raises:
            UserError: A count (or a pending call's token id) does not fit in int32.
            TelemetryError: The database rejected the write (e.g. unknown request id); nothing
                of the call remains.
        """
        prepared = self._prepare_call(**fields)
        return self._write_calls([prepared], f"model call of request {fields['request_id']}")[0]

    def _prepare_call(
        self,
        *,
        request_id: str,
        classification: Classification,
        workflow: str,
        node: str,
        model: str,
        latency_ms: float,
        finish_reason: str | None,
        routing: ExpertRoutingTrace,
        checks: list[dict[str, str]] | None = None,
    ) -> _PreparedCall:
        """Everything :meth:`record_call` writes, computed before the transaction."""
        counts = routing.expert_counts() if routing.has_routing else None
        layer_conf = routing.confidence_per_layer()
        mean_conf = routing.mean_confidence()
        created_at = self.clock()
        pending = isinstance(routing, PendingReplayTrace)
        source = PENDING_SOURCE if pending else routing.source.value
        try:
            rate = check_sampling_rate(routing.capture_sampling_rate)
        except ValueError as exc:
            raise UserError(f"model call of request {request_id}: {exc}") from exc
        rollups: list[tuple[RollupKey, RollupDelta]] = []
        phases = routing.phase_counts() if counts is not None else None
        if counts is not None:
            key = RollupKey(
                bucket_start=bucket_start(created_at),
                workflow=workflow,
                node=node,
                expert_routing_source=routing.source.value,
                model=model,
                moe_layers=tuple(routing.moe_layers),
                num_experts=routing.num_experts,
                top_k=routing.top_k,
                capture_sampling_rate=rate,
                model_family=routing.family,
            )
            rollups = call_deltas(
                key,
                counts,
                routing.routed_tokens,
                mean_conf,
                layer_conf,
                phases,
                routing.prompt_tokens,
            )
        row = {
            "created_at": created_at,
            "request_id": request_id,
            "route": classification.route,
            "route_confidence": classification.confidence,
            "classifier_signals": [s.model_dump(mode="json") for s in classification.signals],
            "workflow": workflow,
            "node": node,
            "model": model,
            "prompt_tokens": routing.prompt_tokens,
            "completion_tokens": routing.completion_tokens,
            "latency_ms": latency_ms,
            "finish_reason": finish_reason,
            "expert_routing_source": source,
            "routing_note": routing.reason,
            "moe_layers": list(routing.moe_layers),
            "num_experts": routing.num_experts,
            "top_k": routing.top_k,
            "routed_tokens": routing.routed_tokens,
            "expert_counts": None if counts is None else encode_counts(counts),
            "layer_confidence": None if layer_conf is None else layer_conf.astype("<f4").tobytes(),
            "mean_router_confidence": mean_conf,
            "capture_sampling_rate": rate,
            "decided_by": classification.decided_by,
            "checks": checks,
            "model_family": routing.family,
            "prefill_counts": None if phases is None else encode_counts(phases[0]),
        }
        pending_row = None
        if pending:
            assert isinstance(routing, PendingReplayTrace)
            pending_row = {
                "created_at": created_at,
                "checkpoint": routing.checkpoint,
                "prompt_ids": encode_token_ids(routing.prompt_ids),
                "completion_ids": encode_token_ids(routing.completion_ids),
            }
        return _PreparedCall(row=row, rollups=rollups, pending=pending_row)

    def _write_calls(self, calls: Sequence[_PreparedCall], what: str) -> list[int]:
        """Insert ``calls`` and add them to their rollup rows in ONE transaction; their ids.

        Raises:
            TelemetryError: The database rejected a write; nothing of these calls remains.
        """
        return [int(i or 0) for i in self._write_ops([("call", c) for c in calls], what)]

    def _write_ops(self, ops: Sequence[_Op], what: str) -> list[int | None]:
        """Apply queued writes (``start``, ``call``, ``finish``) in order in ONE transaction;
        a ``call``'s id, ``None`` for the others. The calls' rollup deltas are merged per
        rollup row and added once, after the rows.

        Two writers may both create the same new rollup row; the loser's transaction is rolled
        back whole (no partial row) and retried once, when the row then exists.

        Raises:
            TelemetryError: The database rejected a write; nothing of these writes remains.
        """
        for attempt in (1, 2):
            try:
                with self._transaction(what) as session:
                    out: list[int | None] = []
                    calls: list[tuple[_PreparedCall, int]] = []
                    # Core statements on the tables, not ORM objects: the rows are plain dicts
                    # already, and the ORM's unit of work (a flush per row, an identity map)
                    # was most of the writer thread's CPU (in the client's process and GIL)
                    for kind, payload in ops:
                        if kind == "start":
                            session.execute(_REQUESTS.insert(), payload)
                            out.append(None)
                        elif kind == "finish":
                            self._apply_finish(session, payload)
                            out.append(None)
                        elif kind == "row":
                            _apply_batch_row(session, payload)
                            out.append(None)
                        else:
                            # the call row first: it takes the write lock
                            inserted = session.execute(_CALLS.insert(), payload.row)
                            call_id = int(inserted.inserted_primary_key[0])  # type: ignore[attr-defined]  # an INSERT: a CursorResult
                            calls.append((payload, call_id))
                            out.append(call_id)
                    rollups: dict[RollupKey, RollupDelta] = {}
                    for key, delta in (kd for c, _ in calls for kd in c.rollups):
                        if key in rollups:
                            rollups[key].merge(delta)
                        else:
                            # a copy: merge() changes its target, and a failed group's
                            # writes are applied again from their own deltas
                            rollups[key] = replace(delta)
                    for key, delta in rollups.items():
                        _add_to_rollup(session, key, delta)
                    pending = [
                        {"call_id": call_id, **c.pending}
                        for c, call_id in calls
                        if c.pending is not None
                    ]
                    if pending:
                        session.execute(_PENDING.insert(), pending)
                    return out
            except TelemetryError as exc:
                if attempt == 2 or not isinstance(exc.__cause__, IntegrityError):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _on_writer(self, write: Any, /, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._writer, partial(write, *args, **kwargs))

    async def _queued(self, op: _Op) -> int | None:
        """Queue ``op`` for the writer thread and wait until its group has committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int | None] = loop.create_future()
        with self._queue_lock:
            self._queued_ops.append((op, future, loop))
            schedule = not self._drain_scheduled
            self._drain_scheduled = True
        if schedule:
            self._writer.submit(self._drain)
        return await future

    async def astart_request(
        self, request: Request, classification: Classification, workflow: str | None
    ) -> None:
        """:meth:`start_request` through the writer thread's group commit (see
        :meth:`arecord_call`); same errors."""
        await self._queued(("start", _request_row(request, classification, workflow)))

    async def afinish_request(
        self, request_id: str, status: str, **fields: Unpack[FinishFields]
    ) -> None:
        """:meth:`finish_request` through the writer thread's group commit (see
        :meth:`arecord_call`); same arguments, same errors. ``finished_at`` is the time of
        this call, not of the commit."""
        await self._queued(("finish", _finish(request_id, status, fields, self.clock())))

    async def arecord_call(self, **fields: Unpack[CallFields]) -> int:
        """:meth:`record_call` through the writer thread; same arguments, same errors.

        **Group commit.** The call is prepared (counts, rollup delta, row) on the event loop and
        queued; the writer thread writes every write queued while its previous transaction ran
        (request starts, calls, request finishes, in arrival order) in ONE transaction, with
        one rollup update per rollup row. Each caller gets its result once that transaction
        has committed. When a group's transaction fails, its writes are applied again one at a
        time, so only the write the database rejects fails (with its own
        :class:`TelemetryError`) and nothing else is lost or half-written.

        ``python -m benchmarks.orch_client_cpu`` measures the telemetry's client CPU per request,
        with one transaction per write and with group commit; see
        ``benchmarks/results/orch_client_cpu.md``.
        """
        prepared = self._prepare_call(**fields)
        return int(await self._queued(("call", prepared)) or 0)

    def _drain(self) -> None:
        """Writer thread: apply every queued write (see :meth:`arecord_call`)."""
        with self._queue_lock:
            group, self._queued_ops = self._queued_ops, []
            self._drain_scheduled = False
        if not group:
            return
        outcomes: list[tuple[int | None, BaseException | None]]
        try:
            results = self._write_ops([op for op, _, _ in group], f"{len(group)} telemetry writes")
            outcomes = [(r, None) for r in results]
        except Exception:
            outcomes = []
            for op, _, _ in group:  # one at a time: only the rejected write fails
                try:
                    outcomes.append((self._write_ops([op], _describe(op))[0], None))
                except Exception as exc:  # handed to that write's awaiting caller
                    outcomes.append((None, exc))
        # one wake-up per event loop for the whole group (each call_soon_threadsafe writes to
        # the loop's self-pipe: a syscall and a GIL handover per write before)
        settled: dict[asyncio.AbstractEventLoop, list[tuple[Any, ...]]] = {}
        for (_, future, loop), (value, error) in zip(group, outcomes, strict=True):
            settled.setdefault(loop, []).append((future, value, error))
        for loop, items in settled.items():
            loop.call_soon_threadsafe(_settle_all, items)

    def rebuild_rollups(self, *, chunk: int = 5000, max_pending: int = 512) -> int:
        """Recompute every ``expert_rollups`` row (and ``expert_phase_rollups`` row, from the
        calls that have a prefill/decode split) from ``model_calls``, in one transaction.

        Reads the calls in id order, ``chunk`` rows at a time, and keeps at most
        ``max_pending`` groups in memory before adding them to the table, so memory stays
        bounded whatever the number of calls. Writers wait while it runs (SQLite holds the
        write lock from the first delete to the commit); on failure nothing changes.

        Returns:
            The number of calls summed.

        Raises:
            TelemetryError: The database rejected the rebuild (rolled back).
        """
        columns = ROLLUP_SOURCE_COLUMNS
        total = 0
        with self._transaction("the expert rollups") as session:
            session.execute(delete(ExpertRollupRecord))
            session.execute(delete(ExpertPhaseRollupRecord))
            pending: dict[RollupKey, RollupDelta] = {}
            last_id = 0
            while True:
                rows = session.execute(
                    select(*columns)
                    .where(ModelCallRecord.expert_counts.is_not(None), ModelCallRecord.id > last_id)
                    .order_by(ModelCallRecord.id)
                    .limit(chunk)
                ).all()
                if not rows:
                    break
                last_id = rows[-1].id
                total += len(rows)
                for phase in ("", *PHASES):
                    sum_call_rows(rows, pending, phase=phase)
                if len(pending) > max_pending:
                    for key, delta in pending.items():
                        _add_to_rollup(session, key, delta)
                    session.flush()
                    pending.clear()
            for key, delta in pending.items():
                _add_to_rollup(session, key, delta)
        return total

    def close(self) -> None:
        """Wait for queued writes, then dispose of the connection pool."""
        self._writer.shutdown(wait=True)
        self.engine.dispose()
