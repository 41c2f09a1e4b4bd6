"""The customer-service order store: ``orchestrator store seed`` and ``orchestrator store info``.

Commands:
    store seed  fill the order store with deterministic fake customers and orders (faker,
                en_US and zh_CN): ``orchestrator store seed --customers 500``
    store info  row counts and a few customer ids to try ``orchestrator chat`` with
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.markup import escape

from orchestrator.cli.common import (
    OrderDbOption,
    add_group,
    console,
    database_url_from_flags,
    fail,
    settings_from_flags,
    working,
)
from orchestrator.exceptions import OrchestratorError
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
    settings = settings_from_flags(cs_database_url=database_url_from_flags(None, database_url))
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
    """The order store at ``--db`` (default: the settings'), and its URL.

    Raises:
        typer.Exit: Code 2, with the store's error, when it cannot be opened.
    """
    url = settings_from_flags(
        cs_database_url=database_url_from_flags(None, database_url)
    ).cs_database_url
    try:
        return OrderStore(url), url
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc


def info(
    database_url: OrderDbOption = None,
) -> None:
    """Row counts of the order store and the first customer ids."""
    store, url = open_order_store(database_url)
    counts = store.counts()
    console.print(f"{escape(url)}: {counts}")
    for customer_id in ("C00001", "C00002", "C00003"):
        if store.customer_exists(customer_id):
            ids = store.tools(customer_id).order_ids(5)
            console.print(f"  {customer_id}: orders {', '.join(ids)}")
    store.close()


def register(app: typer.Typer) -> None:
    """Add the ``store`` group to ``app``."""
    add_group(app, "store", "The customer-service order store.", {"seed": seed, "info": info})
