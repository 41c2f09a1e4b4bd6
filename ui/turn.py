"""One turn of Harbor Assistant's chat: the request to the service and its events rendered as
they come, in a run step (Copy and thumbs need one; Stop cancels it): the reply's text first,
then its tool steps, errors, footer (route, rules, tools, the expert trace in words, status) and
heatmap (part of ``ui/app.py``; runs in ``.venv-ui``).

First reply token: the run step and the reply's empty message are sent in tasks while the
request goes to the service; the tool steps are held until the reply's text has streamed; the
trace, charts and footer are built after the reply.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import chainlit as cl
from chainlit.element import Element
from chainlit.utils import utc_now
from service_client import events, md


class PlotlyJson(Element):
    """Chainlit's Plotly element for a figure the service built and escaped as JSON
    (``orchestrator.ui.charts``): passed through as it is, so ``.venv-ui`` needs no plotly."""

    type = "plotly"

    def __post_init__(self) -> None:
        self.mime = "application/json"
        self.size = self.size or "medium"  # type: ignore[has-type]  # chainlit is not in .venv
        super().__post_init__()


async def tool_step(
    call_: dict[str, Any] | None, result: dict[str, Any] | None, *, reply_id: str
) -> None:
    """One finished step for one tool, nested in the reply it served: its arguments (shown
    as code, not Markdown), whether they were valid, and what the tool returned."""
    name = str((call_ or result or {}).get("tool", "?"))
    step = cl.Step(name=f"tool {name}", type="tool", parent_id=reply_id, language="json")
    step.start = step.end = utc_now()
    step.input = str((call_ or {}).get("arguments", ""))
    lines = []
    if call_ is not None:
        lines.append(
            "valid arguments" if call_.get("valid") else md(call_.get("error") or "invalid")
        )
    if result is not None:
        facts = result.get("facts") or result.get("error_code")
        lines.append("`" + json.dumps(facts, ensure_ascii=False).replace("`", "'") + "`")
    step.output = "  \n".join(lines)
    await step.send()


def classification_line(event: dict[str, Any], preset: str) -> str:
    """The reply's first footer line: route, confidence, the rules that fired, the tier that
    decided, the preset."""
    rules = ", ".join(md(r.get("rule_id", "?")) for r in event.get("signals", []))
    tiers = {t.get("tier"): t for t in event.get("tiers", [])}
    if not rules:
        read = (tiers.get("rules") or {}).get("consulted", True)
        rules = "none fired" if read else "not read (the fast tier was sure)"
    decided = next((name for name, t in tiers.items() if t.get("decided")), None)
    return (
        f"**route** {md(event['route'])} · **confidence** {float(event['confidence']):.2f}"
        f" · **rules** {rules}"
        + (f" · **decided by** the {md(decided)} tier" if decided else "")
        + f" · **preset** {md(preset)}"
    )


class Turn:
    """What one turn's events say, gathered while the reply streams."""

    def __init__(self) -> None:
        self.steps: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
        self.pending: dict[str, Any] | None = None  # a valid tool call, sent with its result
        self.header: list[str] = []
        self.tools: list[str] = []
        self.grid: dict[str, Any] = {}
        self.charts: list[dict[str, Any]] = []
        self.done: dict[str, Any] = {}
        self.errors: list[str] = []

    def take(self, event: dict[str, Any], preset: str) -> None:
        """Keep a non-text event."""
        kind = event.get("kind")
        if kind == "classification":
            self.header.append(classification_line(event, preset))
        elif kind == "tool_call":
            valid = bool(event.get("valid"))
            self.tools.append(f"{md(event.get('tool'))}({'valid' if valid else 'invalid'})")
            self.flush_pending()
            self.pending = event if valid else None
            if not valid:
                self.steps.append((event, None))
        elif kind == "tool_result":
            self.steps.append((self.pending, event))
            self.pending = None
        elif kind == "expert_grid":
            self.grid = event
        elif kind == "report_charts":
            self.charts = list(event.get("figures") or [])
        elif kind == "done":
            self.done = event

    def flush_pending(self) -> None:
        if self.pending is not None:
            self.steps.append((self.pending, None))
            self.pending = None

    def footer(self) -> str:
        lines = [*self.header]
        if self.tools:
            lines.append("**tools** " + ", ".join(self.tools))
        summary = " ".join(str(s) for s in self.grid.get("summary") or [])
        if summary:
            lines.append(f"**experts** {md(summary)}")
        if self.done:
            lines.append(f"**status** {md(self.done.get('status'))}")
        return "  \n".join(lines)


