"""The telemetry store: one row per request and one row per model call, on SQLAlchemy 2.0.

SQLite is the default (``sqlite:///runs/telemetry.db``); any SQLAlchemy URL works.

A ``model_calls`` row holds per-call **aggregates**, never one row per token, so millions of
calls stay queryable:

* ``expert_counts``: activations per (MoE layer, routed expert), a C-order little-endian blob
  of shape ``(len(moe_layers), num_experts)``; each row sums to ``routed_tokens * top_k``. Each
  count is stored in the smallest of uint8, uint16 or int32 that holds the call's largest count
  (a count never exceeds ``routed_tokens``); the width follows from the blob's length, and rows
  written before this rule are int32, which reads the same way. Decode with
  :func:`decode_counts`, which always returns int32.
* ``layer_confidence``: mean router confidence per MoE layer, float32 blob of shape
  ``(len(moe_layers),)``, NULL when the source returns none (vLLM's engine capture).
* ``routing_source``: ``engine``, ``replay``, ``dense``, ``unavailable`` or ``scripted``
  (see :mod:`serving.expert_routing`). Analyses must show it: a replay is an estimate.

An ``expert_rollups`` row sums the calls of one hour (UTC), workflow, node, routing source,
model and model shape (:class:`ExpertRollupRecord`). :meth:`TelemetryStore.record_call` updates it
in the call's own transaction, so reports read a few aggregates instead of every call's blob;
:meth:`TelemetryStore.rebuild_rollups` fills it for databases written before it existed.

Each row is written in its own transaction, so a failure leaves no half-written row.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
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
    create_engine,
    delete,
    event,
    func,
    select,
    tuple_,
    type_coerce,
)
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import IntegrityError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.pool import StaticPool

from orchestrator.classifier import Classification
from orchestrator.exceptions import TelemetryError, UserError
from orchestrator.request import Request
from serving.expert_routing import ExpertRoutingTrace


def _now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class RequestRecord(Base):
    """One handled request: its route, its workflow and how it ended."""

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


class ModelCallRecord(Base):
    """One model call's metadata and routing aggregates."""

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
    routing_source: Mapped[str] = mapped_column(String(16), index=True)
    routing_note: Mapped[str | None] = mapped_column(Text)
    moe_layers: Mapped[list[int]] = mapped_column(JSON)
    num_experts: Mapped[int] = mapped_column(Integer)
    top_k: Mapped[int] = mapped_column(Integer)
    routed_tokens: Mapped[int] = mapped_column(Integer)
    expert_counts: Mapped[bytes | None] = mapped_column(LargeBinary)
    layer_confidence: Mapped[bytes | None] = mapped_column(LargeBinary)
    mean_router_confidence: Mapped[float | None] = mapped_column(Float)


#: Time bucket of an ``expert_rollups`` row: one hour, aligned to UTC hours.
ROLLUP_BUCKET = timedelta(hours=1)
#: Bins of the per-call mean router confidence histogram kept in rollups (``[0, 1]``, width 0.05).
CONFIDENCE_BINS = 20
_COUNT_DTYPES = {1: "<u1", 2: "<u2", 4: "<i4"}


def encode_counts(counts: np.ndarray) -> bytes:
    """Pack a ``(layers, experts)`` count array into the smallest of uint8, uint16 or int32.

    Raises:
        UserError: A count is negative or does not fit in int32.
    """
    top = int(counts.max()) if counts.size else 0
    if counts.size and int(counts.min()) < 0:
        raise UserError("expert counts cannot be negative")
    if top < 2**8:
        dtype = "<u1"
    elif top < 2**16:
        dtype = "<u2"
    elif top < 2**31:
        dtype = "<i4"
    else:
        raise UserError(f"expert count {top} does not fit in int32")
    return np.ascontiguousarray(counts).astype(dtype).tobytes()


