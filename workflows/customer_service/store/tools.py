"""The customer-service tools: pydantic-validated arguments, scoped to one customer, policy in
code, idempotent writes.

Every tool runs for the *thread's* customer (:class:`OrderTools` is built with its id): an
order of another customer is "not found", exactly like an order that does not exist, so nothing
leaks across customers. Arguments are validated by pydantic before anything runs
(:class:`ToolArgumentsError` names the field and the rule); an order id must be exactly
``ORD-`` and six digits, so an id with injected text never reaches a query. Refund window,
amount limit and order state are checked here, never by the model. Writes take an
``idempotency_key``: the same key returns the first row instead of writing a second. A write
locks its order before it checks anything (:meth:`OrderTools._locked_order`), so two writes
of one order racing from two processes are decided one after the other: exactly one refund
of what is left, never a cancelled order whose address then changes.

Tool results are facts (:class:`ToolResult`): the reply quotes them through placeholders.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.exceptions import OrchestratorError
from workflows.customer_service.store import marks
from workflows.customer_service.store.schema import (
    AddressChange,
    Handoff,
    Order,
    Refund,
    Shipment,
    Ticket,
)

#: The only accepted shape of an order id.
ORDER_ID_PATTERN = r"^ORD-\d{6}$"

ToolName = Literal[
    "lookup_order",
    "track_shipment",
    "check_refund_eligibility",
    "start_refund",
    "cancel_order",
    "change_address",
    "open_ticket",
]


class ToolError(OrchestratorError, ValueError):
    """A tool refused its call. ``code`` says why: ``not_found`` (no such order *for this
    customer*), ``invalid_arguments``, ``policy`` (refund window, limit, order state) or
    ``needs_approval`` (a refund over the automatic limit; a person must approve it)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ToolArgumentsError(ToolError):
    """The arguments do not validate; the message names the field and the rule."""

    def __init__(self, tool: str, error: ValidationError | str) -> None:
        detail = error if isinstance(error, str) else _short(error)
        super().__init__("invalid_arguments", f"{tool}: invalid arguments: {detail}")


class WriteGrant:
    """Proof that :func:`workflows.customer_service.policy.execute_write` approved one write:
    its tool, customer and idempotency key. Made only by :func:`_mint_grant`, which only the
    policy module calls; every write method of :class:`OrderTools` refuses a call without a
    matching grant (``ToolError("unauthorised")``)."""

    __slots__ = ("customer_id", "key", "tool")

    def __init__(self, tool: str, customer_id: str, key: str, seal: object) -> None:
        if seal is not _SEAL:
            raise ToolError("unauthorised", "a write grant is made only by the write policy")
        self.tool, self.customer_id, self.key = tool, customer_id, key


_SEAL = object()


def _mint_grant(tool: str, customer_id: str, key: str) -> WriteGrant:
    """A grant for one write; called only by the write policy (a unit test checks that)."""
    return WriteGrant(tool, customer_id, key, _SEAL)


def _short(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in error.errors()[:4]
    )


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class OrderArgs(_Args):
    """Arguments of ``lookup_order``, ``track_shipment``, ``check_refund_eligibility`` and
    ``cancel_order``: one order id (``ORD-`` + 6 digits)."""

    order_id: str = Field(pattern=ORDER_ID_PATTERN, max_length=10)


class RefundArgs(_Args):
    """``start_refund``: the order, the amount in minor units (None: what is left to refund),
    a short reason."""

    order_id: str = Field(pattern=ORDER_ID_PATTERN, max_length=10)
    amount_cents: int | None = Field(None, gt=0, le=100_000_000)
    reason: str = Field("customer request", min_length=1, max_length=200)


class AddressArgs(_Args):
    """``change_address``: the order and the new address (5..300 characters)."""

    order_id: str = Field(pattern=ORDER_ID_PATTERN, max_length=10)
    new_address: str = Field(min_length=5, max_length=300)


class TicketArgs(_Args):
    """``open_ticket``: a subject, a body and optionally the order it is about."""

    subject: str = Field(min_length=1, max_length=200)
    body: str = Field(min_length=1, max_length=4000)
    order_id: str | None = Field(None, pattern=ORDER_ID_PATTERN, max_length=10)


