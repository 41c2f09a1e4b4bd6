"""The batch job as one call: open or resume the batch, run the pending rows on an engine,
write the results file (:func:`run_batch_job`); the Python API behind ``orchestrator batch``.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orchestrator.batch.inputs import BatchInput
from orchestrator.batch.results import merged_rows, write_results
from orchestrator.batch.runner import (
    BatchOptions,
    BatchProgress,
    BatchSummary,
    EndpointPool,
    OrchestratorFactory,
    RowResult,
    batch_id_for,
    open_batch,
    run_local,
)
from orchestrator.exceptions import UserError
from orchestrator.telemetry import BatchLedger

Engine = Literal["local", "ray"]


@dataclass
class BatchJobResult:
    """A finished (or stopped) run: its summary and the results files written."""

    summary: BatchSummary
    files: list[Path]


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
    return write_results(merged_rows(source.rows(), recorded), out, formats=formats)


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
    on_row: Callable[[RowResult, BatchProgress], None] | None = None,
    stop: asyncio.Event | None = None,
    ray_workers: int = 1,
    ray_address: str | None = None,
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

    Returns:
        The :class:`BatchJobResult`; ``summary.stopped`` says why rows are left, if any.

    Raises:
        UserError: No URL, an unknown engine, the batch id exists with another mapping, or
            the results cannot be written there.
        ServerUnavailableError: A server does not answer its first check.
        TelemetryError: The store cannot be written.
    """
    if engine not in ("local", "ray"):
        raise UserError(f"unknown engine {engine!r}; use local or ray")
    if not urls:
        raise UserError("give at least one --server-url")
    total = source.count()
    ledger = BatchLedger(factory.store())
    batch_id = batch_id or batch_id_for(source)
    interrupted = open_batch(ledger, source, batch_id, total)
    if on_start is not None:
        finished = ledger.finished_rows(batch_id)
        on_start(batch_id, BatchProgress(total=total, skipped=len(finished)))
    if engine == "local":
        pool = EndpointPool(await factory.orchestrators(urls))
        try:
            summary = await run_local(
                source, pool, ledger, batch_id, options, total=total, on_row=on_row, stop=stop
            )
        finally:
            await factory.aclose()
    else:
        from orchestrator.batch.ray_engine import run_ray

        summary = await asyncio.to_thread(
            run_ray,
            source,
            factory,
            urls,
            ledger,
            batch_id,
            options,
            total=total,
            workers=ray_workers,
            on_row=on_row,
            ray_address=ray_address,
        )
    summary = summary.model_copy(update={"interrupted_requests": interrupted})
    files = write_batch_results(source, ledger, batch_id, out, formats)
    return BatchJobResult(summary=summary, files=files)
