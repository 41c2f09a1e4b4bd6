"""Customer-service workflow (LangGraph): order store, tools, memory, handoff, streaming."""

from workflows.customer_service.graph import (
    CustomerServiceResult,
    CustomerServiceState,
    CustomerServiceWorkflow,
    HandoffError,
    tool_spec,
)
from workflows.customer_service.opening import checkpoint_url, open_workflow
from workflows.customer_service.signals import Signals, read_signals

__all__ = [
    "CustomerServiceResult",
    "CustomerServiceState",
    "CustomerServiceWorkflow",
    "HandoffError",
    "Signals",
    "checkpoint_url",
    "open_workflow",
    "read_signals",
    "tool_spec",
]
