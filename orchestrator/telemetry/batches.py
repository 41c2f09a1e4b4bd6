"""Progress of batch jobs in the telemetry store: one ``batches`` row per job, one
``batch_rows`` row per finished input row (tables: :mod:`orchestrator.telemetry.schema`).

A row is recorded once its request has ended (done or failed); ``(batch_id, row_index)`` is
unique, so recording a row again (a failed row retried) updates it in place, and a resumed
run can neither lose nor duplicate a row. Writes go through the store's writer thread; a
running batch's rows are committed in groups with the request and call rows queued at the same
time (one transaction a group, Core statements: no ORM unit of work per row).

Example:
    >>> from orchestrator.telemetry import TelemetryStore
    >>> ledger = BatchLedger(TelemetryStore("sqlite:///:memory:"))
    >>> ledger.open_batch("b1", source="in.csv", mapping={"text": "body"}, total_rows=2)
    >>> ledger.record_row("b1", 0, row_id="r0", request_id="b1.0.x", status="succeeded",
    ...                   attempts=1, output={"id": "r0"})
    >>> ledger.finished_rows("b1")
    {0: 'succeeded'}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, TypedDict, Unpack

from sqlalchemy import func, select, update

from orchestrator.exceptions import TelemetryError, UserError
from orchestrator.telemetry.read import TelemetryReader
from orchestrator.telemetry.schema import (
    BatchRecord,
    BatchRowRecord,
    ModelCallRecord,
    RequestRecord,
)
from orchestrator.telemetry.store import TelemetryStore, _apply_batch_row


class RowFields(TypedDict):
    """The outcome fields of one input row that :meth:`BatchLedger.record_row` and
    :meth:`BatchLedger.arecord_row` take as keyword arguments (one definition for both)."""

    row_id: str
    request_id: str | None
    status: str
    attempts: int
    output: Mapping[str, Any]


def _row_fields(
    batch_id: str, row_index: int, fields: RowFields, finished_at: datetime
) -> dict[str, Any]:
    """The ``batch_rows`` columns of one recorded row."""
    return {
        "batch_id": batch_id,
        "row_index": row_index,
        **fields,
        "finished_at": finished_at,
        "output": dict(fields["output"]),
    }


#: Request status given to a batch's requests left ``running`` by a killed process.
INTERRUPTED = "interrupted"


class BatchLedger:
    """Reads and writes the progress of batch jobs in a :class:`TelemetryStore`.

    Args:
        store: The telemetry store (any backend); its writer thread serialises the writes.
    """

    def __init__(self, store: TelemetryStore) -> None:
        self.store = store

    def open_batch(
        self, batch_id: str, *, source: str, mapping: Mapping[str, Any], total_rows: int
    ) -> None:
        """Create the batch's row, or check an existing one and stamp it as resumed.

        Raises:
            UserError: ``batch_id`` exists with another column mapping (the message says to
                pass another ``--batch-id``).
            TelemetryError: The database rejected the write.
        """
        now = self.store.clock()
        with self.store._transaction(f"batch {batch_id}") as session:
            record = session.get(BatchRecord, batch_id)
            if record is None:
                session.add(
                    BatchRecord(
                        id=batch_id,
                        created_at=now,
                        updated_at=now,
                        source=source,
                        mapping=dict(mapping),
                        total_rows=total_rows,
                    )
                )
                return
            if dict(record.mapping) != dict(mapping):
                raise UserError(
                    f"batch {batch_id} exists with column mapping {record.mapping}, not "
                    f"{dict(mapping)}; pass another --batch-id to start a new batch"
                )
            record.updated_at, record.total_rows = now, total_rows

    def batch(self, batch_id: str) -> BatchRecord | None:
        """The batch's row (detached), or None."""
        with self.store._session() as session:
            return session.get(BatchRecord, batch_id)

    def finished_rows(self, batch_id: str) -> dict[int, str]:
        """``{row_index: status}`` of the rows recorded so far."""
        with self.store._session() as session:
            rows = session.execute(
                select(BatchRowRecord.row_index, BatchRowRecord.status).where(
                    BatchRowRecord.batch_id == batch_id
                )
            ).all()
        return {r.row_index: r.status for r in rows}

    def attempts(self, batch_id: str, row_index: int) -> int:
        """Runs of the row recorded so far (0 when it was never recorded)."""
        with self.store._session() as session:
            value = session.scalar(
                select(BatchRowRecord.attempts).where(
                    BatchRowRecord.batch_id == batch_id, BatchRowRecord.row_index == row_index
                )
            )
        return int(value or 0)

    def record_row(self, batch_id: str, row_index: int, **fields: Unpack[RowFields]) -> None:
        """Record (insert, or update in place) the outcome of one input row, atomically.

        Args:
            batch_id: The batch (its row must exist: :meth:`open_batch`).
            row_index: 0-based position of the row among the input's data rows.

        Keyword args (:class:`RowFields`):
            row_id: The row's id (the id column, or its row number).
            request_id: The newest request sent for it (None when none was sent).
            status: ``succeeded``, ``failed``, ``rejected``, ``needs_human``...
            attempts: Runs of this row in total, earlier runs included.
            output: The results-file columns of the row (JSON-serialisable).

        Raises:
            TelemetryError: The database rejected the write (nothing is changed).
        """
        row = _row_fields(batch_id, row_index, fields, self.store.clock())
        with self.store._transaction(f"row {row_index} of batch {batch_id}") as session:
            _apply_batch_row(session, row)

    async def arecord_row(self, batch_id: str, row_index: int, **fields: Unpack[RowFields]) -> None:
        """:meth:`record_row` through the store's writer thread, committed with the other
        telemetry writes queued at the same time (one transaction for the group, as the
        request and call rows); same arguments, same errors."""
        row = _row_fields(batch_id, row_index, fields, self.store.clock())
        await self.store._queued(("row", row))

    def iter_rows(self, batch_id: str, *, chunk: int = 2000) -> Iterator[BatchRowRecord]:
        """The batch's recorded rows in input order, streamed ``chunk`` at a time."""
        last = -1
        while True:
            with self.store._session() as session:
                rows = session.scalars(
                    select(BatchRowRecord)
                    .where(BatchRowRecord.batch_id == batch_id, BatchRowRecord.row_index > last)
                    .order_by(BatchRowRecord.row_index)
                    .limit(chunk)
                ).all()
            if not rows:
                return
            yield from rows
            last = rows[-1].row_index

    def status_counts(self, batch_id: str) -> dict[str, int]:
        """``{status: rows}`` of the recorded rows."""
        with self.store._session() as session:
            rows = session.execute(
                select(BatchRowRecord.status, func.count(BatchRowRecord.id))
                .where(BatchRowRecord.batch_id == batch_id)
                .group_by(BatchRowRecord.status)
            ).all()
        return {status: int(n) for status, n in rows}

    def close_interrupted(self, batch_id: str) -> int:
        """Mark the batch's requests still ``running`` (their process was killed) as
        ``interrupted``; returns how many. Call it only when no run of the batch is alive.

        Raises:
            TelemetryError: The database rejected the write.
        """
        with self.store._transaction(f"interrupted requests of batch {batch_id}") as session:
            result = session.execute(
                update(RequestRecord)
                .where(RequestRecord.batch_id == batch_id, RequestRecord.status == "running")
                .values(
                    status=INTERRUPTED,
                    error="the batch process stopped before the request ended",
                    finished_at=self.store.clock(),
                )
            )
        count = getattr(result, "rowcount", 0)
        if count is None or count < 0:  # pragma: no cover - every backend here reports it
            raise TelemetryError(f"could not count interrupted requests of batch {batch_id}")
        return int(count)

    def request_count(self, batch_id: str, *, status: str | None = None) -> int:
        """Requests of the batch in the ``requests`` table, optionally of one status."""
        query = select(func.count(RequestRecord.id)).where(RequestRecord.batch_id == batch_id)
        if status is not None:
            query = query.where(RequestRecord.status == status)
        with self.store._session() as session:
            return int(session.scalar(query) or 0)


