"""The replay worker: fill the expert routing of ``pending`` model calls, later and in bulk.

A batch job records its calls with expert-routing source ``pending`` (no CPU replay on the
request path, :class:`serving.capture.DeferredReplayCapture`); each call's token ids wait in
``pending_expert_routing``. :func:`fill_pending_routing` reads them a chunk at a time, replays
many calls per forward pass (:meth:`serving.replay.ExpertRoutingReplayer.replay_many`), and for
each chunk, in **one transaction**:

1. sets the call's counts, confidences and source ``replay`` with an update that only matches
   a call still ``pending`` (so two workers never fill, or sum, a call twice);
2. adds the filled calls to their hourly rollup rows (the hour the call was made);
3. deletes their ``pending_expert_routing`` rows.

A kill at any point leaves each call either pending (ids kept, not in any rollup) or filled
(in its rollup once, ids gone); running the worker again fills what is left. Nothing is ever
read as zero experts: until filled, a call has no ``expert_counts``, is outside every rollup,
and :func:`pending_routing_count` says how many such calls there are.

Commands: ``orchestrator telemetry fill-routing [--batch ID]``; ``orchestrator batch`` runs it
after its rows by default.

Example:
    >>> from serving.replay import ExpertRoutingReplayer  # doctest: +SKIP
    >>> summary = fill_pending_routing(store, ExpertRoutingReplayer(checkpoint))  # doctest: +SKIP
    >>> summary.filled, summary.left  # doctest: +SKIP
    (67, 0)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from orchestrator.exceptions import TelemetryError, UserError
from orchestrator.telemetry.codec import encode_counts
from orchestrator.telemetry.read import TelemetryReader, in_window, where_given
from orchestrator.telemetry.rollup_rows import add_to_rollup as _add_to_rollup
from orchestrator.telemetry.rollup_rows import call_key
from orchestrator.telemetry.rollups import RollupDelta, RollupKey, call_deltas
from orchestrator.telemetry.schema import (
    PENDING_SOURCE,
    ModelCallRecord,
    PendingExpertRoutingRecord,
    RequestRecord,
)
from orchestrator.telemetry.store import TelemetryStore, decode_token_ids
from serving.architecture import MoEArchitecture
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace

#: The command that fills pending expert routing (printed wherever pending calls are counted).
FILL_COMMAND = "orchestrator telemetry fill-routing"


class Replayer(Protocol):
    """What the worker needs of a replayer (:class:`serving.replay.ExpertRoutingReplayer`)."""

    arch: MoEArchitecture
    checkpoint_dir: Path

    def replay_many(
        self, calls: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[ExpertRoutingTrace]:
        """One trace per ``(prompt_ids, completion_ids)``, in order."""
        ...


class FillSummary(BaseModel):
    """What one run of the worker did.

    Attributes:
        filled: Calls whose routing it filled (now ``replay``).
        failed: Calls whose replay raised or came back with another model shape; recorded
            ``unavailable`` with the reason in ``routing_note`` (never retried).
        other_checkpoint: Pending calls in scope recorded against another checkpoint than the
            replayer's (left pending), per checkpoint folder.
        left: Calls in scope still pending when it stopped (``other_checkpoint`` included).
        seconds: Wall time of the run.
        replay_seconds: Of which the forward passes.
    """

    model_config = ConfigDict(frozen=True)

    filled: int
    failed: int
    other_checkpoint: dict[str, int]
    left: int
    seconds: float
    replay_seconds: float


def _scope(query: Any, batch_id: str | None) -> Any:
    if batch_id is None:
        return query
    return query.where(
        ModelCallRecord.request_id.in_(
            select(RequestRecord.id).where(RequestRecord.batch_id == batch_id)
        )
    )


def pending_routing_count(
    reader: TelemetryReader,
    *,
    batch_id: str | None = None,
    workflow: str | None = None,
    since: datetime | None = None,
) -> int:
    """Model calls whose expert routing is still ``pending`` (replay deferred, not filled).

    Args:
        reader: Any telemetry reader (a store, a read-only reader, a batch view).
        batch_id: Only the calls of this batch's requests.
        workflow: Only this workflow's calls.
        since: Only calls made at or after this time (UTC).
    """
    query = select(func.count(ModelCallRecord.id)).where(
        ModelCallRecord.expert_routing_source == PENDING_SOURCE
    )
    query = where_given(query, (ModelCallRecord.workflow, workflow))
    query = in_window(query, ModelCallRecord.created_at, since, None)
    with reader._session() as session:
        return int(session.scalar(_scope(query, batch_id)) or 0)


def pending_note(count: int, batch_id: str | None = None) -> str:
    """The sentence shown beside figures that leave ``count`` pending calls out."""
    scope = f" --batch {batch_id}" if batch_id else ""
    return (
        f"{count} model call{'s' if count != 1 else ''} still "
        f"{'have' if count != 1 else 'has'} expert routing pending (replay deferred): not in "
        f"these figures, never counted as zero; fill them with `{FILL_COMMAND}{scope}`"
    )


@dataclass(frozen=True)
class _Pending:
    call_id: int
    created_at: Any
    workflow: str
    node: str
    model: str
    moe_layers: tuple[int, ...]
    num_experts: int
    top_k: int
    prompt_ids: list[int]
    completion_ids: list[int]
    capture_sampling_rate: float = 1.0
    model_family: str = ""


#: The fields of :class:`_Pending` read from ``model_calls`` as they are stored, under the
#: columns' own names (the rest are renamed or decoded in :func:`_read_chunk`).
_AS_STORED = (
    "created_at",
    "workflow",
    "node",
    "model",
    "num_experts",
    "top_k",
    "capture_sampling_rate",
    "model_family",
)


def _read_chunk(
    store: TelemetryStore, checkpoint: str, batch_id: str | None, after: int, chunk: int
) -> list[_Pending]:
    query = (
        select(
            ModelCallRecord.id,
            ModelCallRecord.moe_layers,
            *(getattr(ModelCallRecord, name) for name in _AS_STORED),
            PendingExpertRoutingRecord.prompt_ids,
            PendingExpertRoutingRecord.completion_ids,
        )
        .join(PendingExpertRoutingRecord, PendingExpertRoutingRecord.call_id == ModelCallRecord.id)
        .where(
            ModelCallRecord.expert_routing_source == PENDING_SOURCE,
            PendingExpertRoutingRecord.checkpoint == checkpoint,
            ModelCallRecord.id > after,
        )
        .order_by(ModelCallRecord.id)
        .limit(chunk)
    )
    with store._session() as session:
        rows = session.execute(_scope(query, batch_id)).all()
    return [
        _Pending(
            call_id=r.id,
            moe_layers=tuple(r.moe_layers),
            prompt_ids=decode_token_ids(r.prompt_ids),
            completion_ids=decode_token_ids(r.completion_ids),
            **{name: getattr(r, name) for name in _AS_STORED},
        )
        for r in rows
    ]


def _other_checkpoints(
    store: TelemetryStore, checkpoint: str, batch_id: str | None
) -> dict[str, int]:
    query = (
        select(PendingExpertRoutingRecord.checkpoint, func.count())
        .join(ModelCallRecord, PendingExpertRoutingRecord.call_id == ModelCallRecord.id)
        .where(
            ModelCallRecord.expert_routing_source == PENDING_SOURCE,
            PendingExpertRoutingRecord.checkpoint != checkpoint,
        )
        .group_by(PendingExpertRoutingRecord.checkpoint)
    )
    with store._session() as session:
        rows = session.execute(_scope(query, batch_id)).all()
    return {str(path): int(n) for path, n in rows}


def _replay(replayer: Replayer, calls: list[_Pending]) -> list[ExpertRoutingTrace | str]:
    """A trace per call, or the reason its replay failed (one bad call does not sink the
    chunk: a failing pass is retried call by call)."""
    pairs = [(c.prompt_ids, c.completion_ids) for c in calls]
    try:
        traces: list[ExpertRoutingTrace | str] = list(replayer.replay_many(pairs))
    except Exception:  # retried one call at a time below, to name the bad call
        traces = []
        for pair in pairs:
            try:
                traces.extend(replayer.replay_many([pair]))
            except Exception as exc:  # the call is recorded unavailable with this reason
                traces.append(f"replay failed: {type(exc).__name__}: {exc}")
    for i, (call, trace) in enumerate(zip(calls, traces, strict=True)):
        if isinstance(trace, ExpertRoutingTrace) and (
            tuple(trace.moe_layers) != call.moe_layers
            or trace.num_experts != call.num_experts
            or trace.top_k != call.top_k
            or not trace.has_routing
        ):
            traces[i] = (
                f"replay failed: the replay checkpoint has shape layers={trace.moe_layers} "
                f"experts={trace.num_experts} top-{trace.top_k}, the call was recorded with "
                f"layers={call.moe_layers} experts={call.num_experts} top-{call.top_k}"
            )
    return traces


def _commit_chunk(
    store: TelemetryStore, calls: list[_Pending], traces: list[ExpertRoutingTrace | str]
) -> tuple[int, int]:
    """Fill the chunk's calls, add them to their rollups and drop their ids: one transaction.

    Returns:
        ``(filled, failed)`` among the calls this transaction found still pending.
    """
    filled = failed = 0
    with store._transaction(f"expert routing of {len(calls)} pending calls") as session:
        deltas: dict[RollupKey, RollupDelta] = {}
        for call, trace in zip(calls, traces, strict=True):
            still_pending = ModelCallRecord.expert_routing_source == PENDING_SOURCE
            target = update(ModelCallRecord).where(
                ModelCallRecord.id == call.call_id, still_pending
            )
            if isinstance(trace, str):
                values: dict[str, Any] = {
                    "expert_routing_source": ExpertRoutingSource.UNAVAILABLE.value,
                    "routing_note": trace[:2000],
                }
            else:
                counts = trace.expert_counts()
                layer_conf = trace.confidence_per_layer()
                mean_conf = trace.mean_confidence()
                phases = trace.phase_counts()
                values = {
                    "expert_routing_source": trace.source.value,
                    "routing_note": trace.reason,
                    "routed_tokens": trace.routed_tokens,
                    "expert_counts": encode_counts(counts),
                    "layer_confidence": None
                    if layer_conf is None
                    else layer_conf.astype("<f4").tobytes(),
                    "mean_router_confidence": mean_conf,
                    "prefill_counts": None if phases is None else encode_counts(phases[0]),
                }
            result = session.execute(target.values(**values))
            if getattr(result, "rowcount", 0) != 1:
                continue  # another worker filled it first: neither counted nor summed again
            session.execute(
                delete(PendingExpertRoutingRecord).where(
                    PendingExpertRoutingRecord.call_id == call.call_id
                )
            )
            if isinstance(trace, str):
                failed += 1
                continue
            filled += 1
            for k, delta in call_deltas(
                call_key(call, source=trace.source.value),
                counts,
                trace.routed_tokens,
                mean_conf,
                layer_conf,
                phases,
                trace.prompt_tokens,
            ):
                if k in deltas:
                    deltas[k].merge(delta)
                else:
                    deltas[k] = delta
        for key, delta in deltas.items():
            _add_to_rollup(session, key, delta)
    return filled, failed


def fill_pending_routing(
    store: TelemetryStore,
    replayer: Replayer,
    *,
    batch_id: str | None = None,
    chunk: int = 64,
    limit: int | None = None,
    on_chunk: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> FillSummary:
    """Fill the expert routing of pending calls by replaying them in bulk (see module doc).

    Args:
        store: The telemetry store (any backend).
        replayer: Replays through the checkpoint the calls were served from; calls recorded
            against another checkpoint folder are left pending and counted.
        batch_id: Only the calls of this batch's requests.
        chunk: Calls read, replayed and committed together (one transaction).
        limit: Fill at most this many calls (None: all).
        on_chunk: Called after each committed chunk with ``(done so far, pending at start)``.
        stop: Set it to stop after the current chunk (its transaction commits or not at all).

    Returns:
        The :class:`FillSummary`.

    Raises:
        UserError: ``chunk`` or ``limit`` is below 1.
        TelemetryError: The store cannot be written (the chunk is rolled back whole, its
            calls stay pending).
    """
    if chunk < 1 or (limit is not None and limit < 1):
        raise UserError(f"chunk and limit must be at least 1, got {chunk} and {limit}")
    started = time.perf_counter()
    checkpoint = str(Path(replayer.checkpoint_dir).resolve())
    total = pending_routing_count(store, batch_id=batch_id)
    filled = failed = 0
    replay_s = 0.0
    after = 0
    while not (stop is not None and stop.is_set()):
        want = chunk if limit is None else min(chunk, limit - filled - failed)
        if want < 1:
            break
        calls = _read_chunk(store, checkpoint, batch_id, after, want)
        if not calls:
            break
        after = calls[-1].call_id
        t0 = time.perf_counter()
        traces = _replay(replayer, calls)
        replay_s += time.perf_counter() - t0
        for attempt in (1, 2):  # two writers may create the same new rollup row; see store
            try:
                done, bad = _commit_chunk(store, calls, traces)
                break
            except TelemetryError as exc:
                if attempt == 2 or not isinstance(exc.__cause__, IntegrityError):
                    raise
        filled += done
        failed += bad
        if on_chunk is not None:
            on_chunk(filled + failed, total)
    return FillSummary(
        filled=filled,
        failed=failed,
        other_checkpoint=_other_checkpoints(store, checkpoint, batch_id),
        left=pending_routing_count(store, batch_id=batch_id),
        seconds=round(time.perf_counter() - started, 3),
        replay_seconds=round(replay_s, 3),
    )
