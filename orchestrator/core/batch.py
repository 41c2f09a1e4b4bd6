"""Run many requests concurrently through an :class:`~orchestrator.core.dispatcher.Orchestrator`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from orchestrator.core.dispatcher import Orchestrator, RequestOutcome
from orchestrator.exceptions import ServerUnavailableError, UserError
from orchestrator.request import Request


class BatchReport(BaseModel):
    """What a batch did.

    Attributes:
        outcomes: One per finished request, in completion order.
        aborted: Why the batch stopped early (the server became unreachable), or None.
        not_started: Ids of requests never started because the batch stopped.
    """

    model_config = ConfigDict(frozen=True)

    outcomes: list[RequestOutcome]
    aborted: str | None = None
    not_started: list[str] = []

    @property
    def failed(self) -> list[RequestOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]


async def run_batch(
    orchestrator: Orchestrator,
    requests: Sequence[Request],
    *,
    concurrency: int = 4,
    on_outcome: Callable[[RequestOutcome], None] | None = None,
) -> BatchReport:
    """Handle ``requests`` with at most ``concurrency`` in flight.

    When the server becomes unreachable, requests already in flight fail (and are recorded
    as failed), no new request is started, and the report says why.

    Raises:
        UserError: ``concurrency`` is below 1.
    """
    if concurrency < 1:
        raise UserError(f"concurrency must be at least 1, got {concurrency}")
    semaphore = asyncio.Semaphore(concurrency)
    outcomes: list[RequestOutcome] = []
    started: set[str] = set()
    stop = asyncio.Event()
    abort_reason: list[str] = []

    async def one(request: Request) -> None:
        async with semaphore:
            if stop.is_set():
                return
            started.add(request.id)
            try:
                outcome = await orchestrator.handle(request)
            except ServerUnavailableError as exc:
                stop.set()
                abort_reason.append(str(exc))
                outcome = RequestOutcome(
                    request_id=request.id,
                    classification=orchestrator.classifier.classify(request),
                    workflow=None,
                    status="failed",
                    error=str(exc),
                    headline=f"failed: {exc}",
                )
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)

    await asyncio.gather(*(one(r) for r in requests))
    return BatchReport(
        outcomes=outcomes,
        aborted=abort_reason[0] if abort_reason else None,
        not_started=[r.id for r in requests if r.id not in started],
    )
