"""What a workflow is to the dispatcher: a compiled LangGraph graph bound to a route.

Nodes receive a :class:`WorkflowContext` through LangGraph's runtime context
(``runtime.context.llm``), so they call the model through the request's
:class:`~orchestrator.core.gateway.ModelGateway` and every call is recorded.

A workflow is generic over its graph state (a ``TypedDict``) and its result (a pydantic
model), so ``initial_state``, ``result`` and ``headline`` are typed per workflow and need no
casts; the dispatcher only relies on the base contract.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from orchestrator.config import Settings
from orchestrator.core.gateway import ModelGateway
from orchestrator.request import Request
from orchestrator.routes import Route, RouteSpec


@dataclass(frozen=True)
class WorkflowContext:
    """LangGraph runtime context handed to every node.

    Attributes:
        llm: The request-scoped model gateway.
        request: The request being served.
        handed_on: The routes of the parts of the request that the dispatcher handed to a
            person instead of running them (:mod:`orchestrator.core.compound`), in the order
            asked: what a reply may say was passed on; () for a request of one route.
    """

    llm: ModelGateway
    request: Request
    handed_on: tuple[str, ...] = ()


#: The graph state of a workflow (its ``TypedDict``).
StateT = TypeVar("StateT", bound=Mapping[str, Any])
#: The typed result of a workflow (stored as JSON in ``requests.result``).
ResultT = TypeVar("ResultT", bound=BaseModel)


class Workflow(ABC, Generic[StateT, ResultT]):
    """A LangGraph workflow the dispatcher can run, over state ``StateT`` and result ``ResultT``.

    Subclasses set :attr:`name` and :attr:`route` (a route's name; :attr:`route_spec` too when
    the routes file does not declare it), build the graph once in ``__init__`` and map
    a request to the initial state and the final state to a typed result, e.g.
    ``class CustomerServiceWorkflow(Workflow[CustomerServiceState, CustomerServiceResult])``.
    """

    name: str
    route: Route
    #: The declaration of a route the routes file does not declare (a plugin's own route:
    #: rules, examples, facts); None when the routes file declares :attr:`route`.
    route_spec: RouteSpec | None = None
    graph: CompiledStateGraph[Any, WorkflowContext, Any, Any]

    @abstractmethod
    def initial_state(self, request: Request) -> StateT:
        """The graph's input for ``request``."""

    async def graph_input(self, request: Request) -> Any:
        """What the graph is invoked with for ``request``: :meth:`initial_state`, or a
        LangGraph ``Command(resume=...)`` when the thread waits on the user's own answer (a
        confirmation question); the dispatcher then runs it instead of refusing the turn."""
        return self.initial_state(request)

    @abstractmethod
    def result(self, state: StateT) -> ResultT:
        """The typed result read from the graph's final state."""

    @abstractmethod
    def headline(self, result: ResultT) -> str:
        """One line for the console (e.g. the drafted reply)."""

    def output(self, result: ResultT) -> str | None:
        """The result in one cell of a batch's results file (the reply, the verdict, the
        report's path); :meth:`headline` unless the workflow says otherwise."""
        return self.headline(result)

    def configured(self, settings: Settings) -> Workflow[StateT, ResultT]:
        """This workflow for an application's ``settings`` (a batch's attachment folders, for
        instance); itself unless the workflow reads settings of its own."""
        return self

    @asynccontextmanager
    async def opened(self, settings: Settings) -> AsyncIterator[Workflow[StateT, ResultT]]:
        """This workflow open for a long-running application (the UI service): its databases
        and checkpointers opened for the block and closed after it; by default just
        :meth:`configured` with ``settings``."""
        yield self.configured(settings)

    def warm(self) -> None:
        """Load what the first request would otherwise load (models, word lists) before it
        comes; nothing by default. A batch calls it before its first row."""


@runtime_checkable
class HandoffWorkflow(Protocol):
    """A workflow whose turns can wait for a person (a LangGraph interrupt) and be resumed with
    their decision; the dispatcher checks a thread with :meth:`pending_handoff` before a turn
    runs and drives :meth:`Orchestrator.resume
    <orchestrator.core.dispatcher.Orchestrator.resume>` through :meth:`resume`.
    """

    name: str

    async def pending_handoff(self, thread_id: str) -> dict[str, Any] | None:
        """The interrupt payload ``thread_id`` waits on, or None when nothing waits."""
        ...

    async def resume(
        self, thread_id: str, *, approve: bool, note: str, gateway: ModelGateway, by: str
    ) -> Any:
        """Resume ``thread_id`` once with a person's decision; returns the final graph state.

        Raises:
            HandoffError: Nothing waits on ``thread_id``.
        """
        ...
