"""One turn of a conversation at a time, for its own customer only.

:class:`TurnGuard` is what :meth:`CustomerServiceWorkflow.turn_guard
<workflows.customer_service.graph.CustomerServiceWorkflow.turn_guard>` enters around every turn
and every resume of a thread:

1. the thread's owner: with an order store, bound in ``cs_threads`` at the thread's first turn
   (a primary-key insert, atomic across processes; see
   :mod:`workflows.customer_service.store.threads`); without one (a batch's in-memory
   conversations) the ``customer_id`` of the checkpointed state. Another customer is refused
   with :class:`~orchestrator.exceptions.ThreadOwnerError`;
2. an ``asyncio.Lock`` per thread (two calls in one process);
3. with an order store, the thread's turn lease (two processes).

Both waits together are bounded by ``wait_s``; past it the turn is refused with
:class:`~orchestrator.exceptions.TurnBusyError` ("a turn is already running on thread X; try
again") before anything of it ran, so a turn is never half-run nor dropped silently.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.threads import thread_owner_error, turn_busy_error

#: Seconds a turn waits for the turn running on its thread before it is refused.
TURN_WAIT_S = 30.0


class TurnGuard:
    """Owner check and turn serialisation for one workflow.

    Args:
        store: The order store (owners, leases), or None (in-process only).
        state_owner: Reads the customer id of a thread's checkpointed state (None when the
            thread is new); used without a store.
        wait_s: The bound on the wait for a running turn, in seconds.
    """

    def __init__(
        self,
        store: OrderStore | None,
        state_owner: Callable[[str], Awaitable[tuple[bool, str | None]]],
        *,
        wait_s: float = TURN_WAIT_S,
    ) -> None:
        self.store = store
        self.state_owner = state_owner
        self.wait_s = wait_s
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def check_owner(self, thread_id: str, customer_id: str | None, channel: str) -> None:
        """Bind a new thread to ``customer_id``, or refuse another customer.

        Raises:
            ThreadOwnerError: The thread belongs to another customer (recorded in
                ``cs_thread_refusals`` with a store).
        """
        exists, owner = await self.state_owner(thread_id)
        if self.store is not None:  # a checkpoint with no owner row yet: its customer owns it
            prior = (owner or "") if exists else None
            coordination = self.store.coordination
            await asyncio.to_thread(
                coordination.bind_thread, thread_id, customer_id, channel, prior
            )
            return
        if exists and (owner or None) != (customer_id or None):
            raise thread_owner_error(thread_id, customer_id)

    @asynccontextmanager
    async def turn(
        self, thread_id: str, customer_id: str | None = None, *, channel: str = "", owner: bool
    ) -> AsyncIterator[None]:
        """Hold the thread for one turn (``owner``: check the customer first).

        Raises:
            ThreadOwnerError: See :meth:`check_owner`.
            TurnBusyError: The running turn did not end within ``wait_s``.
        """
        if owner:
            await self.check_owner(thread_id, customer_id, channel)
        lock = self._locks.get(thread_id)
        if lock is None:
            lock = self._locks[thread_id] = asyncio.Lock()
        deadline = time.monotonic() + self.wait_s
        try:
            await asyncio.wait_for(lock.acquire(), self.wait_s)
        except TimeoutError:
            raise turn_busy_error(thread_id, self.wait_s) from None
        try:
            holder: Any = None
            store = self.store
            if store is not None:
                left = max(0.0, deadline - time.monotonic())
                holder = await store.coordination.lease_turn(thread_id, left)
            try:
                yield
            finally:
                if store is not None and holder is not None:
                    await asyncio.to_thread(store.coordination.release_turn, thread_id, holder)
        finally:
            lock.release()
