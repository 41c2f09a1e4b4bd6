"""Who may change the chat history through Chainlit's own routes, checked on the server.

Chainlit 2.12 leaves two of its history routes to the page:

* **Sharing** (``PUT /project/thread/share``, ``GET /project/share/{thread_id}``): with
  ``allow_thread_sharing`` off it only hides the Share button; its server still shares a
  thread for its author and serves a shared one to anyone signed in, so an operator could hand
  the console's thread, with other customers' cases in it, to anyone. :func:`refuse_sharing`
  answers first: 403 and 404.
* **Feedback** (``PUT /feedback``, ``DELETE /feedback``): it writes the thumbs a request names,
  on the step and thread the request names, and deletes any feedback by id, for anyone signed
  in; ``orchestrator ui-feedback`` then reports it as the thread owner's. :func:`guard_feedback`
  lets a person rate only steps of their own threads and change or delete only feedback on
  them; anything else is a 404, as for a step that does not exist. Then Chainlit's own handler
  runs.

Each route is added ahead of Chainlit's (``element_store.route_first``).

Reading a thread (the thread list, a thread opened again, its elements, the socket's resume)
goes through the app's data layer (``app.HistoryLayer``), which shows a thread only while
:func:`may_read` allows it: its author is in the user file *now*, as the role and customer
they had when they made it (tester13: a removed or demoted operator still read their console
thread, with other customers' cases in it, until the sign-in cookie expired; their actions
were already refused, as ``service_client.current`` reads the file at every request).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from chainlit.auth import get_current_user
from chainlit.data import get_data_layer
from chainlit.server import delete_feedback, update_feedback
from chainlit.types import DeleteFeedbackRequest, UpdateFeedbackRequest
from element_store import route_first
from fastapi import Depends, HTTPException, Request
from service_client import current

#: The operator's chat profile: a thread made in it holds other customers' cases.
CONSOLE = "Operator console"
#: The thread metadata key (the user session's, persisted with it) that records who made the
#: thread: ``{"role", "customer_id"}`` as the user file had them then (``app.start``).
OWNER_KEY = "owner"
#: Thread metadata that, once stored, no later session rewrites (``app.HistoryLayer``).
KEPT_KEYS = (OWNER_KEY, "chat_profile")

#: The thread of a step, when that thread is the user's.
_OWN_STEP = """SELECT s."threadId" AS thread FROM steps s JOIN threads t ON t."id" = s."threadId"
WHERE s."id" = :step AND t."userIdentifier" = :user"""
#: The thread a feedback is on, and that thread's owner.
_FEEDBACK = """SELECT f."threadId" AS thread, t."userIdentifier" AS owner FROM feedbacks f
LEFT JOIN threads t ON t."id" = f."threadId" WHERE f."id" = :id"""


def _not_found() -> HTTPException:
    """What anything not the caller's reads: the same as a step or thread that does not exist."""
    return HTTPException(status_code=404, detail="Not found")


def refuse_sharing(allowed: bool) -> None:
    """While ``allowed`` (Chainlit's ``allow_thread_sharing``) is False, sharing a thread is a
    403 and reading a shared one a 404, for everyone, before Chainlit reads anything."""
    if allowed:
        return

    async def share() -> None:
        raise HTTPException(status_code=403, detail="sharing conversations is turned off")

    async def shared(thread_id: str) -> None:
        raise _not_found()

    route_first("/project/thread/share", share, "PUT")
    route_first("/project/share/{thread_id}", shared, "GET")


async def _rows(query: str, **parameters: str) -> list[dict[str, Any]]:
    """The rows of ``query`` on the history ([] without a data layer or on an error)."""
    layer = get_data_layer()
    rows = await layer.execute_sql(query=query, parameters=parameters) if layer else None
    return rows if isinstance(rows, list) else []


async def _may_rate(user: str, feedback: Any) -> bool:
    """Whether ``user`` may write ``feedback``: its step is in ``user``'s thread, that thread
    is the one it names, and a feedback it replaces (its id) is on the same thread."""
    own = await _rows(_OWN_STEP, step=str(feedback.forId), user=user)
    if not own or own[0]["thread"] != feedback.threadId:
        return False
    if feedback.id is None:
        return True
    old = await _rows(_FEEDBACK, id=str(feedback.id))
    return not old or old[0]["thread"] == feedback.threadId


def guard_feedback() -> None:
    """Put the owner checks (module docstring) before Chainlit's feedback routes."""

    async def rate(
        request: Request,
        update: UpdateFeedbackRequest,
        user: Annotated[Any, Depends(get_current_user)],
    ) -> Any:
        if not await _may_rate(str(getattr(user, "identifier", "")), update.feedback):
            raise _not_found()
        return await update_feedback(request, update, user)

    async def unrate(
        request: Request,
        payload: DeleteFeedbackRequest,
        user: Annotated[Any, Depends(get_current_user)],
    ) -> Any:
        old = await _rows(_FEEDBACK, id=payload.feedbackId)
        if not old or old[0]["owner"] != getattr(user, "identifier", None):
            raise _not_found()
        return await delete_feedback(request, payload, user)

    route_first("/feedback", rate, "PUT")
    route_first("/feedback", unrate, "DELETE")


def owner_record(who: dict[str, Any]) -> dict[str, Any]:
    """What :data:`OWNER_KEY` keeps of ``who`` (``service_client.current``)."""
    return {"role": who["role"], "customer_id": who["customer_id"]}


def may_read(author: str, metadata: Any) -> bool:
    """Whether ``author`` may read their thread with ``metadata`` (a dict, JSON text or None)
    now: the user file has them (``service_client.current``), as the role and customer it
    recorded (:data:`OWNER_KEY`); a thread without that record (made before it was kept, or
    not saved yet) by its chat profile: the console's only for an operator, a chat's only
    for a customer. False for a thread nobody wrote."""
    who = current(author) if author else {"role": None}
    if who["role"] is None:
        return False
    meta = metadata_of(metadata)
    kept = meta.get(OWNER_KEY)
    if isinstance(kept, dict):
        return kept == owner_record(who)
    profile = meta.get("chat_profile")
    return profile is None or (profile == CONSOLE) == (who["role"] == "operator")


def metadata_of(metadata: Any) -> dict[str, Any]:
    """A thread's metadata as a dict (the data layer gives JSON text or a dict; {} else)."""
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            return {}
    return metadata if isinstance(metadata, dict) else {}
