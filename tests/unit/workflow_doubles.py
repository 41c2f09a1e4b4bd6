"""Helpers for the small workflows the dispatcher and plugin tests write against the contract."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from orchestrator.core.workflow import WorkflowContext


def one_node_graph(state: type[Any], node: Callable[..., Any]) -> CompiledStateGraph:
    """The compiled graph ``START -> node -> END`` over the ``state`` TypedDict, with the
    workflows' :class:`WorkflowContext` as its runtime context; the node is named after its
    function (``node.__name__``)."""
    graph = StateGraph(state, context_schema=WorkflowContext)
    graph.add_node(node.__name__, node)
    graph.add_edge(START, node.__name__)
    graph.add_edge(node.__name__, END)
    return graph.compile()
