"""The telemetry store: one row per request and one row per model call, on SQLAlchemy 2.0.

SQLite is the default (``sqlite:///runs/telemetry.db``); any SQLAlchemy URL works.

A ``model_calls`` row holds per-call **aggregates**, never one row per token, so millions of
calls stay queryable:

* ``expert_counts``: activations per (MoE layer, routed expert), a C-order little-endian int32
  blob of shape ``(len(moe_layers), num_experts)``; each row sums to ``routed_tokens * top_k``.
  Decode with :func:`decode_counts`.
* ``layer_confidence``: mean router confidence per MoE layer, float32 blob of shape
  ``(len(moe_layers),)``, NULL when the source returns none (vLLM's engine capture).
* ``routing_source``: ``engine``, ``replay``, ``dense``, ``unavailable`` or ``scripted``
  (see :mod:`serving.routing`). Analyses must show it: a replay is an estimate.

Each row is written in its own transaction, so a failure leaves no half-written row.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
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
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.pool import StaticPool

from orchestrator.classifier import Classification
from orchestrator.exceptions import TelemetryError, UserError
from orchestrator.request import Request
from serving.routing import RoutingTrace


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


def decode_counts(record: ModelCallRecord) -> np.ndarray | None:
    """``record.expert_counts`` as ``(len(moe_layers), num_experts)`` int32, or None."""
    if record.expert_counts is None:
        return None
    return np.frombuffer(record.expert_counts, dtype="<i4").reshape(
        len(record.moe_layers), record.num_experts
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
        try:
            parsed = make_url(url)
        except Exception as exc:  # sqlalchemy raises ArgumentError with no common base
            raise UserError(
                f"telemetry database URL {url!r} is not a SQLAlchemy URL: {exc}"
            ) from exc
        self.url = url
        if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        in_memory = parsed.get_backend_name() == "sqlite" and parsed.database in (
            None,
            "",
            ":memory:",
        )
        self.engine: Engine = (
            create_engine(parsed, poolclass=StaticPool, connect_args={"check_same_thread": False})
            if in_memory
            else create_engine(parsed)
        )
        if parsed.get_backend_name() == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        Base.metadata.create_all(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # One writer thread: async callers hand rows to it, so the event loop never waits on a
        # commit, and rows are written one at a time in arrival order (SQLite has one writer).
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="telemetry-writer")

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
        routing: RoutingTrace,
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
        with self._transaction(f"model call of request {request_id}") as session:
            record = ModelCallRecord(
                created_at=_now(),
                request_id=request_id,
                route=classification.route.value,
                route_confidence=classification.confidence,
                classifier_signals=[s.model_dump(mode="json") for s in classification.signals],
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
                expert_counts=None if counts is None else counts.astype("<i4").tobytes(),
                layer_confidence=None if layer_conf is None else layer_conf.astype("<f4").tobytes(),
                mean_router_confidence=routing.mean_confidence(),
            )
            session.add(record)
            session.flush()
            return record.id

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

    def requests(self, *, status: str | None = None) -> Sequence[RequestRecord]:
        """Request rows in arrival order, optionally only those with ``status``."""
        query = select(RequestRecord).order_by(RequestRecord.received_at)
        if status is not None:
            query = query.where(RequestRecord.status == status)
        with self._sessions() as session:
            return session.scalars(query).all()

    def count_calls(self) -> int:
        """Number of model-call rows."""
        with self._sessions() as session:
            return int(session.scalar(select(func.count(ModelCallRecord.id))) or 0)

    def close(self) -> None:
        """Dispose of the connection pool."""
        self._writer.shutdown(wait=True)
        self.engine.dispose()