def decode_counts_blob(blob: bytes, layers: int, experts: int) -> np.ndarray:
    """Unpack an ``expert_counts`` blob into ``(layers, experts)`` int32.

    The count width (1, 2 or 4 bytes) follows from ``len(blob) / (layers * experts)``.

    Raises:
        TelemetryError: The blob's length fits no width.
    """
    cells = layers * experts
    width = len(blob) // cells if cells else 4
    if cells and (width not in _COUNT_DTYPES or width * cells != len(blob)):
        raise TelemetryError(
            f"expert_counts blob of {len(blob)} bytes does not hold {layers}x{experts} counts"
        )
    return np.frombuffer(blob, dtype=_COUNT_DTYPES[width]).astype(np.int32).reshape(layers, experts)


def decode_counts(record: ModelCallRecord) -> np.ndarray | None:
    """``record.expert_counts`` as ``(len(moe_layers), num_experts)`` int32, or None."""
    if record.expert_counts is None:
        return None
    return decode_counts_blob(record.expert_counts, len(record.moe_layers), record.num_experts)


def bucket_start(moment: datetime) -> datetime:
    """The start of the rollup bucket (UTC hour) that holds ``moment`` (naive = UTC)."""
    return as_utc(moment).replace(minute=0, second=0, microsecond=0)


def shape_key(moe_layers: Sequence[int], num_experts: int, top_k: int) -> str:
    """A model shape as text, e.g. ``"layers=1,2,3;experts=64;top_k=6"``."""
    return f"layers={','.join(map(str, moe_layers))};experts={num_experts};top_k={top_k}"


