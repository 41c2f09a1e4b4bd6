"""The customer-service workflow: triage the message, then draft a reply.

::

    START → triage_issue → draft_reply → END

``triage_issue`` asks for JSON constrained to :data:`skills.TRIAGE_SCHEMA`; ``draft_reply``
writes free text. Both are model calls, each recorded with its experts and router confidence.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict

from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.request import Request
from orchestrator.routes import Route
from skills import DraftReply, IssueTriage, draft_reply, triage_issue


class CustomerServiceState(TypedDict, total=False):
    """Graph state: the message, then what each node adds."""

    message: str
    triage: IssueTriage
    reply: DraftReply


class CustomerServiceResult(BaseModel):
    """The workflow's output."""

    model_config = ConfigDict(frozen=True)

    triage: IssueTriage
    reply: DraftReply


async def _triage(state: CustomerServiceState, runtime: Runtime[WorkflowContext]) -> dict[str, Any]:
    return {"triage": await triage_issue(runtime.context.llm, state["message"])}


async def _reply(state: CustomerServiceState, runtime: Runtime[WorkflowContext]) -> dict[str, Any]:
    return {"reply": await draft_reply(runtime.context.llm, state["message"], state["triage"])}


def build_graph():  # -> CompiledStateGraph
    """Compile the graph (no checkpointer: each request is one short, stateless run)."""
    graph = StateGraph(CustomerServiceState, context_schema=WorkflowContext)
    graph.add_node("triage_issue", _triage)
    graph.add_node("draft_reply", _reply)
    graph.add_edge(START, "triage_issue")
    graph.add_edge("triage_issue", "draft_reply")
    graph.add_edge("draft_reply", END)
    return graph.compile()


class CustomerServiceWorkflow(Workflow[CustomerServiceState, CustomerServiceResult]):
    """Registered for :attr:`Route.CUSTOMER_SERVICE`."""

    name = "customer_service"
    route = Route.CUSTOMER_SERVICE

    def __init__(self) -> None:
        self.graph = build_graph()

    def initial_state(self, request: Request) -> CustomerServiceState:
        return CustomerServiceState(message=request.text)

    def result(self, state: CustomerServiceState) -> CustomerServiceResult:
        return CustomerServiceResult(triage=state["triage"], reply=state["reply"])

    def headline(self, result: CustomerServiceResult) -> str:
        return f"[{result.triage.issue_type}/{result.triage.urgency}] {result.reply.text}"
