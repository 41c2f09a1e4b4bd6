"""What a workflow is to the dispatcher: a compiled LangGraph graph bound to a route.

Nodes receive a :class:`WorkflowContext` through LangGraph's runtime context
(``runtime.context.llm``), so they call the model through the request's
:class:`~orchestrator.core.gateway.ModelGateway` and every call is recorded.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from orchestrator.core.gateway import ModelGateway
from orchestrator.request import Request
from orchestrator.routes import Route


@dataclass(frozen=True)
class WorkflowContext:
    """LangGraph runtime context handed to every node.

    Attributes:
        llm: The request-scoped model gateway.
        request: The request being served.
    """

    llm: ModelGateway
    request: Request


class Workflow(ABC):
    """A LangGraph workflow the dispatcher can run.

    Subclasses set :attr:`name` and :attr:`route`, build the graph once in ``__init__`` and map
    a request to the initial state and the final state to a typed result.
    """

    name: str
    route: Route
    graph: CompiledStateGraph

    @abstractmethod
    def initial_state(self, request: Request) -> dict[str, Any]:
        """The graph's input for ``request``."""

    @abstractmethod
    def result(self, state: dict[str, Any]) -> BaseModel:
        """The typed result read from the graph's final state."""

    @abstractmethod
    def headline(self, result: BaseModel) -> str:
        """One line for the console (e.g. the drafted reply)."""
