"""``orchestrator chat``: an interactive customer-service chat with streamed replies.

Each line you type is one turn of the conversation ``--thread`` for customer ``--customer``;
the reply streams as the model writes it (facts first, written by code from tool results).
The conversation is checkpointed, so ``orchestrator chat --thread T`` later (even after the
process was killed) continues it. ``--message`` sends turns without a prompt (scripts, tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Iterator
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.markup import escape

from orchestrator.cli.common import (
    NoLaunchOption,
    OrderDbOption,
    ServerUrlOption,
    TraceOption,
    console,
    err,
    fail,
    require_order_store,
    served_settings,
    settings_from_flags,
)
from orchestrator.cli.storage import check_storage
from orchestrator.config import Settings
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.registry import opened_thread_workflow
from orchestrator.core.runtime import configured_orchestrator, make_client
from orchestrator.exceptions import OrchestratorError, ThreadOwnerError, UserError
from orchestrator.observability import configure_tracing, shutdown_tracing, tracing_from_env
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore

logger = logging.getLogger(__name__)


def chat(
    thread: Annotated[
        str | None, typer.Option(help="Conversation id to start or continue; new when omitted.")
    ] = None,
    customer: Annotated[
        str, typer.Option(help="The signed-in customer id (the demo store's first customer).")
    ] = "C00001",
    message: Annotated[
        list[str] | None, typer.Option(help="Send these turns and exit (repeatable).")
    ] = None,
    show_events: Annotated[bool, typer.Option(help="Show nodes and tool calls.")] = False,
    server_url: ServerUrlOption = None,
    no_launch: NoLaunchOption = False,
    database_url: OrderDbOption = None,
    trace: TraceOption = None,
) -> None:
    """Chat with the customer-service workflow; replies stream as they are written."""
    settings = settings_from_flags(server_url=server_url, cs_database_url=database_url)
    thread_id = thread or f"chat-{uuid.uuid4().hex[:12]}"
    if message is not None and any(not m.strip() for m in message):
        raise fail("--message must not be empty: give the text of the turn to send", 2)
    try:  # every turn given is a request the model would take, before any server is asked
        for text in message or ["probe"]:
            Request(text=text, thread_id=thread_id, customer_id=customer)
    except ValidationError as exc:
        raise fail(_id_problem(exc, thread_id, customer), 2) from exc
    if database_url:  # a mistyped --db: no empty store made there (user49)
        require_order_store(settings.cs_database_url)
    check_storage(settings, conversations=True)  # before minutes of server start
    start_tracing(trace)
    try:  # another customer's thread (ThreadOwnerError) is the user's mistake: exit 2
        with (
            served_settings(
                settings, server_url=server_url, no_launch=no_launch, usage=(ThreadOwnerError,)
            ) as served,
            _one_line_logs(),
        ):
            failed = asyncio.run(_chat(served, thread_id, customer, message, show_events))
    finally:
        shutdown_tracing()
    if failed:  # each failed turn was named in one line; the others were answered
        raise typer.Exit(1)


class _NoTraceback(logging.Filter):
    """Keeps a log record's message and drops its traceback (the dispatcher logs a crashed
    turn's; the chat names the failure in one line, :func:`_safe_turn`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and logging.getLogger().level > logging.DEBUG:
            record.exc_info, record.exc_text = None, None
        return True


@contextlib.contextmanager
def _one_line_logs() -> Iterator[None]:
    """While the chat runs, the root handlers (standard error) print no tracebacks."""
    handlers, quiet = list(logging.getLogger().handlers), _NoTraceback()
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)


async def _chat(
    settings: Settings,
    thread_id: str,
    customer: str,
    messages: list[str] | None,
    show_events: bool,
) -> int:
    """The conversation; returns how many turns failed on an unexpected error (a bug), each
    named in one line (:func:`_safe_turn`) while the conversation goes on."""
    client = make_client(settings)
    telemetry = TelemetryStore(settings.database_url)
    try:
        # the installed workflow that holds conversations (customer service), opened
        async with opened_thread_workflow(settings) as workflow:
            store = getattr(workflow, "store", None)
            if not store or not store.customer_exists(customer):
                err.print(
                    f"note: customer {escape(customer)} is not in the order store "
                    f"{escape(settings.cs_database_url)}; `orchestrator store info` lists its "
                    "first customers, `orchestrator store seed` fills an empty one"
                )
            orch = configured_orchestrator(settings, client, telemetry, [workflow])
            console.print(f"thread {escape(thread_id)} (customer {escape(customer)})")
            scripted, failed = list(messages or []), 0
            while True:
                if messages is not None:
                    if not scripted:
                        break
                    text = scripted.pop(0)
                    console.print(f"> {escape(text)}")
                else:
                    try:
                        text = await asyncio.to_thread(input, "> ")
                    except EOFError:
                        break
                if not text.strip():
                    continue
                request = Request(text=text, thread_id=thread_id, customer_id=customer)
                failed += not await _safe_turn(orch, request, show_events)
            return failed
    finally:
        await client.aclose()
        telemetry.close()


