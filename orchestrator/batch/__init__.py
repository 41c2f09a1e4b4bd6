"""Batch jobs over spreadsheets: many requests from a sheet (or a folder of workbooks),
concurrent, resumable and exactly once in the results, on asyncio or on Ray Data.

Modules:

* :mod:`~orchestrator.batch.inputs`: the input (``.xlsx``/``.csv`` streamed with a validated
  column mapping, or a folder of workbooks) as :class:`BatchRow` s.
* :mod:`~orchestrator.batch.runner`: one row through the orchestrator with retries
  (``tenacity``) and a timeout, recorded in the store's progress table; the local engine.
* :mod:`~orchestrator.batch.ray_engine`: the Ray Data engine (``ray`` imported lazily).
* :mod:`~orchestrator.batch.results`: the results ``.xlsx`` / ``.csv`` / ``.jsonl``.
* :mod:`~orchestrator.batch.factory`: store and orchestrators from the settings.
* :mod:`~orchestrator.batch.job`: :func:`run_batch_job`, the whole job in one call.
"""

from orchestrator.batch.factory import SettingsFactory
from orchestrator.batch.inputs import (
    BatchRow,
    ColumnMapping,
    SheetInput,
    WorkbookFolderInput,
    open_input,
)
from orchestrator.batch.job import BatchJobResult, run_batch_job, write_batch_results
from orchestrator.batch.results import NOT_CLASSIFIED, RESULT_COLUMNS, write_results
from orchestrator.batch.runner import (
    BatchOptions,
    BatchProgress,
    BatchSummary,
    EndpointPool,
    RequestTimeoutError,
    batch_id_for,
    process_row,
    run_local,
)

__all__ = [
    "NOT_CLASSIFIED",
    "RESULT_COLUMNS",
    "BatchJobResult",
    "BatchOptions",
    "BatchProgress",
    "BatchRow",
    "BatchSummary",
    "ColumnMapping",
    "EndpointPool",
    "RequestTimeoutError",
    "SettingsFactory",
    "SheetInput",
    "WorkbookFolderInput",
    "batch_id_for",
    "open_input",
    "process_row",
    "run_batch_job",
    "run_local",
    "write_batch_results",
    "write_results",
]
