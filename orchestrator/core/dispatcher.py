"""The dispatcher: classify a request, run its route's workflow, record how it ended."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from orchestrator.classifier import Classification, RuleClassifier
from orchestrator.core.client import ModelClient
from orchestrator.core.gateway import CallSummary, ModelGateway
from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.exceptions import (
    ModelCallError,
    ServerUnavailableError,
    TelemetryError,
    UnknownRouteError,
    UserError,
)
from orchestrator.request import Request
from orchestrator.routes import Route
from orchestrator.telemetry import TelemetryStore

logger = logging.getLogger(__name__)

RequestStatus = Literal["succeeded", "rejected", "failed", "needs_human", "no_workflow"]


class RequestOutcome(BaseModel):
    """How one request ended.

    Attributes:
        request_id: The request's id (also the key of its telemetry rows).
        classification: Route, confidence, signals.
        workflow: The workflow that ran, if any.
        status: ``succeeded``; ``rejected`` (the workflow refused its input, e.g. a file
            that is not a spreadsheet; see ``result``); ``failed`` (see ``error``);
            ``needs_human`` (fallback route);
            ``no_workflow`` (the route has no workflow registered yet).
        result: The workflow's typed result, as a dict.
        headline: One line for the console.
        error: What went wrong, for ``failed`` and ``no_workflow``.
        calls: One summary per model call.
    """

    model_config = ConfigDict(frozen=True)

    request_id: str
    classification: Classification
    workflow: str | None
    status: RequestStatus
    result: dict[str, Any] | None = None
    headline: str = ""
    error: str | None = None
    calls: list[CallSummary] = []


class Orchestrator:
    """Routes requests into workflows and records every model call.

    Args:
        client: The model client (a :class:`~orchestrator.core.client.VLLMClient`, or a test
            double such as :class:`~orchestrator.testing.ScriptedModel`).
        store: The telemetry store.
        workflows: The workflows to register, one per route.
        classifier: The request classifier; a :class:`RuleClassifier` by default.
        max_tokens: Default completion limit for model calls.

    Example:
        >>> orch = Orchestrator(client, store, [CustomerServiceWorkflow()])  # doctest: +SKIP
        >>> outcome = await orch.handle(Request(text="Where is my refund?"))  # doctest: +SKIP
        >>> outcome.status  # doctest: +SKIP
        'succeeded'
    """

    def __init__(
        self,
        client: ModelClient,
        store: TelemetryStore,
        workflows: Iterable[Workflow[Any, Any]],
        *,
        classifier: RuleClassifier | None = None,
        max_tokens: int = 48,
    ) -> None:
        self.client = client
        self.store = store
        self.classifier = classifier or RuleClassifier()
        self.max_tokens = max_tokens
        self.workflows: dict[Route, Workflow[Any, Any]] = {}
        for workflow in workflows:
            if workflow.route in self.workflows:
                raise UserError(f"two workflows registered for route {workflow.route}")
            self.workflows[workflow.route] = workflow

    def workflow_for(self, route: Route) -> Workflow[Any, Any]:
        """The workflow registered for ``route``.

        Raises:
            UnknownRouteError: None is registered.
        """
        try:
            return self.workflows[route]
        except KeyError:
            known = ", ".join(sorted(r.value for r in self.workflows)) or "none"
            raise UnknownRouteError(
                f"no workflow registered for route {route.value!r} (registered: {known})"
            ) from None

    async def handle(self, request: Request) -> RequestOutcome:
        """Classify ``request``, run its workflow and record the outcome.

        A failure of the model server or of one call fails this request only: its row gets
        status ``failed`` with the error, and the rows of calls already made stay.

        Raises:
            UserError: ``request`` is not a :class:`Request`.
            ServerUnavailableError: Re-raised after the request is recorded as failed, so a
                batch can stop instead of failing every remaining request the same way.
            asyncio.CancelledError: Re-raised after the request is recorded as ``cancelled``.
            Exception: Any other error raised inside the workflow (a bug) is re-raised after
                the request is recorded as ``failed`` with ``internal error: ...``; no request
                row is left ``running``.
            TelemetryError: The store cannot be written.
        """
        if not isinstance(request, Request):
            raise UserError(
                f"handle() takes a Request, got {type(request).__name__}; "
                "build one with Request(text=...)"
            )
        classification = self.classifier.classify(request)
        route = classification.route
        if route is Route.FALLBACK:
            await self.store.astart_request(request, classification, None)
            await self.store.afinish_request(request.id, "needs_human", error=classification.reason)
            return RequestOutcome(
                request_id=request.id,
                classification=classification,
                workflow=None,
                status="needs_human",
                headline=f"handed to a person: {classification.reason}",
            )
        try:
            workflow = self.workflow_for(route)
        except UnknownRouteError as exc:
            await self.store.astart_request(request, classification, None)
            await self.store.afinish_request(request.id, "no_workflow", error=str(exc))
            return RequestOutcome(
                request_id=request.id,
                classification=classification,
                workflow=None,
                status="no_workflow",
                error=str(exc),
                headline=str(exc),
            )

        await self.store.astart_request(request, classification, workflow.name)
        gateway = ModelGateway(
            self.client,
            self.store,
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            max_tokens=self.max_tokens,
        )
        try:
            state = await workflow.graph.ainvoke(
                workflow.initial_state(request),
                context=WorkflowContext(llm=gateway, request=request),
            )
        except (ModelCallError, ServerUnavailableError, TelemetryError) as exc:
            logger.error("request %s failed in workflow %s: %s", request.id, workflow.name, exc)
            await self.store.afinish_request(request.id, "failed", error=str(exc))
            if isinstance(exc, ServerUnavailableError):
                raise
            return RequestOutcome(
                request_id=request.id,
                classification=classification,
                workflow=workflow.name,
                status="failed",
                error=str(exc),
                calls=list(gateway.calls),
                headline=f"failed: {exc}",
            )
        except asyncio.CancelledError:  # Ctrl-C or a caller's timeout: no row stays "running"
            await asyncio.shield(
                self.store.afinish_request(request.id, "cancelled", error="cancelled by caller")
            )
            raise
        except Exception as exc:  # a bug in a workflow: record it, then let it surface
            logger.exception("request %s crashed in workflow %s", request.id, workflow.name)
            await self.store.afinish_request(
                request.id, "failed", error=f"internal error: {type(exc).__name__}: {exc}"
            )
            raise
        result = workflow.result(state)
        payload = result.model_dump(mode="json")
        # a workflow that refused its input (a bad attachment) is recorded as such
        status: RequestStatus = "rejected" if payload.get("status") == "rejected" else "succeeded"
        await self.store.afinish_request(request.id, status, result=payload)
        return RequestOutcome(
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            status=status,
            result=payload,
            headline=workflow.headline(result),
            calls=list(gateway.calls),
        )
