"""The dispatcher: classify a request, run its route's workflow, record how it ended."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol

from langgraph.types import Command, Durability
from pydantic import BaseModel, ConfigDict

from orchestrator.classifier import Classification, RuleClassifier
from orchestrator.core import registry
from orchestrator.core.client import ModelClient
from orchestrator.core.compound import HandedOn, hand_on, handed_on_note
from orchestrator.core.events import (
    CallExperts,
    ClassificationEvent,
    NodeFinished,
    NodeStarted,
    RequestStatus,
    StreamDone,
    StreamEvent,
)
from orchestrator.core.gateway import CallSummary, ModelGateway
from orchestrator.core.workflow import HandoffWorkflow, Workflow, WorkflowContext
from orchestrator.exceptions import (
    HandoffError,
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
from orchestrator.request import Request, decider_name
from orchestrator.routes import FALLBACK, Route, RouteSpec, the_route
from orchestrator.telemetry import TelemetryStore

logger = logging.getLogger(__name__)

__all__ = [
    "Orchestrator",
    "RequestOutcome",
    "RequestStatus",
    "durability",
    "thread_config",
]


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
        headline: One line for the console; never an operator's command (an app may show
            it to a customer).
        operator: What an operator may do next (``orchestrator handoff resume T …``), or "".
        output: The workflow's :meth:`~orchestrator.core.workflow.Workflow.output` of its
            result (a batch's ``output`` column); None when no workflow finished.
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
    operator: str = ""
    output: str | None = None
    error: str | None = None
    calls: list[CallSummary] = []
    handed_on: list[HandedOn] = []
    truncated: bool = False


def thread_config(request: Request, trace: RequestTrace | None = None) -> dict[str, Any]:
    """LangGraph's run config: the conversation's ``thread_id`` (a one-off request's id), which
    a checkpointed graph needs and other graphs ignore; with ``trace``, a span per node."""
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


async def _forget_one_off(
    request: Request, workflow: Workflow[Any, Any], status: RequestStatus
) -> None:
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
    dotted: dict[str, Any] = {
        "request.thread": request.thread_id,
        "request.attachments": len(request.attachments),
    }
    return RequestTrace(kind, request.id, channel=request.channel, **dotted)


class RequestClassifier(Protocol):
    """What the orchestrator asks of a classifier: a :class:`RuleClassifier`, or a stand-in
    such as the moderation entry point's fixed route."""

    def classify(self, request: Request) -> Classification:
        """The request's route, confidence and reasons."""
        ...


class Orchestrator:
    """Routes requests into workflows and records every model call.

    Args:
        client: The model client (a :class:`~orchestrator.core.client.VLLMClient`, or a test
            double such as :class:`~orchestrator.testing.ScriptedModel`).
        store: The telemetry store.
        workflows: The workflows to register, one per route; None: those installed through
            the ``moe_orchestrator.workflows`` entry points, checked against the declared
            routes (:func:`~orchestrator.core.registry.load_workflows`).
        classifier: The request classifier; a :class:`RuleClassifier` by default.
        max_tokens: Default completion limit for model calls.
        temperatures: Temperature presets per kind of skill (``judging``, ``factual``,
            ``free_text``); the gateway's defaults when None.
        routes: The declared routes (:func:`~orchestrator.core.registry.declared_routes`);
            read from the classifier's routes file when None. An application that builds many
            orchestrators (one per preset or endpoint) reads them once and passes them.

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
        workflows: Iterable[Workflow[Any, Any]] | None = None,
        *,
        classifier: RequestClassifier | None = None,
        max_tokens: int = 48,
        temperatures: Mapping[str, float] | None = None,
        routes: Mapping[Route, RouteSpec] | None = None,
    ) -> None:
        self.temperatures = dict(temperatures) if temperatures is not None else None
        self.client = client
        self.store = store
        self.max_tokens = max_tokens
        rules_path = getattr(classifier, "rules_path", None)
        if workflows is None:
            workflows = registry.load_workflows(rules_path)
        workflows = list(workflows)
        # the default classifier also knows the routes the workflows declare themselves
        own = [w.route_spec for w in workflows if w.route_spec is not None]
        self.classifier: RequestClassifier = classifier or RuleClassifier(routes=own)
        self.workflows: dict[Route, Workflow[Any, Any]] = {}
        for workflow in workflows:
            if workflow.route in self.workflows:
                raise UserError(f"two workflows registered for route {workflow.route}")
            self.workflows[workflow.route] = workflow
        #: The declared routes (the routes file's, then the workflows' own ``route_spec``).
        self.routes: dict[Route, RouteSpec] = (
            dict(routes)
            if routes is not None
            else registry.declared_routes(self.workflows.values(), registry.file_routes(rules_path))
        )
        registry.check_declared(self.routes, self.workflows.values())
        #: The route that keeps a customer's thread and resumes handoffs (``holds_threads``).
        self.thread_route = the_route(self.routes.values(), "holds_threads")

    def _route(self, request: Request, classification: Classification) -> Route:
        """The route to run: the classifier's, except that a conversation with a customer
        (``thread_id`` and ``customer_id``) stays on the route that holds threads
        (``holds_threads``: customer service), where a request the classifier is unsure of is
        handed to a person or answered, and one whose words also ask for another route gets a
        note of the part handed on (:mod:`orchestrator.core.compound`)."""
        route = classification.route
        held = self.thread_route
        if request.thread_id and request.customer_id and held in self.workflows and route != held:
            assert held is not None
            return held
        return route

    def workflow_for(self, route: Route) -> Workflow[Any, Any]:
        """The workflow registered for ``route``.

        Raises:
            UnknownRouteError: None is registered.
        """
        try:
            return self.workflows[route]
        except KeyError:
            known = ", ".join(sorted(self.workflows)) or "none"
            raise UnknownRouteError(
                f"no workflow registered for route {route!r} (registered: {known})"
            ) from None

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
        _check_request("handle", request)
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
        outcome: RequestOutcome | None = None
        async for item in self._events(request, trace, events=False):
            if isinstance(item, RequestOutcome):
                outcome = item
        assert outcome is not None  # _events ends every run with its outcome
        return outcome

    @observed_stream  # counted once, from its classification and done events
    async def stream(self, request: Request) -> AsyncGenerator[StreamEvent, None]:
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
        _check_request("stream", request)
        trace = _request_trace("stream", request)
        ended: list[tuple[str, str | None]] = []  # how it ended, for the trace
        try:
            # aclosing: a consumer that stops early closes the inner stream now, which
            # records the request cancelled (no row stays running)
            async with contextlib.aclosing(self._events(request, trace, events=True)) as items:
                async for item in items:
                    event = _done(item) if isinstance(item, RequestOutcome) else item
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

    async def _events(
        self, request: Request, trace: RequestTrace, *, events: bool
    ) -> AsyncGenerator[StreamEvent | RequestOutcome, None]:
        """The one path of :meth:`handle` and :meth:`stream`: classify, start the request, hold
        the turn, run the graph. Yields the stream's events (``events``: the classification,
        the graph's events, each call's experts) and last the :class:`RequestOutcome`."""
        classification = self.classifier.classify(request)
        route = self._route(request, classification)
        _trace_classification(trace, route, classification)
        if events:
            yield _classification_event(request, route, classification)
        workflow = self.workflows.get(route)
        if route == FALLBACK or workflow is None:
            yield await self._unrouted(request, classification, route)
            return
        await self.store.astart_request(request, classification, workflow.name)
        async with self._turn(request, workflow):
            graph_input = await workflow.graph_input(request)
            waiting = None
            if not isinstance(graph_input, Command):  # a confirmation's answer resumes it
                waiting = await self._waiting_outcome(request, classification, workflow)
            if waiting is not None:
                yield waiting
                return
            handed = await hand_on(
                self.store, request, classification, workflow.route, self.classifier
            )
            drive = _streamed if events else _invoked
            run = _Run(request, classification, workflow, trace, handed, events=events)
            run.truncated = _input_truncated(request, workflow)
            # closed here when the consumer stops early, so its row is recorded cancelled now
            async with contextlib.aclosing(
                self._execute(run, lambda gateway: drive(run, graph_input, gateway))
            ) as items:
                async for item in items:
                    yield item

    async def _unrouted(
        self, request: Request, classification: Classification, route: Route
    ) -> RequestOutcome:
        """Record and return the end of a request no workflow runs: the fallback route
        (``needs_human``) or a route without a registered workflow (``no_workflow``)."""
        await self.store.astart_request(request, classification, None)
        if route == FALLBACK:
            await self.store.afinish_request(request.id, "needs_human", error=classification.reason)
            return RequestOutcome(
                request_id=request.id,
                classification=classification,
                workflow=None,
                status="needs_human",
                headline=f"handed to a person: {classification.reason}",
            )
        try:
            self.workflow_for(route)
        except UnknownRouteError as exc:
            error = str(exc)
        await self.store.afinish_request(request.id, "no_workflow", error=error)
        return RequestOutcome(
            request_id=request.id,
            classification=classification,
            workflow=None,
            status="no_workflow",
            error=error,
            headline=error,
        )

    async def _waiting_outcome(
        self, request: Request, classification: Classification, workflow: Workflow[Any, Any]
    ) -> RequestOutcome | None:
        """When the conversation already waits for a person (a LangGraph interrupt), the new
        message does not run the graph: it is recorded ``needs_human`` and the outcome says
        so. None when nothing waits (or the workflow has no handoff)."""
        if (
            not request.thread_id
            or not isinstance(workflow, HandoffWorkflow)
            or await workflow.pending_handoff(request.thread_id) is None
        ):
            return None
        headline = f"conversation {request.thread_id} waits for a person; nothing else was done"
        operator = f"orchestrator handoff resume {request.thread_id} --approve|--reject"
        await self.store.afinish_request(request.id, "needs_human", error=f"{headline}; {operator}")
        return RequestOutcome(
            request_id=request.id,
            classification=classification,
            workflow=workflow.name,
            status="needs_human",
            headline=headline,
            operator=operator,
        )

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

    async def _execute(
        self,
        run: _Run,
        drive: Callable[[ModelGateway], AsyncGenerator[StreamEvent | _Final, None]],
    ) -> AsyncGenerator[StreamEvent | RequestOutcome, None]:
        """Run the started request's graph (``drive``, given the request's gateway) and record
        its end: the run path :meth:`handle`, :meth:`stream` and :meth:`resume` share.

        Yields what ``drive`` yields (its events), then, when ``run.events``, each call's
        experts, and last the :class:`RequestOutcome`. A failed model call, an unreachable
        server or an unwritable telemetry row ends it ``failed`` (an outcome; with
        ``run.raise_failures``, raised like a bug instead); a cancelled or closed run is
        recorded ``cancelled``; any other error is recorded ``failed`` and raised.

        Raises:
            ServerUnavailableError: After the ``failed`` outcome is yielded.
        """
        request, workflow = run.request, run.workflow
        run.trace.workflow(workflow.name)
        gateway = self._gateway(run)
        state: Any = None
        failure: ModelCallError | ServerUnavailableError | TelemetryError | None = None
        try:
            async with contextlib.aclosing(drive(gateway)) as items:
                async for item in items:
                    if isinstance(item, _Final):
                        state = item.state
                    else:
                        yield item
        except (ModelCallError, ServerUnavailableError, TelemetryError) as exc:
            if run.raise_failures:
                await self._crashed(request, workflow, exc)
            failure = exc
        except (asyncio.CancelledError, GeneratorExit) as exc:  # no row stays "running"
            closed = run.events or isinstance(exc, GeneratorExit)
            error = "stream closed" if closed else "cancelled by caller"
            await asyncio.shield(self.store.afinish_request(request.id, "cancelled", error=error))
            raise
        except Exception as exc:  # a bug in a workflow: record it, then let it surface
            await self._crashed(request, workflow, exc)
        if failure is not None:
            logger.error("request %s failed in workflow %s: %s", request.id, workflow.name, failure)
            await self.store.afinish_request(request.id, "failed", error=str(failure))
            await _forget_one_off(request, workflow, "failed")
            if run.events:
                for event in _expert_events(gateway):
                    yield event
            yield run.outcome("failed", gateway, error=str(failure), headline=f"failed: {failure}")
            if isinstance(failure, ServerUnavailableError):
                raise failure
            return
        result, payload, status = await self._finish(request, workflow, state)
        await _forget_one_off(request, workflow, status)
        if run.events:
            for event in _expert_events(gateway):
                yield event
        yield run.outcome(
            status,
            gateway,
            result=payload,
            headline=handed_on_note(workflow.headline(result), run.handed),
            output=workflow.output(result),
            handed_on=list(run.handed),
            truncated=run.truncated,
        )

    def _gateway(self, run: _Run) -> ModelGateway:
        """The request's model gateway: every call it makes is recorded under the request."""
        return ModelGateway(
            self.client,
            self.store,
            request_id=run.request.id,
            classification=run.classification,
            workflow=run.workflow.name,
            max_tokens=self.max_tokens,
            temperatures=self.temperatures,
            trace=run.trace,
        )

    async def _crashed(
        self, request: Request, workflow: Workflow[Any, Any], exc: Exception
    ) -> NoReturn:
        """Record a run that raised ``exc`` and raise it: ``rejected`` for a refusal (decided
        already, nothing waits, bad input), else ``failed`` (as a StorageError if the DB's)."""
        if isinstance(exc, HandoffError | UserError):  # the caller's to fix: no traceback
            await self.store.afinish_request(request.id, "rejected", error=str(exc)[:2000])
            raise exc
        storage = _storage_failure(exc, workflow)
        if storage is None:
            logger.exception("request %s crashed in workflow %s", request.id, workflow.name)
        await self.store.afinish_request(request.id, "failed", error=_failure_text(exc, storage))
        if storage is not None and storage is not exc:
            raise storage from exc
        raise exc

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

    @observed_request  # a resumed handoff is a request too (on the route that holds threads)
    async def resume(
        self, thread_id: str, *, approve: bool, note: str = "", by: str = "agent"
    ) -> RequestOutcome:
        """Resume the conversation ``thread_id`` that waits for a person, once, with their
        decision (``approve``; ``note`` goes to the customer's record), in the workflow of the
        route that holds threads (``holds_threads``: customer service).

        The resumed run is recorded as its own request (on that route).

        Raises:
            UnknownRouteError: No route holds threads, or no workflow is registered for it.
            HandoffError: Nothing waits on ``thread_id`` (a second resume is refused).
            UserError: A bad thread id or note, or ``by`` names no person (``decider_name``).
        """
        if self.thread_route is None:
            raise UnknownRouteError("no declared route holds threads (holds_threads = true)")
        workflow, by = self.workflow_for(self.thread_route), decider_name(by)
        request = Request(text=f"[handoff resumed] {note or '-'}", thread_id=thread_id)
        classification = Classification(
            route=workflow.route,
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
        """:meth:`resume`'s work, on the request's ``trace``: the shared run path
        (:meth:`_execute`) with the workflow's ``resume`` as the graph run."""
        thread_id = str(request.thread_id)
        _trace_classification(trace, workflow.route, classification)
        trace.set(**{"handoff.decision": "approved" if approve else "rejected"})
        if not isinstance(workflow, HandoffWorkflow):
            raise UserError(f"workflow {workflow.name} cannot be resumed")

        async def resumed(gateway: ModelGateway) -> AsyncGenerator[_Final, None]:
            yield _Final(
                await workflow.resume(thread_id, approve=approve, note=note, gateway=gateway, by=by)
            )

        run = _Run(request, classification, workflow, trace, raise_failures=True)
        # refuse before recording anything when nothing waits (HandoffError)
        if await workflow.pending_handoff(thread_id) is None:
            async for _ in resumed(self._gateway(run)):
                pass
        await self.store.astart_request(request, classification, workflow.name)
        outcome: RequestOutcome | None = None
        async for item in self._execute(run, resumed):
            if isinstance(item, RequestOutcome):
                outcome = item
        assert outcome is not None  # _execute ends every run with its outcome
        return outcome


@dataclass
class _Final:
    """The graph's final state, the last thing a run's ``drive`` yields."""

    state: Any


@dataclass
class _Run:
    """One started request's graph run, as :meth:`Orchestrator._execute` runs it.

    Attributes:
        handed: The parts of a compound request handed to a person (``handed_on``).
        events: The caller streams: yield each call's experts, and a closed or cancelled run
            is recorded ``stream closed``.
        raise_failures: A failed model call is raised (recorded like a bug) instead of
            ending in a ``failed`` outcome (a resumed handoff).
        truncated: The workflow read only part of the request's text.
    """

    request: Request
    classification: Classification
    workflow: Workflow[Any, Any]
    trace: RequestTrace
    handed: tuple[HandedOn, ...] = ()
    events: bool = False
    raise_failures: bool = False
    truncated: bool = False

    def outcome(
        self, status: RequestStatus, gateway: ModelGateway, **fields: Any
    ) -> RequestOutcome:
        """The run's outcome with ``status``, its calls, and ``fields``."""
        return RequestOutcome(
            request_id=self.request.id,
            classification=self.classification,
            workflow=self.workflow.name,
            status=status,
            calls=list(gateway.calls),
            **fields,
        )


def _config(run: _Run, gateway: ModelGateway) -> dict[str, Any]:
    """The keyword arguments of the graph's ``ainvoke`` / ``astream`` for ``run``."""
    return {
        "config": thread_config(run.request, run.trace),
        "context": WorkflowContext(gateway, run.request, tuple(h.route for h in run.handed)),
        "durability": durability(run.request, run.workflow),
    }


async def _invoked(
    run: _Run, graph_input: Any, gateway: ModelGateway
) -> AsyncGenerator[_Final, None]:
    """:meth:`Orchestrator.handle`'s graph run: one ``ainvoke``, no events."""
    yield _Final(await run.workflow.graph.ainvoke(graph_input, **_config(run, gateway)))


async def _streamed(
    run: _Run, graph_input: Any, gateway: ModelGateway
) -> AsyncGenerator[StreamEvent | _Final, None]:
    """:meth:`Orchestrator.stream`'s graph run: the nodes' starts and ends and what they
    report (LangGraph's ``custom`` stream), then the final state (with its interrupts)."""
    state: dict[str, Any] = {}
    interrupts: Any = None
    async for mode, chunk in run.workflow.graph.astream(
        graph_input, stream_mode=["custom", "tasks", "updates", "values"], **_config(run, gateway)
    ):
        if mode == "custom" and isinstance(chunk, BaseModel):
            yield chunk  # type: ignore[misc]  # nodes report StreamEvent models only
        elif mode == "tasks" and isinstance(chunk, dict) and "name" in chunk:
            if "result" in chunk or "error" in chunk:
                yield NodeFinished(node=chunk["name"], interrupted=bool(chunk.get("interrupts")))
            else:
                yield NodeStarted(node=chunk["name"])
        elif mode == "updates" and isinstance(chunk, dict) and "__interrupt__" in chunk:
            interrupts = chunk["__interrupt__"]
        elif mode == "values" and isinstance(chunk, dict):
            state = chunk
    yield _Final({**state, "__interrupt__": interrupts} if interrupts else state)


def _check_request(method: str, request: object) -> None:
    if not isinstance(request, Request):
        raise UserError(
            f"{method}() takes a Request, got {type(request).__name__}; "
            "build one with Request(text=...)"
        )


def _classification_event(
    request: Request, route: Route, classification: Classification
) -> ClassificationEvent:
    return ClassificationEvent(
        request_id=request.id,
        route=route,
        confidence=classification.confidence,
        reason=classification.reason,
        secondary_routes=tuple(
            str(getattr(r, "value", r)) for r in getattr(classification, "secondary_routes", ())
        ),
        signals=tuple(signal.model_dump(mode="json") for signal in classification.signals),
        tiers=tuple(tier.model_dump(mode="json") for tier in getattr(classification, "tiers", ())),
    )


def _done(outcome: RequestOutcome) -> StreamDone:
    """The stream's last event for ``outcome``."""
    return StreamDone(
        request_id=outcome.request_id,
        status=outcome.status,
        headline=outcome.headline,
        result=outcome.result,
        error=outcome.error,
    )


def _storage_failure(exc: BaseException, workflow: Workflow[Any, Any]) -> StorageError | None:
    """``exc`` as the :class:`StorageError` of the workflow's database (a damaged, locked or
    full conversations file raised by the checkpointer's driver), or None for another error."""
    where = getattr(workflow, "storage_name", None)
    if where is None and isinstance(exc, OSError | UserError):
        return None  # a file the workflow writes (a report: orchestrator.outfiles raises
        # UserError "cannot write ...: disk full"), not a database: raised as it is
    return storage_error(exc, where or f"the {workflow.name} database", "")


def _failure_text(exc: BaseException, storage: StorageError | None) -> str:
    """What a failed request's row says: the storage failure's line, else the bug's type."""
    return str(storage) if storage is not None else f"internal error: {type(exc).__name__}: {exc}"


def _trace_classification(trace: RequestTrace, route: Route, c: Classification) -> None:
    if trace.active:
        rules = [signal.rule_id for signal in c.signals]
        trace.classified(route, c.confidence, rules, c.reason)


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
