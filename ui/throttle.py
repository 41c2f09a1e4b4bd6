"""How often a sign-in may be tried, and from where (the password callback of ``ui/app.py``).

Guessing stays limited without giving anyone a way to lock a person out where they usually
sign in. Until ui12 a user name with five failed sign-ins from anywhere was refused for five
minutes, right password or not, so anyone could keep an operator out with five wrong passwords.
Now, within :data:`WINDOW`:

* a **(user name, client address)** pair with :data:`FAILS_ALLOWED` failed sign-ins is
  refused, right password or not, until its failures leave the window: the guesser's own
  address is held;
* a **client address** with :data:`ADDRESS_FAILS_ALLOWED` failed sign-ins, whatever the
  names, is refused the same way (one address trying a password on many names);
* a **user name** takes :data:`NAME_ATTEMPTS_ALLOWED` attempts from addresses it has not
  signed in from before; past that, such addresses are refused for it. An attempt is counted
  when it starts, before bcrypt, so guesses sent in parallel from many addresses count too
  (tester12 J: a hold-back per answer did not limit them). An address the name signed in from
  within :data:`TRUST_S` is **known** and is not held by the name's count: the owner still
  signs in where they usually do while the name is being guessed elsewhere.

A refused attempt is answered at once, without bcrypt (the answer is the same "wrong" either
way; only the throttle's state shows, never the password's), so a flood costs no hashing.

The client address is the connection's, as uvicorn gives it, read by :class:`ClientAddress`,
an ASGI middleware on Chainlit's server, because Chainlit hands the callback only the name and
the password. uvicorn takes ``X-Forwarded-For`` from the proxies its ``FORWARDED_ALLOW_IPS``
names, and when that is unset it trusts 127.0.0.1 and ::1: anyone on this host could then send
any address and escape the per-address counts (closing11). :func:`install` makes the default
no proxy at all (``FORWARDED_ALLOW_IPS=""``), so the operator names a reverse proxy's address
to trust it (``orchestrator ui --forwarded-allow-ips``, or the variable; docs/ui.md).

The windows are counted by the ``limits`` library (moving windows in this process's
memory; entries expire by themselves). Known addresses are in memory too: a restart forgets
them, and the counts.
"""

from __future__ import annotations

import contextvars
import os
import time
from typing import Any

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

#: Failed sign-ins one (user name, client address) pair may have within the window.
FAILS_ALLOWED = 5
#: Failed sign-ins one client address may have within the window, over all user names.
ADDRESS_FAILS_ALLOWED = 30
#: Attempts a user name takes within the window from addresses it is not known at.
NAME_ATTEMPTS_ALLOWED = 20
#: The window the failures and attempts are counted in.
WINDOW = "5 minutes"
#: How long an address a name signed in from stays known for it (seconds: 30 days).
TRUST_S = 30 * 86_400.0
#: The most known addresses kept per name (the latest).
KNOWN_PER_NAME = 10

_PAIR = parse(f"{FAILS_ALLOWED}/{WINDOW}")
_ADDRESS = parse(f"{ADDRESS_FAILS_ALLOWED}/{WINDOW}")
_NAME = parse(f"{NAME_ATTEMPTS_ALLOWED}/{WINDOW}")
_LIMITER = MovingWindowRateLimiter(MemoryStorage())
#: user name → {address: when it last signed in there (time.monotonic())}
_KNOWN: dict[str, dict[str, float]] = {}

#: uvicorn's variable: the proxies whose ``X-Forwarded-For`` it believes (comma-separated
#: addresses or networks; "" none, this app's default; "*" any).
FORWARDED_ALLOW_IPS = "FORWARDED_ALLOW_IPS"
#: The client address of the HTTP request being served ("" outside one).
CLIENT: contextvars.ContextVar[str] = contextvars.ContextVar("sign_in_client", default="")


def known(name: str, address: str) -> bool:
    """Whether ``name`` signed in from ``address`` within :data:`TRUST_S`."""
    at = _KNOWN.get(name, {}).get(address)
    return at is not None and time.monotonic() - at < TRUST_S


def admit(name: str, address: str) -> bool:
    """Whether a sign-in of ``name`` from ``address`` may be checked; False: refuse it, right
    password or not. Counts it against the name when ``address`` is not known for it."""
    if not (_LIMITER.test(_PAIR, name, address) and _LIMITER.test(_ADDRESS, address)):
        return False
    return known(name, address) or _LIMITER.hit(_NAME, name)


def failed(name: str, address: str) -> None:
    """Count a failed sign-in of ``name`` from ``address``."""
    _LIMITER.hit(_PAIR, name, address)
    _LIMITER.hit(_ADDRESS, address)


def signed_in(name: str, address: str) -> None:
    """Remember ``address`` as known for ``name`` (the latest :data:`KNOWN_PER_NAME`)."""
    places = _KNOWN.setdefault(name, {})
    places.pop(address, None)
    places[address] = time.monotonic()
    while len(places) > KNOWN_PER_NAME:
        del places[next(iter(places))]


def forget() -> None:
    """Forget every count and known address (tests)."""
    _LIMITER.storage.reset()
    _KNOWN.clear()


def install(app: Any) -> None:
    """Add :class:`ClientAddress` to Chainlit's server ``app`` once (before it starts: a
    module reloaded while it runs finds it there already), and make uvicorn trust no proxy's
    ``X-Forwarded-For`` unless ``FORWARDED_ALLOW_IPS`` is set (``chainlit run`` loads this
    app before it makes uvicorn's config, which reads the variable)."""
    os.environ.setdefault(FORWARDED_ALLOW_IPS, "")
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