async def run_turn(
    text: str, *, path: str | None = None, name: str | None = None, route: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Send one turn and render its events in a run step (Copy and thumbs need one); Stop
    cancels it, and the reply says it was stopped.

    Returns:
        The ``done`` event (``{}`` when none came) and the report's charts (Plotly JSON).
    """
    preset = cl.user_session.get("preset") or "balanced"
    payload = {
        "text": text,
        "thread_id": cl.context.session.thread_id,
        "preset": preset,
        "path": path,
        "filename": name,
        "route": route,
    }
    run = cl.Step(name="on_message", type="run")
    run.start = utc_now()
    reply = cl.Message(content="", parent_id=run.id)
    reply.streaming = True
    # both go to the page while the framework works: the first token is an append
    opened = asyncio.create_task(_open(run, reply))
    turn = Turn()
    try:
        async for event in events(payload):
            kind = event.get("kind")
            if kind in ("reply_facts", "reply_token"):
                await opened
                turn.flush_pending()
                tail = " " if kind == "reply_facts" else ""
                await reply.stream_token(md(event.get("text", "")) + tail)
            elif kind == "error":
                turn.errors.append(str(event.get("error")))
            else:
                turn.take(event, preset)
    except asyncio.CancelledError:
        await opened
        reply.content = (reply.content or "") + "\n\n*stopped: the reply was cancelled*"
        await _close(run, reply)
        raise
    await opened
    await finish_reply(reply, turn)
    await _close(run, reply)
    return turn.done, turn.charts


async def _open(run: cl.Step, reply: cl.Message) -> None:
    await run.send()
    await cl.context.emitter.stream_start(reply.to_dict())


async def _close(run: cl.Step, reply: cl.Message) -> None:
    reply.streaming = False
    await reply.send()
    run.end = utc_now()
    await run.update()


#: The most fields, and characters of one value, :func:`result_table` shows.
TABLE_ROWS, TABLE_CELL = 12, 200


def result_table(result: object) -> str:
    """The generic view of a workflow's result: its top-level text, number and yes/no fields as
    a two-column Markdown table, every cell escaped (model text is data); nested fields are
    left to the workflow's own view. ``""`` when there is none.

    Example: ``{"answer": "42 *days*", "sources": ["a"]}`` gives one row, ``answer`` and
    ``42 \\*days\\*``.
    """
    if not isinstance(result, dict):
        return ""
    rows = [
        f"| {md(key)} | {md(' '.join(str(value).split())[:TABLE_CELL])} |"
        for key, value in list(result.items())[:TABLE_ROWS]
        if isinstance(value, str | int | float | bool) and str(value).strip()
    ]
    return "\n\n| field | value |\n|---|---|\n" + "\n".join(rows) if rows else ""


async def finish_reply(reply: cl.Message, turn: Turn) -> None:
    """The reply's tool steps, errors, footer and heatmap, after its text."""
    turn.flush_pending()
    for call_, result in turn.steps:
        await tool_step(call_, result, reply_id=reply.id)
    if not reply.content and turn.done.get("headline"):
        # a workflow that streams no reply (any workflow this page does not know): its
        # headline, then the fields of its result once it succeeded (a result that waits for a
        # person holds the operator's state, which is not the customer's to read)
        done = turn.done.get("status") == "succeeded"
        table = result_table(turn.done.get("result")) if done else ""
        await reply.stream_token(md(turn.done["headline"]) + table)
    for error in turn.errors:
        reply.content = (reply.content or "") + "\n\n**Sorry:** " + md(error)
    reply.content = (reply.content or "") + "\n\n---\n" + turn.footer()
    figure = turn.grid.get("figure")
    if figure:
        reply.elements = [
            PlotlyJson(name="expert load share", content=json.dumps(figure), display="inline")
        ]
