"""Telemetry: one row per request and per model call, with per-call expert counts and hourly
expert-routing rollups, in any SQLAlchemy database (SQLite by default, PostgreSQL tested).

Modules:

* :mod:`~orchestrator.telemetry.schema`: the ORM tables (``requests``, ``model_calls``,
  ``expert_rollups``) at the newest schema revision.
* :mod:`~orchestrator.telemetry.codec`: the blob codecs (expert counts in the smallest
  integer width; rollup arrays).
* :mod:`~orchestrator.telemetry.rollups`: the rollup arithmetic (:class:`RollupDelta`,
  :class:`RollupKey`, hourly :func:`bucket_start`), shared by the writer and the analysis.
* :mod:`~orchestrator.telemetry.read`: the typed read API (:class:`TelemetryReader`,
  :class:`RollupRow`, :class:`CallCounts`, :class:`RollupStatus`).
* :mod:`~orchestrator.telemetry.store`: :class:`TelemetryStore`, the writer (one writer
  thread for async callers) on top of the read API.
* :mod:`~orchestrator.telemetry.batches`: the progress of batch jobs (:class:`BatchLedger`)
  and the read API scoped to one batch (:class:`BatchTelemetryView`).
* :mod:`~orchestrator.telemetry.fill`: the replay worker that fills the expert routing of
  calls recorded ``pending`` (deferred replay), exactly once (:func:`fill_pending_routing`,
  :func:`pending_routing_count`).
* :mod:`~orchestrator.telemetry.migrate` and ``migrations/``: the Alembic revisions that
  ``TelemetryStore(url)`` applies; ``python -m orchestrator.telemetry upgrade URL`` from a shell.
"""

from orchestrator.telemetry.batches import BatchLedger, BatchTelemetryView
from orchestrator.telemetry.codec import decode_counts, decode_counts_blob, encode_counts
from orchestrator.telemetry.fill import FillSummary, fill_pending_routing, pending_routing_count
from orchestrator.telemetry.migrate import head_revision
from orchestrator.telemetry.read import (
    CallCounts,
    MixedFamiliesError,
    RollupRow,
    RollupStatus,
    TelemetryReader,
)
from orchestrator.telemetry.rollups import (
    CONFIDENCE_BINS,
    ROLLUP_BUCKET,
    RollupDelta,
    RollupKey,
    as_utc,
    bucket_start,
    shape_key,
)
from orchestrator.telemetry.schema import (
    PENDING_SOURCE,
    BatchRecord,
    BatchRowRecord,
    ExpertRollupRecord,
    ModelCallRecord,
    PendingExpertRoutingRecord,
    RequestRecord,
)
from orchestrator.telemetry.store import TelemetryStore, utc_now

__all__ = [
    "CONFIDENCE_BINS",
    "PENDING_SOURCE",
    "ROLLUP_BUCKET",
    "BatchLedger",
    "BatchRecord",
    "BatchRowRecord",
    "BatchTelemetryView",
    "CallCounts",
    "ExpertRollupRecord",
    "FillSummary",
    "MixedFamiliesError",
    "ModelCallRecord",
    "PendingExpertRoutingRecord",
    "RequestRecord",
    "RollupDelta",
    "RollupKey",
    "RollupRow",
    "RollupStatus",
    "TelemetryReader",
    "TelemetryStore",
    "as_utc",
    "bucket_start",
    "decode_counts",
    "decode_counts_blob",
    "encode_counts",
    "fill_pending_routing",
    "head_revision",
    "pending_routing_count",
    "shape_key",
    "utc_now",
]
