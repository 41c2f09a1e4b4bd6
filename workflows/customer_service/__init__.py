"""Customer-service workflow (LangGraph)."""

from workflows.customer_service.graph import (
    CustomerServiceResult,
    CustomerServiceState,
    CustomerServiceWorkflow,
    build_graph,
)

__all__ = [
    "CustomerServiceResult",
    "CustomerServiceState",
    "CustomerServiceWorkflow",
    "build_graph",
]
