"""The dispatcher: classify a request, run its route's workflow, record how it ended."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Literal

from langgraph.types import Command, Durability
from pydantic import BaseModel, ConfigDict

from orchestrator.classifier import Classification, RuleClassifier
from orchestrator.core.client import ModelClient
from orchestrator.core.compound import HandedOn, hand_on, handed_on_note
from orchestrator.core.events import (
    CallExperts,
    ClassificationEvent,
    NodeFinished,
    NodeStarted,
    StreamDone,
    StreamEvent,
)
from orchestrator.core.gateway import CallSummary, ModelGateway
from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.exceptions import (
    ModelCallError,
    ServerUnavailableError,
    StorageError,
    TelemetryError,
    ThreadOwnerError,
    TurnBusyError,
    UnknownRouteError,
    UserError,
    storage_error,
)
from orchestrator.observability.metrics import observed_request, observed_stream
from orchestrator.observability.tracing import RequestTrace
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
        handed_on: The parts of a compound request that were not run: each handed to a person
            with a record of its own (:mod:`orchestrator.core.compound`); the headline says so.
        truncated: The workflow read only the head and the tail of a request text longer than
            it reads (its ``max_message_chars``); the middle was cut.
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
    handed_on: list[HandedOn] = []
    truncated: bool = False


def thread_config(request: Request, trace: RequestTrace | None = None) -> dict[str, Any]:
    """LangGraph's run config: the conversation's ``thread_id`` (the request id for a one-off
    request), which a checkpointed graph needs and other graphs ignore; with ``trace`` on, the
    callbacks that open a span per node."""
    config: dict[str, Any] = {"configurable": {"thread_id": request.thread_id or request.id}}
    callbacks = trace.callbacks() if trace is not None else []
    if callbacks:
        config["callbacks"] = callbacks
    return config


def durability(request: Request, workflow: Workflow[Any, Any]) -> Durability | None:
    """How often a checkpointed graph saves a one-off request's state (no ``thread_id``):
    ``exit``, once when the run ends (completed, failed, or interrupted for a person); None,
    LangGraph's default (``async``: after every step), for a conversation's turn and for a
    graph without a checkpointer (LangGraph warns when given a durability it cannot use).

    A one-off request is never resumed mid-run (its thread is its own request id), so the
    per-step checkpoints were written and never read. Measured with the batch's in-process
    saver, 200 real requests (121 customer-service): 726 checkpoints, 605 pending writes,
    ~1.97 MB kept with ``async``; 121 checkpoints, no writes, ~0.54 MB with ``exit``.
    """
    return "exit" if request.thread_id is None and _saver(workflow) is not None else None


def _saver(workflow: Workflow[Any, Any]) -> Any:
    saver = getattr(workflow.graph, "checkpointer", None)
    return None if saver is None or isinstance(saver, bool) else saver


async def _forget_one_off(request: Request, workflow: Workflow[Any, Any], status: str) -> None:
    """Drop the checkpoints of a finished one-off request (no ``thread_id``) unless it waits
    for a person (``needs_human``: ``orchestrator handoff resume`` needs its state).

    Nothing reads a finished one-off request's graph state again (its outcome and telemetry
    rows hold the result), but the in-process saver a batch uses kept every one of them: ~4.5
    KB per customer-service request even with ``exit`` durability, ~450 MB over a 100k-row
    batch, growing with the rows instead of staying bounded.
    """
    saver = _saver(workflow)
    if saver is None or request.thread_id is not None or status == "needs_human":
        return
    try:
        await saver.adelete_thread(request.id)
    except NotImplementedError:  # a saver without deletion keeps them, as before
        return
    except Exception:  # cleanup only: the request is recorded already, never fail it here
        logger.warning("could not drop the checkpoints of request %s", request.id, exc_info=True)


def _request_trace(kind: str, request: Request) -> RequestTrace:
    return RequestTrace(
        kind,
        request.id,
        channel=request.channel,
        **{"request.thread": request.thread_id, "request.attachments": len(request.attachments)},
    )


class Orchestrator:
    """Routes requests into workflows and records every model call.

    Args:
        client: The model client (a :class:`~orchestrator.core.client.VLLMClient`, or a test
            double such as :class:`~orchestrator.testing.ScriptedModel`).
        store: The telemetry store.
        workflows: The workflows to register, one per route.
        classifier: The request classifier; a :class:`RuleClassifier` by default.
        max_tokens: Default completion limit for model calls.
        temperatures: Temperature presets per kind of skill (``judging``, ``factual``,
            ``free_text``); the gateway's defaults when None.

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
        temperatures: Mapping[str, float] | None = None,
    ) -> None:
        self.temperatures = dict(temperatures) if temperatures is not None else None
        self.client = client
        self.store = store
        self.classifier = classifier or RuleClassifier()
        self.max_tokens = max_tokens
        self.workflows: dict[Route, Workflow[Any, Any]] = {}
        for workflow in workflows:
            if workflow.route in self.workflows:
                raise UserError(f"two workflows registered for route {workflow.route}")
            self.workflows[workflow.route] = workflow

    def _route(self, request: Request, classification: Classification) -> Route:
        """The route to run: the classifier's, except that a conversation with a customer
        (``thread_id`` and ``customer_id``) stays in customer service, where a request the
        classifier is unsure of, or that also asks for another route, is handed to a person
        or answered with a note of the part handed on."""
        route = classification.route
        if (
            request.thread_id
            and request.customer_id
            and Route.CUSTOMER_SERVICE in self.workflows
            and route is not Route.CUSTOMER_SERVICE
        ):
            return Route.CUSTOMER_SERVICE
        return route

    async def _waiting_outcome(
        self, request: Request, classification: Classification, workflow: Workflow[Any, Any]
    ) -> RequestOutcome | None:
        """When the conversation already waits for a person (a LangGraph interrupt), the new
        message does not run the graph: it is recorded ``needs_human`` and the outcome says
        so. None when nothing waits (or the workflow has no handoff)."""
        pending = getattr(workflow, "pending_handoff", None)
        if not request.thread_id or pending is None or await pending(request.thread_id) is None:
            return None
        headline = (
            f"conversation {request.thread_id} waits for a person; "
            f"orchestrator handoff resume {request.thread_id} --approve|--reject"
        )
        await self.store.afinish_request(request.id, "needs_human", error=headline)
        return RequestOutcome(
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            status="needs_human",
            headline=headline,
        )

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

    async def _finish(
        self, request: Request, workflow: Workflow[Any, Any], state: Any
    ) -> tuple[Any, dict[str, Any], RequestStatus]:
        """Record the request's end from the workflow's final state.

        A workflow that refused its input (a bad attachment), or that waits for a person (a
        LangGraph interrupt), is recorded as ``rejected`` / ``needs_human``, else
        ``succeeded``.

        Returns:
            ``(result model, its JSON payload, status)``.

        Raises:
            TelemetryError: The request row could not be written.
        """
        result = workflow.result(state)
        payload = result.model_dump(mode="json")
        status: RequestStatus = (
            payload["status"]
            if payload.get("status") in ("rejected", "needs_human")
            else "succeeded"
        )
        await self.store.afinish_request(request.id, status, result=payload)
        return result, payload, status

    @observed_request  # Prometheus: requests by route/status, confidence, workflow latency
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
        trace = _request_trace("handle", request)
        try:
            outcome = await self._handle(request, trace)
        except BaseException as exc:
            cancelled = isinstance(exc, asyncio.CancelledError)
            trace.finish("cancelled" if cancelled else "failed", f"{type(exc).__name__}: {exc}")
            raise
        trace.finish(outcome.status, outcome.error)
        return outcome

    async def _handle(self, request: Request, trace: RequestTrace) -> RequestOutcome:
        """:meth:`handle`'s work, on the request's ``trace``."""
        classification = self.classifier.classify(request)
        route = self._route(request, classification)
        _trace_classification(trace, route, classification)
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
        async with self._turn(request, workflow):
            return await self._run(request, classification, workflow, trace)

    @contextlib.asynccontextmanager
    async def _turn(self, request: Request, workflow: Workflow[Any, Any]) -> AsyncIterator[None]:
        """Hold the conversation for this turn (the workflow's ``turn_guard``, when it has
        one: its owner check and one turn per thread across processes). A refusal is
        recorded on the request's row (``rejected``, or ``failed`` for a storage error)
        before it is raised, so no row stays ``running``.

        Raises:
            ThreadOwnerError: The thread belongs to another customer.
            TurnBusyError: A turn ran on the thread for the whole bounded wait.
            StorageError: The store that holds owners and leases failed.
        """
        guard = getattr(workflow, "turn_guard", None)
        async with contextlib.AsyncExitStack() as stack:
            if guard is not None:
                try:
                    await stack.enter_async_context(guard(request))
                except BaseException as exc:
                    refused = isinstance(exc, ThreadOwnerError | TurnBusyError)
                    await asyncio.shield(
                        self.store.afinish_request(
                            request.id,
                            "rejected" if refused else "failed",
                            error=str(exc) or type(exc).__name__,
                        )
                    )
                    raise
            yield

    async def _run(
        self,
        request: Request,
        classification: Classification,
        workflow: Workflow[Any, Any],
        trace: RequestTrace,
    ) -> RequestOutcome:
        """Run ``workflow`` on the started request (the turn held) and record its end."""
        graph_input = await workflow.graph_input(request)
        waiting = None
        if not isinstance(graph_input, Command):  # a confirmation's answer resumes the thread
            waiting = await self._waiting_outcome(request, classification, workflow)
        if waiting is not None:
            return waiting
        handed = await hand_on(self.store, request, classification, workflow.route)
        trace.workflow(workflow.name)
        gateway = ModelGateway(
            self.client,
            self.store,
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            max_tokens=self.max_tokens,
            temperatures=self.temperatures,
            trace=trace,
        )
        try:
            state = await workflow.graph.ainvoke(
                graph_input,
                thread_config(request, trace),
                context=WorkflowContext(llm=gateway, request=request),
                durability=durability(request, workflow),
            )
        except (ModelCallError, ServerUnavailableError, TelemetryError) as exc:
            logger.error("request %s failed in workflow %s: %s", request.id, workflow.name, exc)
            await self.store.afinish_request(request.id, "failed", error=str(exc))
            await _forget_one_off(request, workflow, "failed")
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
            storage = _storage_failure(exc, workflow)
            if storage is None:
                logger.exception("request %s crashed in workflow %s", request.id, workflow.name)
            await self.store.afinish_request(
                request.id, "failed", error=_failure_text(exc, storage)
            )
            if storage is not None and storage is not exc:
                raise storage from exc
            raise
        result, payload, status = await self._finish(request, workflow, state)
        await _forget_one_off(request, workflow, status)
        return RequestOutcome(
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            status=status,
            result=payload,
            headline=handed_on_note(workflow.headline(result), handed),
            calls=list(gateway.calls),
            handed_on=list(handed),
            truncated=_input_truncated(request, workflow),
        )

    @observed_stream  # counted once, from its classification and done events
    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """Like :meth:`handle`, as a stream of typed events (:mod:`orchestrator.core.events`):
        the classification, each node's start and end, what nodes report (tool calls and
        results, the reply's fact sentence and its tokens as they arrive, a handoff), each
        model call's experts with their expert-routing source, and last :class:`StreamDone`.

        The request is recorded exactly as :meth:`handle` records it; stopping the iteration
        early records it ``cancelled``.

        Raises:
            UserError: ``request`` is not a :class:`Request`.
            ServerUnavailableError: After the ``failed`` :class:`StreamDone` is yielded.
        """
        if not isinstance(request, Request):
            raise UserError(
                f"stream() takes a Request, got {type(request).__name__}; "
                "build one with Request(text=...)"
            )
        trace = _request_trace("stream", request)
        ended: list[tuple[str, str | None]] = []  # how it ended, for the trace
        try:
            # aclosing: a consumer that stops early closes the inner stream now, which
            # records the request cancelled (no row stays running)
            async with contextlib.aclosing(self._stream(request, trace)) as events:
                async for event in events:
                    if isinstance(event, StreamDone):
                        ended.append((event.status, event.error))
                    yield event
        except BaseException as exc:
            if not ended:
                closed = isinstance(exc, asyncio.CancelledError | GeneratorExit)
                ended.append(("cancelled" if closed else "failed", f"{type(exc).__name__}: {exc}"))
            raise
        finally:
            trace.finish(*(ended[0] if ended else ("cancelled", "stream closed")))

    async def _stream(self, request: Request, trace: RequestTrace) -> AsyncIterator[StreamEvent]:
        """:meth:`stream`'s work, on the request's ``trace``."""
        classification = self.classifier.classify(request)
        route = self._route(request, classification)
        _trace_classification(trace, route, classification)
        yield ClassificationEvent(
            request_id=request.id,
            route=route.value,
            confidence=classification.confidence,
            reason=classification.reason,
            secondary_routes=tuple(
                str(getattr(r, "value", r)) for r in getattr(classification, "secondary_routes", ())
            ),
            signals=tuple(signal.model_dump(mode="json") for signal in classification.signals),
            tiers=tuple(
                tier.model_dump(mode="json") for tier in getattr(classification, "tiers", ())
            ),
        )
        workflow = self.workflows.get(route)
        if route is Route.FALLBACK or workflow is None:
            outcome = await self._handle(request, trace)
            yield StreamDone(
                request_id=outcome.request_id,
                status=outcome.status,
                headline=outcome.headline,
                error=outcome.error,
            )
            return
        await self.store.astart_request(request, classification, workflow.name)
        async with (
            self._turn(request, workflow),
            # closed here when the consumer stops early, so its row is recorded cancelled now
            contextlib.aclosing(
                self._stream_run(request, classification, workflow, trace)
            ) as events,
        ):
            async for event in events:
                yield event

    async def _stream_run(
        self,
        request: Request,
        classification: Classification,
        workflow: Workflow[Any, Any],
        trace: RequestTrace,
    ) -> AsyncIterator[StreamEvent]:
        """:meth:`_stream`'s graph run, on the started request (the turn held)."""
        graph_input = await workflow.graph_input(request)
        waiting = None
        if not isinstance(graph_input, Command):  # a confirmation's answer resumes the thread
            waiting = await self._waiting_outcome(request, classification, workflow)
        if waiting is not None:
            yield StreamDone(
                request_id=request.id, status=waiting.status, headline=waiting.headline
            )
            return
        handed = await hand_on(self.store, request, classification, workflow.route)
        trace.workflow(workflow.name)
        gateway = ModelGateway(
            self.client,
            self.store,
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            max_tokens=self.max_tokens,
            temperatures=self.temperatures,
            trace=trace,
        )
        state: dict[str, Any] = {}
        interrupts: Any = None
        finished = completed = False
        try:
            async for mode, chunk in workflow.graph.astream(
                graph_input,
                thread_config(request, trace),
                context=WorkflowContext(llm=gateway, request=request),
                stream_mode=["custom", "tasks", "updates", "values"],
                durability=durability(request, workflow),
            ):
                if mode == "custom" and isinstance(chunk, BaseModel):
                    yield chunk  # type: ignore[misc]
                elif mode == "tasks" and isinstance(chunk, dict) and "name" in chunk:
                    if "result" in chunk or "error" in chunk:
                        yield NodeFinished(
                            node=chunk["name"], interrupted=bool(chunk.get("interrupts"))
                        )
                    else:
                        yield NodeStarted(node=chunk["name"])
                elif mode == "updates" and isinstance(chunk, dict) and "__interrupt__" in chunk:
                    interrupts = chunk["__interrupt__"]
                elif mode == "values" and isinstance(chunk, dict):
                    state = chunk
            completed = True
        except (ModelCallError, ServerUnavailableError, TelemetryError) as exc:
            finished = True
            await self.store.afinish_request(request.id, "failed", error=str(exc))
            await _forget_one_off(request, workflow, "failed")
            for event in _expert_events(gateway):
                yield event
            yield StreamDone(
                request_id=request.id, status="failed", headline=f"failed: {exc}", error=str(exc)
            )
            if isinstance(exc, ServerUnavailableError):
                raise
            return
        except Exception as exc:
            finished = True
            storage = _storage_failure(exc, workflow)
            await self.store.afinish_request(
                request.id, "failed", error=_failure_text(exc, storage)
            )
            if storage is not None and storage is not exc:
                raise storage from exc
            raise
        finally:
            if not finished and not completed:
                # the consumer stopped early (or the task was cancelled): no row stays running
                await asyncio.shield(
                    self.store.afinish_request(request.id, "cancelled", error="stream closed")
                )
        if interrupts:
            state = {**state, "__interrupt__": interrupts}
        result, payload, status = await self._finish(request, workflow, state)
        await _forget_one_off(request, workflow, status)
        for event in _expert_events(gateway):
            yield event
        yield StreamDone(
            request_id=request.id,
            status=status,
            headline=handed_on_note(workflow.headline(result), handed),
            result=payload,
        )

    @observed_request  # a resumed handoff is a request too (route customer_service)
    async def resume(
        self, thread_id: str, *, approve: bool, note: str = "", by: str = "agent"
    ) -> RequestOutcome:
        """Resume the customer-service conversation ``thread_id`` that waits for a person, once,
        with their decision (``approve``; ``note`` goes to the customer's record).

        The resumed run is recorded as its own request (route ``customer_service``).

        Raises:
            UnknownRouteError: No customer-service workflow is registered.
            HandoffError: Nothing waits on ``thread_id`` (a second resume is refused).
            UserError: A bad thread id or note.
        """
        workflow = self.workflow_for(Route.CUSTOMER_SERVICE)
        request = Request(text=f"[handoff resumed] {note or '-'}", thread_id=thread_id)
        classification = Classification(
            route=Route.CUSTOMER_SERVICE,
            confidence=1.0,
            scores={},
            reason=f"resumed by a person ({'approved' if approve else 'rejected'})",
        )
        trace = _request_trace("resume", request)
        try:
            outcome = await self._resume(
                workflow, request, classification, trace, approve=approve, note=note, by=by
            )
        except BaseException as exc:
            trace.finish("failed", f"{type(exc).__name__}: {exc}")
            raise
        trace.finish(outcome.status, outcome.error)
        return outcome

    async def _resume(
        self,
        workflow: Workflow[Any, Any],
        request: Request,
        classification: Classification,
        trace: RequestTrace,
        *,
        approve: bool,
        note: str,
        by: str,
    ) -> RequestOutcome:
        """:meth:`resume`'s work, on the request's ``trace``."""
        thread_id = str(request.thread_id)
        _trace_classification(trace, Route.CUSTOMER_SERVICE, classification)
        trace.set(**{"handoff.decision": "approved" if approve else "rejected"})
        trace.workflow(workflow.name)
        gateway = ModelGateway(
            self.client,
            self.store,
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            max_tokens=self.max_tokens,
            temperatures=self.temperatures,
            trace=trace,
        )
        resume = getattr(workflow, "resume", None)
        if resume is None:
            raise UserError(f"workflow {workflow.name} cannot be resumed")
        # refuse before recording anything when nothing waits (HandoffError)
        if await workflow.pending_handoff(thread_id) is None:  # type: ignore[attr-defined]
            await resume(thread_id, approve=approve, note=note, gateway=gateway, by=by)
        await self.store.astart_request(request, classification, workflow.name)
        try:
            state = await resume(thread_id, approve=approve, note=note, gateway=gateway, by=by)
        except Exception as exc:
            storage = _storage_failure(exc, workflow)
            await self.store.afinish_request(
                request.id, "failed", error=_failure_text(exc, storage)
            )
            if storage is not None and storage is not exc:
                raise storage from exc
            raise
        result = workflow.result(state)
        payload = result.model_dump(mode="json")
        status: RequestStatus = (
            "needs_human" if payload.get("status") == "needs_human" else "succeeded"
        )
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


