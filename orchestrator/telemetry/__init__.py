"""Telemetry: one row per request and per model call, with per-call expert counts.

Interim re-export while the package is split (schema, codec, rollups, store, read API).
"""

from orchestrator.telemetry.store import *  # noqa: F403
from orchestrator.telemetry.store import (  # noqa: F401
    CONFIDENCE_BINS,
    ROLLUP_BUCKET,
    ExpertRollupRecord,
    ModelCallRecord,
    RequestRecord,
    RollupDelta,
    TelemetryStore,
    as_utc,
    bucket_start,
    decode_counts,
    decode_counts_blob,
    encode_counts,
)
