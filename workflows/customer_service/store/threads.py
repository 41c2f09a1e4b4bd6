"""What keeps conversations apart across processes, in the order store (SQLite or PostgreSQL):

* :class:`Coordination.claim_handoff`: exactly one decision per handoff. A conditional
  ``UPDATE cs_handoffs SET status=<decision> WHERE ... AND status='waiting'``: the database
  applies it to one writer only, so ``rowcount == 1`` names the winner on every backend, in
  every process. The loser gets :class:`~orchestrator.exceptions.HandoffDecidedError`.
  :meth:`Coordination.withdraw_handoff` is the customer's claim (status ``withdrawn``) by the
  same UPDATE; a person who loses to it gets :class:`HandoffWithdrawnError`.
* :class:`Coordination.bind_thread`: a thread belongs to the customer of its first turn (a
  primary-key insert, so two processes that create the same thread at once get one owner).
* :class:`Coordination.lease_turn`: one turn of a thread at a time. A row per thread with an
  expiry, taken by an insert or by a conditional update of an expired row.

Locks held in a process (``asyncio.Lock``) cannot do any of this: ``orchestrator chat``, the
UI service and ``orchestrator handoff resume`` are separate processes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import psutil
from sqlalchemy import CursorResult, Result, delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from orchestrator.exceptions import (
    HandoffDecidedError,
    ThreadOwnerError,
    TurnBusyError,
    UserError,
)
from workflows.customer_service.store.schema import (
    Handoff,
    HandoffDecision,
    ThreadOwner,
    ThreadRefusal,
    TurnLease,
)

#: Seconds a turn lease lasts: longer than any turn (one graph run), so only a holder that
#: died without releasing it (killed) lets the thread be taken over, after this long.
LEASE_S = 300.0
#: Seconds between two tries to take a busy lease.
POLL_S = 0.05
#: Customer messages kept in a waiting handoff's context (the newest).
MAX_NOTED = 20


def _now() -> datetime:
    return datetime.now(UTC)


def _host_tag() -> str:
    """This machine in a lease holder's name: its host name (letters, digits, dots and
    dashes, cut to 16) and a hash of the whole name and the boot id, so a pid is read on
    the machine and boot that gave it, never on another (tester7 F23)."""
    name = socket.gethostname()
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:  # not Linux: the host name alone
        boot = ""
    digest = hashlib.sha256(f"{name}|{boot}".encode()).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9.-]', '', name)[:16]}~{digest}"


def _started(pid: int) -> str:
    """When process ``pid`` started (psutil, centiseconds since the epoch), "" when no
    process has that pid: with the pid it names one process, not a later one given its pid."""
    try:
        return str(round(psutil.Process(pid).create_time() * 100))
    except (psutil.Error, ValueError):
        return ""


#: This machine (:func:`_host_tag`).
HOST = _host_tag()


def process_tag() -> str:
    """``host:pid:start`` of this process, the start of every lease holder's name."""
    pid = os.getpid()
    return f"{HOST}:{pid}:{_started(pid)}"


def holder_gone(holder: str) -> bool:
    """Whether the lease holder named ``holder`` (``host:pid:start:…``) was a process of this
    machine that runs no more: its pid is free, or now another process's (a later start).
    A holder on another machine, or named in the old way (no host), is never known to be
    gone: its lease is taken over only once it expires."""
    parts = holder.split(":")
    if len(parts) < 4 or parts[0] != HOST or not parts[1].isdigit():
        return False
    return _started(int(parts[1])) != parts[2]