class ExpertRollupRecord(Base):
    """Routing aggregates of the calls of one (hour, workflow, node, source, model, shape).

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
    __table_args__ = (
        UniqueConstraint(
            "bucket_start",
            "workflow",
            "node",
            "routing_source",
            "model",
            "shape_key",
            name="uq_expert_rollup_group",
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bucket_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    workflow: Mapped[str] = mapped_column(String(64), index=True)
    node: Mapped[str] = mapped_column(String(64))
    routing_source: Mapped[str] = mapped_column(String(16))
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


@dataclass
class RollupDelta:
    """What one or more calls add to a rollup row (numpy arrays; see ExpertRollupRecord)."""

    calls: int
    routed_tokens: int
    counts: np.ndarray
    sq_counts: np.ndarray
    conf_calls: int
    conf_tokens: int
    conf_sum: float
    conf_hist: np.ndarray
    layer_conf_sum: np.ndarray

    @classmethod
    def of_calls(
        cls,
        counts: np.ndarray,
        routed_tokens: np.ndarray,
        top_k: int,
        mean_conf: np.ndarray,
        layer_conf: np.ndarray,
    ) -> RollupDelta:
        """Sum a batch of calls of one group, vectorised.

        Args:
            counts: ``(calls, L, E)`` expert counts.
            routed_tokens: ``(calls,)``.
            top_k: Experts per token.
            mean_conf: ``(calls,)`` mean router confidence, NaN where none was measured.
            layer_conf: ``(calls, L)`` per-layer mean router confidence, NaN where none.
        """
        counts64 = counts.astype(np.int64, copy=False)
        activations = np.maximum(routed_tokens.astype(np.float64) * top_k, 1.0)
        has_conf = ~np.isnan(mean_conf)
        tokens_conf = np.where(has_conf, routed_tokens, 0)
        bins = np.clip(
            (mean_conf[has_conf] * CONFIDENCE_BINS).astype(np.int64), 0, CONFIDENCE_BINS - 1
        )
        layer_ok = ~np.isnan(layer_conf)
        return cls(
            calls=int(counts.shape[0]),
            routed_tokens=int(routed_tokens.sum()),
            counts=counts64.sum(axis=0),
            sq_counts=(counts64.astype(np.float64) ** 2 / activations[:, None, None]).sum(axis=0),
            conf_calls=int(has_conf.sum()),
            conf_tokens=int(tokens_conf.sum()),
            conf_sum=float(np.nansum(mean_conf * routed_tokens)),
            conf_hist=np.bincount(bins, minlength=CONFIDENCE_BINS).astype(np.int64),
            layer_conf_sum=np.where(layer_ok, layer_conf, 0.0).T @ routed_tokens.astype(np.float64),
        )

    @classmethod
    def zeros(cls, layers: int, experts: int) -> RollupDelta:
        """An empty delta of the given shape."""
        return cls(
            calls=0,
            routed_tokens=0,
            counts=np.zeros((layers, experts), dtype=np.int64),
            sq_counts=np.zeros((layers, experts)),
            conf_calls=0,
            conf_tokens=0,
            conf_sum=0.0,
            conf_hist=np.zeros(CONFIDENCE_BINS, dtype=np.int64),
            layer_conf_sum=np.zeros(layers),
        )

    @classmethod
    def of_record(cls, record: ExpertRollupRecord) -> RollupDelta:
        """The sums held by one rollup row, as arrays (read-only views of its blobs)."""
        layers, experts = len(record.moe_layers), record.num_experts
        return cls(
            calls=record.calls,
            routed_tokens=record.routed_tokens,
            counts=_i8(record.counts, (layers, experts)),
            sq_counts=_f8(record.sq_counts, (layers, experts)),
            conf_calls=record.conf_calls,
            conf_tokens=record.conf_tokens,
            conf_sum=record.conf_sum,
            conf_hist=_i8(record.conf_hist, (CONFIDENCE_BINS,)),
            layer_conf_sum=_f8(record.layer_conf_sum, (layers,)),
        )

    def add_to(self, record: ExpertRollupRecord) -> None:
        """Add this delta to an existing row in place."""
        layers, experts = len(record.moe_layers), record.num_experts
        record.calls += self.calls
        record.routed_tokens += self.routed_tokens
        record.counts = (_i8(record.counts, (layers, experts)) + self.counts).tobytes()
        record.sq_counts = (_f8(record.sq_counts, (layers, experts)) + self.sq_counts).tobytes()
        record.conf_calls += self.conf_calls
        record.conf_tokens += self.conf_tokens
        record.conf_sum += self.conf_sum
        record.conf_hist = (_i8(record.conf_hist, (CONFIDENCE_BINS,)) + self.conf_hist).tobytes()
        record.layer_conf_sum = (
            _f8(record.layer_conf_sum, (layers,)) + self.layer_conf_sum
        ).tobytes()

    def merge(self, other: RollupDelta) -> None:
        """Add another delta of the same group in place."""
        self.calls += other.calls
        self.routed_tokens += other.routed_tokens
        self.counts = self.counts + other.counts
        self.sq_counts = self.sq_counts + other.sq_counts
        self.conf_calls += other.conf_calls
        self.conf_tokens += other.conf_tokens
        self.conf_sum += other.conf_sum
        self.conf_hist = self.conf_hist + other.conf_hist
        self.layer_conf_sum = self.layer_conf_sum + other.layer_conf_sum


def _i8(blob: bytes, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(blob, dtype="<i8").reshape(shape)


def _f8(blob: bytes, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f8").reshape(shape)


@dataclass(frozen=True)
class RollupKey:
    """The group an ``expert_rollups`` row sums."""

    bucket_start: datetime
    workflow: str
    node: str
    routing_source: str
    model: str
    moe_layers: tuple[int, ...]
    num_experts: int
    top_k: int

    @property
    def shape_key(self) -> str:
        return shape_key(self.moe_layers, self.num_experts, self.top_k)


def _new_rollup(key: RollupKey, delta: RollupDelta) -> ExpertRollupRecord:
    return ExpertRollupRecord(
        bucket_start=key.bucket_start,
        workflow=key.workflow,
        node=key.node,
        routing_source=key.routing_source,
        model=key.model,
        shape_key=key.shape_key,
        moe_layers=list(key.moe_layers),
        num_experts=key.num_experts,
        top_k=key.top_k,
        calls=delta.calls,
        routed_tokens=delta.routed_tokens,
        counts=delta.counts.astype("<i8").tobytes(),
        sq_counts=delta.sq_counts.astype("<f8").tobytes(),
        conf_calls=delta.conf_calls,
        conf_tokens=delta.conf_tokens,
        conf_sum=delta.conf_sum,
        conf_hist=delta.conf_hist.astype("<i8").tobytes(),
        layer_conf_sum=delta.layer_conf_sum.astype("<f8").tobytes(),
    )


def _add_to_rollup(session: Session, key: RollupKey, delta: RollupDelta) -> None:
    """Add ``delta`` to the key's rollup row, creating it when missing (inside a transaction)."""
    record = session.scalars(
        select(ExpertRollupRecord)
        .where(
            ExpertRollupRecord.bucket_start == key.bucket_start,
            ExpertRollupRecord.workflow == key.workflow,
            ExpertRollupRecord.node == key.node,
            ExpertRollupRecord.routing_source == key.routing_source,
            ExpertRollupRecord.model == key.model,
            ExpertRollupRecord.shape_key == key.shape_key,
        )
        .with_for_update()
    ).first()
    if record is None:
        session.add(_new_rollup(key, delta))
    else:
        delta.add_to(record)


