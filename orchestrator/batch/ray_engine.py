"""The Ray Data engine (``orchestrator batch --engine ray``): the same rows, the same
:func:`~orchestrator.batch.runner.process_row`, the same progress table and results file as
the local engine, with the rows in a Ray Dataset and the requests sent from
``Dataset.map_batches`` workers (a pool of Ray actors; Ray schedules them, no queue of ours).

Each worker builds its own store connection, routing capture and one orchestrator per endpoint
from a picklable factory (:class:`~orchestrator.batch.factory.SettingsFactory`), sends the rows
of each block with at most ``options.concurrency`` in flight, spread over the endpoints, and
records every row in the store as it ends. The driver only iterates the output (row index and
status) to drive the run and the progress bar.

``ray`` is imported here only, when this engine runs: install it with the ``[ray]`` extra. On
one machine ``ray.init()`` starts a local instance; on a cluster pass its address
(``--ray-address ray://head:10001`` or ``RAY_ADDRESS``) and a database every node reaches
(PostgreSQL), since the workers write progress and telemetry there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from orchestrator.batch.inputs import BatchInput, BatchRow
from orchestrator.batch.runner import (
    BatchOptions,
    BatchRun,
    BatchSummary,
    EndpointPool,
    OnRow,
    OrchestratorFactory,
    RowResult,
    process_row,
)
from orchestrator.exceptions import ServerUnavailableError, UserError
from orchestrator.telemetry import BatchLedger

#: Status a worker returns for a row it could not send because no endpoint answered; the row
#: is not recorded, so the next run sends it.
UNSENT = "unsent"


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise UserError(
            "--engine ray needs Ray Data: pip install 'moe-orchestrator[ray]' (or "
            "'ray[data]'), or use --engine local"
        ) from exc
    return ray


class RowWorker:
    """The ``map_batches`` callable: one per Ray actor, it keeps an event loop, the
    orchestrators and the ledger between blocks.

    Args:
        factory: Builds the store and the orchestrators in this process.
        urls: The model endpoints.
        batch_id: The batch.
        options: Concurrency per worker, timeout, retries.
        source: The input's path (for the requests' metadata).
    """

    def __init__(
        self,
        factory: OrchestratorFactory,
        urls: Sequence[str],
        batch_id: str,
        options: BatchOptions,
        source: str,
    ) -> None:
        self.loop = asyncio.new_event_loop()
        self.factory = factory
        self.pool = EndpointPool(self.loop.run_until_complete(factory.orchestrators(urls)))
        self.ledger = BatchLedger(factory.store())
        self.batch_id, self.options, self.source = batch_id, options, source

    async def _rows(self, rows: list[BatchRow], attempts: list[int]) -> list[str]:
        slots = asyncio.Semaphore(self.options.concurrency)

        async def one(row: BatchRow, prior: int) -> str:
            async with slots:
                try:
                    result = await process_row(
                        row,
                        self.pool,
                        self.ledger,
                        self.batch_id,
                        self.options,
                        source=self.source,
                        prior_attempts=prior,
                    )
                except ServerUnavailableError:
                    return UNSENT
                return result.status

        return list(await asyncio.gather(*(one(r, a) for r, a in zip(rows, attempts, strict=True))))

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        """Send a block of rows; returns ``{"index": [...], "status": [...]}``."""
        import numpy as np

        rows = [BatchRow.model_validate_json(str(raw)) for raw in batch["row"]]
        attempts = [int(a) for a in batch["attempts"]]
        statuses = self.loop.run_until_complete(self._rows(rows, attempts))
        return {
            "index": np.array([r.index for r in rows], dtype=np.int64),
            "status": np.array(statuses, dtype=object),
        }


def run_ray(
    source: BatchInput,
    factory: OrchestratorFactory,
    urls: Sequence[str],
    ledger: BatchLedger,
    batch_id: str,
    options: BatchOptions,
    *,
    total: int,
    workers: int = 1,
    block_rows: int | None = None,
    on_row: OnRow | None = None,
    ray_address: str | None = None,
) -> BatchSummary:
    """Run a batch's pending rows on Ray Data.

    Args:
        source: The input (validated).
        factory: Picklable; builds the store and orchestrators in each worker.
        urls: The model endpoints (each worker spreads its requests over all of them).
        ledger: The driver's progress table (the batch must be open).
        batch_id: The batch.
        options: Concurrency per worker, timeout, retries, ``retry_failed``.
        total: Data rows of the input.
        workers: Ray actors sending requests.
        block_rows: Rows per ``map_batches`` call; ``4 * options.concurrency`` by default.
        on_row: Called as each row's status comes back to the driver (``output`` is empty:
            the row's columns are in the store).
        ray_address: A cluster to join; a local instance (or ``RAY_ADDRESS``) when None.

    Returns:
        The run's :class:`BatchSummary`.

    Raises:
        UserError: Ray is not installed, or ``workers`` is below 1.
    """
    if workers < 1:
        raise UserError(f"--ray-workers must be at least 1, got {workers}")
    ray = _import_ray()
    if not ray.is_initialized():
        ray.init(
            address=ray_address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    run = BatchRun.start(
        source, ledger, batch_id, total=total, retry_failed=options.retry_failed, on_row=on_row
    )
    items = [
        {"row": row.model_dump_json(), "attempts": run.attempts(row.index)} for row in run.pending
    ]
    unsent = 0
    if items:
        dataset = ray.data.from_items(items).map_batches(
            RowWorker,
            fn_constructor_kwargs={
                "factory": factory,
                "urls": list(urls),
                "batch_id": batch_id,
                "options": options,
                "source": str(source.path),
            },
            batch_size=block_rows or 4 * options.concurrency,
            batch_format="numpy",
            concurrency=workers,
            num_cpus=0.5,
        )
        for block in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            for index, status in zip(block["index"], block["status"], strict=True):
                if status == UNSENT:
                    unsent += 1
                else:  # the row's columns are in the store: output is empty here
                    run.count(RowResult(int(index), str(status), {}))

    def why_left(left: int) -> str | None:
        if not left:
            return None
        if unsent:
            return f"{unsent} rows could not be sent: no model endpoint answered"
        return f"{left} rows were not recorded"

    return run.summary(None, why_left)
