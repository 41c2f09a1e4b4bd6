"""Harbor Assistant's client of the framework's event service (``orchestrator.ui.service``):
the one HTTP connection, the caller token every request carries, the service's events for a
turn, and the escaping every shown text goes through (part of ``ui/app.py``; runs in
``.venv-ui``)."""

from __future__ import annotations

import json
import os
import re
import time
import unicodedata
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import chainlit as cl
import httpx
import jwt

SERVICE = os.environ.get("ORCH_UI_SERVICE_URL", "http://127.0.0.1:8765").rstrip("/")
SECRET = os.environ.get("ORCH_UI_SECRET", "")
#: The user file (``orchestrator ui-user`` writes it): read at each sign-in and each request.
USERS = Path(os.environ.get("ORCH_UI_USERS", "users.json"))
#: The roles a person may have.
ROLES = ("customer", "operator")
#: Seconds the app keeps an idle connection to the service.
KEEPALIVE_S = 600.0
UNREACHABLE = "the assistant's service is not answering right now; please try again in a minute"
#: What Markdown or HTML reads as mark-up (``=``: a line of them under text makes it a heading).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&=])")

_http: httpx.AsyncClient | None = None


def http() -> httpx.AsyncClient:
    """The app's one HTTP client to the service (made on first use, in Chainlit's loop)."""
    global _http
    if _http is None or _http.is_closed:
        _http = httpx.AsyncClient(
            timeout=httpx.Timeout(600, connect=10),
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_S),
        )
    return _http


def md(text: object) -> str:
    """``text`` with every Markdown/HTML special character backslash-escaped, and each Unicode
    format character (bidi overrides and isolates, zero-width characters: invisible, and a
    right-to-left override shows the rest of a line reversed) written as ``<U+202E>``, so a
    person reads what was written (tester14 G14)."""
    text = str(text)
    if not text.isascii():
        text = "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) == "Cf" else c for c in text)
    return _MD_SPECIAL.sub(r"\\\1", text)


def safe_name(name: object, limit: int = 60) -> str:
    """A file name fit to show and to name a download: only its last part, control and path
    characters dropped, cut to ``limit`` characters (keeping the extension)."""
    base = re.split(r"[\\/]", str(name))[-1]
    base = re.sub(r"[\x00-\x1f\x7f<>:\"|?*]+", "", base).strip(" .") or "file"
    stem, ext = os.path.splitext(base)
    if len(base) > limit:
        base = stem[: max(1, limit - len(ext) - 1)] + "…" + ext[:10]
    return base


def read_users() -> dict[str, dict[str, Any]]:
    """The user file's users; ``{}`` when it is missing or broken (nobody can sign in), and
    without entries that are not objects (a hand-edited file: no sign-in then fails with a
    traceback)."""
    try:
        users = json.loads(USERS.read_text(encoding="utf-8")).get("users", {})
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(users, dict):
        return {}
    return {name: user for name, user in users.items() if isinstance(user, dict)}


def current(name: str) -> dict[str, Any]:
    """``name`` as the user file has them now: ``{"name", "role", "customer_id"}``; role None
    when the file no longer has them as a customer with a customer id or an operator.

    Read at every request, not taken from the sign-in: a person removed or given another role
    or customer id with ``orchestrator ui-user`` while signed in kept the old rights until
    their session ended (tester13 N2: a removed operator approved a refund)."""
    user = read_users().get(name) or {}
    role = user.get("role") if user.get("role") in ROLES else None
    customer = user.get("customer_id") if role == "customer" else None
    if role == "customer" and not customer:
        role = None
    return {"name": name, "role": role, "customer_id": customer}


def me() -> dict[str, Any]:
    """The signed-in person as the user file has them now (:func:`current`)."""
    user = cl.context.session.user or cl.user_session.get("user")
    return current(str(getattr(user, "identifier", "")))


def token(who: dict[str, Any]) -> str:
    """A caller token for the service (``orchestrator.ui.auth``: HS256, five minutes)."""
    now = int(time.time())  # the claims orchestrator.ui.auth.read_caller requires
    claims = {
        "sub": who["name"],
        "role": who["role"],
        "customer_id": who["customer_id"],
        # the session whose uploads are the caller's (Chainlit: .files/<session id>/)
        "sid": cl.context.session.id,
        "iat": now,
        "exp": now + 300,
    }
    return jwt.encode(claims, SECRET, algorithm="HS256")


def auth() -> dict[str, str]:
    """The ``Authorization`` header of a request to the service; none (the service answers
    401) for a person the user file no longer has."""
    who = me()
    return {"Authorization": f"Bearer {token(who)}"} if who["role"] else {}


def service_error(status: int, body: bytes) -> str:
    """The service's one-line error of a non-200 answer (never a raw page)."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        error = None
    return str(error) if error else f"the service answered {status}; please try again"


async def call(method: str, path: str, **kw: Any) -> tuple[int, Any]:
    """One request to the service: ``(status, JSON body)``; ``(0, {"error": ...})`` when it
    cannot be reached, ``(status, {"error": ...})`` for a body that is not JSON."""
    try:
        response = await http().request(method, f"{SERVICE}{path}", headers=auth(), **kw)
    except httpx.HTTPError:
        return 0, {"error": UNREACHABLE}
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, {"error": service_error(response.status_code, b"")}


async def events(payload: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """The framework's events for one turn, as they arrive; a service that cannot be reached,
    an error status or a line that is not JSON ends the turn with one ``error`` event."""
    try:
        async with http().stream(
            "POST", f"{SERVICE}/api/turn", json=payload, headers=auth()
        ) as response:
            if response.status_code != 200:
                yield {
                    "kind": "error",
                    "error": service_error(response.status_code, await response.aread()),
                }
                return
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except ValueError:
                    yield {"kind": "error", "error": "the service sent a broken answer"}
                    return
    except httpx.HTTPError:
        yield {"kind": "error", "error": UNREACHABLE}


async def fetch_file(name: str) -> tuple[int, bytes]:
    try:
        response = await http().get(f"{SERVICE}/api/files/{name}", headers=auth(), timeout=60)
    except httpx.HTTPError:
        return 0, b""
    return response.status_code, response.content
