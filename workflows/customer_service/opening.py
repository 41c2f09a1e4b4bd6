"""Opening the customer-service workflow on the configured order store and LangGraph
checkpointer. Split out of :mod:`workflows.customer_service.graph` (issue 48); the package
re-exports :func:`open_workflow` and :func:`checkpoint_url`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from orchestrator.config import Settings
from orchestrator.exceptions import UserError
from workflows.customer_service.conversations import check_conversations
from workflows.customer_service.graph import CustomerServiceWorkflow
from workflows.customer_service.store import OrderStore, RefundPolicy


@asynccontextmanager
async def open_workflow(settings: Settings) -> AsyncIterator[CustomerServiceWorkflow]:
    """The workflow on the configured order store and checkpointer, open for the block.

    The checkpointer is LangGraph's own: ``AsyncSqliteSaver`` (langgraph-checkpoint-sqlite)
    on ``settings.cs_checkpoint_url`` (default: ``conversations.db`` beside a SQLite order
    store), or ``AsyncPostgresSaver`` (langgraph-checkpoint-postgres) when the URL is
    PostgreSQL.

    Raises:
        UserError: A URL is malformed or a database cannot be opened.
    """
    store = OrderStore(
        settings.cs_database_url,
        policy=RefundPolicy(
            window_days=settings.cs_refund_window_days,
            auto_limit_cents=round(settings.cs_refund_auto_limit * 100),
            mark_days=settings.cs_account_mark_days,
        ),
    )
    url = checkpoint_url(settings)
    try:
        if url.startswith(("postgresql", "postgres")):
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            conn = url.replace("postgresql+psycopg://", "postgresql://", 1)
            async with AsyncPostgresSaver.from_conn_string(conn) as saver:
                await saver.setup()
                yield CustomerServiceWorkflow(store, saver, settings=settings)
        else:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            path = url.removeprefix("sqlite:///")
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            check_conversations(Path(path))  # StorageError: one line naming the file and fix
            async with AsyncSqliteSaver.from_conn_string(path) as saver:
                workflow = CustomerServiceWorkflow(store, saver, settings=settings)
                workflow.storage_name = f"conversations database {path}"
                yield workflow
    finally:
        store.close()


def checkpoint_url(settings: Settings) -> str:
    """Where conversations are checkpointed (see :attr:`Settings.cs_checkpoint_url`)."""
    if settings.cs_checkpoint_url:
        return settings.cs_checkpoint_url
    store = settings.cs_database_url
    if store.startswith("sqlite:///"):
        folder = Path(store.removeprefix("sqlite:///")).parent
        return f"sqlite:///{folder / 'conversations.db'}"
    if store.startswith(("postgresql", "postgres")):
        return store
    raise UserError(
        f"cannot place conversation checkpoints beside {store!r}; set ORCH_CS_CHECKPOINT_URL "
        "to a SQLite path or a postgresql:// URL"
    )
