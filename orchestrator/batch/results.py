"""The results of a batch: one row per input row, in input order, as ``.xlsx`` (always) and
``.csv`` / ``.jsonl`` on request, each written atomically (a temporary file in the same folder,
then a rename), so a reader never sees half a file.

Columns (:data:`RESULT_COLUMNS`): the row's position and id; the classifier's route and
confidence; the workflow and its ``output`` (whatever workflow it is: its
:meth:`~orchestrator.core.workflow.Workflow.output`, such as a reply, a verdict or a report's
path); ``status`` and ``error``; ``attempts``, ``latency_ms``,
``prompt_tokens`` and ``completion_tokens`` summed over the model calls; ``top_experts``
(``layer/expert share`` of the most-used experts over the calls), ``router_confidence`` (the
calls' mean chosen-expert probability mass) and ``expert_routing`` (who filled the routing:
``replay`` is an estimate; ``pending`` while the deferred replay has not filled it, with the
two columns before it empty, never zero); the ``request_id`` of the telemetry rows. A row no
run has finished yet (a stopped batch) has status ``pending``; a row never sent (``pending``,
``unreachable``, or refused before sending) has route ``not_classified``
(:data:`NOT_CLASSIFIED`), never an empty route.

The three expert columns of a row whose calls had no routing when the row was recorded (a
deferred replay) are read again from the telemetry store each time the file is written
(:func:`refresh_expert_columns`), so they show the routing once it is filled.

Model text is data: in ``.xlsx`` and ``.csv`` every text cell goes through
:func:`orchestrator.spreadsheet.cells.cell_text`, so a reply starting with ``=``, ``+``, ``-``,
``@``... is shown as text, never evaluated as a formula; ``.jsonl`` holds the text as JSON
strings.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import select

from orchestrator.batch.inputs import BatchRow
from orchestrator.core.dispatcher import RequestOutcome
from orchestrator.exceptions import UserError
from orchestrator.outfiles import output_files
from orchestrator.spreadsheet.cells import cell_text
from orchestrator.telemetry import ModelCallRecord, TelemetryReader, decode_counts_blob
from serving.expert_routing import top_shares

#: The ``route`` of a row that was never sent, so never classified: a row stopped or
#: cancelled before dispatch (``pending``), one no server answered (``unreachable``), one
#: refused before sending (empty text, duplicate id, bad attachment). Never an empty cell.
NOT_CLASSIFIED = "not_classified"
#: The ``error`` of a ``pending`` row: why it has no outcome, and how to go on.
PENDING_ERROR = "not run yet (the batch stopped before it); run the same command again to go on"

#: The results-file columns, in order.
RESULT_COLUMNS = (
    "row",
    "id",
    "route",
    "confidence",
    "workflow",
    "status",
    "output",
    "error",
    "attempts",
    "latency_ms",
    "prompt_tokens",
    "completion_tokens",
    "top_experts",
    "router_confidence",
    "expert_routing",
    "request_id",
)
#: Output formats besides the ``.xlsx``.
EXTRA_FORMATS = ("csv", "jsonl")


#: The columns of an older version's results that ``output`` replaced (a resumed batch's
#: recorded rows may still hold them): the first one set becomes the row's ``output``.
_OLD_OUTPUTS = ("reply", "verdict", "report")


def _experts(outcome: RequestOutcome) -> tuple[str | None, float | None, str | None]:
    """``(top experts, router confidence, routing sources)`` over an outcome's calls."""
    calls = outcome.calls
    return _expert_columns(
        [c.top_experts for c in calls],
        [c.mean_router_confidence for c in calls],
        [c.expert_routing_source.value for c in calls],
    )


def _expert_columns(
    tops: list[list[tuple[int, int, float]]],
    confidences: list[float | None],
    sources: list[str],
) -> tuple[str | None, float | None, str | None]:
    """The expert columns of one request from its calls' top experts, router confidences and
    routing sources: the three largest shares averaged over the calls, the mean confidence of
    the calls that measured one, and the sources (None each where there is nothing)."""
    shares: dict[tuple[int, int], float] = {}
    for top in tops:
        for layer, expert, share in top:
            shares[(layer, expert)] = shares.get((layer, expert), 0.0) + share / len(tops)
    best = sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    measured = [c for c in confidences if c]
    return (
        ", ".join(f"L{layer}/E{expert} {share:.0%}" for (layer, expert), share in best) or None,
        round(sum(measured) / len(measured), 4) if measured else None,
        ",".join(sorted(set(sources))) or None,
    )