@dataclass(frozen=True)
class CallCounts:
    """A batch of model calls with routing, as arrays (see ``TelemetryStore.iter_call_counts``).

    Attributes:
        ids: ``(n,)`` model-call ids.
        request_ids: Request id per call.
        workflows: Workflow per call.
        nodes: Node per call.
        created_at: Time of each call (UTC).
        routed_tokens: ``(n,)`` tokens that passed the router.
        counts: ``(n, L, E)`` int32 expert counts.
        sources: Routing source per call.
        top_k: ``(n,)`` experts per token.
        moe_layers: Model-layer index of each row of the layer axis (same for every call).
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


def _stack_counts(blobs: Sequence[bytes], layers: int, experts: int) -> np.ndarray:
    """Decode many ``expert_counts`` blobs of one shape into ``(n, layers, experts)`` int32.

    Blobs of one width are joined and decoded with one ``np.frombuffer`` call.
    """
    out = np.empty((len(blobs), layers, experts), dtype=np.int32)
    cells = layers * experts
    widths = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    for width, dtype in _COUNT_DTYPES.items():
        rows = np.flatnonzero(widths == width * cells)
        if rows.size:
            joined = b"".join(blobs[i] for i in rows)
            out[rows] = np.frombuffer(joined, dtype=dtype).reshape(rows.size, layers, experts)
    bad = ~np.isin(widths, [w * cells for w in _COUNT_DTYPES])
    if bad.any():
        raise TelemetryError(
            f"expert_counts blob of {int(widths[bad][0])} bytes does not hold "
            f"{layers}x{experts} counts"
        )
    return out


def as_utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (SQLite returns naive datetimes, stored as UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _rows_delta(rows: Sequence[Any], key: RollupKey) -> RollupDelta:
    """The rollup delta of model-call rows (Core rows) of one group."""
    layers = len(key.moe_layers)
    counts = _stack_counts([r.expert_counts for r in rows], layers, key.num_experts)
    layer_conf = np.full((len(rows), layers), np.nan)
    for i, r in enumerate(rows):
        if r.layer_confidence is not None and len(r.layer_confidence) == 4 * layers:
            layer_conf[i] = np.frombuffer(r.layer_confidence, dtype="<f4")
    return RollupDelta.of_calls(
        counts,
        np.fromiter((r.routed_tokens for r in rows), dtype=np.int64, count=len(rows)),
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


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the writer
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


class TelemetryStore:
    """Writes and reads requests and model calls.

    Args:
        url: A SQLAlchemy URL; a SQLite file's folder is created when missing.

    Raises:
        UserError: The URL cannot be parsed.
        TelemetryError: From the write methods, when the database rejects a write (the
            transaction is rolled back, so no partial row remains).

    Example:
        >>> store = TelemetryStore("sqlite:///:memory:")
        >>> store.count_calls()
        0
    """

    def __init__(self, url: str) -> None:
        parsed = _parse_url(url)
        self.url = url
        backend = parsed.get_backend_name()
        in_memory = backend == "sqlite" and parsed.database in (None, "", ":memory:")
        if backend == "sqlite" and not in_memory:
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        shown = parsed.render_as_string(hide_password=True)
        try:
            # One shared connection for an in-memory database, so the writer thread and the
            # caller see the same database (the default pool gives each thread its own one).
            self.engine: Engine = (
                create_engine(
                    parsed, poolclass=StaticPool, connect_args={"check_same_thread": False}
                )
                if in_memory
                else create_engine(parsed)
            )
            if backend == "sqlite":
                event.listen(self.engine, "connect", _sqlite_pragmas)
            Base.metadata.create_all(self.engine)
        except (ImportError, NoSuchModuleError) as exc:
            raise UserError(
                f"telemetry database {shown}: SQLAlchemy has no driver for it here ({exc}); "
                "install the driver (for PostgreSQL: pip install 'psycopg[binary]' and use "
                "postgresql+psycopg://...) or use a sqlite:/// URL"
            ) from exc
        except SQLAlchemyError as exc:
            reason = getattr(exc, "orig", None) or exc
            raise UserError(
                f"cannot open telemetry database {shown}: {reason}; pass --database-url (or "
                "ORCH_DATABASE_URL) of a SQLite file or a reachable database"
            ) from exc
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # One writer thread: async callers hand rows to it, so the event loop never waits on a
        # commit, and rows are written one at a time in arrival order (SQLite has one writer).
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="telemetry-writer")

    @classmethod
    def open_existing(cls, url: str) -> TelemetryStore:
        """Open a telemetry database that must already exist, for commands that only read.

        Opening a new SQLite path would create an empty database (and turn any file into
        one), so for SQLite the file must exist and already hold the ``model_calls`` table.

        Raises:
            UserError: The URL is malformed; the SQLite file is missing, in memory, not a
                SQLite database, or a SQLite database without telemetry tables.
        """
        parsed = _parse_url(url)
        if parsed.get_backend_name() == "sqlite":
            database = parsed.database
            if database in (None, "", ":memory:"):
                raise UserError("an in-memory SQLite database holds no telemetry; give a file URL")
            path = Path(database)
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
        return cls(url)

    @contextmanager
    def _transaction(self, what: str) -> Iterator[Session]:
        try:
            with self._sessions.begin() as session:
                yield session
        except SQLAlchemyError as exc:
            raise TelemetryError(f"could not write {what} to {self.url}: {exc}") from exc

    def start_request(
        self, request: Request, classification: Classification, workflow: str | None
    ) -> None:
        """Insert the request's row with status ``running``."""
        with self._transaction(f"request {request.id}") as session:
            session.add(
                RequestRecord(
                    id=request.id,
                    received_at=request.received_at,
                    text=request.text,
                    channel=request.channel,
                    source=request.metadata.get("source"),
                    route=classification.route.value,
                    route_confidence=classification.confidence,
                    classifier_signals=[s.model_dump(mode="json") for s in classification.signals],
                    workflow=workflow,
                    status="running",
                )
            )

    def finish_request(
        self,
        request_id: str,
        status: str,
        *,
        error: str | None = None,
        result: dict[str, Any] | None = None,
    ) -> None:
        """Set the request's final status (``succeeded``, ``failed``, ``needs_human``...)."""
        with self._transaction(f"request {request_id}") as session:
            record = session.get(RequestRecord, request_id)
            if record is None:
                raise TelemetryError(f"request {request_id} was never started in {self.url}")
            record.status, record.error, record.result = status, error, result
            record.finished_at = _now()

    def record_call(
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
    ) -> int:
        """Insert one model call's row and return its id.

        Args:
            request_id: The request the call served.
            classification: The classifier's route, confidence and signals for that request.
            workflow: Workflow name.
            node: Node (step) name within the workflow.
            model: Served model name.
            latency_ms: Wall time of the HTTP call in milliseconds.
            finish_reason: ``stop``, ``length``...
            routing: The call's routing trace; its counts are aggregated here.
        """
        counts = routing.expert_counts() if routing.has_routing else None
        layer_conf = routing.confidence_per_layer()
        mean_conf = routing.mean_confidence()
        created_at = _now()
        key = delta = None
        if counts is not None:
            key = RollupKey(
                bucket_start=bucket_start(created_at),
                workflow=workflow,
                node=node,
                routing_source=routing.source.value,
                model=model,
                moe_layers=tuple(routing.moe_layers),
                num_experts=routing.num_experts,
                top_k=routing.top_k,
            )
            layers = len(routing.moe_layers)
            delta = RollupDelta.of_calls(
                counts[None],
                np.array([routing.routed_tokens]),
                routing.top_k,
                np.array([np.nan if mean_conf is None else mean_conf]),
                (np.full((1, layers), np.nan) if layer_conf is None else layer_conf[None]),
            )
        # Two writers may both create the same new rollup row; the loser's transaction is
        # rolled back whole (no partial row) and retried once, when the row then exists.
        for attempt in (1, 2):
            try:
                with self._transaction(f"model call of request {request_id}") as session:
                    record = ModelCallRecord(
                        created_at=created_at,
                        request_id=request_id,
                        route=classification.route.value,
                        route_confidence=classification.confidence,
                        classifier_signals=[
                            s.model_dump(mode="json") for s in classification.signals
                        ],
                        workflow=workflow,
                        node=node,
                        model=model,
                        prompt_tokens=routing.prompt_tokens,
                        completion_tokens=routing.completion_tokens,
                        latency_ms=latency_ms,
                        finish_reason=finish_reason,
                        routing_source=routing.source.value,
                        routing_note=routing.reason,
                        moe_layers=list(routing.moe_layers),
                        num_experts=routing.num_experts,
                        top_k=routing.top_k,
                        routed_tokens=routing.routed_tokens,
                        expert_counts=None if counts is None else encode_counts(counts),
                        layer_confidence=None
                        if layer_conf is None
                        else layer_conf.astype("<f4").tobytes(),
                        mean_router_confidence=mean_conf,
                    )
                    session.add(record)
                    session.flush()  # the call row first: it takes the write lock
                    if key is not None and delta is not None:
                        _add_to_rollup(session, key, delta)
                    return record.id
            except TelemetryError as exc:
                if attempt == 2 or not isinstance(exc.__cause__, IntegrityError):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _on_writer(self, write: Any, /, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._writer, partial(write, *args, **kwargs))

    async def astart_request(
        self, request: Request, classification: Classification, workflow: str | None
    ) -> None:
        """:meth:`start_request` on the store's writer thread (the event loop does not wait)."""
        await self._on_writer(self.start_request, request, classification, workflow)

    async def afinish_request(self, request_id: str, status: str, **fields: Any) -> None:
        """:meth:`finish_request` on the store's writer thread; same arguments, same errors."""
        await self._on_writer(self.finish_request, request_id, status, **fields)

    async def arecord_call(self, **fields: Any) -> int:
        """:meth:`record_call` on the store's writer thread; same arguments, same errors.

        Rows are written one at a time in the order they were handed over, and the event loop
        keeps serving other requests while a row is committed.
        """
        return int(await self._on_writer(self.record_call, **fields))

    def calls(
        self,
        *,
        request_id: str | None = None,
        workflow: str | None = None,
        since: datetime | None = None,
    ) -> Sequence[ModelCallRecord]:
        """Model-call rows, oldest first, optionally filtered (``since``: created at or after)."""
        query = select(ModelCallRecord).order_by(ModelCallRecord.id)
        if since is not None:
            query = query.where(ModelCallRecord.created_at >= since)
        if request_id is not None:
            query = query.where(ModelCallRecord.request_id == request_id)
        if workflow is not None:
            query = query.where(ModelCallRecord.workflow == workflow)
        with self._sessions() as session:
            return session.scalars(query).all()

    def iter_rollups(
        self,
        *,
        start: datetime | None = None,
        end: datetime | None = None,
        workflow: str | None = None,
        model: str | None = None,
        chunk: int = 256,
    ) -> Iterator[ExpertRollupRecord]:
        """Rollup rows whose bucket starts in ``[start, end)``, oldest first, streamed.

        Rows are fetched ``chunk`` at a time, so memory does not grow with the window.
        Buckets are whole UTC hours (:data:`ROLLUP_BUCKET`): pass hour-aligned bounds.
        """
        query = select(ExpertRollupRecord).order_by(
            ExpertRollupRecord.bucket_start, ExpertRollupRecord.id
        )
        if start is not None:
            query = query.where(ExpertRollupRecord.bucket_start >= start)
        if end is not None:
            query = query.where(ExpertRollupRecord.bucket_start < end)
        if workflow is not None:
            query = query.where(ExpertRollupRecord.workflow == workflow)
        if model is not None:
            query = query.where(ExpertRollupRecord.model == model)
        with self._sessions() as session:
            yield from session.scalars(query.execution_options(yield_per=chunk))

    def rollup_workflows(self) -> list[str]:
        """Workflows that have rollup rows, sorted."""
        with self._sessions() as session:
            return sorted(session.scalars(select(ExpertRollupRecord.workflow).distinct()).all())

    def rollup_span(self) -> tuple[datetime, datetime] | None:
        """First and last rollup bucket start (UTC), or None when there is no rollup."""
        with self._sessions() as session:
            first, last = session.execute(
                select(
                    func.min(ExpertRollupRecord.bucket_start),
                    func.max(ExpertRollupRecord.bucket_start),
                )
            ).one()
        if first is None or last is None:
            return None
        return bucket_start(first), bucket_start(last)

    def rollup_status(self) -> tuple[int, int]:
        """``(calls with routing, calls summed in rollups)``, read in one statement.

        :meth:`record_call` writes a call and its rollup in one transaction, so the two agree
        unless calls were written without rollups (by an older version, or by bulk inserts);
        then :meth:`rebuild_rollups` brings them back in line.
        """
        calls = (
            select(func.count(ModelCallRecord.id))
            .where(ModelCallRecord.expert_counts.is_not(None))
            .scalar_subquery()
        )
        summed = select(func.coalesce(func.sum(ExpertRollupRecord.calls), 0)).scalar_subquery()
        with self._sessions() as session:
            a, b = session.execute(select(calls, summed)).one()
        return int(a or 0), int(b or 0)

    def rebuild_rollups(self, *, chunk: int = 5000, max_pending: int = 512) -> int:
        """Recompute every ``expert_rollups`` row from ``model_calls``, in one transaction.

        Reads the calls in id order, ``chunk`` rows at a time, and keeps at most
        ``max_pending`` groups in memory before adding them to the table, so memory stays
        bounded whatever the number of calls. Writers wait while it runs (SQLite holds the
        write lock from the first delete to the commit); on failure nothing changes.

        Returns:
            The number of calls summed.

        Raises:
            TelemetryError: The database rejected the rebuild (rolled back).
        """
        columns = (
            ModelCallRecord.id,
            ModelCallRecord.created_at,
            ModelCallRecord.workflow,
            ModelCallRecord.node,
            ModelCallRecord.routing_source,
            ModelCallRecord.model,
            ModelCallRecord.moe_layers,
            ModelCallRecord.num_experts,
            ModelCallRecord.top_k,
            ModelCallRecord.routed_tokens,
            ModelCallRecord.expert_counts,
            ModelCallRecord.layer_confidence,
            ModelCallRecord.mean_router_confidence,
        )
        total = 0
        with self._transaction("the expert rollups") as session:
            session.execute(delete(ExpertRollupRecord))
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
                groups: dict[RollupKey, list[int]] = {}
                for i, row in enumerate(rows):
                    key = RollupKey(
                        bucket_start(row.created_at),
                        row.workflow,
                        row.node,
                        row.routing_source,
                        row.model,
                        tuple(row.moe_layers),
                        row.num_experts,
                        row.top_k,
                    )
                    groups.setdefault(key, []).append(i)
                for key, members in groups.items():
                    delta = _rows_delta([rows[i] for i in members], key)
                    if key in pending:
                        pending[key].merge(delta)
                    else:
                        pending[key] = delta
                if len(pending) > max_pending:
                    for key, delta in pending.items():
                        _add_to_rollup(session, key, delta)
                    session.flush()
                    pending.clear()
            for key, delta in pending.items():
                _add_to_rollup(session, key, delta)
        return total

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
    ) -> Iterator[CallCounts]:
        """The calls with routing in ``[start, end)``, newest first, as arrays in chunks.

        Memory is bounded by ``chunk`` calls (``chunk * L * E * 4`` bytes of counts).

        Args:
            start: Created at or after (UTC).
            end: Created before (UTC).
            workflow: Only this workflow.
            model: Only this served model.
            shape: ``(moe_layers, num_experts)`` the calls must have; None takes the first
                call's shape.
            limit: At most this many calls (the newest); None for all.
            chunk: Calls per yielded batch.

        Raises:
            UserError: A call's shape differs from ``shape`` (use one database per model).
        """
        if chunk < 1:
            raise UserError(f"chunk must be at least 1, got {chunk}")
        remaining = limit if limit is not None else None
        last: tuple[datetime, int] | None = None
        while remaining is None or remaining > 0:
            query = (
                select(
                    ModelCallRecord.id,
                    ModelCallRecord.request_id,
                    ModelCallRecord.workflow,
                    ModelCallRecord.node,
                    ModelCallRecord.created_at,
                    # raw JSON text, decoded once per distinct value below, not once per row
                    type_coerce(ModelCallRecord.moe_layers, String).label("moe_layers"),
                    ModelCallRecord.num_experts,
                    ModelCallRecord.routed_tokens,
                    ModelCallRecord.expert_counts,
                    ModelCallRecord.routing_source,
                    ModelCallRecord.top_k,
                )
                .where(ModelCallRecord.expert_counts.is_not(None))
                # newest first along the created_at index, which also serves the window's
                # range: ordering by id instead made SQLite sort every call in the range
                .order_by(ModelCallRecord.created_at.desc(), ModelCallRecord.id.desc())
                .limit(chunk if remaining is None else min(chunk, remaining))
            )
            if last is not None:
                query = query.where(
                    tuple_(ModelCallRecord.created_at, ModelCallRecord.id) < tuple_(*last)
                )
            if start is not None:
                query = query.where(ModelCallRecord.created_at >= start)
            if end is not None:
                query = query.where(ModelCallRecord.created_at < end)
            if workflow is not None:
                query = query.where(ModelCallRecord.workflow == workflow)
            if model is not None:
                query = query.where(ModelCallRecord.model == model)
            with self._sessions() as session:
                rows = session.execute(query).all()
            if not rows:
                return
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
            last = (rows[-1].created_at, rows[-1].id)
            if remaining is not None:
                remaining -= len(rows)
            yield CallCounts(
                ids=np.fromiter((r.id for r in rows), dtype=np.int64, count=len(rows)),
                request_ids=[r.request_id for r in rows],
                workflows=[r.workflow for r in rows],
                nodes=[r.node for r in rows],
                created_at=[as_utc(r.created_at) for r in rows],
                routed_tokens=np.fromiter(
                    (r.routed_tokens for r in rows), dtype=np.int64, count=len(rows)
                ),
                counts=_stack_counts([r.expert_counts for r in rows], len(shape[0]), shape[1]),
                sources=[r.routing_source for r in rows],
                top_k=np.fromiter((r.top_k for r in rows), dtype=np.int64, count=len(rows)),
                moe_layers=shape[0],
            )

    def request_texts(self, request_ids: Sequence[str]) -> dict[str, str]:
        """Text of the given requests (those that exist), by id."""
        if not request_ids:
            return {}
        with self._sessions() as session:
            rows = session.execute(
                select(RequestRecord.id, RequestRecord.text).where(
                    RequestRecord.id.in_(list(request_ids))
                )
            ).all()
        return {r.id: r.text for r in rows}

    def requests(self, *, status: str | None = None) -> Sequence[RequestRecord]:
        """Request rows in arrival order, optionally only those with ``status``."""
        query = select(RequestRecord).order_by(RequestRecord.received_at)
        if status is not None:
            query = query.where(RequestRecord.status == status)
        with self._sessions() as session:
            return session.scalars(query).all()

    def count_calls(
        self,
        *,
        workflow: str | None = None,
        since: datetime | None = None,
        with_routing: bool | None = None,
    ) -> int:
        """Number of model-call rows, optionally of one workflow, created at or after
        ``since``, and with (True) or without (False) expert counts."""
        query = select(func.count(ModelCallRecord.id))
        if workflow is not None:
            query = query.where(ModelCallRecord.workflow == workflow)
        if since is not None:
            query = query.where(ModelCallRecord.created_at >= since)
        if with_routing is not None:
            column = ModelCallRecord.expert_counts
            query = query.where(column.is_not(None) if with_routing else column.is_(None))
        with self._sessions() as session:
            return int(session.scalar(query) or 0)

    def close(self) -> None:
        """Wait for queued writes, then dispose of the connection pool."""
        self._writer.shutdown(wait=True)
        self.engine.dispose()