#: The argument model of each tool.
TOOL_ARGS: dict[str, type[_Args]] = {
    "lookup_order": OrderArgs,
    "track_shipment": OrderArgs,
    "check_refund_eligibility": OrderArgs,
    "start_refund": RefundArgs,
    "cancel_order": OrderArgs,
    "change_address": AddressArgs,
    "open_ticket": TicketArgs,
}

TOOL_DESCRIPTIONS: dict[str, str] = {
    "lookup_order": "Look up one of the customer's orders: status, total, items, dates.",
    "track_shipment": "Track the shipment of one of the customer's orders.",
    "check_refund_eligibility": "Check whether an order can be refunded and for how much.",
    "start_refund": "Start a refund of an order (policy and limits are checked).",
    "cancel_order": "Cancel an order that has not shipped yet.",
    "change_address": "Change the shipping address of an order that has not shipped yet.",
    "open_ticket": "Open a support ticket for a person to follow up.",
}


class ToolResult(BaseModel):
    """What a tool returned: the facts a reply may quote (``facts``: placeholder → value).

    Attributes:
        tool: The tool's name.
        ok: False when the tool refused (see ``error_code``); ``facts`` then holds only what
            the customer may be told (the order id they gave, the reason).
        facts: Placeholder name → text, e.g. ``{"order_id": "ORD-100042", "status": "shipped"}``.
        error_code: :class:`ToolError` code when ``ok`` is False.
        message: The refusal in words (for logs and the handoff context), or "".
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    ok: bool = True
    facts: dict[str, str] = Field(default_factory=dict)
    error_code: str | None = None
    message: str = ""


class RefundPolicy(BaseModel):
    """Refund rules, checked in code.

    Attributes:
        window_days: Days after delivery during which a refund may be started.
        auto_limit_cents: The most the policy refunds on one order without a person (minor
            units; the currency's), all its automatic refunds together: a refund that would
            take them over it raises ``ToolError("needs_approval")``, so an over-limit refund
            split into smaller asks still reaches a person (tester14 E14).
        mark_days: Days a write on an account waits for a person after one of its
            conversations said the writer is not the account holder (other marks: a day)
            (:mod:`~workflows.customer_service.store.marks`; tester14 F14).
    """

    model_config = ConfigDict(frozen=True)

    window_days: int = Field(30, ge=0)
    auto_limit_cents: int = Field(20_000, ge=0)
    mark_days: int = Field(30, ge=0)


def _action_order(context: str) -> str | None:
    """The order id of a handoff's pending action (its ``context`` JSON), or None."""
    try:
        action = json.loads(context).get("action") or {}
        return str((action.get("arguments") or {}).get("order_id") or "") or None
    except (ValueError, AttributeError):  # not JSON, or not the shape the graph records
        return None


def money(cents: int, currency: str) -> str:
    """``12345, "USD"`` → ``"USD 123.45"``."""
    return f"{currency} {cents // 100}.{cents % 100:02d}"


def day(value: datetime | None) -> str:
    """An aware datetime as ``YYYY-MM-DD`` (UTC); ``""`` for None."""
    return value.astimezone(UTC).strftime("%Y-%m-%d") if value else ""


def status_answer(result: ToolResult) -> ToolResult:
    """``result`` as the answer to a refund-status question ("has my money come back yet?"):
    a ``check_refund_eligibility`` refused for an order with no refund becomes an ok read
    (no refund was made, and why none can be), never the refusal of a refund nobody asked
    for (closing6). Any other result is returned as it is."""
    refused = result.error_code == "policy" and result.facts.get("refund_count") == "0"
    if result.tool != "check_refund_eligibility" or not refused:
        return result
    return result.model_copy(update={"ok": True, "error_code": None})


def idempotency_key(*parts: object) -> str:
    """A stable key for a write from the parts that identify it (sha256, 40 hex)."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:40]


class OrderTools:
    """The tools, bound to one customer and one store.

    Args:
        sessions: A SQLAlchemy ``sessionmaker`` of the order store.
        customer_id: The thread's customer; every lookup is scoped to it.
        policy: Refund rules.
        now: The clock (UTC, aware); ``datetime.now(UTC)`` by default.

    Every method takes the raw arguments (a dict, as a model's tool call gives them), validates
    them, and returns a :class:`ToolResult` or raises :class:`ToolError`.
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        customer_id: str,
        *,
        policy: RefundPolicy | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        if not customer_id or len(customer_id) > 16:
            raise ToolArgumentsError("tools", f"bad customer id {customer_id[:20]!r}")
        self.sessions = sessions
        self.customer_id = customer_id
        self.policy = policy or RefundPolicy()
        self.now = now or (lambda: datetime.now(UTC))

    # --- helpers -----------------------------------------------------------------------
    def order_ids(self, limit: int = 50) -> list[str]:
        """The customer's order ids, newest first (at most ``limit``)."""
        with self.sessions() as session:
            rows = session.scalars(
                select(Order.id)
                .where(Order.customer_id == self.customer_id)
                .order_by(Order.placed_at.desc())
                .limit(limit)
            )
            return list(rows)

    def products(self, limit: int = 50) -> dict[str, list[str]]:
        """The product names of each of the customer's orders, newest first (at most
        ``limit`` orders): ``{"ORD-100160": ["Desk lamp"], …}``."""
        with self.sessions() as session:
            orders = session.scalars(
                select(Order)
                .where(Order.customer_id == self.customer_id)
                .order_by(Order.placed_at.desc())
                .limit(limit)
            )
            return {order.id: [line.product for line in order.lines] for order in orders}

    def account_mark(self, now: datetime | None = None) -> str | None:
        """Why a write on this account waits for a person at ``now`` (the wall clock by
        default), or None: :func:`~workflows.customer_service.store.marks.account_mark`."""
        return marks.account_mark(self.sessions, self.customer_id, self.policy.mark_days, now)

    def mark_account(self, thread_id: str, reason: str) -> None:
        """Remember that conversation ``thread_id`` of this account was not plain:
        :func:`~workflows.customer_service.store.marks.mark_account`."""
        marks.mark_account(self.sessions, self.customer_id, thread_id, reason, self.now())

    def _order(self, session: Session, order_id: str) -> Order:
        order = session.scalar(
            select(Order).where(Order.id == order_id, Order.customer_id == self.customer_id)
        )
        if order is None:  # another customer's order reads exactly like a missing one
            raise ToolError("not_found", f"no order {order_id} on this customer's account")
        return order

    def _locked_order(self, session: Session, order_id: str) -> Order:
        """:meth:`_order` as the first statement of a write: the write lock is taken before
        anything is read, so a write's check (status, what is left to refund, its idempotency
        key) and its write are one decision; a racing write of the same order, in any process,
        waits for this one's commit and then checks what it left.

        SQLite has no row locks: ``BEGIN IMMEDIATE`` takes the database's write lock (the
        pysqlite driver begins a transaction only at the first INSERT/UPDATE, after the reads,
        so it is begun by hand). PostgreSQL locks the order row (``SELECT ... FOR UPDATE``;
        under READ COMMITTED each later read sees the winner's rows). A lock rather than a
        conditional ``UPDATE ... WHERE`` because the checks span tables (refund rows, the
        shipment, the clock) and the same lock serves every write tool with no schema change.

        Raises:
            ToolError: ``not_found``.
        """
        if session.get_bind().dialect.name == "sqlite":
            session.connection().exec_driver_sql("BEGIN IMMEDIATE")
        order = session.scalar(
            select(Order)
            .where(Order.id == order_id, Order.customer_id == self.customer_id)
            .with_for_update()
        )
        if order is None:  # another customer's order reads exactly like a missing one
            raise ToolError("not_found", f"no order {order_id} on this customer's account")
        return order

    @staticmethod
    def validate(tool: str, arguments: dict[str, Any] | str) -> _Args:
        """Validate ``arguments`` (a dict, or the JSON text of a tool call) for ``tool``.

        Raises:
            ToolArgumentsError: Unknown tool, bad JSON or arguments that break a rule.
        """
        model = TOOL_ARGS.get(tool)
        if model is None:
            raise ToolArgumentsError(tool, f"unknown tool {tool[:40]!r}")
        try:
            if isinstance(arguments, str):
                return model.model_validate_json(arguments)
            return model.model_validate(arguments)
        except ValidationError as exc:
            raise ToolArgumentsError(tool, exc) from None

    def run(
        self,
        tool: str,
        arguments: dict[str, Any] | str,
        *,
        key: str = "",
        grant: WriteGrant | None = None,
        **write: Any,
    ) -> ToolResult:
        """Validate and run ``tool``; ``key`` scopes idempotent writes (e.g. the thread id). A
        write needs the policy's ``grant`` (``approved_by``/``note`` go to ``start_refund``).

        Raises:
            ToolArgumentsError: Invalid arguments (nothing ran).
            ToolError: The tool refused (not found, policy, needs approval, ``unauthorised``:
                a write without a grant).
        """
        args = self.validate(tool, arguments)
        method = getattr(self, tool)
        if tool in _WRITES:
            return method(args, key=key, grant=grant, **write)
        return method(args)

    @contextmanager
    def _order_write(
        self, grant: WriteGrant | None, tool: str, key: str, order_id: str
    ) -> Iterator[tuple[Session, Order]]:
        """A granted write on one order: the grant is checked (:meth:`_check_grant`) before a
        session opens, then the order is read under the write lock (:meth:`_locked_order`)
        before anything else. Yields ``(session, order)``; the session closes on exit."""
        self._check_grant(grant, tool, key)
        with self.sessions() as session:
            yield session, self._locked_order(session, order_id)

    def _check_grant(self, grant: WriteGrant | None, tool: str, key: str) -> None:
        """Refuse a write the policy did not grant (or granted for another tool, customer or
        key)."""
        if (
            not isinstance(grant, WriteGrant)
            or grant.tool != tool
            or grant.customer_id != self.customer_id
            or grant.key != key
        ):
            raise ToolError(
                "unauthorised",
                f"{tool}: writes run only through workflows.customer_service.policy.execute_write",
            )

    # --- reads ---------------------------------------------------------------------------
    def lookup_order(self, args: OrderArgs) -> ToolResult:
        """Status, total, items and dates of one order."""
        with self.sessions() as session:
            order = self._order(session, args.order_id)
            items = ", ".join(f"{line.quantity} x {line.product}" for line in order.lines)
            refunded = sum(r.amount_cents for r in order.refunds)
            return ToolResult(
                tool="lookup_order",
                facts={
                    "order_id": order.id,
                    "status": order.status,
                    "total": money(order.total_cents, order.currency),
                    "placed_on": day(order.placed_at),
                    "items": items,
                    "refunded": money(refunded, order.currency),
                },
            )

    def track_shipment(self, args: OrderArgs) -> ToolResult:
        """Carrier, tracking number, status and latest scan of the order's shipment."""
        with self.sessions() as session:
            order = self._order(session, args.order_id)
            shipment: Shipment | None = order.shipment
            if shipment is None:
                return ToolResult(
                    tool="track_shipment",
                    ok=False,
                    error_code="policy",
                    facts={"order_id": order.id, "status": order.status},
                    message=f"order {order.id} is {order.status} and has no shipment",
                )
            last = shipment.events[-1] if shipment.events else None
            return ToolResult(
                tool="track_shipment",
                facts={
                    "order_id": order.id,
                    "carrier": shipment.carrier,
                    "tracking_number": shipment.tracking_number,
                    "shipment_status": shipment.status,
                    "shipped_on": day(shipment.shipped_at),
                    "estimated_delivery": day(shipment.estimated_delivery),
                    "delivered_on": day(shipment.delivered_at),
                    "last_scan": f"{last.description}, {last.location}" if last else "",
                    "last_scan_on": day(last.at) if last else "",
                },
            )

    def _eligibility(self, order: Order) -> tuple[int, str | None]:
        """(refundable amount, None) or (0, reason it is not refundable)."""
        refunded = sum(r.amount_cents for r in order.refunds)
        left = order.total_cents - refunded
        if order.status != "delivered" or order.shipment is None:
            return 0, f"order is {order.status}; only delivered orders are refunded"
        delivered = order.shipment.delivered_at
        assert delivered is not None
        if self.now() - delivered > timedelta(days=self.policy.window_days):
            return 0, f"delivered over {self.policy.window_days} days ago"
        if left <= 0:
            return 0, "already refunded in full"
        return left, None

    def _automatic_left(self, session: Session, order: Order) -> tuple[int, str]:
        """``(cents the policy may still refund on order without a person, why no more)``:
        ``why`` is a clause such as ``over the automatic limit of USD 200.00``.

        The automatic limit holds per order, for all its refunds approved by the policy
        together; and while a person reviews a refund of the order (a waiting handoff of
        this customer whose action is on it), nothing more is refunded automatically.
        """
        limit = money(self.policy.auto_limit_cents, order.currency)
        waiting = session.scalars(
            select(Handoff.context).where(
                Handoff.customer_id == self.customer_id, Handoff.status == "waiting"
            )
        )
        if any(_action_order(context) == order.id for context in waiting):
            return 0, f"a person is reviewing a refund of {order.id}"
        automatic = sum(r.amount_cents for r in order.refunds if r.approved_by == "policy")
        if automatic:
            done = money(automatic, order.currency)
            why = f"over the automatic limit of {limit} per order ({done} refunded so)"
        else:
            why = f"over the automatic limit of {limit}"
        return max(0, self.policy.auto_limit_cents - automatic), why

    def check_refund_eligibility(self, args: OrderArgs) -> ToolResult:
        """Whether the order can be refunded, how much is left, whether a person must
        approve it (over the automatic limit), and the refunds it already has.

        Facts: ``order_id``, ``eligible`` (yes/no), ``refundable``, ``needs_approval``,
        ``reason`` (why not, or ""), ``refunded`` (the sum), ``refund_count`` and per refund
        ``refund_N_id`` / ``_amount`` / ``_status`` / ``_on`` (N from 1, oldest first).
        ``ok`` is False (``policy``) only for an order that cannot be refunded and has no
        refund: "where is my refund?" on a refunded order is a read of its refunds, never
        the refusal of a new one (tester7 F24).
        """
        with self.sessions() as session:
            order = self._order(session, args.order_id)
            left, reason = self._eligibility(order)
            automatic, _ = self._automatic_left(session, order)
            refunds = sorted(order.refunds, key=lambda r: r.id)
            facts = {
                "order_id": order.id,
                "eligible": "yes" if reason is None else "no",
                "refundable": money(left, order.currency),
                "needs_approval": "yes" if left > automatic else "no",
                "reason": reason or "",
                "refunded": money(sum(r.amount_cents for r in refunds), order.currency),
                "refund_count": str(len(refunds)),
            }
            for n, refund in enumerate(refunds, start=1):
                facts[f"refund_{n}_id"] = f"RF-{refund.id:06d}"
                facts[f"refund_{n}_amount"] = money(refund.amount_cents, order.currency)
                facts[f"refund_{n}_status"] = refund.status
                facts[f"refund_{n}_on"] = day(refund.created_at)
            refused = reason is not None and not refunds
            return ToolResult(
                tool="check_refund_eligibility",
                ok=not refused,
                error_code="policy" if refused else None,
                message=reason or "",
                facts=facts,
            )

    def shipping_address(self, order_id: str) -> str:
        """The address one of the customer's orders ships (or shipped) to.

        Raises:
            ToolError: ``not_found`` (another customer's order reads like a missing one).
        """
        with self.sessions() as session:
            return self._order(session, order_id).shipping_address

    def refundable(self, order_id: str) -> tuple[int, str, str | None]:
        """``(cents left to refund, currency, None)`` or ``(0, currency, why not)``.

        Raises:
            ToolError: ``not_found``.
        """
        with self.sessions() as session:
            order = self._order(session, order_id)
            left, reason = self._eligibility(order)
            return left, order.currency, reason

    # --- writes --------------------------------------------------------------------------
    def start_refund(
        self,
        args: RefundArgs,
        *,
        key: str = "",
        grant: WriteGrant | None = None,
        approved_by: str | None = None,
        note: str = "",
    ) -> ToolResult:
        """Create one refund (idempotent: the same order, amount and ``key`` give the same row).

        Without ``approved_by``, an amount over ``policy.auto_limit_cents`` raises
        ``ToolError("needs_approval")`` and writes nothing.

        Raises:
            ToolError: ``not_found``, ``policy`` (not eligible, more than is left),
                ``needs_approval`` or ``unauthorised`` (no grant from the write policy).
        """
        with self._order_write(grant, "start_refund", key, args.order_id) as (session, order):
            amount = args.amount_cents
            ikey = idempotency_key("refund", self.customer_id, order.id, amount, key)
            existing = session.scalar(select(Refund).where(Refund.idempotency_key == ikey))
            if existing is not None:
                return self._refund_result(order, existing, duplicate=True)
            left, reason = self._eligibility(order)
            if reason is not None:
                raise ToolError("policy", f"order {order.id} cannot be refunded: {reason}")
            amount = left if amount is None else amount
            if amount > left:
                raise ToolError(
                    "policy",
                    f"order {order.id}: {money(amount, order.currency)} is more than the "
                    f"{money(left, order.currency)} left to refund",
                )
            automatic, why = (0, "") if approved_by else self._automatic_left(session, order)
            if amount > automatic and not approved_by:
                raise ToolError(
                    "needs_approval",
                    f"refund of {money(amount, order.currency)} on {order.id} needs a person: "
                    f"{why}",
                )
            refund = Refund(
                order_id=order.id,
                amount_cents=amount,
                reason=args.reason,
                status="approved",
                approved_by=approved_by or "policy",
                note=note[:2000],
                idempotency_key=ikey,
                created_at=self.now(),
            )
            session.add(refund)
            try:
                session.commit()
            except IntegrityError:  # a concurrent retry won the race: return its row
                session.rollback()
                refund = session.scalars(select(Refund).where(Refund.idempotency_key == ikey)).one()
            return self._refund_result(order, refund, duplicate=False)

    @staticmethod
    def _refund_result(order: Order, refund: Refund, *, duplicate: bool) -> ToolResult:
        return ToolResult(
            tool="start_refund",
            facts={
                "order_id": order.id,
                "refund_id": f"RF-{refund.id:06d}",
                "refund_amount": money(refund.amount_cents, order.currency),
                "refund_status": refund.status,
            },
            message="already recorded (same request)" if duplicate else "",
        )

    def cancel_order(
        self, args: OrderArgs, *, key: str = "", grant: WriteGrant | None = None
    ) -> ToolResult:
        """Cancel an order that has not shipped (idempotent: cancelling twice is one cancel;
        the second result says ``message="already cancelled (nothing changed)"``).

        Raises:
            ToolError: ``not_found``; ``policy`` when it has shipped or been delivered;
                ``unauthorised`` without the policy's grant.
        """
        with self._order_write(grant, "cancel_order", key, args.order_id) as (session, order):
            already = order.status == "cancelled"
            if order.status == "processing":
                order.status = "cancelled"
                order.cancelled_at = self.now()
                session.commit()
            elif not already:
                raise ToolError(
                    "policy", f"order {order.id} is {order.status}; only unshipped orders cancel"
                )
            return ToolResult(
                tool="cancel_order",
                facts={
                    "order_id": order.id,
                    "status": order.status,
                    "cancelled_on": day(order.cancelled_at),
                },
                message="already cancelled (nothing changed)" if already else "",
            )

    def change_address(
        self, args: AddressArgs, *, key: str = "", grant: WriteGrant | None = None
    ) -> ToolResult:
        """Change the shipping address of an unshipped order (idempotent by key + address).

        Raises:
            ToolError: ``not_found``; ``policy`` when it has shipped or was cancelled;
                ``unauthorised`` without the policy's grant.
        """
        with self._order_write(grant, "change_address", key, args.order_id) as (session, order):
            ikey = idempotency_key("address", self.customer_id, order.id, args.new_address, key)
            done = session.scalar(
                select(AddressChange).where(AddressChange.idempotency_key == ikey)
            )
            if done is None:
                if order.status != "processing":
                    raise ToolError(
                        "policy",
                        f"order {order.id} is {order.status}; the address can only change "
                        "before it ships",
                    )
                session.add(
                    AddressChange(
                        order_id=order.id,
                        old_address=order.shipping_address,
                        new_address=args.new_address,
                        idempotency_key=ikey,
                        created_at=self.now(),
                    )
                )
                order.shipping_address = args.new_address
                session.commit()
            return ToolResult(
                tool="change_address",
                facts={"order_id": order.id, "shipping_address": order.shipping_address},
            )

    def open_ticket(
        self, args: TicketArgs, *, key: str = "", grant: WriteGrant | None = None
    ) -> ToolResult:
        """Open a ticket (idempotent by key + subject: a retry returns the same ticket).

        Raises:
            ToolError: ``not_found`` when ``order_id`` is not the customer's;
                ``unauthorised`` without the policy's grant.
        """
        self._check_grant(grant, "open_ticket", key)
        with self.sessions() as session:
            if args.order_id is not None:
                self._order(session, args.order_id)
            ikey = idempotency_key("ticket", self.customer_id, args.order_id, args.subject, key)
            ticket = session.scalar(select(Ticket).where(Ticket.idempotency_key == ikey))
            if ticket is None:
                ticket = Ticket(
                    customer_id=self.customer_id,
                    order_id=args.order_id,
                    subject=args.subject,
                    body=args.body,
                    status="open",
                    idempotency_key=ikey,
                    created_at=self.now(),
                )
                session.add(ticket)
                try:
                    session.commit()
                except IntegrityError:
                    session.rollback()
                    ticket = session.scalars(
                        select(Ticket).where(Ticket.idempotency_key == ikey)
                    ).one()
            return ToolResult(tool="open_ticket", facts={"ticket_id": f"T-{ticket.id:06d}"})

    def refund_count(self, order_id: str) -> int:
        """Refund rows of one of the customer's orders (0 for an unknown one)."""
        with self.sessions() as session:
            return int(
                session.scalar(
                    select(func.count(Refund.id))
                    .join(Order, Order.id == Refund.order_id)
                    .where(Refund.order_id == order_id, Order.customer_id == self.customer_id)
                )
                or 0
            )

    def refunded_order_ids(self, limit: int = 50) -> list[str]:
        """Ids of the customer's orders that have a refund, newest refund first (at most
        ``limit``): what "is my refund approved yet?" with no id is about."""
        query = (
            select(Refund.order_id, func.max(Refund.id))
            .join(Order, Order.id == Refund.order_id)
            .where(Order.customer_id == self.customer_id)
            .group_by(Refund.order_id)
            .order_by(func.max(Refund.id).desc())
            .limit(limit)
        )
        with self.sessions() as session:
            return [str(row[0]) for row in session.execute(query)]

    def order_of(self, refund_id: int | None = None, tracking: str | None = None) -> str | None:
        """The id of the customer's order that refund ``refund_id`` (``RF-000132`` is 132) or
        the shipment with tracking number ``tracking`` belongs to; None when it is none of
        theirs (another customer's reads exactly like a missing one)."""
        query = select(Order.id).where(Order.customer_id == self.customer_id)
        if refund_id is not None:
            query = query.join(Refund, Refund.order_id == Order.id).where(Refund.id == refund_id)
        else:
            query = query.join(Shipment, Shipment.order_id == Order.id).where(
                func.upper(Shipment.tracking_number) == str(tracking).upper()
            )
        with self.sessions() as session:
            return session.scalar(query.limit(1))


#: The tools that write (each needs a :class:`WriteGrant`).
WRITE_TOOLS = _WRITES = frozenset({"start_refund", "cancel_order", "change_address", "open_ticket"})
