"""Harbor Assistant's operator console: the handoffs waiting for a person, with the
conversation, the tool results and the reason, and Approve / Reject with a note (part of
``ui/app.py``; runs in ``.venv-ui``). The service decides who may do this: a customer gets 403
there, whatever this page shows."""

from __future__ import annotations

import json
from typing import Any

import chainlit as cl
from service_client import call, md

#: Waiting handoffs the console shows at once.
HANDOFFS_SHOWN = 20


def case_text(case: dict[str, Any]) -> str:
    """A waiting handoff as the operator reads it: customer, reason, the conversation, the
    customer's message, the tool results and the action waiting for a decision."""
    context = case.get("context") or {}
    lines = [
        f"**handoff waiting** · customer {md(case.get('customer_id'))} · since "
        f"{md(case.get('created_at'))}",
        f"**reason:** {md(case.get('reason'))}",
    ]
    for turn in (context.get("history") or [])[-6:]:
        if isinstance(turn, dict):
            who = turn.get("role") or turn.get("speaker") or "turn"
            lines.append(f"> **{md(who)}:** {md(turn.get('text') or turn.get('content') or '')}")
        else:
            lines.append(f"> {md(turn)}")
    lines.append(f"**message:** {md(context.get('message', ''))}")
    for result in context.get("tool_results") or []:
        facts = json.dumps(result.get("facts") or result.get("error_code"), ensure_ascii=False)
        lines.append(f"**tool {md(result.get('tool'))}:** {md(facts)}")
    action = context.get("action")
    if action:
        args = json.dumps(action.get("arguments"), ensure_ascii=False)
        lines.append(f"**waiting action:** {md(action.get('tool'))} {md(args)}")
    if context.get("detail"):
        lines.append(f"**detail:** {md(context['detail'])}")
    for said in context.get("customer_messages") or []:  # written while it waits
        lines.append(f"**customer wrote since ({md(said.get('at'))}):** {md(said.get('text'))}")
    return "  \n".join(lines)


async def console() -> None:
    """The waiting handoffs, oldest first, each with Approve and Reject (operators only: the
    service refuses anyone else with a 403)."""
    status, body = await call("GET", "/api/handoffs", timeout=30)
    if status != 200 or not isinstance(body, list):
        error = body.get("error") if isinstance(body, dict) else None
        await cl.Message(content=f"**could not list handoffs:** {md(error or status)}").send()
        return
    if not body:
        await cl.Message(content="no handoff is waiting").send()
        return
    for case in body[:HANDOFFS_SHOWN]:
        thread = str(case.get("thread_id"))
        await cl.Message(
            content=case_text(case),
            actions=[
                cl.Action(name="approve", payload={"thread": thread}, label="Approve"),
                cl.Action(name="reject", payload={"thread": thread}, label="Reject"),
            ],
        ).send()
    if len(body) > HANDOFFS_SHOWN:
        await cl.Message(content=f"{len(body) - HANDOFFS_SHOWN} more waiting").send()


async def decide(action: cl.Action, approve: bool) -> None:
    """Ask the operator for a note, then send the decision; the service says whether it
    was taken (403 for a non-operator, 409 when someone decided first)."""
    thread = str(action.payload.get("thread"))
    word = "approve" if approve else "reject"
    answer = await cl.AskUserMessage(
        content=f"A note to {word} with (the customer sees it), or `-` for none:", timeout=600
    ).send()
    note = str((answer or {}).get("output", "")).strip()
    note = "" if note == "-" else note[:2000]
    status, body = await call(
        "POST",
        f"/api/handoffs/{thread}/decide",
        json={
            "approve": approve,
            "note": note,
            "preset": cl.user_session.get("preset") or "balanced",
        },
    )
    if status != 200:
        await cl.Message(content=f"**not decided:** {md(body.get('error', status))}").send()
        return
    done = "approved" if approve else "rejected"
    await action.remove()
    await cl.Message(
        content=f"**handoff {done}** · {md(body.get('status'))}: {md(body.get('headline') or '')}"
    ).send()