def row_output(
    row: BatchRow,
    outcome: RequestOutcome | None,
    *,
    status: str,
    error: str | None,
    attempts: int,
    latency_ms: float | None = None,
    request_id: str | None = None,
) -> dict[str, Any]:
    """The results-file columns of one row (JSON-serialisable, not yet escaped).

    A row without an outcome (never sent: a problem such as empty text, or no server
    answered) has route :data:`NOT_CLASSIFIED`, never an empty cell."""
    output: str | None = None
    route: str | None = NOT_CLASSIFIED
    confidence = workflow = top = conf = sources = None
    prompt_tokens = completion_tokens = None
    if outcome is not None:
        route = outcome.classification.route
        confidence = round(outcome.classification.confidence, 4)
        workflow = outcome.workflow
        output = outcome.output
        if outcome.status == "rejected" and error is None and outcome.result:
            error = outcome.result.get("error")
        top, conf, sources = _experts(outcome)
        prompt_tokens = sum(c.prompt_tokens for c in outcome.calls)
        completion_tokens = sum(c.completion_tokens for c in outcome.calls)
    return {
        "row": row.index + 1,
        "id": row.row_id,
        "route": route,
        "confidence": confidence,
        "workflow": workflow,
        "status": status,
        "output": output,
        "error": error,
        "attempts": attempts,
        "latency_ms": None if latency_ms is None else round(latency_ms, 1),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "top_experts": top,
        "router_confidence": conf,
        "expert_routing": sources,
        "request_id": request_id,
    }


def _stored_experts(
    calls: list[Any],
) -> tuple[str | None, float | None, str | None]:
    """``(top experts, router confidence, routing sources)`` of a request's stored calls,
    as :func:`_experts` gives them for its outcome (a call with no counts adds no share)."""
    tops = [
        []
        if call.expert_counts is None
        else top_shares(
            decode_counts_blob(call.expert_counts, len(call.moe_layers), call.num_experts),
            call.moe_layers,
        )
        for call in calls
    ]
    return _expert_columns(
        tops,
        [c.mean_router_confidence for c in calls],
        [c.expert_routing_source for c in calls],
    )


def _needs_refresh(output: dict[str, Any]) -> bool:
    routing = output.get("expert_routing") or ""
    return bool(output.get("request_id")) and ("unavailable" in routing or "pending" in routing)


def refresh_expert_columns(
    rows: Iterable[dict[str, Any]], store: TelemetryReader, *, chunk: int = 500
) -> Iterator[dict[str, Any]]:
    """The outputs of ``rows`` with the expert columns of rows recorded without routing
    (``expert_routing`` ``unavailable`` or ``pending``) read again from ``store``'s
    ``model_calls``, ``chunk`` rows at a time (one query per chunk), in the same order."""
    iterator = iter(rows)
    while True:
        block = [row for _, row in zip(range(chunk), iterator, strict=False)]
        if not block:
            return
        wanted = {str(r["request_id"]) for r in block if _needs_refresh(r)}
        found: dict[str, list[Any]] = {}
        if wanted:
            with store._session() as session:
                calls = session.execute(
                    select(
                        ModelCallRecord.request_id,
                        ModelCallRecord.expert_routing_source,
                        ModelCallRecord.expert_counts,
                        ModelCallRecord.moe_layers,
                        ModelCallRecord.num_experts,
                        ModelCallRecord.mean_router_confidence,
                    )
                    .where(ModelCallRecord.request_id.in_(wanted))
                    .order_by(ModelCallRecord.id)
                ).all()
            for call in calls:
                found.setdefault(call.request_id, []).append(call)
        for row in block:
            stored = found.get(str(row.get("request_id")))
            if stored and _needs_refresh(row):
                row = dict(row)
                top, conf, sources = _stored_experts(stored)
                row.update(top_experts=top, router_confidence=conf, expert_routing=sources)
            yield row