def _no_calls_yet(
    batch_id: str, record: BatchRecord | None, statuses: Mapping[str, int], requests: int
) -> str:
    """Why ``skew --batch`` has nothing to show for a batch that exists: its rows so far."""
    recorded = sum(statuses.values())
    by_status = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    if record is not None:
        pending = max(record.total_rows - recorded, 0)
        rows = (
            f"{recorded} of its {record.total_rows} rows are recorded"
            + (f" ({by_status})" if by_status else "")
            + f", {pending} not run yet"
        )
    else:
        rows = "it has no progress rows"
    made = (
        f"its {requests} requests made no model call (e.g. handed to a person)"
        if requests
        else "no row has reached the model"
    )
    return (
        f"batch {batch_id!r} exists but has no model calls yet: {rows}; {made}. Run the "
        "same `orchestrator batch` command again to go on (--retry-failed re-runs failed "
        "and unreachable rows), then run skew again"
    )


class BatchTelemetryView(TelemetryReader):
    """The read API restricted to the model calls of one batch's requests, for
    ``orchestrator skew --batch ID``.

    The hourly ``expert_rollups`` mix every request, so this view sums the batch's own calls
    into rollup rows when asked (:meth:`iter_rollups`; memory grows with the number of
    (hour, workflow, node, source, model) groups, not with the calls), and
    :meth:`iter_call_counts` reads only the batch's calls.

    Args:
        store: The telemetry store.
        batch_id: The batch.

    Raises:
        UserError: The batch is unknown (neither a ``batches`` row nor a request carries
            ``batch_id``; the message lists the newest batch ids), or it is known but has no
            model call yet (the message says how many of its rows are recorded, by status,
            how many are still pending, and how many requests it made).
    """

    def __init__(self, store: TelemetryReader, batch_id: str) -> None:
        super().__init__(store.engine, store.url)
        self.batch_scope = batch_id
        self.summed_calls = self._batch_calls()
        with self._session() as session:
            requests = int(
                session.scalar(
                    select(func.count(RequestRecord.id)).where(RequestRecord.batch_id == batch_id)
                )
                or 0
            )
            record = session.get(BatchRecord, batch_id)
            if not requests and record is None:
                known = session.scalars(
                    select(BatchRecord.id).order_by(BatchRecord.updated_at.desc()).limit(10)
                ).all()
                raise UserError(
                    f"no batch {batch_id!r} in {self.url}; batches there: "
                    f"{', '.join(known) or 'none'} (the batch id is printed by "
                    "`orchestrator batch`)"
                )
            calls = (
                int(
                    session.scalar(
                        select(func.count(ModelCallRecord.id)).where(self._batch_calls())
                    )
                    or 0
                )
                if requests
                else 0
            )
            if not calls:
                statuses = dict(
                    session.execute(
                        select(BatchRowRecord.status, func.count())
                        .where(BatchRowRecord.batch_id == batch_id)
                        .group_by(BatchRowRecord.status)
                    ).all()
                )
                raise UserError(_no_calls_yet(batch_id, record, statuses, requests))

    def _batch_calls(self) -> Any:
        return ModelCallRecord.request_id.in_(
            select(RequestRecord.id).where(RequestRecord.batch_id == self.batch_scope)
        )

    def rebuild_rollups(self) -> int:
        """Nothing to rebuild: the view sums the calls itself (returns 0)."""
        return 0
