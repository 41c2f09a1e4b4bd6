"""Open, create and seed the order store on any SQLAlchemy URL (SQLite by default, Postgres)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    event,
    func,
    insert,
    inspect,
    select,
    update,
)
from sqlalchemy.engine import ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.databases import hold_setup_lock
from orchestrator.exceptions import StorageError, UserError, storage_error
from workflows.customer_service.store.schema import (
    DATA_TABLES,
    Base,
    Customer,
    Handoff,
    Order,
    StoreMeta,
)
from workflows.customer_service.store.seed import generate
from workflows.customer_service.store.threads import Coordination, decide_waiting
from workflows.customer_service.store.tools import OrderTools, RefundPolicy

#: The order store's schema version (``cs_meta.schema_version``); a store with a higher one was
#: written by a newer release and is refused rather than misread.
SCHEMA_VERSION = 2


def today_utc() -> datetime:
    """Today's UTC midnight (the default ``as_of`` of a seed)."""
    now = datetime.now(UTC)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


class OrderStore:
    """The order store behind the customer-service tools.

    Args:
        url: SQLAlchemy URL (``sqlite:///runs/customer_service.db``,
            ``postgresql+psycopg://user@host/db``); tables are created when missing.
        policy: Refund rules handed to every :meth:`tools`.

    Raises:
        UserError: The URL is malformed or the database cannot be opened; the message names
            the URL and the setting (``ORCH_CS_DATABASE_URL``).
    """

    def __init__(self, url: str, *, policy: RefundPolicy | None = None) -> None:
        try:
            parsed = make_url(url)
        except ArgumentError as exc:
            raise UserError(
                f"bad order-store URL {url!r}: {exc}; set ORCH_CS_DATABASE_URL to a SQLAlchemy "
                "URL such as sqlite:///runs/customer_service.db"
            ) from None
        args: dict[str, object] = {}
        if parsed.get_backend_name() == "sqlite":
            args["check_same_thread"] = False
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        self.url = url
        self.policy = policy or RefundPolicy()
        self.engine: Engine = create_engine(url, connect_args=args)
        self.shown = (
            parsed.database
            if parsed.get_backend_name() == "sqlite"
            else (parsed.render_as_string(hide_password=True))
        )
        # every database error of the store, at any call, as one StorageError line that names
        # the file and the fix (damaged, locked, full, read-only); others pass unchanged
        event.listen(self.engine, "handle_error", self._storage_error)
        self.sessions: sessionmaker[Session] = sessionmaker(self.engine, expire_on_commit=False)
        #: Handoff claims, thread owners and turn leases (across processes).
        self.coordination = Coordination(self.sessions)
        try:
            self._check_whole()
            with self.engine.begin() as connection:
                hold_setup_lock(connection)  # two new openers at once take turns
                Base.metadata.create_all(connection)
                self._check_version(connection)
        except StorageError:
            raise
        except SQLAlchemyError as exc:
            raise UserError(f"cannot open the order store {url!r}: {exc}") from exc

    def _storage_error(self, context: ExceptionContext) -> StorageError | None:
        return storage_error(context.original_exception, str(self.shown), "order store")

    def _check_whole(self) -> None:
        """Refuse a store that was set up (``cs_meta`` holds its version) but lacks one of the
        tables every store has held since the first release: creating it again, empty, would
        lose its rows (refunds paid would be paid again). Tables added since (handoffs,
        threads, turn leases) are created when missing.

        Raises:
            StorageError: A data table is missing; the message names it and the fix.
        """
        tables = set(inspect(self.engine).get_table_names())
        if StoreMeta.__tablename__ not in tables:
            return  # a new store: create_all makes every table
        missing = [name for name in DATA_TABLES if name not in tables]
        if missing:
            raise StorageError(
                f"order store {self.shown} is damaged: table {', '.join(missing)} is missing "
                "from a store that was set up; restore it from a backup, or point "
                "ORCH_CS_DATABASE_URL (--db) at another store (it is not re-created empty, "
                "which would lose its rows)"
            )

    def _check_version(self, connection: Connection) -> None:
        """Record :data:`SCHEMA_VERSION` in a new store, in the setup transaction on
        ``connection``; refuse a store of a newer release.

        Raises:
            StorageError: The store was written by a newer release.
        """
        found = connection.scalar(select(StoreMeta.value).where(StoreMeta.key == "schema_version"))
        if found is None:
            connection.execute(
                insert(StoreMeta).values(key="schema_version", value=str(SCHEMA_VERSION))
            )
        elif not found.isdigit() or int(found) > SCHEMA_VERSION:
            raise StorageError(
                f"order store {self.shown} was written by a newer release (schema version "
                f"{found}, this release knows {SCHEMA_VERSION}); upgrade the "
                "orchestrator package, or point ORCH_CS_DATABASE_URL (--db) at another store"
            )

    def seed(self, customers: int, *, seed: int = 0, as_of: datetime | None = None) -> int:
        """Replace the store's contents with generated data; returns the orders written.

        Raises:
            ValueError: ``customers`` out of 1..1,000,000.
        """
        as_of = as_of or today_utc()
        data = generate(customers, seed=seed, as_of=as_of)
        Base.metadata.drop_all(self.engine)
        Base.metadata.create_all(self.engine)
        with self.sessions() as session:
            session.add_all(data.customers)
            session.add_all(
                [
                    StoreMeta(key="schema_version", value=str(SCHEMA_VERSION)),
                    StoreMeta(key="seed", value=str(seed)),
                    StoreMeta(key="as_of", value=as_of.isoformat()),
                    StoreMeta(key="customers", value=str(customers)),
                ]
            )
            session.commit()
        return len(data.orders)

    def counts(self) -> dict[str, int]:
        """Rows per main table (``customers``, ``orders``)."""
        with self.sessions() as session:
            return {
                "customers": int(session.scalar(select(func.count(Customer.id))) or 0),
                "orders": int(session.scalar(select(func.count(Order.id))) or 0),
            }

    def customer_exists(self, customer_id: str) -> bool:
        """True when ``customer_id`` is in the store."""
        with self.sessions() as session:
            return session.get(Customer, customer_id) is not None

    def customer_locale(self, customer_id: str) -> str:
        """The customer's locale (``en_US`` / ``zh_CN``); ``en_US`` when unknown."""
        with self.sessions() as session:
            customer = session.get(Customer, customer_id)
            return customer.locale if customer is not None else "en_US"

    def record_handoff(
        self, thread_id: str, turn: int, customer_id: str | None, reason: str, context: dict
    ) -> bool:
        """Record that ``thread_id`` waits for a person at ``turn`` (idempotent per turn).

        Returns:
            True when this call recorded it; False when the turn's record was there already
            (the graph's handoff node runs again when it is resumed) or another process
            recorded it first."""
        with self.sessions() as session:
            row = session.scalar(
                select(Handoff).where(Handoff.thread_id == thread_id, Handoff.turn == turn)
            )
            if row is None:
                session.add(
                    Handoff(
                        thread_id=thread_id,
                        turn=turn,
                        customer_id=customer_id,
                        reason=reason[:200],
                        context=json.dumps(context, ensure_ascii=False, default=str),
                        status="waiting",
                        note="",
                        created_at=datetime.now(UTC),
                    )
                )
                try:
                    session.commit()
                except IntegrityError:  # another process recorded it first: one row per turn
                    session.rollback()
                    return False
                return True
            return False

    def resolve_handoff(self, thread_id: str, turn: int, status: str, note: str) -> None:
        """Mark the handoff of ``thread_id`` at ``turn`` approved or rejected, if it still
        waits (one conditional UPDATE: of two racing calls only the first changes it);
        ``not_applied`` (a person approved, the store refused the write) also replaces the
        ``approved`` that the person's claim set, so the record never reads approved."""
        now = datetime.now(UTC)
        with self.sessions() as session:
            if status == "not_applied":
                session.execute(
                    update(Handoff)
                    .where(
                        Handoff.thread_id == thread_id,
                        Handoff.turn == turn,
                        Handoff.status.in_(("waiting", "approved")),
                    )
                    .values(status=status, resolved_at=now, note=note[:2000])
                )
            else:
                decide_waiting(session, thread_id, turn, status, note, now)
            session.commit()

    def handoffs(self, status: str | None = "waiting") -> list[dict[str, Any]]:
        """Handoffs (waiting ones by default), oldest first, with their decoded context."""
        with self.sessions() as session:
            query = select(Handoff).order_by(Handoff.created_at, Handoff.id)
            if status is not None:
                query = query.where(Handoff.status == status)
            return [
                {
                    "thread_id": h.thread_id,
                    "turn": h.turn,
                    "customer_id": h.customer_id,
                    "reason": h.reason,
                    "status": h.status,
                    "note": h.note,
                    "created_at": h.created_at.isoformat(),
                    "context": json.loads(h.context),
                }
                for h in session.scalars(query)
            ]

    def tools(self, customer_id: str) -> OrderTools:
        """The tools scoped to ``customer_id``."""
        return OrderTools(self.sessions, customer_id, policy=self.policy)

    def close(self) -> None:
        """Dispose of the connection pool."""
        self.engine.dispose()