def _storage_failure(exc: BaseException, workflow: Workflow[Any, Any]) -> StorageError | None:
    """``exc`` as the :class:`StorageError` of the workflow's database (a damaged, locked or
    full conversations file raised by the checkpointer's driver), or None for another error."""
    where = getattr(workflow, "storage_name", None)
    if where is None and isinstance(exc, OSError):
        return None  # a file the workflow writes (a report), not a database: raised as it is
    return storage_error(exc, where or f"the {workflow.name} database", "")


def _failure_text(exc: BaseException, storage: StorageError | None) -> str:
    """What a failed request's row says: the storage failure's line, else the bug's type."""
    return str(storage) if storage is not None else f"internal error: {type(exc).__name__}: {exc}"


def _trace_classification(trace: RequestTrace, route: Route, c: Classification) -> None:
    if trace.active:
        rules = [signal.rule_id for signal in c.signals]
        trace.classified(route.value, c.confidence, rules, c.reason)


def _expert_events(gateway: ModelGateway) -> list[CallExperts]:
    return [
        CallExperts(
            node=c.node,
            expert_routing_source=c.expert_routing_source.value,
            top_experts=c.top_experts,
            moe_layers=layers,
            expert_counts=counts,
            prompt_tokens=c.prompt_tokens,
            completion_tokens=c.completion_tokens,
            latency_ms=c.latency_ms,
        )
        for c, (layers, counts) in zip(gateway.calls, gateway.expert_loads, strict=True)
    ]


def _input_truncated(request: Request, workflow: Workflow[Any, Any]) -> bool:
    """Whether ``workflow`` read only part of the request's text: it declares how much it
    reads (``max_message_chars``) and the text is longer."""
    limit = getattr(workflow, "max_message_chars", None)
    return isinstance(limit, int) and len(request.text) > limit