#: What the customer reads when the turn goes to a person, or the thread already waits for one
#: (tester4 finding 8): never empty, never the operator's ``handoff resume`` command (an
#: operator finds the case with ``orchestrator handoff list``).
_PERSON = {
    ("handoff", "en"): "Your message was handed to a person: a colleague will reply here.",
    ("handoff", "zh"): "您的消息已转交同事处理，同事会在这里回复您。",
    ("waiting", "en"): "This conversation waits for a person: your message was added for them "
    "and a colleague will reply here; nothing else was done. To withdraw your request, say so.",
    ("waiting", "zh"): "这段对话正在等待同事处理，您的消息已转给同事，同事会在这里回复您；"
    "没有做其他操作。如要撤回申请，直接在这里说即可。",
}


async def _safe_turn(orch: Orchestrator, request: Request, show_events: bool) -> bool:
    """:func:`_turn`; an unexpected error (a bug, not an :class:`OrchestratorError`) is one
    line on standard error, never a traceback (tester11 A), and the conversation goes on: the
    dispatcher recorded the request as failed with the error's type. False when it failed."""
    try:
        await _turn(orch, request, show_events)
    except OrchestratorError:
        raise  # the server is gone, the store is locked...: the command's one line and exit
    except Exception as exc:
        logger.debug("chat turn failed", exc_info=True)
        console.out("")
        err.print(
            f"error: this turn failed on an internal error ({escape(type(exc).__name__)}); it "
            "is recorded as failed and the conversation goes on: try again or say it differently."
        )
        return False
    return True


async def _turn(orch: Orchestrator, request: Request, show_events: bool) -> None:
    """One turn: print the streamed events (model text as plain text, never markup).

    A turn handed to a person, or one on a thread that already waits for a person, prints a
    line for the customer in their language (:data:`_PERSON`), not the operator's command."""
    handed_off = False
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in request.text) else "en"
    async for event in orch.stream(request):
        if event.kind == "reply_facts":
            console.out(event.text + " ", end="", highlight=False)
        elif event.kind == "reply_token":
            console.out(event.text, end="", highlight=False)
        elif event.kind == "handoff":
            handed_off = True
            console.out("\n" + _PERSON["handoff", lang], highlight=False)
        elif event.kind == "done":
            console.out("")
            if event.status == "needs_human" and not handed_off:
                console.out(_PERSON["waiting", lang], highlight=False)
            elif event.status not in ("succeeded", "needs_human"):
                err.print(f"[red]{escape(event.status)}: {escape(event.headline)}[/]")
        elif show_events and event.kind in ("tool_call", "tool_result", "call_experts"):
            console.print(f"[dim]{escape(event.model_dump_json())}[/]")


def start_tracing(exporter: str | None) -> None:
    """Turn OpenTelemetry tracing on with ``exporter`` (``console``, ``otlp``, or ``off``), or
    as ``OTEL_TRACES_EXPORTER`` says when None (off when unset).

    Raises:
        typer.Exit: Exit status 2 for an unknown exporter or a missing ``otel`` extra.
    """
    try:
        if exporter is None:
            tracing_from_env()
        elif exporter != "off":
            configure_tracing(exporter)
    except UserError as exc:
        raise fail(exc, 2) from exc


def register(app: typer.Typer) -> None:
    """Add ``chat`` to ``app``."""
    app.command("chat")(chat)


def _id_problem(exc: ValidationError, thread_id: str, customer: str) -> str:
    """One line naming the flag whose value the request model refused, and what it may hold
    (``--message``: why its text is no request)."""
    error = exc.errors()[0]
    field = str(error["loc"][0])
    if field == "text":  # a lone surrogate (bytes that are not UTF-8), or over 1,000,000
        why = str(error["msg"]).removeprefix("Value error, ")
        return (
            f"--message is no text to send ({why}); give UTF-8 text of at most 1,000,000 characters"
        )
    if field == "thread_id":
        return (
            f"--thread {thread_id!r} is not a conversation id: use 1 to 128 letters, digits, "
            "'.', ':', '_' or '-' (no spaces)"
        )
    return f"--customer {customer!r} is not a customer id: use 1 to 16 letters, digits, '_' or '-'"
