"""The order store's tables (SQLAlchemy 2 ORM): customers, orders, order lines, shipments with
tracking events, refunds and tickets.

Money is kept in integer minor units (cents / fen) with the order's ISO currency, never floats.
Times are timezone-aware UTC. Consistency rules the seeder keeps and the tools rely on:

* an order ``processing`` or ``cancelled`` has no shipment; ``shipped`` has one without
  ``delivered_at``; ``delivered`` has one with ``placed_at < shipped_at < delivered_at``;
* tracking events of a shipment lie between ``shipped_at`` and ``delivered_at`` (or now);
* the refunds of an order never add up to more than its total.

Writes that a retry could repeat (refunds, tickets, address changes) carry a unique
``idempotency_key``: the second write with the same key returns the first row.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite stores naive text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: store times in UTC with a tzinfo")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base of the order store (its own metadata, apart from telemetry)."""


class Customer(Base):
    """A customer. ``id`` looks like ``C00042``; ``locale`` is ``en_US`` or ``zh_CN``."""

    __tablename__ = "cs_customers"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(String(120))
    email: Mapped[str] = mapped_column(String(200))
    phone: Mapped[str] = mapped_column(String(40))
    locale: Mapped[str] = mapped_column(String(8))
    address: Mapped[str] = mapped_column(String(300))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    orders: Mapped[list[Order]] = relationship(back_populates="customer")


class Order(Base):
    """An order. ``id`` looks like ``ORD-104233``; ``status`` is one of
    ``processing``, ``shipped``, ``delivered``, ``cancelled``."""

    __tablename__ = "cs_orders"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    customer_id: Mapped[str] = mapped_column(ForeignKey("cs_customers.id"), index=True)
    status: Mapped[str] = mapped_column(String(16))
    placed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    currency: Mapped[str] = mapped_column(String(3))
    total_cents: Mapped[int] = mapped_column(Integer)
    shipping_address: Mapped[str] = mapped_column(String(300))
    cancelled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    customer: Mapped[Customer] = relationship(back_populates="orders")
    lines: Mapped[list[OrderLine]] = relationship(back_populates="order", order_by="OrderLine.id")
    shipment: Mapped[Shipment | None] = relationship(back_populates="order", uselist=False)
    refunds: Mapped[list[Refund]] = relationship(back_populates="order", order_by="Refund.id")


class OrderLine(Base):
    """One product line of an order (``quantity`` × ``unit_price_cents``)."""

    __tablename__ = "cs_order_lines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("cs_orders.id"), index=True)
    sku: Mapped[str] = mapped_column(String(32))
    product: Mapped[str] = mapped_column(String(120))
    quantity: Mapped[int] = mapped_column(Integer)
    unit_price_cents: Mapped[int] = mapped_column(Integer)

    order: Mapped[Order] = relationship(back_populates="lines")


class Shipment(Base):
    """The shipment of an order: carrier, tracking number, ``in_transit`` or ``delivered``."""

    __tablename__ = "cs_shipments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("cs_orders.id"), unique=True)
    carrier: Mapped[str] = mapped_column(String(40))
    tracking_number: Mapped[str] = mapped_column(String(40), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    shipped_at: Mapped[datetime] = mapped_column(UTCDateTime())
    estimated_delivery: Mapped[datetime] = mapped_column(UTCDateTime())
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)

    order: Mapped[Order] = relationship(back_populates="shipment")
    events: Mapped[list[TrackingEvent]] = relationship(
        back_populates="shipment", order_by="TrackingEvent.at"
    )


class TrackingEvent(Base):
    """One carrier scan: when, where, what."""

    __tablename__ = "cs_tracking_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    shipment_id: Mapped[int] = mapped_column(ForeignKey("cs_shipments.id"), index=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    location: Mapped[str] = mapped_column(String(120))
    description: Mapped[str] = mapped_column(String(120))

    shipment: Mapped[Shipment] = relationship(back_populates="events")


