"""How often a sign-in may fail, and from where (the password callback of ``ui/app.py``).

Guessing stays limited without giving anyone a way to lock a person out. Until ui12 a user
name with five failed sign-ins from anywhere was refused for five minutes, right password or
not, so anyone could keep an operator out with five wrong passwords. Now:

* a **(user name, client address)** pair with :data:`FAILS_ALLOWED` failed sign-ins within
  :data:`WINDOW` is refused, right password or not, until its failures leave the window: the
  guesser's own address is held, not the name's owner elsewhere;
* a **client address** with :data:`ADDRESS_FAILS_ALLOWED` failed sign-ins within the window,
  whatever the names, is refused the same way (one address trying a password on many names);
* a **user name**'s failures from all addresses slow each sign-in of that name (right or wrong,
  so the delay tells nothing): past :data:`FAILS_ALLOWED` failures in the window, each further
  one doubles the wait from :data:`DELAY_BASE_S` up to :data:`DELAY_CAP_S`. Many addresses
  guessing one name are slowed; its owner still signs in, at most :data:`DELAY_CAP_S` later.

The client address is the connection's, as uvicorn gives it (``X-Forwarded-For`` only from a
proxy it trusts: by default one on 127.0.0.1), read by :class:`ClientAddress`, an ASGI
middleware on Chainlit's server, because Chainlit hands the callback only the name and the
password. The windows are counted by the ``limits`` library (moving windows in this process's
memory; entries expire by themselves, and a restart forgets them).
"""

from __future__ import annotations

import contextvars
from typing import Any

from limits import RateLimitItem, parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

#: Failed sign-ins one (user name, client address) pair may have within the window.
FAILS_ALLOWED = 5
#: Failed sign-ins one client address may have within the window, over all user names.
ADDRESS_FAILS_ALLOWED = 30
#: The window the failures are counted in.
WINDOW = "5 minutes"
#: The first wait past :data:`FAILS_ALLOWED` failures of a name (seconds); doubled per failure.
DELAY_BASE_S = 0.5
#: The longest wait (seconds): what the name's owner may have to wait while it is guessed.
DELAY_CAP_S = 8.0

_PAIR = parse(f"{FAILS_ALLOWED}/{WINDOW}")
_ADDRESS = parse(f"{ADDRESS_FAILS_ALLOWED}/{WINDOW}")
#: A user name's failures from everywhere: counted (for the delay), never refused.
_NAME = parse(f"100000/{WINDOW}")
_LIMITER = MovingWindowRateLimiter(MemoryStorage())

#: The client address of the HTTP request being served ("" outside one).
CLIENT: contextvars.ContextVar[str] = contextvars.ContextVar("sign_in_client", default="")


def _count(item: RateLimitItem, *keys: str) -> int:
    return item.amount - _LIMITER.get_window_stats(item, *keys).remaining


def delay_s(name: str) -> float:
    """The wait before answering a sign-in of ``name`` (seconds; 0 for a name with at most
    :data:`FAILS_ALLOWED` recent failures)."""
    over = _count(_NAME, name) - FAILS_ALLOWED
    return 0.0 if over < 0 else min(DELAY_BASE_S * 2**over, DELAY_CAP_S)


def refused(name: str, address: str) -> bool:
    """Whether a sign-in of ``name`` from ``address`` is refused, right password or not."""
    return not (_LIMITER.test(_PAIR, name, address) and _LIMITER.test(_ADDRESS, address))


def failed(name: str, address: str) -> None:
    """Count a failed sign-in of ``name`` from ``address``."""
    _LIMITER.hit(_PAIR, name, address)
    _LIMITER.hit(_ADDRESS, address)
    _LIMITER.hit(_NAME, name)


def forget() -> None:
    """Forget every failure (tests)."""
    _LIMITER.storage.reset()


def install(app: Any) -> None:
    """Add :class:`ClientAddress` to Chainlit's server ``app`` once (before it starts: a
    module reloaded while it runs finds it there already)."""
    if not any(m.cls.__name__ == ClientAddress.__name__ for m in app.user_middleware):
        app.add_middleware(ClientAddress)


class ClientAddress:
    """ASGI middleware that keeps each HTTP request's client address in :data:`CLIENT`
    while the request is served (the sign-in callback reads it)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        token = CLIENT.set(str(client[0]) if client else "")
        try:
            await self.app(scope, receive, send)
        finally:
            CLIENT.reset(token)