def pending_output(row: BatchRow) -> dict[str, Any]:
    """The columns of a row no run has finished yet (status ``pending``, route
    :data:`NOT_CLASSIFIED`: the classifier runs when the row is sent)."""
    output = dict.fromkeys(RESULT_COLUMNS)
    output.update(
        row=row.index + 1,
        id=row.row_id,
        route=NOT_CLASSIFIED,
        status="pending",
        attempts=0,
        error=PENDING_ERROR,
    )
    return output


def merged_rows(
    rows: Iterable[BatchRow], recorded: Iterable[tuple[int, dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    """One output per input row in input order: the recorded one, or :func:`pending_output`.

    Both iterables are in index order (the input's rows, and ``(row_index, output)`` from
    the ledger), so they are merged in one pass without holding either.
    """
    done = iter(recorded)
    current = next(done, None)
    for row in rows:
        while current is not None and current[0] < row.index:
            current = next(done, None)
        if current is not None and current[0] == row.index:
            output = current[1]
            if output.get("route") is None:  # recorded by an older version: never sent
                output = {**output, "route": NOT_CLASSIFIED}
            if "output" not in output:  # recorded by an older version: reply/verdict/report
                old = (output.get(k) for k in _OLD_OUTPUTS)
                output = {**output, "output": next((v for v in old if v is not None), None)}
            yield output
        else:
            yield pending_output(row)


def _safe(value: Any) -> Any:
    """A cell value: numbers as they are, text escaped against formula injection."""
    if value is None or isinstance(value, bool | int | float):
        return value
    return cell_text(str(value))


def write_results(
    rows: Iterable[dict[str, Any]], out: Path, *, formats: Iterable[str] = ()
) -> list[Path]:
    """Write the results ``.xlsx`` at ``out`` and the extra ``formats`` beside it
    (``results.csv``, ``results.jsonl``), each atomically, streaming ``rows`` once.

    Args:
        rows: One dict of :data:`RESULT_COLUMNS` per input row, in input order.
        out: The ``.xlsx`` path.
        formats: Any of :data:`EXTRA_FORMATS`.

    Returns:
        The paths written, ``.xlsx`` first.

    Raises:
        UserError: ``out`` is not an ``.xlsx`` path, is a folder, or its folder does not
            exist; an unknown format; a file cannot be written (a full disk), when no file
            is changed (:func:`orchestrator.outfiles.output_files`).
    """
    out = Path(out)
    if out.suffix.lower() != ".xlsx":
        raise UserError(f"--out must end in .xlsx, got {out}")
    extra = list(dict.fromkeys(formats))
    for fmt in extra:
        if fmt not in EXTRA_FORMATS:
            raise UserError(
                f"unknown results format {fmt!r}; use one of {', '.join(EXTRA_FORMATS)}"
            )
    from openpyxl import Workbook

    targets = [out] + [out.with_suffix(f".{fmt}") for fmt in extra]
    # checked before any row is read; every file goes into place only when all are complete
    with output_files(*targets) as temps, contextlib.ExitStack() as stack:
        # made only once the files can be written: a write-only sheet dropped unsaved prints
        # "Exception ignored … I/O operation on closed file" when it is collected
        workbook = Workbook(write_only=True)
        sheet = workbook.create_sheet("results")
        sheet.append(list(RESULT_COLUMNS))
        side = {
            fmt: stack.enter_context(temp.open("w", encoding="utf-8", newline=""))
            for fmt, temp in zip(extra, temps[1:], strict=True)
        }
        writer = csv.writer(side["csv"]) if "csv" in side else None
        if writer is not None:
            writer.writerow(RESULT_COLUMNS)
        for output in rows:
            values = [output.get(c) for c in RESULT_COLUMNS]
            safe = [_safe(v) for v in values]
            sheet.append(safe)
            if writer is not None:
                writer.writerow(["" if v is None else v for v in safe])
            if "jsonl" in side:
                record = dict(zip(RESULT_COLUMNS, values, strict=True))
                side["jsonl"].write(json.dumps(record, ensure_ascii=False) + "\n")
        stack.close()  # flush the side files: a full disk fails here, inside output_files
        buffer = io.BytesIO()  # a zip that fails half-way on disk complains again when collected
        workbook.save(buffer)
        temps[0].write_bytes(buffer.getvalue())
    return targets
