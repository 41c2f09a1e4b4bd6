"""The batch job as one call: open or resume the batch, run the pending rows on an engine,
fill the expert routing the rows left ``pending``, write the results file
(:func:`run_batch_job`); the Python API behind ``orchestrator batch``.

**Expert routing.** On the CPU profile the rows' calls are recorded with expert routing
``pending`` (no replay on the request path: see :mod:`orchestrator.batch.factory`); once the
rows are done, :func:`run_batch_job` replays them in bulk (``fill_routing=True``, the default)
with :func:`orchestrator.telemetry.fill.fill_pending_routing`, so the results file and
``orchestrator skew --batch ID`` see them filled (``replay``). With ``fill_routing=False``,
or when the fill is stopped, the calls stay ``pending`` (the results say so) and
``orchestrator telemetry fill-routing --batch ID`` fills them later.

Example:
    >>> from orchestrator.batch import ColumnMapping, open_input, run_batch_job
    >>> source = open_input(Path("inbox.xlsx"), ColumnMapping(text="body"))  # doctest: +SKIP
    >>> job = await run_batch_job(source, SettingsFactory(Settings()),
    ...                           ["http://127.0.0.1:8000/v1"], BatchOptions(concurrency=8),
    ...                           out=Path("results.xlsx"))  # doctest: +SKIP
    >>> job.summary.statuses  # doctest: +SKIP
    {'succeeded': 998, 'failed': 2}
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orchestrator.batch.inputs import BatchInput
from orchestrator.batch.lease import batch_run_lock
from orchestrator.batch.ray_engine import run_ray
from orchestrator.batch.results import merged_rows, refresh_expert_columns, write_results
from orchestrator.batch.runner import (
    BatchOptions,
    BatchProgress,
    BatchRun,
    BatchSummary,
    EndpointPool,
    OnRow,
    OrchestratorFactory,
    batch_id_for,
    open_batch,
    record_unsent,
    run_local,
    unreachable_error,
)
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.exceptions import ServerUnavailableError, UserError
from orchestrator.telemetry import BatchLedger
from orchestrator.telemetry.fill import FillSummary, fill_pending_routing, pending_routing_count

Engine = Literal["local", "ray"]


@dataclass
class BatchJobResult:
    """A finished (or stopped) run.

    Attributes:
        summary: What the run did.
        files: The results files written.
        routing_fill: What the expert-routing fill after the rows did (None when none ran).
        pending_routing: The batch's calls whose expert routing is still ``pending`` (fill
            them with ``orchestrator telemetry fill-routing --batch ID``).
    """

    summary: BatchSummary
    files: list[Path]
    routing_fill: FillSummary | None = None
    pending_routing: int = 0


def write_batch_results(
    source: BatchInput,
    ledger: BatchLedger,
    batch_id: str,
    out: Path,
    formats: Iterable[str] = (),
) -> list[Path]:
    """Write the batch's results (every input row, in input order; rows not yet run are
    ``pending``) from the progress table, atomically. See
    :func:`~orchestrator.batch.results.write_results`."""
    recorded = ((r.row_index, r.output) for r in ledger.iter_rows(batch_id))
    rows = refresh_expert_columns(merged_rows(source.rows(), recorded), ledger.store)
    return write_results(rows, out, formats=formats)


async def fill_batch_routing(
    factory: OrchestratorFactory,
    batch_id: str,
    *,
    stop: asyncio.Event | None = None,
    on_fill: Callable[[int, int], None] | None = None,
) -> FillSummary | None:
    """Fill the batch's ``pending`` expert routing in a worker thread (bulk replay).

    Returns None when nothing is pending or the factory has no replayer (a test double).
    Setting ``stop`` stops after the chunk in progress (committed whole, or not at all).

    Raises:
        CheckpointError: The replay checkpoint cannot be loaded.
        TelemetryError: The store cannot be written.
    """
    store = factory.store()
    load = getattr(factory, "replayer", None)
    if load is None or not pending_routing_count(store, batch_id=batch_id):
        return None
    replayer = await asyncio.to_thread(load)
    halt = threading.Event()

    async def watch() -> None:
        if stop is not None:
            await stop.wait()
            halt.set()

    watcher = asyncio.create_task(watch())
    try:
        return await asyncio.to_thread(
            fill_pending_routing, store, replayer, batch_id=batch_id, on_chunk=on_fill, stop=halt
        )
    finally:
        halt.set()  # a cancelled await leaves the thread running: it stops after its chunk
        watcher.cancel()


async def run_batch_job(
    source: BatchInput,
    factory: OrchestratorFactory,
    urls: Sequence[str],
    options: BatchOptions,
    *,
    out: Path,
    formats: Iterable[str] = (),
    engine: Engine = "local",
    batch_id: str | None = None,
    on_start: Callable[[str, BatchProgress], None] | None = None,
    on_row: OnRow | None = None,
    stop: asyncio.Event | None = None,
    ray_workers: int = 1,
    ray_address: str | None = None,
    fill_routing: bool = True,
    on_fill: Callable[[int, int], None] | None = None,
) -> BatchJobResult:
    """Run (or resume) a batch and write its results.

    Args:
        source: The input, validated (:func:`~orchestrator.batch.inputs.open_input`).
        factory: Builds the store and the orchestrators (in each Ray worker too).
        urls: Model endpoints; requests are spread over them.
        options: Concurrency, timeout, retries, ``retry_failed``.
        out: The results ``.xlsx``.
        formats: Extra formats beside it: ``csv``, ``jsonl``.
        engine: ``local`` (asyncio in this process) or ``ray`` (Ray Data).
        batch_id: The batch's id; derived from the input's bytes and mapping when None, so
            the same command resumes the same batch.
        on_start: Called with the batch id and the counters before the first row.
        on_row: Called after each row is recorded.
        stop: Set it to stop starting rows (local engine).
        ray_workers: Ray actors (``engine="ray"``).
        ray_address: Ray cluster address (``engine="ray"``).
        fill_routing: Fill the expert routing the rows left ``pending`` before writing the
            results (see the module doc); False leaves it for ``orchestrator telemetry
            fill-routing``.
        on_fill: Called after each filled chunk with ``(calls done, calls pending)``.

    Returns:
        The :class:`BatchJobResult`; ``summary.stopped`` says why rows are left, if any.
        When no server answers the first check, every row to run is recorded
        ``unreachable`` (rows with a problem: ``failed``), the results are written and
        ``summary.stopped`` says so; ``--retry-failed`` runs them again.

    Raises:
        UserError: No URL, an unknown engine, the batch id exists with another mapping, the
            batch is running in another process on the same database, or the results cannot
            be written there.
        TelemetryError: The store cannot be written.
    """
    batch_id = batch_id or batch_id_for(source)
    with batch_run_lock(factory.store().engine, batch_id):  # one live run per batch (lease.py)
        job = _open_job(source, factory, urls, engine, batch_id, options, on_start, on_row)
        try:
            orchestrators = await factory.orchestrators(urls) if engine == "local" else None
        except ServerUnavailableError as exc:
            await factory.aclose()
            summary = await _all_unreachable(job, exc)
            return BatchJobResult(summary=job.counted(summary), files=job.write(out, formats))
        try:
            summary = await _run_engine(
                job,
                urls,
                orchestrators,
                stop=stop,
                ray_workers=ray_workers,
                ray_address=ray_address,
            )
        finally:
            # The engine is done (or failed): no request of this batch can still be in flight, so
            # one left `running` belongs to a worker that died mid-request (a killed Ray actor:
            # Ray Data sent its rows again, and the ledger kept each row once). Close them all,
            # whatever the engine and however it ended.
            job.interrupted += job.ledger.close_interrupted(batch_id)
        filled = None
        if fill_routing and not (stop is not None and stop.is_set()):
            filled = await fill_batch_routing(factory, batch_id, stop=stop, on_fill=on_fill)
        return BatchJobResult(
            summary=job.counted(summary),
            files=job.write(out, formats),
            routing_fill=filled,
            pending_routing=pending_routing_count(factory.store(), batch_id=batch_id),
        )


@dataclass
class _Job:
    """One run of an open batch: what the engines and the results writer share.

    Attributes:
        interrupted: Requests left ``running`` (by a killed run before this one, then by a
            worker that died in this one), closed as interrupted.
    """

    source: BatchInput
    factory: OrchestratorFactory
    ledger: BatchLedger
    batch_id: str
    options: BatchOptions
    total: int
    on_row: OnRow | None
    interrupted: int

    def counted(self, summary: BatchSummary) -> BatchSummary:
        """``summary`` with the interrupted requests counted."""
        return summary.model_copy(update={"interrupted_requests": self.interrupted})

    def write(self, out: Path, formats: Iterable[str]) -> list[Path]:
        """Write the results files (see :func:`write_batch_results`)."""
        return write_batch_results(self.source, self.ledger, self.batch_id, out, formats)


def _open_job(
    source: BatchInput,
    factory: OrchestratorFactory,
    urls: Sequence[str],
    engine: Engine,
    batch_id: str,
    options: BatchOptions,
    on_start: Callable[[str, BatchProgress], None] | None,
    on_row: OnRow | None,
) -> _Job:
    """Check the arguments and open (or resume) the batch.

    Raises:
        UserError: An unknown engine, no URL, or the batch id exists with another mapping.
    """
    if engine not in ("local", "ray"):
        raise UserError(f"unknown engine {engine!r}; use local or ray")
    if not urls:
        raise UserError("give at least one --server-url")
    total = source.count()
    ledger = BatchLedger(factory.store())
    interrupted = open_batch(ledger, source, batch_id, total)
    if on_start is not None:
        finished = ledger.finished_rows(batch_id)
        on_start(batch_id, BatchProgress(total=total, skipped=len(finished)))
    return _Job(source, factory, ledger, batch_id, options, total, on_row, interrupted)


async def _run_engine(
    job: _Job,
    urls: Sequence[str],
    orchestrators: list[Orchestrator] | None,
    *,
    stop: asyncio.Event | None,
    ray_workers: int,
    ray_address: str | None,
) -> BatchSummary:
    """The rows on the local engine over ``orchestrators`` (the factory's clients are closed
    after) or, when there are none (``engine="ray"``), on Ray."""
    if orchestrators is None:
        return await asyncio.to_thread(  # Ray's driver loop blocks: in a worker thread
            run_ray,
            job.source,
            job.factory,
            urls,
            job.ledger,
            job.batch_id,
            job.options,
            total=job.total,
            workers=ray_workers,
            on_row=job.on_row,
            ray_address=ray_address,
        )
    try:
        return await run_local(
            job.source,
            EndpointPool(orchestrators),
            job.ledger,
            job.batch_id,
            job.options,
            total=job.total,
            on_row=job.on_row,
            stop=stop,
        )
    finally:
        await job.factory.aclose()


async def _all_unreachable(job: _Job, exc: ServerUnavailableError) -> BatchSummary:
    """No server answered the first check: record the rows this run would send (see
    :func:`~orchestrator.batch.runner.record_unsent`) and say so."""
    run = BatchRun.start(
        job.source,
        job.ledger,
        job.batch_id,
        total=job.total,
        retry_failed=job.options.retry_failed,
        on_row=job.on_row,
    )
    await record_unsent(
        iter(run.pending),
        job.ledger,
        job.batch_id,
        unreachable_error(exc),
        attempts_of=run.attempts,
        on_row=run.count,
    )
    return run.summary(str(exc), lambda _: f"no model server answered: {exc}")
