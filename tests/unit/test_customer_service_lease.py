"""A turn lease whose holder was killed (``kill -9`` mid-reply) is taken over at once, on
SQLite and PostgreSQL (tester7 F23: the thread was blocked for the lease's 5 minutes).

The holder's name says which machine, pid and process start it is (``host:pid:start:…``): a
holder of this machine that runs no more is gone; a live one, one of another machine and one
named in the old way (no host) still block until the lease expires. Two processes that take a
dead holder's lease at once get it exactly once.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.threads import HOST, holder_gone, turn_busy_error

sys.path.insert(0, str(Path(__file__).parent))
from postgres_server import PostgresServer

#: A child that takes the lease of thread ``t`` in the store at argv[1], says so, and waits.
_HOLD = (
    "import sys, time\n"
    "from workflows.customer_service.store import OrderStore\n"
    "c = OrderStore(sys.argv[1]).coordination\n"
    "print(c.try_lease('t', c.holder + '-x'), flush=True)\n"
    "time.sleep(600)\n"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: Any, orders_url: Callable[[int, int], str]) -> str:
    if request.param == "sqlite":
        return orders_url(4, 1)
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database(f"lease_{uuid.uuid4().hex[:12]}")


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_killed_holder_is_taken_over_at_once_a_live_one_blocks(
    orders_url: Callable[[int, int], str],
) -> None:
    url = orders_url(4, 1)  # SQLite only: the takeover's SQL runs on both backends below
    store = OrderStore(url)
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD, url], stdout=subprocess.PIPE, text=True, cwd=Path.cwd()
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "True"
        assert not store.coordination.try_lease("t", "me")  # the holder runs: it blocks
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert store.coordination.try_lease("t", "me")  # gone: taken now, not in 5 minutes
        assert not store.coordination.try_lease("t", "someone-else")
    finally:
        child.kill()
        child.wait()


def test_only_a_gone_holder_of_this_machine_is_taken_over(url: str) -> None:
    coordination = OrderStore(url).coordination
    dead = _dead_pid()
    cases = {
        f"other-host~0123abcd:{dead}:1:abcdef01": False,  # another machine: cannot tell
        f"{dead}-abcdef01-123456": False,  # the old name (no host)
        "another-process": False,
        coordination.holder: False,  # this very process
        f"{HOST}:{dead}:1:abcdef01": True,  # gone
        f"{HOST}:1:1:abcdef01": True,  # pid 1 runs, but it started later than that: not it
    }
    for n, (holder, gone) in enumerate(cases.items()):
        assert holder_gone(holder) is gone, holder
        assert coordination.try_lease(f"c{n}", holder)
        assert coordination.try_lease(f"c{n}", "me") is gone, holder


def test_two_takers_of_a_dead_holders_lease_get_it_exactly_once(url: str) -> None:
    # two stores, so two engines and connections: the database sees two clients racing, as
    # it would two processes (spawning two processes costs ~40 s of CI on this machine)
    takers = [OrderStore(url).coordination for _ in range(2)]
    threads = [f"race-{n}" for n in range(12)]
    dead = f"{HOST}:{_dead_pid()}:1:abcdef01"
    for thread in threads:
        assert takers[0].try_lease(thread, dead)
    barrier = threading.Barrier(2)

    def take_all(n: int) -> list[str]:
        barrier.wait(timeout=60)
        return [t for t in threads if takers[n].try_lease(t, f"taker-{n}")]

    with ThreadPoolExecutor(2) as pool:
        taken = list(pool.map(take_all, range(2)))
    assert sorted(taken[0] + taken[1]) == sorted(threads)  # each exactly once


def test_the_busy_error_gives_the_wait_in_few_digits() -> None:
    assert "(waited 30 s;" in str(turn_busy_error("t", 29.99994))
    assert "(waited 0.3 s;" in str(turn_busy_error("t", 0.3))
