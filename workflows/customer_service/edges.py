"""The customer-service graph's conditional edges: which node runs next, read from the state.

The edge functions are coroutines although they only read the state: LangGraph runs a plain
function given to ``add_conditional_edges`` in a thread of the event loop's executor
(langchain_core's ``run_in_executor``), a thread hop and a GIL handover per edge, two or three
per turn, on the batch's request path.
"""

from __future__ import annotations

from langgraph.graph import END

from workflows.customer_service.deciding import WRITE_TOOL_NAMES
from workflows.customer_service.state import CustomerServiceState


async def after_decision(state: CustomerServiceState) -> str:
    if state.get("handoff"):
        return "handoff"
    if state.get("clarify"):
        return "clarify"
    return "select_tool" if state["plan"].get("tool") else "draft_reply"


async def after_tool_choice(state: CustomerServiceState) -> str:
    """A write is confirmed by the customer before it runs; a read runs now."""
    if state.get("handoff"):
        return "handoff"
    if state.get("clarify"):  # the model could not read a message this long
        return "clarify"
    return "confirm" if state["plan"].get("tool") in WRITE_TOOL_NAMES else "run_tool"


async def after_confirm(state: CustomerServiceState) -> str:
    return "await_confirm" if state.get("pending") else "draft_reply"


async def after_clarify(state: CustomerServiceState) -> str:
    """A question still waits for the customer's yes (asked again after a message that was
    no answer of theirs: :mod:`~workflows.customer_service.not_own`), else the turn ends."""
    return "await_confirm" if state.get("pending") else END


async def after_run(state: CustomerServiceState) -> str:
    return "handoff" if state.get("handoff") else "draft_reply"


async def after_draft(state: CustomerServiceState) -> str:
    """The server lost while the reply was written, and no person saw the case yet."""
    handoff = state.get("handoff")
    return "handoff" if handoff and not handoff.get("decision") else END
