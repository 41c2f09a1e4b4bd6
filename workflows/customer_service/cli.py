"""The customer-service workflow's own commands, mounted on ``orchestrator`` through the
``moe_orchestrator.commands`` entry points (``pyproject.toml``):

Commands:
    store seed      fill the order store with deterministic fake customers and orders (faker,
                    en_US and zh_CN): ``orchestrator store seed --customers 500``
    store info      row counts and a few customer ids to try ``orchestrator chat`` with
    handoff list    the conversations waiting for a person, with their context
    handoff resume  ``orchestrator handoff resume THREAD --approve|--reject --note "..."``:
                    continue the conversation once with the decision (a second resume is
                    refused), on the configured model server (``--server-url``, else
                    ``ORCH_SERVER_URL`` / ``.env``, else the default); none answering is one
                    line and exit 1, a co-hosted server is started only with ``--launch``
"""

from __future__ import annotations

import asyncio
import getpass
import json
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.markup import escape

from orchestrator.cli.common import (
    OrderDbOption,
    ServerUrlOption,
    console,
    fail,
    require_order_store,
    served_settings,
    settings_from_flags,
    working,
)
from orchestrator.config import Settings
from orchestrator.core.dispatcher import RequestOutcome
from orchestrator.core.registry import opened_thread_workflow
from orchestrator.core.runtime import configured_orchestrator, make_client
from orchestrator.exceptions import HandoffError, OrchestratorError, UserError
from orchestrator.request import decider_name, decision_note
from orchestrator.telemetry import TelemetryStore
from workflows.customer_service.store import OrderStore


def seed(
    customers: Annotated[int, typer.Option(help="Customers to generate (1..1,000,000).")] = 500,
    seed_value: Annotated[int, typer.Option("--seed", help="Random seed.")] = 0,
    as_of: Annotated[
        str | None,
        typer.Option(help="The store's 'today', YYYY-MM-DD (UTC); today when omitted."),
    ] = None,
    database_url: OrderDbOption = None,
) -> None:
    """Replace the order store's rows with generated ones (same seed and date: same rows)."""
    settings = settings_from_flags(cs_database_url=database_url)
    if not 1 <= customers <= 1_000_000:
        raise fail(f"--customers must be 1..1000000, got {customers}", 2)
    when = None
    if as_of is not None:
        try:
            when = datetime.strptime(as_of, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise fail(f"--as-of must be YYYY-MM-DD, got {as_of!r}", 2) from None
    try:
        store = OrderStore(settings.cs_database_url)
        with working(f"generating {customers} customers"):
            orders = store.seed(customers, seed=seed_value, as_of=when)
        store.close()
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    console.print(
        f"seeded {customers} customers, {orders} orders into "
        f"{escape(settings.cs_database_url)} (seed {seed_value})"
    )


def open_order_store(database_url: str | None) -> tuple[OrderStore, str]:
    """The order store at ``--db`` (default: the settings'), and its URL; a SQLite file must
    exist (opening another path would make an empty store there, and a mistyped ``--db`` read
    as "no conversation waits for a person").

    Raises:
        typer.Exit: Code 2, with the store's error, when it cannot be opened or its SQLite
            file does not exist.
    """
    url = settings_from_flags(cs_database_url=database_url).cs_database_url
    require_order_store(url)
    try:
        return OrderStore(url), url
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc


def info(
    database_url: OrderDbOption = None,
) -> None:
    """Row counts of the order store and the first customer ids."""
    store, url = open_order_store(database_url)
    counts = ", ".join(f"{n:,} {table}" for table, n in store.counts().items())
    console.print(f"{escape(url)}: {counts}")  # "12 customers, 41 orders" (was a dict)
    for customer_id in ("C00001", "C00002", "C00003"):
        if store.customer_exists(customer_id):
            ids = store.tools(customer_id).order_ids(5)
            console.print(f"  {customer_id}: orders {', '.join(ids)}")
    store.close()


def list_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Resolved ones too.")] = False,
    database_url: OrderDbOption = None,
) -> None:
    """The conversations waiting for a person (oldest first), with their context."""
    store, _ = open_order_store(database_url)
    rows = store.handoffs(None if all_ else "waiting")
    store.close()
    if as_json:
        for row in rows:
            console.out(json.dumps(row, ensure_ascii=False))
        return
    if not rows:
        console.print("no conversation waits for a person")
        return
    for row in rows:
        ctx = row["context"]
        console.print(
            f"[bold]{escape(row['thread_id'])}[/] turn {row['turn']} "
            f"customer {escape(str(row['customer_id']))} \\[{escape(row['status'])}] "
            f"— {escape(row['reason'])}"
        )
        console.print(f"  message: {escape(str(ctx.get('message', ''))[:200])}")
        if ctx.get("action"):
            console.print(f"  pending: {escape(json.dumps(ctx['action'], ensure_ascii=False))}")
        if ctx.get("detail"):
            console.print(f"  detail: {escape(str(ctx['detail']))}")
        for found in ctx.get("tool_results") or []:  # looked up before the handoff
            facts = json.dumps(found.get("facts") or {}, ensure_ascii=False)
            console.print(f"  found ({escape(str(found.get('tool')))}): {escape(facts[:300])}")
        for said in ctx.get("customer_messages") or []:  # written while it waits
            at, text = escape(str(said.get("at"))), escape(str(said.get("text"))[:300])
            console.print(f"  customer wrote since ({at}): {text}")
        if row["status"] == "withdrawn":
            console.print(f"  withdrawn by the customer: {escape(str(row['note'])[:300])}")


