"""The parts of a compound request that the dispatcher does not run (issue 46).

A request may ask for two routes ("where is my parcel? also, summarise the attached sheet").
The dispatcher runs one workflow per request; every other route the request asks for is handed
to a person, each with a telemetry record of its own (status ``needs_human``, the reason naming
the request it came from), so that nothing asked for is dropped and no reply claims that a part
ran when it did not. The outcome lists them (:class:`HandedOn`) and its headline says so.

A part is handed on only when the request's own words ask for its route
(:func:`orchestrator.classifier.asked.asks_for`, with a :class:`RuleClassifier`): on a
customer's conversation the thread's route runs whatever the classifier read, and a line the
n-grams lean to another route on ("Note: I am not Thomas Marsh." as a post to moderate) is no
part of its own (tester13 E2).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from pydantic import BaseModel, ConfigDict

from orchestrator.classification import Classification
from orchestrator.classifier.asked import asks_for
from orchestrator.classifier.core import RuleClassifier
from orchestrator.exceptions import TelemetryError
from orchestrator.request import Request
from orchestrator.routes import FALLBACK, Route
from orchestrator.telemetry import TelemetryStore

logger = logging.getLogger(__name__)

#: Longest request id kept in a part's id (``<id>.part<n>`` stays within the 64 of a Request).
_ID_KEEP = 56


class HandedOn(BaseModel):
    """A part of a compound request handed to a person instead of being run.

    Attributes:
        route: The route the part asks for (``excel_report``...).
        request_id: Its own telemetry record (``<request id>.part<n>``), status ``needs_human``.
    """

    model_config = ConfigDict(frozen=True)

    route: str
    request_id: str


def other_parts(
    route: Route, classification: Classification, asked: Callable[[Route], bool] | None = None
) -> tuple[Route, ...]:
    """The routes ``classification`` asks for besides ``route`` (the one that runs), in the
    order asked: its own route when the dispatcher runs another (a conversation stays in
    customer service), then its secondary routes; never fallback, and with ``asked`` only
    those it says the request asks for."""
    routes = (classification.route, *classification.secondary_routes)
    return tuple(
        r
        for r in dict.fromkeys(routes)
        if r != route and r != FALLBACK and (asked is None or asked(r))
    )


async def hand_on(
    store: TelemetryStore,
    request: Request,
    classification: Classification,
    route: Route,
    classifier: object = None,
) -> tuple[HandedOn, ...]:
    """Record each part of ``request`` that asks for another route than ``route`` as a request
    of its own for a person (started and finished ``needs_human`` at once). With a
    :class:`RuleClassifier` as ``classifier``, a part is one only when the request's own words
    ask for its route (:func:`~orchestrator.classifier.asked.asks_for`); another classifier's
    routes are taken as they are.

    A record that exists already (the same request run again, e.g. a batch resumed after a
    crash) is kept as it is.

    Returns:
        One :class:`HandedOn` per part, in the order asked; () for a request of one route.

    Raises:
        TelemetryError: The store cannot be written (other than the record existing).
    """
    handed: list[HandedOn] = []
    asked = (
        partial(asks_for, classifier, request) if isinstance(classifier, RuleClassifier) else None
    )
    for n, other in enumerate(other_parts(route, classification, asked), start=1):
        part_id = f"{request.id[:_ID_KEEP]}.part{n}"
        reason = (
            f"part of compound request {request.id}: it also asks for {other}, which "
            f"the {route} workflow that ran does not do; handed to a person"
        )
        part = request.model_copy(update={"id": part_id})
        part_classification = Classification(
            route=other,
            confidence=classification.confidence,
            scores=dict(classification.scores),
            reason=reason,
        )
        try:
            await store.astart_request(part, part_classification, None)
        except TelemetryError:
            logger.warning("part %s of request %s is recorded already", part_id, request.id)
        else:
            await store.afinish_request(part_id, "needs_human", error=reason)
        handed.append(HandedOn(route=other, request_id=part_id))
    return tuple(handed)


def handed_on_note(headline: str, handed: tuple[HandedOn, ...]) -> str:
    """``headline`` plus what became of the parts not run: ``[also asked: excel_report, not
    run: handed to a person as request <id>]``."""
    if not handed:
        return headline
    parts = "; ".join(
        f"{h.route}, not run: handed to a person as request {h.request_id}" for h in handed
    )
    return f"{headline} [also asked: {parts}]"
