"""The chat history's tables: what Chainlit's ``SQLAlchemyDataLayer`` reads and writes (users,
threads, steps, elements, feedbacks), created when missing.

Why Chainlit's data layer (and not only the LangGraph checkpointer): the checkpointer keeps the
workflow's state (the conversation the model sees, the order it is about), but the page's
thread list, its messages as shown, the thumbs feedback and the resume of a thread in another
browser are Chainlit's, through its data layer. Both are keyed by the same thread id (Chainlit's
thread id is the conversation's ``thread_id`` in the framework), so a resumed thread continues
the same conversation. Chainlit ships no schema for this layer; these tables follow its
documented one, in SQLAlchemy Core so one definition serves SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    ForeignKey,
    Integer,
    MetaData,
    Table,
    Text,
    create_engine,
)

metadata = MetaData()


def _table(name: str, *columns: Column[Any]) -> Table:
    """A table of the history, keyed (as each of Chainlit's is) by a text ``id``."""
    return Table(name, metadata, Column("id", Text, primary_key=True), *columns)


_table(
    "users",
    Column("identifier", Text, nullable=False, unique=True),
    Column("metadata", Text, nullable=False),
    Column("createdAt", Text),
)
_table(
    "threads",
    Column("createdAt", Text),
    Column("name", Text),
    Column("userId", Text, ForeignKey("users.id", ondelete="CASCADE")),
    Column("userIdentifier", Text, index=True),
    Column("tags", Text),
    Column("metadata", Text),
)
_table(
    "steps",
    Column("name", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("threadId", Text, ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
    Column("parentId", Text),
    Column("streaming", Boolean, nullable=False),
    Column("waitForAnswer", Boolean),
    Column("isError", Boolean),
    Column("metadata", Text),
    Column("tags", Text),
    Column("input", Text),
    Column("output", Text),
    Column("createdAt", Text),
    Column("command", Text),
    Column("start", Text),
    Column("end", Text),
    Column("generation", Text),
    Column("showInput", Text),
    Column("language", Text),
    Column("indent", Integer),
    Column("defaultOpen", Boolean),
    Column("autoCollapse", Boolean),
)
_table(
    "elements",
    Column("threadId", Text, ForeignKey("threads.id", ondelete="CASCADE")),
    Column("type", Text),
    Column("url", Text),
    Column("chainlitKey", Text),
    Column("name", Text, nullable=False),
    Column("display", Text),
    Column("objectKey", Text),
    Column("size", Text),
    Column("page", Integer),
    Column("language", Text),
    Column("forId", Text),
    Column("mime", Text),
    Column("props", Text),
    Column("autoPlay", Boolean),
    Column("playerConfig", Text),
)
_table(
    "feedbacks",
    Column("forId", Text, nullable=False),
    Column("threadId", Text, ForeignKey("threads.id", ondelete="CASCADE"), nullable=False),
    Column("value", Integer, nullable=False),
    Column("comment", Text),
)


def sync_url(url: str) -> str:
    """``url`` with a synchronous driver (``sqlite+aiosqlite`` → ``sqlite``; psycopg 3 is
    both)."""
    return url.replace("sqlite+aiosqlite:", "sqlite:", 1)


def ensure_tables(url: str) -> None:
    """Create the history's tables on ``url`` (an async SQLAlchemy URL) where missing."""
    engine = create_engine(sync_url(url))
    try:
        metadata.create_all(engine, checkfirst=True)
    finally:
        engine.dispose()