class Coordination:
    """Claims, thread owners and turn leases on the order store's session factory.

    Args:
        sessions: The order store's ``sessionmaker``.
    """

    def __init__(self, sessions: Callable[[], Session]) -> None:
        self.sessions = sessions
        #: This process's name in leases (host, pid, start time and a random part).
        self.holder = f"{process_tag()}:{uuid.uuid4().hex[:8]}"

    # --- handoffs ---------------------------------------------------------------------------
    def claim_handoff(
        self, thread_id: str, turn: int, approve: bool, by: str, note: str = ""
    ) -> int:
        """Take the decision on the handoff of ``thread_id`` at ``turn`` (the handoff row gets
        the decision and ``note`` now); returns the decision row's id (for
        :meth:`finish_decision`).

        Raises:
            HandoffDecidedError: Another decision won (its who, when and what are in it).
        """
        if not by.strip():  # the audit row names who decided (tester7 F21)
            raise UserError("name who decided (--by NAME): a decision needs a non-blank name")
        decision = "approved" if approve else "rejected"
        now = _now()
        with self.sessions() as session:
            won = decide_waiting(session, thread_id, turn, decision, note, now)
            if won != 1:
                session.rollback()
                raise self._decided(session, thread_id, turn)
            row = HandoffDecision(
                thread_id=thread_id,
                turn=turn,
                decision=decision,
                decided_by=by[:120],
                decided_at=now,
                outcome="running",
                error="",
            )
            session.add(row)
            session.commit()
            return row.id

    def withdraw_handoff(self, thread_id: str, turn: int, customer_id: str, words: str) -> bool:
        """The customer takes back the write the handoff of ``thread_id`` at ``turn`` waits
        on: the same conditional UPDATE as :meth:`claim_handoff` (status ``withdrawn``, the
        customer's words as its note) and a decision row by ``customer:<id>``. True when this
        call withdrew it or it was withdrawn already (a resume of it that failed); False when
        a person decided it first (nothing is changed then)."""
        now = _now()
        with self.sessions() as session:
            if decide_waiting(session, thread_id, turn, "withdrawn", words, now) != 1:
                session.rollback()
                status = session.scalar(
                    select(Handoff.status).where(
                        Handoff.thread_id == thread_id, Handoff.turn == turn
                    )
                )
                return status == "withdrawn"
            session.add(
                HandoffDecision(
                    thread_id=thread_id,
                    turn=turn,
                    decision="withdrawn",
                    decided_by=f"customer:{customer_id}"[:120],
                    decided_at=now,
                    outcome="done",
                    error="",
                )
            )
            session.commit()
            return True

    def note_message(self, thread_id: str, turn: int, at: str, text: str) -> str | None:
        """Append a customer's message (sent while the handoff of ``thread_id`` at ``turn``
        waits) to its context's ``customer_messages`` (``[{"at", "text"}]``, the newest
        :data:`MAX_NOTED`), where the person deciding sees it; returns the handoff's status
        (None: no such handoff). Turns of one thread run one at a time (the turn lease), so
        this read-modify-write has no concurrent writer."""
        with self.sessions() as session:
            row = session.scalar(
                select(Handoff).where(Handoff.thread_id == thread_id, Handoff.turn == turn)
            )
            if row is None or row.status != "waiting":
                return row.status if row is not None else None
            context = json.loads(row.context)
            noted = [*(context.get("customer_messages") or []), {"at": at, "text": text[:1000]}]
            context["customer_messages"] = noted[-MAX_NOTED:]
            row.context = json.dumps(context, ensure_ascii=False, default=str)
            session.commit()
            return "waiting"

    def noted_messages(self, thread_id: str, turn: int) -> list[str]:
        """The customer's messages noted (:meth:`note_message`) on the handoff of
        ``thread_id`` at ``turn``, oldest first; [] when none or no such handoff."""
        with self.sessions() as session:
            row = session.scalar(
                select(Handoff).where(Handoff.thread_id == thread_id, Handoff.turn == turn)
            )
            noted = json.loads(row.context).get("customer_messages") if row is not None else None
            return [str(m.get("text") or "") for m in noted or []]

    def _decided(self, session: Session, thread_id: str, turn: int) -> HandoffDecidedError:
        handoff = session.scalar(
            select(Handoff).where(Handoff.thread_id == thread_id, Handoff.turn == turn)
        )
        last = session.scalar(
            select(HandoffDecision)
            .where(HandoffDecision.thread_id == thread_id, HandoffDecision.turn == turn)
            .order_by(HandoffDecision.id.desc())
        )
        if last is not None and last.decision == "withdrawn":
            return HandoffWithdrawnError(
                thread_id, last.decided_by, last.decided_at.isoformat(), last.decision
            )
        if last is not None:
            return HandoffDecidedError(
                thread_id, last.decided_by, last.decided_at.isoformat(), last.decision
            )
        at = handoff.resolved_at.isoformat() if handoff and handoff.resolved_at else "unknown"
        status = handoff.status if handoff else "unknown"
        return HandoffDecidedError(thread_id, "an earlier release", at, status)

    def decided(self, thread_id: str) -> HandoffDecidedError | None:
        """The error a new decision on ``thread_id`` would get when its newest handoff is
        decided already; None when it waits (or was never handed off)."""
        with self.sessions() as session:
            handoff = session.scalar(
                select(Handoff).where(Handoff.thread_id == thread_id).order_by(Handoff.turn.desc())
            )
            if handoff is None or handoff.status == "waiting":
                return None
            return self._decided(session, thread_id, handoff.turn)

    def finish_decision(self, decision_id: int, *, error: str | None, release: bool) -> None:
        """Record how the resume of a claimed decision ended: ``done``, or ``failed`` with
        ``error``; with ``release`` the handoff waits again (the graph still waits on it, so
        the decision took no effect and a person may decide again)."""
        with self.sessions() as session:
            row = session.get(HandoffDecision, decision_id)
            if row is None:
                return
            row.outcome = "failed" if error else "done"
            row.error = (error or "")[:2000]
            if release:
                session.execute(
                    update(Handoff)
                    .where(
                        Handoff.thread_id == row.thread_id,
                        Handoff.turn == row.turn,
                        Handoff.status == row.decision,
                    )
                    .values(status="waiting", resolved_at=None)
                )
            session.commit()

    # --- thread owners ----------------------------------------------------------------------
    def bind_thread(
        self,
        thread_id: str,
        customer_id: str | None,
        channel: str = "",
        prior_owner: str | None = None,
    ) -> None:
        """Bind ``thread_id`` to ``customer_id`` (``None``: no signed-in customer) unless it is
        bound already; refuse (and record) another customer.

        ``prior_owner`` is the customer of a conversation checkpointed before it had an owner
        row (``""``: checkpointed with no customer; ``None``: no checkpoint). Such a thread is
        bound to that customer, not to the first one who names it.

        Raises:
            ThreadOwnerError: The thread belongs to another customer.
        """
        customer = customer_id or ""
        with self.sessions() as session:
            owner = session.get(ThreadOwner, thread_id)
            if owner is None:
                try:
                    first = customer if prior_owner is None else prior_owner
                    owner = ThreadOwner(thread_id=thread_id, customer_id=first, created_at=_now())
                    session.add(owner)
                    session.commit()
                    if first == customer:
                        return
                except IntegrityError:  # another process created it first: its owner counts
                    session.rollback()
                    owner = session.get(ThreadOwner, thread_id)
            assert owner is not None
            if owner.customer_id == customer:
                return
            session.add(
                ThreadRefusal(
                    thread_id=thread_id,
                    owner_id=owner.customer_id,
                    customer_id=customer,
                    channel=(channel or "")[:64],
                    at=_now(),
                )
            )
            session.commit()
        raise thread_owner_error(thread_id, customer_id)

    def refusals(self, thread_id: str | None = None) -> list[dict[str, str]]:
        """Recorded refusals (oldest first), of ``thread_id`` or all."""
        with self.sessions() as session:
            query = select(ThreadRefusal).order_by(ThreadRefusal.id)
            if thread_id is not None:
                query = query.where(ThreadRefusal.thread_id == thread_id)
            names = ("thread_id", "owner_id", "customer_id", "channel")
            return [
                {name: getattr(r, name) for name in names} | {"at": r.at.isoformat()}
                for r in session.scalars(query)
            ]

    # --- turn leases --------------------------------------------------------------------------
    def try_lease(self, thread_id: str, holder: str, lease_s: float = LEASE_S) -> bool:
        """Take the turn lease of ``thread_id`` for ``holder`` if it is free, expired, or held
        by a process of this machine that is gone (killed mid-turn: :func:`holder_gone`), so
        the thread is not blocked until the lease expires (tester7 F23). The takeover is one
        conditional UPDATE on the expiry or the dead holder's name: of two processes taking
        it at once, the database lets one."""
        now = _now()
        until = now + timedelta(seconds=lease_s)
        with self.sessions() as session:
            row = session.get(TurnLease, thread_id)
            if row is None:
                try:
                    session.add(TurnLease(thread_id=thread_id, holder=holder, expires_at=until))
                    session.commit()
                    return True
                except IntegrityError:
                    session.rollback()
                row = session.get(TurnLease, thread_id)
            free = TurnLease.expires_at < now
            if row is not None and holder_gone(row.holder):
                free = or_(free, TurnLease.holder == row.holder)
            taken = _rowcount(
                session.execute(
                    update(TurnLease)
                    .where(TurnLease.thread_id == thread_id, free)
                    .values(holder=holder, expires_at=until)
                )
            )
            session.commit()
            return taken == 1

    async def lease_turn(self, thread_id: str, wait_s: float, lease_s: float = LEASE_S) -> str:
        """Wait up to ``wait_s`` seconds for the turn lease of ``thread_id``; returns the
        holder id to give :meth:`release_turn`.

        Raises:
            TurnBusyError: Another turn held it for the whole wait.
        """
        holder = f"{self.holder}-{uuid.uuid4().hex[:6]}"  # at most 64 characters
        deadline = time.monotonic() + wait_s
        while not await asyncio.to_thread(self.try_lease, thread_id, holder, lease_s):
            if time.monotonic() >= deadline:
                raise turn_busy_error(thread_id, wait_s)
            await asyncio.sleep(POLL_S)
        return holder

    def release_turn(self, thread_id: str, holder: str) -> None:
        """Give the lease back (only ``holder``'s: an expired lease taken over stays)."""
        with self.sessions() as session:
            session.execute(
                delete(TurnLease).where(
                    TurnLease.thread_id == thread_id, TurnLease.holder == holder
                )
            )
            session.commit()


