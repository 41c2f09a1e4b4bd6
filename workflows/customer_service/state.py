"""The customer-service graph's state and result, its limits, and the stream writer.

Split out of :mod:`workflows.customer_service.graph` (issue 48); the graph re-exports these.
"""

from __future__ import annotations

import contextlib
from typing import Any, TypedDict

from langgraph.config import get_stream_writer
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.exceptions import ModelCallError, ServerUnavailableError
from skills import DraftReply, IssueTriage

#: Longest message text the workflow reads (a longer one is cut, and says so in the prompt).
MAX_MESSAGE_CHARS = 4000
#: Order ids offered to the model when the message names none (newest first).
MAX_OFFERED_ORDERS = 20
#: Turns of history kept in the thread state.
MAX_HISTORY = 12
#: The handoff reason when the model server is lost mid-turn.
MODEL_DOWN_REASON = "the model server is unavailable"
#: What a lost model server raises at a model call: the unreachable server, and the failing
#: answer of a dying one (an HTTP 5xx, a cut body).
MODEL_LOST = (ServerUnavailableError, ModelCallError)


class CustomerServiceState(TypedDict, total=False):
    """Graph state (plain JSON values, so any checkpointer can store it).

    Per turn: ``message`` (its head and tail when ``cut``), ``attachments``, ``signals``,
    ``triage``, ``plan``, ``tool_calls``, ``tool_results``, ``handoff``, ``reply``,
    ``model_down`` (why the model server was lost this turn, when it was), ``too_long``
    (what the customer is told when the server refused the prompt as over the model's
    context). Per conversation: ``thread_id``, ``customer_id``, ``turn``, ``angry_streak``,
    ``last_order_id``, ``history``, ``not_holder`` (a writer said they are not the account
    holder: no write is offered on the thread), ``unusual`` (why a customer message of the
    thread was not plain talk, :mod:`~workflows.customer_service.plain_talk`: a write on the
    thread runs only once a person approved it).
    """

    message: str
    cut: bool
    attachments: list[str]
    route: str
    fallback_reason: str | None
    confidence: float
    secondary_routes: list[str]
    thread_id: str
    customer_id: str | None
    locale: str
    turn: int
    angry_streak: int
    last_order_id: str | None
    history: list[dict[str, str]]
    signals: dict[str, Any]
    triage: dict[str, Any]
    plan: dict[str, Any]
    tool_calls: list[dict[str, Any]]
    tool_results: list[dict[str, Any]]
    handoff: dict[str, Any] | None
    reply: dict[str, Any]
    model_down: str | None
    too_long: str | None
    clarify: str | None
    pending: dict[str, Any] | None
    declined_action: dict[str, Any] | None
    not_holder: bool
    unusual: str | None


class CustomerServiceResult(BaseModel):
    """The workflow's output for one turn.

    Attributes:
        status: ``succeeded``, or ``needs_human`` when the turn waits for a person.
        triage: The triage of the message.
        reply: The reply: code's fact sentence then the model's checked prose.
        tool_results: Every tool result of the turn (facts a reply may quote).
        handoff: Why and how a person was involved, if one was.
        thread_id: The conversation.
    """

    model_config = ConfigDict(frozen=True)

    status: str = "succeeded"
    triage: IssueTriage
    reply: DraftReply
    tool_results: list[dict[str, Any]] = Field(default_factory=list)
    handoff: dict[str, Any] | None = None
    thread_id: str = ""


def emit(event: BaseModel) -> None:
    """Send ``event`` to the stream (``Orchestrator.stream``); a no-op under ``ainvoke``."""
    with contextlib.suppress(RuntimeError):  # outside a runnable context
        get_stream_writer()(event)