#: ``--launch``: the one way ``handoff resume`` starts a co-hosted server (cs10).
LaunchOption = Annotated[
    bool,
    typer.Option(
        "--launch",
        help="Start a co-hosted vLLM server for this decision when none answers (minutes on "
        "CPU). Without it the configured server is used, and none answering is an error.",
    ),
]
#: ``--no-launch``: kept for scripts; not starting a server is the default now.
_NoLaunchKept = Annotated[bool, typer.Option("--no-launch", hidden=True)]


def configured_server(settings: Settings, server_url: str | None) -> None:
    """Nothing when a server answers at ``settings.server_url`` (``--server-url``, else
    ``ORCH_SERVER_URL`` or ``.env``, else the default: how ``run`` chooses it too).

    Raises:
        typer.Exit: Status 1, after one line naming the URL, where it came from and the
            three ways to fix it, when none answers (nothing is started).
    """
    from serving.launcher import server_is_healthy

    if server_is_healthy(settings.server_url):
        return
    where = (
        "--server-url"
        if server_url is not None
        else "ORCH_SERVER_URL or .env"
        if "server_url" in settings.model_fields_set
        else "the default; ORCH_SERVER_URL is not set"
    )
    raise fail(
        f"no model server answers at {settings.server_url} ({where}); the decision's reply "
        "needs one. Start it with `orchestrator serve`, point --server-url or ORCH_SERVER_URL "
        "at a running server, or add --launch to start a co-hosted one for this decision",
        1,
    )


def resume(
    thread: Annotated[str, typer.Argument(help="The conversation's thread id.")],
    approve: Annotated[
        bool | None, typer.Option("--approve/--reject", help="The person's decision.")
    ] = None,
    note: Annotated[str, typer.Option(help="A note for the record (≤ 2,000 characters).")] = "",
    by: Annotated[str | None, typer.Option(help="Who decided (default: your login name).")] = None,
    server_url: ServerUrlOption = None,
    launch: LaunchOption = False,
    no_launch: _NoLaunchKept = False,
    database_url: OrderDbOption = None,
) -> None:
    """Continue THREAD once with the decision; the reply is printed. The model server is the
    configured one (as ``run`` chooses it); a co-hosted one is started only with --launch."""
    if approve is None:
        raise fail("say --approve or --reject", 2)
    try:  # who decided (the audit row names them) and the note, before a store or server
        by, note = decider_name(_login_name() if by is None else by), decision_note(note)
    except UserError as exc:
        raise fail(exc, 2) from exc
    settings = settings_from_flags(server_url=server_url, cs_database_url=database_url)
    # before any server is reached or started (minutes on 2 cores): is anything waiting?
    store, _ = open_order_store(database_url)
    waiting = {row["thread_id"] for row in store.handoffs("waiting")}
    decided = store.coordination.decided(thread) if thread not in waiting else None
    store.close()
    if decided is not None:  # another person (process) decided it: exit 2, who and when
        raise fail(decided, 2)
    if thread not in waiting:
        raise fail(
            f"no handoff waits on thread {thread!r}: it was never handed off, or it was "
            "resumed already (orchestrator handoff list shows the waiting ones)",
            2,
        )
    launch = launch and not no_launch and server_url is None
    if not launch:  # cs10: never a server started unasked; one line when none answers
        configured_server(settings, server_url)
    # HandoffDecidedError (a HandoffError) too: the race was lost, exit 2
    with served_settings(
        settings, server_url=server_url, no_launch=not launch, usage=(HandoffError,)
    ) as served:
        outcome = asyncio.run(_resume(served, thread, approve, note, by))
    console.print(f"{outcome.status}: {escape(outcome.headline)}")


def _login_name() -> str:
    """Who runs this command (``getpass.getuser``), or ``agent`` where the system names
    nobody (a container without a user entry)."""
    try:
        return getpass.getuser().strip() or "agent"
    except (OSError, KeyError):
        return "agent"


async def _resume(
    settings: Settings, thread: str, approve: bool, note: str, by: str
) -> RequestOutcome:
    client = make_client(settings)
    telemetry = TelemetryStore(settings.database_url)
    try:
        async with opened_thread_workflow(settings) as workflow:
            orch = configured_orchestrator(settings, client, telemetry, [workflow])
            return await orch.resume(thread, approve=approve, note=note, by=by)
    finally:
        await client.aclose()
        telemetry.close()


#: ``orchestrator store``: the ``store`` entry point of ``moe_orchestrator.commands``.
store_app = typer.Typer(no_args_is_help=True, help="The customer-service order store.")
store_app.command("seed")(seed)
store_app.command("info")(info)

#: ``orchestrator handoff``: the ``handoff`` entry point of ``moe_orchestrator.commands``.
handoff_app = typer.Typer(no_args_is_help=True, help="Conversations handed to a person.")
handoff_app.command("list")(list_cmd)
handoff_app.command("resume")(resume)