class HandoffWithdrawnError(HandoffDecidedError):
    """The customer withdrew the request before a person decided it: nothing was written, and
    a person's decision is not applied (the UI service answers 409, the CLI exits 2)."""

    def __init__(self, thread_id: str, decided_by: str, decided_at: str, decision: str) -> None:
        super().__init__(thread_id, decided_by, decided_at, decision)
        customer = decided_by.removeprefix("customer:") or "the customer"
        self.args = (
            f"the customer ({customer}) withdrew the request on thread {thread_id} at "
            f"{decided_at}, before any decision; nothing was written and this decision was "
            "not applied (orchestrator handoff list --all shows their words)",
        )


def thread_owner_error(thread_id: str, customer_id: str | None) -> ThreadOwnerError:
    """The refusal of ``customer_id`` on a thread that belongs to someone else (the owner is
    not named: that would leak it)."""
    who = f"customer {customer_id}" if customer_id else "a turn without a customer id"
    return ThreadOwnerError(
        f"thread {thread_id} belongs to another customer, so {who} cannot continue it; "
        "start a new conversation (a new thread id, or omit --thread)"
    )


def turn_busy_error(thread_id: str, wait_s: float) -> TurnBusyError:
    """The refusal of a turn that waited ``wait_s`` seconds for the one running."""
    return TurnBusyError(
        f"a turn is already running on thread {thread_id}; try again "
        f"(waited {wait_s:.3g} s; nothing of this turn ran)"
    )


def decide_waiting(
    session: Session, thread_id: str, turn: int, decision: str, note: str, now: datetime
) -> int:
    """Set the decision of the handoff of ``thread_id`` at ``turn`` if it still waits; returns
    the rows changed (1: this call decided it, 0: it was decided already). One conditional
    UPDATE, so of two racing calls the database lets one change it. The caller commits."""
    return _rowcount(
        session.execute(
            update(Handoff)
            .where(
                Handoff.thread_id == thread_id,
                Handoff.turn == turn,
                Handoff.status == "waiting",
            )
            .values(status=decision, resolved_at=now, note=note[:2000])
        )
    )


def _rowcount(result: Result[Any]) -> int:
    """Rows an UPDATE matched (``Session.execute`` is typed to return a plain ``Result``; for
    DML it returns a ``CursorResult``, which has ``rowcount``)."""
    return cast("CursorResult[Any]", result).rowcount
