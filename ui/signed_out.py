"""Session tokens ended by a sign-out (tester15 T15-9).

Chainlit's session token is a stateless JWT (HS256 over ``CHAINLIT_AUTH_SECRET``), and its
``POST /logout`` only clears the browser's cookie: a copy of the cookie kept from before went
on signing in as that user, history and chat included, until the token expired. Chainlit keeps
no server-side session that could be ended, so this module keeps the sign-outs instead:

* :func:`sign_out` (the ``on_logout`` callback of ``app.py``) records the SHA-256 of the
  token the request carried, with the token's expiry, in a SQLite file beside the user file
  (shared by every UI process on the host; stdlib ``sqlite3``, one table, no migrations);
* :class:`RefuseSignedOut`, ASGI middleware on Chainlit's server, answers any HTTP request
  (401) or socket connection (closed) that carries a recorded token. Rows are dropped once
  their token has expired, when the next sign-out is recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any

import jwt
from chainlit.auth import get_token_from_cookies

#: The file of signed-out tokens (``$ORCH_UI_SIGNED_OUT``, default beside the user file).
ENV = "ORCH_UI_SIGNED_OUT"
_REFUSED = json.dumps({"detail": "This session was signed out: sign in again."}).encode()


def _db(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=10)
    con.execute("create table if not exists signed_out (sha text primary key, expires real)")
    return con


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The session token of a request's raw ASGI ``headers``: Chainlit's cookie (chunked or
    not), else an ``Authorization: Bearer`` header; None when there is neither."""
    cookies: dict[str, str] = {}
    for name, value in headers:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
        elif name.lower() == b"cookie":
            try:
                jar = SimpleCookie(value.decode("latin-1"))
            except CookieError:  # a malformed header: Chainlit refuses it itself
                continue
            cookies.update({k: m.value for k, m in jar.items()})
    return get_token_from_cookies(cookies)


def sign_out(path: Path, token: str | None) -> None:
    """Record ``token`` as signed out until it expires (its ``exp``; a day when unreadable)."""
    if not token:
        return
    try:
        expires = float(jwt.decode(token, options={"verify_signature": False})["exp"])
    except (jwt.PyJWTError, KeyError, TypeError, ValueError):
        expires = time.time() + 86400
    with _db(path) as con:
        con.execute("delete from signed_out where expires < ?", (time.time(),))
        con.execute("insert or replace into signed_out values (?, ?)", (_sha(token), expires))
    con.close()


def is_signed_out(path: Path, token: str) -> bool:
    """Whether ``token`` was signed out (and has not expired since)."""
    if not path.exists():
        return False
    con = _db(path)
    try:
        row = con.execute("select expires from signed_out where sha = ?", (_sha(token),))
        found = row.fetchone()
    finally:
        con.close()
    return found is not None and found[0] >= time.time()


class RefuseSignedOut:
    """ASGI middleware: a request or socket connection with a signed-out token is refused."""

    def __init__(self, app: Any, path: Path | None = None) -> None:
        self.app = app
        self.path = path or Path(os.environ.get(ENV) or "ui_signed_out.db")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        token = token_of(scope.get("headers", [])) if scope["type"] != "lifespan" else None
        if token is None or not is_signed_out(self.path, token):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4401})
        else:
            start = {"type": "http.response.start", "status": 401}
            await send({**start, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": _REFUSED})


def install(app: Any, path: Path) -> None:
    """Add :class:`RefuseSignedOut` over ``path`` to Chainlit's server ``app`` once."""
    os.environ.setdefault(ENV, str(path))
    if not any(m.cls.__name__ == RefuseSignedOut.__name__ for m in app.user_middleware):
        app.add_middleware(RefuseSignedOut, path=path)
