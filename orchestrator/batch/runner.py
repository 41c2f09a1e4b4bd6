"""The engine-independent part of a batch: one row through the orchestrator, with retries, a
timeout and its progress record; and the local engine (asyncio, bounded concurrency).

One input row is one :class:`~orchestrator.request.Request` (tagged with the batch id in its
metadata, so its telemetry rows carry it) handled by an
:class:`~orchestrator.core.dispatcher.Orchestrator`: the classifier, then the route's
workflow. Transient failures (server unreachable, HTTP 429 or 5xx, the per-request timeout)
are retried with exponential backoff by ``tenacity``; each attempt is its own request id, and
an attempt cut short is recorded ``cancelled``, so no request row stays ``running``. When the
row has ended, its outcome is recorded in the batch's progress table
(:class:`~orchestrator.telemetry.batches.BatchLedger`), once: the results file is built from
that table, so a crash between a request and its record re-runs the row, and never lists it
twice.

Both engines (this one and :mod:`orchestrator.batch.ray_engine`) call :func:`process_row`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    retry_if_result,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from orchestrator.batch.inputs import BatchInput, BatchRow
from orchestrator.batch.results import row_output
from orchestrator.core.dispatcher import Orchestrator, RequestOutcome
from orchestrator.exceptions import OrchestratorError, ServerUnavailableError, UserError
from orchestrator.request import Attachment, Request
from orchestrator.telemetry import BatchLedger, TelemetryStore

logger = logging.getLogger(__name__)

#: An HTTP status in a failed request's error that is worth another attempt (the client's
#: message is ``server at URL answered HTTP <status>: ...``).
TRANSIENT_HTTP = re.compile(r"answered HTTP (?:408|409|425|429|5\d\d)\b")
#: Row status of a row never run because no model server answered (every attempt of the row,
#: or the batch's first check, found it unreachable). Retryable: ``--retry-failed`` re-runs it.
UNREACHABLE = "unreachable"
#: Row statuses that count as failed in the progress bar (``--retry-failed`` re-runs them).
FAILED_STATUSES = frozenset({"failed", UNREACHABLE})


class BatchOptions(BaseModel):
    """How a batch runs.

    Attributes:
        concurrency: Model calls in flight at once (local engine: over every endpoint of this
            process, with up to twice as many rows in progress so that a row's own work
            overlaps other rows' calls; Ray: requests per worker).
        request_timeout_s: Seconds one attempt of a request may take, all its model calls
            together; then it is cancelled and retried.
        attempts: Attempts per row for transient failures (1 = no retry).
        backoff_initial_s: First wait between attempts; doubles each time (with jitter).
        backoff_max_s: Longest wait between attempts.
        retry_failed: Re-run rows recorded as failed by an earlier run (otherwise they are
            kept as they are).
    """

    model_config = ConfigDict(frozen=True)

    concurrency: int = Field(4, ge=1, le=1024)
    request_timeout_s: float = Field(300.0, gt=0)
    attempts: int = Field(3, ge=1, le=20)
    backoff_initial_s: float = Field(1.0, ge=0)
    backoff_max_s: float = Field(30.0, ge=0)
    retry_failed: bool = False


def batch_id_for(source: BatchInput) -> str:
    """The batch id of an input: ``b`` + 16 hex digits of its fingerprint (bytes and mapping),
    so the same command on the same file resumes the same batch."""
    return "b" + source.fingerprint()[:16]


class EndpointPool:
    """Spreads requests over one orchestrator per model endpoint: each attempt goes to the
    endpoint with the fewest requests in flight (ties in turn).

    Args:
        orchestrators: One per endpoint (non-empty).

    Raises:
        UserError: ``orchestrators`` is empty.
    """

    def __init__(self, orchestrators: Sequence[Orchestrator]) -> None:
        if not orchestrators:
            raise UserError("a batch needs at least one model endpoint (--server-url)")
        self.orchestrators = list(orchestrators)
        self.in_flight = [0] * len(self.orchestrators)
        self.sent = [0] * len(self.orchestrators)
        self._turn = 0

    def acquire(self) -> int:
        """The index of the endpoint to use next (count it as in flight)."""
        n = len(self.orchestrators)
        order = [(self._turn + i) % n for i in range(n)]
        best = min(order, key=lambda i: self.in_flight[i])
        self._turn = (best + 1) % n
        self.in_flight[best] += 1
        self.sent[best] += 1
        return best

    def release(self, index: int) -> None:
        """One request of endpoint ``index`` ended."""
        self.in_flight[index] -= 1


@dataclass
class RowResult:
    """What :func:`process_row` recorded for one row (``output``: its results-file columns)."""

    index: int
    status: str
    output: dict[str, Any]


class RequestTimeoutError(OrchestratorError, TimeoutError):
    """An attempt of a batch request ran past ``--request-timeout`` (it was cancelled and
    recorded ``cancelled``; the row is retried, then recorded failed with this message)."""


def _transient_outcome(outcome: Any) -> bool:
    return (
        isinstance(outcome, RequestOutcome)
        and outcome.status == "failed"
        and bool(TRANSIENT_HTTP.search(outcome.error or ""))
    )


def build_request(row: BatchRow, batch_id: str, source: str) -> Request:
    """The :class:`Request` of a row (a fresh id per attempt; metadata carries the batch).

    Raises:
        pydantic.ValidationError: The text is too long or not valid Unicode.
    """
    metadata = {
        "batch_id": batch_id,
        "batch_row": str(row.index),
        "row_id": row.row_id,
        "source": f"{source}:{row.line}"[-255:],
    }
    if row.thread:
        metadata["thread_id"] = row.thread
    attachments: tuple[Attachment, ...] = ()
    if row.attachment:
        name = row.attachment.rsplit("/", 1)[-1]
        attachments = (Attachment(filename=name[:255] or "attachment", path=row.attachment),)
    conversation = {}
    if row.thread and row.customer:  # a turn of the customer's conversation (its owner)
        conversation = {"thread_id": row.thread, "customer_id": row.customer}
    return Request(
        id=f"{batch_id}.{row.index}.{uuid.uuid4().hex[:8]}",
        **conversation,
        text=row.text or "",
        channel=(row.channel or None) and row.channel[:64],
        attachments=attachments,
        metadata=metadata,
    )


def _row_error(exc: Exception, index: int, batch_id: str) -> str:
    """A failed row's error: an OrchestratorError's own line (a turn on another customer's
    thread, a storage failure), else a workflow bug's type and message, logged with its
    traceback (handle() recorded the request as failed)."""
    if isinstance(exc, OrchestratorError):
        return str(exc)
    logger.exception("row %s of batch %s crashed", index, batch_id)
    return f"internal error: {type(exc).__name__}: {exc}"


async def _record(
    ledger: BatchLedger,
    batch_id: str,
    row: BatchRow,
    status: str,
    attempts: int,
    output: dict[str, Any],
    request_id: str | None = None,
) -> RowResult:
    """Record the row's end in the progress table (once: a row recorded again is updated)."""
    await ledger.arecord_row(
        batch_id,
        row.index,
        row_id=row.row_id,
        request_id=request_id,
        status=status,
        attempts=attempts,
        output=output,
    )
    return RowResult(row.index, status, output)


class _Attempts:
    """The attempts of one row: each a fresh request sent to the least busy endpoint under
    the per-request timeout, retried by ``tenacity`` on transient failures."""

    def __init__(
        self, row: BatchRow, pool: EndpointPool, batch_id: str, options: BatchOptions, source: str
    ) -> None:
        self.row, self.pool, self.batch_id, self.options, self.source = (
            row,
            pool,
            batch_id,
            options,
            source,
        )
        self.tries = 0
        #: The id of the last attempt's request (None before the first).
        self.request_id: str | None = None

    async def attempt(self) -> RequestOutcome:
        self.tries += 1
        request = build_request(self.row, self.batch_id, self.source)
        self.request_id = request.id
        endpoint = self.pool.acquire()
        timeout = self.options.request_timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await self.pool.orchestrators[endpoint].handle(request)
        except TimeoutError as exc:  # handle() recorded the request as cancelled
            raise RequestTimeoutError(
                f"timed out after {timeout:g} s "
                f"(--request-timeout); attempt {self.tries} of {self.options.attempts}"
            ) from exc
        finally:
            self.pool.release(endpoint)

    def retrying(self) -> AsyncRetrying:
        options = self.options

        def give_up(state: RetryCallState) -> Any:
            assert state.outcome is not None
            return state.outcome.result()  # the last outcome, or its exception raised

        return AsyncRetrying(
            stop=stop_after_attempt(options.attempts),
            # initial, 2x, 4x... up to the maximum, plus up to half the initial wait of jitter
            wait=wait_exponential(multiplier=options.backoff_initial_s, max=options.backoff_max_s)
            + wait_random(0, options.backoff_initial_s / 2),
            retry=retry_if_exception_type((ServerUnavailableError, RequestTimeoutError))
            | retry_if_result(_transient_outcome),
            retry_error_callback=give_up,
            reraise=True,
        )

    async def run(self) -> tuple[RequestOutcome | None, str, str | None]:
        """``(outcome, status, error)`` of the row after its last attempt."""
        try:
            done: RequestOutcome = await self.retrying()(self.attempt)
        except RequestTimeoutError as exc:
            return None, "failed", str(exc)
        except ValidationError as exc:  # text over the limit, lone surrogates
            return None, "failed", "; ".join(e["msg"] for e in exc.errors(include_url=False))
        except ServerUnavailableError as exc:
            return None, UNREACHABLE, unreachable_error(exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a refusal, a storage failure, or a workflow bug (recorded)
            return None, "failed", _row_error(exc, self.row.index, self.batch_id)
        return done, done.status, done.error


async def process_row(
    row: BatchRow,
    pool: EndpointPool,
    ledger: BatchLedger,
    batch_id: str,
    options: BatchOptions,
    *,
    source: str,
    prior_attempts: int = 0,
) -> RowResult:
    """Send one row (retrying transient failures), then record its outcome in the ledger.

    A row with a ``problem`` is recorded failed without a request. A row whose every attempt
    timed out, or whose workflow crashed, is recorded failed with the reason. A row whose
    every attempt found the server unreachable is recorded :data:`UNREACHABLE` (retryable:
    ``--retry-failed``); the caller stops starting rows.

    Raises:
        asyncio.CancelledError: The batch was cancelled; the row is not recorded.
        TelemetryError: The store cannot be written.
    """
    if row.problem is not None:
        output = row_output(row, None, status="failed", error=row.problem, attempts=prior_attempts)
        return await _record(ledger, batch_id, row, "failed", prior_attempts, output)
    started = time.perf_counter()
    attempts = _Attempts(row, pool, batch_id, options, source)
    outcome, status, error = await attempts.run()
    tries = prior_attempts + attempts.tries
    output = row_output(
        row,
        outcome,
        status=status,
        error=error,
        attempts=tries,
        latency_ms=(time.perf_counter() - started) * 1000.0,
        request_id=attempts.request_id,
    )
    return await _record(ledger, batch_id, row, status, tries, output, attempts.request_id)


def unreachable_error(exc: BaseException) -> str:
    """The ``error`` of an :data:`UNREACHABLE` row: why, and how to run it again."""
    return (
        f"not run: {exc}; start the server (or fix --server-url), then run the same "
        "command with --retry-failed"
    )


async def record_unsent(
    rows: Iterator[BatchRow],
    ledger: BatchLedger,
    batch_id: str,
    error: str,
    *,
    attempts_of: Callable[[int], int],
    on_row: Callable[[RowResult], None] | None = None,
) -> int:
    """Record rows that were never sent because no server answered: a row with a
    ``problem`` (empty text, duplicate id, bad attachment: it needs no server) failed with
    its problem, every other row :data:`UNREACHABLE` with ``error`` (see
    :func:`unreachable_error`). Returns how many rows were recorded.

    Raises:
        TelemetryError: The store cannot be written.
    """
    count = 0
    for row in rows:
        prior = attempts_of(row.index)
        if row.problem is not None:
            status, why = "failed", row.problem
        else:
            status, why = UNREACHABLE, error
        output = row_output(row, None, status=status, error=why, attempts=prior)
        result = await _record(ledger, batch_id, row, status, prior, output)
        count += 1
        if on_row is not None:
            on_row(result)
    return count


def unreachable_stop(statuses: dict[str, int], reason: str | None) -> str | None:
    """The ``stopped`` text of a run that left rows :data:`UNREACHABLE`, or None."""
    rows = statuses.get(UNREACHABLE, 0)
    if not rows:
        return None
    return (
        f"no model server answered; {rows} rows were recorded unreachable ("
        f"{reason or 'no endpoint answered'})"
    )


@dataclass
class BatchProgress:
    """Counters of a run, for a progress bar.

    Attributes:
        total: Data rows in the input.
        skipped: Rows already recorded by an earlier run and not re-run.
        done: Rows that ended in this run (any status).
        failed: Of ``done``, those that failed.
        statuses: Rows per status, this run.
    """

    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def remaining(self) -> int:
        """Rows neither skipped nor done."""
        return self.total - self.skipped - self.done

    def add(self, status: str) -> None:
        """Count one row that ended with ``status``."""
        self.done += 1
        self.failed += status in FAILED_STATUSES
        self.statuses[status] = self.statuses.get(status, 0) + 1


#: A caller's ``on_row``: told each row that ended, with the run's counters so far.
OnRow = Callable[[RowResult, BatchProgress], None]


class BatchSummary(BaseModel):
    """How a run of a batch ended.

    Attributes:
        batch_id: The batch.
        total: Data rows of the input.
        skipped: Rows recorded by an earlier run and kept.
        ran: Rows that ended in this run.
        statuses: Rows per status in this run.
        stopped: Why the run stopped before every row was recorded (Ctrl-C, the server
            gone), or None when none is left.
        interrupted_requests: Requests left ``running`` by a process that was killed (an
            earlier run, or a worker of this run such as a killed Ray actor), marked
            ``interrupted`` when the run starts and when its engine ends.
    """

    model_config = ConfigDict(frozen=True)

    batch_id: str
    total: int
    skipped: int
    ran: int
    statuses: dict[str, int]
    stopped: str | None = None
    interrupted_requests: int = 0


class PendingRows:
    """The rows a run must send: every row not yet recorded, plus the failed ones when
    ``retry_failed``; with the attempts each already had.

    Args:
        source: The input.
        finished: ``{row_index: status}`` already recorded (:meth:`BatchLedger.finished_rows`).
        retry_failed: Re-send rows recorded as failed.
    """

    def __init__(self, source: BatchInput, finished: dict[int, str], *, retry_failed: bool) -> None:
        self.source = source
        self.finished = finished
        self.retry_failed = retry_failed

    def wanted(self, index: int) -> bool:
        """Whether row ``index`` is sent in this run."""
        status = self.finished.get(index)
        return status is None or (self.retry_failed and status in FAILED_STATUSES)

    def __iter__(self) -> Iterator[BatchRow]:
        return (row for row in self.source.rows() if self.wanted(row.index))

    def skipped(self, total: int) -> int:
        """Rows recorded earlier that this run keeps."""
        return sum(1 for i in self.finished if i < total and not self.wanted(i))


@dataclass
class BatchRun:
    """One run of a batch's pending rows, as both engines keep it (local:
    :func:`run_local`; Ray: :func:`~orchestrator.batch.ray_engine.run_ray`): which rows to
    send, the attempts each had, the counters and the caller's ``on_row``.

    Create it with :meth:`start`.
    """

    source: BatchInput
    ledger: BatchLedger
    batch_id: str
    pending: PendingRows
    progress: BatchProgress
    on_row: OnRow | None = None

    @classmethod
    def start(
        cls,
        source: BatchInput,
        ledger: BatchLedger,
        batch_id: str,
        *,
        total: int,
        retry_failed: bool,
        on_row: OnRow | None = None,
    ) -> BatchRun:
        """The run of the rows not yet recorded (and the failed ones, with ``retry_failed``)."""
        pending = PendingRows(source, ledger.finished_rows(batch_id), retry_failed=retry_failed)
        progress = BatchProgress(total=total, skipped=pending.skipped(total))
        return cls(source, ledger, batch_id, pending, progress, on_row)

    def attempts(self, index: int) -> int:
        """The attempts row ``index`` had in earlier runs (0 for a row never recorded)."""
        return self.ledger.attempts(self.batch_id, index) if index in self.pending.finished else 0

    def count(self, result: RowResult) -> None:
        """Count a row that ended, and tell the caller."""
        self.progress.add(result.status)
        if self.on_row is not None:
            self.on_row(result, self.progress)

    def summary(self, reason: str | None, why_left: Callable[[int], str | None]) -> BatchSummary:
        """The run's :class:`BatchSummary`. ``stopped`` says why rows are left: the rows
        recorded :data:`UNREACHABLE` (``reason``: why no server answered), else
        ``why_left(rows left)``."""
        recorded = self.ledger.finished_rows(self.batch_id)
        left = sum(1 for _ in PendingRows(self.source, recorded, retry_failed=False))
        progress = self.progress
        return BatchSummary(
            batch_id=self.batch_id,
            total=progress.total,
            skipped=progress.skipped,
            ran=progress.done,
            statuses=dict(progress.statuses),
            stopped=unreachable_stop(progress.statuses, reason) or why_left(left),
        )


class OrchestratorFactory(Protocol):
    """Builds what a batch needs in the process that runs it (picklable, for Ray workers).

    ``store()`` is the telemetry store (one per process); ``orchestrators(urls)`` one
    orchestrator per endpoint URL, sharing that store; ``aclose()`` closes the clients.
    """

    def store(self) -> TelemetryStore:
        """The telemetry store of this process."""
        ...

    async def orchestrators(self, urls: Sequence[str]) -> list[Orchestrator]:
        """One orchestrator per URL (the servers are checked)."""
        ...

    async def aclose(self) -> None:
        """Close the model clients (the store is closed by its owner)."""
        ...


async def run_local(
    source: BatchInput,
    pool: EndpointPool,
    ledger: BatchLedger,
    batch_id: str,
    options: BatchOptions,
    *,
    total: int,
    on_row: OnRow | None = None,
    stop: asyncio.Event | None = None,
) -> BatchSummary:
    """Run a batch's pending rows in this process with at most ``options.concurrency`` in
    flight; rows are read as they are sent (never all at once).

    When ``stop`` is set (the first Ctrl-C), no new row starts and the rows in flight finish.
    Cancelling the task (the second Ctrl-C) cancels the rows in flight: their requests are
    recorded ``cancelled`` and the rows stay pending for the next run.

    Args:
        source: The input (validated).
        pool: The orchestrators, one per endpoint.
        ledger: The progress table (the batch must be open: :func:`open_batch`).
        batch_id: The batch.
        options: Concurrency, timeout, retries.
        total: Data rows of the input.
        on_row: Called after each row is recorded.
        stop: Set it to stop starting rows.

    Returns:
        The :class:`BatchSummary` of this run.

    Raises:
        TelemetryError: The store cannot be written.
    """
    stop = stop or asyncio.Event()
    run = BatchRun.start(
        source, ledger, batch_id, total=total, retry_failed=options.retry_failed, on_row=on_row
    )
    slots = asyncio.Semaphore(row_slots(pool, options.concurrency))
    tasks: set[asyncio.Task[None]] = set()
    aborted: list[str] = []
    crashed: list[BaseException] = []  # a row task that raised: its row stays pending

    def done(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            crashed.append(exc)

    async def one(row: BatchRow) -> None:
        try:
            result = await process_row(
                row,
                pool,
                ledger,
                batch_id,
                options,
                source=str(source.path),
                prior_attempts=run.attempts(row.index),
            )
        finally:
            slots.release()
        if result.status == UNREACHABLE:
            if not aborted:
                aborted.append(str(result.output.get("error") or "no endpoint answered"))
            stop.set()
        run.count(result)

    try:
        for row in run.pending:
            await slots.acquire()
            if stop.is_set():
                slots.release()
                break
            task = asyncio.create_task(one(row))
            tasks.add(task)
            task.add_done_callback(done)
        if tasks:
            await asyncio.gather(*tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    if aborted:  # the rows not started are recorded unreachable too (retryable)
        unsent = PendingRows(source, ledger.finished_rows(batch_id), retry_failed=False)
        await record_unsent(
            iter(unsent), ledger, batch_id, aborted[0], attempts_of=lambda _: 0, on_row=run.count
        )
    return run.summary(aborted[0] if aborted else None, lambda left: _why_left(left, crashed))


def _why_left(left: int, crashed: list[BaseException]) -> str | None:
    """Why a local run left rows (none recorded unreachable): its row tasks that raised, or
    a stop by request."""
    if not left:
        return None
    if crashed:
        return (
            f"{len(crashed)} rows ended in an error of the batch runner "
            f"({type(crashed[0]).__name__}: {crashed[0]}); they stay pending for the next run"
        )
    return "stopped by request (Ctrl-C)"


#: Rows in progress per model-call slot when the clients take a shared bound: a row spends part
#: of its time outside model calls (classification, graph steps, telemetry commits), and the
#: extra rows fill the server's slots meanwhile. Measured with ``benchmarks/batch_throughput``.
ROWS_PER_CALL_SLOT = 2


def row_slots(pool: EndpointPool, concurrency: int) -> int:
    """Bound the pool's model calls in flight by ``concurrency`` (one semaphore shared by every
    endpoint's client) and return how many rows may be in progress at once.

    Clients without :meth:`~orchestrator.core.client.VLLMClient.limit_in_flight` (the test
    double) keep one row per slot, so ``concurrency`` stays the bound on what reaches a model.
    """
    clients: list[Any] = [getattr(orch, "client", None) for orch in pool.orchestrators]
    if not clients or not all(hasattr(c, "limit_in_flight") for c in clients):
        return concurrency
    calls = asyncio.Semaphore(concurrency)
    for client in clients:
        client.limit_in_flight(calls)
    return concurrency * ROWS_PER_CALL_SLOT


def open_batch(ledger: BatchLedger, source: BatchInput, batch_id: str, total: int) -> int:
    """Create or resume the batch's record; mark requests a killed run left ``running`` as
    ``interrupted``. Returns how many were.

    Raises:
        UserError: The batch id exists with another mapping.
        TelemetryError: The store cannot be written.
    """
    ledger.open_batch(
        batch_id, source=str(source.path), mapping=source.describe(), total_rows=total
    )
    return ledger.close_interrupted(batch_id)