class Refund(Base):
    """A refund of (part of) an order. ``status``: ``approved`` (within the automatic limit, or
    approved by a person, see ``approved_by``)."""

    __tablename__ = "cs_refunds"
    __table_args__ = (UniqueConstraint("idempotency_key", name="uq_cs_refunds_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("cs_orders.id"), index=True)
    amount_cents: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    approved_by: Mapped[str] = mapped_column(String(120))
    note: Mapped[str] = mapped_column(Text, default="")
    idempotency_key: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())

    order: Mapped[Order] = relationship(back_populates="refunds")


class Ticket(Base):
    """A support ticket opened for a customer (optionally about one order)."""

    __tablename__ = "cs_tickets"
    __table_args__ = (UniqueConstraint("idempotency_key", name="uq_cs_tickets_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    customer_id: Mapped[str] = mapped_column(ForeignKey("cs_customers.id"), index=True)
    order_id: Mapped[str | None] = mapped_column(ForeignKey("cs_orders.id"), nullable=True)
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    idempotency_key: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AddressChange(Base):
    """An applied change of an order's shipping address (idempotent by key)."""

    __tablename__ = "cs_address_changes"
    __table_args__ = (UniqueConstraint("idempotency_key", name="uq_cs_address_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("cs_orders.id"), index=True)
    old_address: Mapped[str] = mapped_column(String(300))
    new_address: Mapped[str] = mapped_column(String(300))
    idempotency_key: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


_FIRST = (Customer, Order, OrderLine, Shipment, TrackingEvent, Refund, Ticket, AddressChange)
#: Tables every order store has held since its first release (with ``cs_meta``).
DATA_TABLES = tuple(table.__tablename__ for table in _FIRST)


class StoreMeta(Base):
    """Key/value facts about the store (``seed``, ``as_of``, ``customers``)."""

    __tablename__ = "cs_meta"

    key: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class Handoff(Base):
    """A conversation waiting for (or resolved by) a person. One row per (thread, turn).

    ``status``: ``waiting``, ``approved``, ``rejected`` or ``withdrawn`` (by the customer, their
    words in ``note``); ``context`` is JSON (the reason, the customer's message, the pending
    action, ``customer_messages`` written while it waits).
    """

    __tablename__ = "cs_handoffs"
    __table_args__ = (UniqueConstraint("thread_id", "turn", name="uq_cs_handoffs_turn"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    thread_id: Mapped[str] = mapped_column(String(128), index=True)
    turn: Mapped[int] = mapped_column(Integer)
    customer_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    reason: Mapped[str] = mapped_column(String(200))
    context: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class HandoffDecision(Base):
    """A person's decision on a handoff, written by the process that won the claim (see
    :meth:`OrderStore.claim_handoff <workflows.customer_service.store.OrderStore.claim_handoff>`).

    ``outcome``: ``running`` while the graph resumes, ``done``, or ``failed`` (``error`` says
    why; a failed resume that left the graph waiting released the claim). Several rows per
    handoff only when a resume failed and a person decided again; the newest one counts.
    """

    __tablename__ = "cs_handoff_decisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    thread_id: Mapped[str] = mapped_column(String(128), index=True)
    turn: Mapped[int] = mapped_column(Integer)
    decision: Mapped[str] = mapped_column(String(16))
    decided_by: Mapped[str] = mapped_column(String(120))
    decided_at: Mapped[datetime] = mapped_column(UTCDateTime())
    outcome: Mapped[str] = mapped_column(String(16))
    error: Mapped[str] = mapped_column(Text, default="")


class ThreadOwner(Base):
    """The customer a conversation thread belongs to, bound when its first turn arrives
    (``customer_id`` ``""`` for a conversation without a signed-in customer)."""

    __tablename__ = "cs_threads"

    thread_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    customer_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class ThreadRefusal(Base):
    """A turn refused because its thread belongs to another customer (an audit record)."""

    __tablename__ = "cs_thread_refusals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    thread_id: Mapped[str] = mapped_column(String(128), index=True)
    owner_id: Mapped[str] = mapped_column(String(64))
    customer_id: Mapped[str] = mapped_column(String(64))
    channel: Mapped[str] = mapped_column(String(64))
    at: Mapped[datetime] = mapped_column(UTCDateTime())


class AccountMark(Base):
    """A conversation of the customer's account said its writer is not the account holder
    (tester14 F14). For :attr:`RefundPolicy.mark_days
    <workflows.customer_service.store.tools.RefundPolicy.mark_days>` after it, a write on the
    account in any conversation waits for a person. One row per (customer, thread)."""

    __tablename__ = "cs_account_marks"
    __table_args__ = (UniqueConstraint("customer_id", "thread_id", name="uq_cs_marks_thread"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    customer_id: Mapped[str] = mapped_column(String(64), index=True)
    thread_id: Mapped[str] = mapped_column(String(128))
    reason: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class TurnLease(Base):
    """Which process runs a turn of a thread now, until ``expires_at`` (a lease: a holder
    that dies without releasing it blocks the thread until then, no longer)."""

    __tablename__ = "cs_turn_leases"

    thread_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    holder: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
