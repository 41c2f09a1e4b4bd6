"""``orchestrator telemetry``: the deferred expert routing of the telemetry store.

* ``orchestrator telemetry pending [--batch ID]``: how many model calls still have expert
  routing ``pending`` (a batch job deferred their CPU replay), per checkpoint.
* ``orchestrator telemetry fill-routing [--batch ID]``: replay them in bulk and fill their
  routing and rollups (:mod:`orchestrator.telemetry.fill`); safe to stop (Ctrl-C, or a kill)
  and run again: each call is filled and summed exactly once.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from orchestrator.cli.common import (
    DbFlagOption,
    add_group,
    console,
    database_url_from_flags,
    err,
    fail,
    settings_from_flags,
    working,
)
from orchestrator.exceptions import OrchestratorError

if TYPE_CHECKING:
    from orchestrator.telemetry import TelemetryStore
    from orchestrator.telemetry.read import TelemetryReader


def _url(db: str | None, database_url: str | None) -> str:
    url = database_url_from_flags(db, database_url)
    return settings_from_flags(database_url=url).database_url


def _open(url: str) -> TelemetryStore:
    from orchestrator.telemetry import TelemetryStore

    try:
        return TelemetryStore.open_existing(url)
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc


def _batch_known(store: TelemetryReader, batch: str | None) -> None:
    """Refuse a ``--batch`` that is neither a batch job nor carried by any request."""
    if batch is None:
        return
    from sqlalchemy import func, select

    from orchestrator.telemetry import RequestRecord
    from orchestrator.telemetry.schema import BatchRecord

    with store._session() as session:
        found = session.get(BatchRecord, batch) is not None or session.scalar(
            select(func.count(RequestRecord.id)).where(RequestRecord.batch_id == batch)
        )
    if not found:
        raise fail(
            f"no batch {batch!r} in {store.url}; the batch id is printed by `orchestrator batch`",
            2,
        )


def pending(
    batch: Annotated[str | None, typer.Option(help="Only the calls of this batch job.")] = None,
    db: DbFlagOption = None,
    database_url: DbFlagOption = None,
) -> None:
    """Count the model calls whose expert routing is still pending (replay deferred)."""
    from sqlalchemy import func, select

    from orchestrator.telemetry import ModelCallRecord, RequestRecord
    from orchestrator.telemetry.fill import FILL_COMMAND, pending_routing_count
    from orchestrator.telemetry.readonly import open_readonly
    from orchestrator.telemetry.schema import PENDING_SOURCE, PendingExpertRoutingRecord

    try:  # read-only: works on a database in a read-only folder, beside a running writer
        store = open_readonly(_url(db, database_url))
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    try:
        _batch_known(store, batch)
        count = pending_routing_count(store, batch_id=batch)
        with store._session() as session:
            query = (
                select(PendingExpertRoutingRecord.checkpoint, func.count())
                .join(ModelCallRecord, PendingExpertRoutingRecord.call_id == ModelCallRecord.id)
                .where(ModelCallRecord.expert_routing_source == PENDING_SOURCE)
                .group_by(PendingExpertRoutingRecord.checkpoint)
            )
            if batch is not None:
                query = query.where(
                    ModelCallRecord.request_id.in_(
                        select(RequestRecord.id).where(RequestRecord.batch_id == batch)
                    )
                )
            by_checkpoint = session.execute(query).all()
    finally:
        store.close()
    scope = f" of batch {batch}" if batch else ""
    console.print(f"{count} model calls{escape(scope)} with expert routing pending")
    for checkpoint, n in by_checkpoint:
        console.print(f"  {n} to replay through {escape(str(checkpoint))}")
    if count:
        flag = f" --batch {batch}" if batch else ""
        console.print(f"fill them with: {FILL_COMMAND}{escape(flag)}")


def fill_routing(
    batch: Annotated[str | None, typer.Option(help="Only the calls of this batch job.")] = None,
    db: DbFlagOption = None,
    database_url: DbFlagOption = None,
    checkpoint_dir: Annotated[
        Path | None,
        typer.Option(
            help="The served checkpoint to replay through (default: ORCH_CHECKPOINT_DIR)."
        ),
    ] = None,
    chunk: Annotated[
        int, typer.Option(min=1, max=4096, help="Calls replayed and committed together.")
    ] = 64,
    limit: Annotated[int | None, typer.Option(min=1, help="Fill at most this many calls.")] = None,
) -> None:
    """Replay the calls whose expert routing is pending, many per forward pass, and fill
    their routing and the hourly rollups. Stop any time; run again to go on."""
    from orchestrator.telemetry.fill import (
        FILL_COMMAND,
        fill_pending_routing,
        pending_routing_count,
    )
    from serving.errors import ServingError

    url = _url(db, database_url)
    settings = settings_from_flags(checkpoint_dir=checkpoint_dir)
    store = _open(url)
    try:
        _batch_known(store, batch)
        total = pending_routing_count(store, batch_id=batch)
        if total == 0:
            scope = f" of batch {batch}" if batch else ""
            console.print(f"no model call{escape(scope)} has expert routing pending")
            return
        from serving.replay import ExpertRoutingReplayer  # torch and transformers: only here

        with working(f"loading the replay checkpoint {settings.checkpoint_dir}"):
            replayer = ExpertRoutingReplayer(settings.checkpoint_dir)
        stop = threading.Event()
        previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
        try:
            with working(f"filling the expert routing of {total} calls") as status:
                summary = fill_pending_routing(
                    store,
                    replayer,
                    batch_id=batch,
                    chunk=chunk,
                    limit=limit,
                    stop=stop,
                    on_chunk=lambda done, all_: status.update(
                        f"filled the expert routing of {done} of {all_} calls"
                    ),
                )
        finally:
            signal.signal(signal.SIGINT, previous)
    except (OrchestratorError, ServingError) as exc:
        raise fail(exc) from exc
    finally:
        store.close()
    console.print(
        f"filled {summary.filled} calls (source replay) in {summary.seconds:.1f} s "
        f"({summary.replay_seconds:.1f} s of forward passes); {summary.failed} could not be "
        f"replayed (recorded unavailable, with the reason); {summary.left} still pending"
    )
    for path, n in summary.other_checkpoint.items():
        err.print(
            f"[yellow]{n} pending calls were served from another checkpoint:[/] "
            f"{escape(path)}; fill them with --checkpoint-dir {escape(path)}"
        )
    if summary.left:
        flag = f" --batch {batch}" if batch else ""
        err.print(f"run again to go on: {FILL_COMMAND}{escape(flag)}")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the ``telemetry`` group (``pending``, ``fill-routing``) to ``app``."""
    add_group(
        app,
        "telemetry",
        "Deferred expert routing in the telemetry store.",
        {"pending": pending, "fill-routing": fill_routing},
    )
