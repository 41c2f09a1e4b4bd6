"""Account marks (tester14 F14): a conversation that was not plain holds the writes of its
account in every conversation for a while, so a writer who said they are not the account holder
cannot open a new chat and ask again plainly.

A mark is one row of ``cs_account_marks`` per (customer, thread)
(:class:`~workflows.customer_service.store.schema.AccountMark`). The policy reads it through
:meth:`OrderTools.account_mark <workflows.customer_service.store.tools.OrderTools.account_mark>`
and sends the write to a person (``needs_approval``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from workflows.customer_service.store.schema import AccountMark

#: The mark of a conversation whose writer said they are not the account holder: every write
#: on the account waits for a person for ``RefundPolicy.mark_days`` days after it.
NOT_HOLDER = "the writer said they are not the account holder"
#: Hours any other mark of a conversation that was not plain (someone else named, a check
#: line) holds the account's writes: long enough that a new chat right after it is not a way
#: round it, short enough that "leave it with the neighbour" costs a customer one day.
OTHER_MARK_HOURS = 24


def account_mark(
    sessions: sessionmaker[Session], customer_id: str, mark_days: int, now: datetime | None
) -> str | None:
    """Why a write on ``customer_id``'s account waits for a person at ``now`` (the wall clock
    by default: the tools' own clock is read only by a write or a refund's window), or None:
    a conversation of the account said that its writer is not the account holder
    (:data:`NOT_HOLDER`) in the last ``mark_days`` days, or was not plain for another reason
    in the last :data:`OTHER_MARK_HOURS` hours. Opening a new conversation does not clear it.
    """
    now = now or datetime.now(UTC)
    long = now - timedelta(days=mark_days)
    short = now - timedelta(hours=OTHER_MARK_HOURS)
    since = min(long, short)
    with sessions() as session:
        rows = session.execute(
            select(AccountMark.reason, AccountMark.created_at)
            .where(AccountMark.customer_id == customer_id, AccountMark.created_at >= since)
            .order_by(AccountMark.created_at.desc())
        ).all()
    held = next((r for r, at in rows if at >= (long if r == NOT_HOLDER else short)), None)
    return f"an earlier conversation of the account: {held}" if held else None


def mark_account(
    sessions: sessionmaker[Session], customer_id: str, thread_id: str, reason: str, at: datetime
) -> None:
    """Remember that conversation ``thread_id`` of ``customer_id``'s account was not plain at
    ``at`` (``reason``; :data:`NOT_HOLDER` counts longest). One row per thread: a later
    :data:`NOT_HOLDER` replaces an earlier reason, nothing else does."""
    with sessions() as session:
        row = session.scalar(
            select(AccountMark).where(
                AccountMark.customer_id == customer_id, AccountMark.thread_id == thread_id[:128]
            )
        )
        if row is not None:
            if reason == NOT_HOLDER and row.reason != NOT_HOLDER:
                row.reason, row.created_at = NOT_HOLDER, at
                session.commit()
            return
        session.add(
            AccountMark(
                customer_id=customer_id,
                thread_id=thread_id[:128],
                reason=reason[:200],
                created_at=at,
            )
        )
        try:
            session.commit()
        except IntegrityError:  # marked by a racing turn of the thread: that row stays
            session.rollback()
