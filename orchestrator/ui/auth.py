"""Who is calling the UI service, and what they may do.

The Chainlit app (``ui/app.py``) signs each person's name, role and customer id into a short
JSON Web Token (HS256, PyJWT: a well-kept library, not a home-made signature) with a secret it
shares with this service (``ORCH_UI_SECRET``; ``orchestrator ui`` makes a random one per run
when none is set and hands it to both processes). The service trusts nothing else a request
says about its caller: a customer id in a request body is ignored, the token's is used.

Why a signed token and not the bare shared secret: the token carries the caller's identity, and
it expires (:data:`TOKEN_TTL_S`), so a token seen in a log is of little use for long.
"""

from __future__ import annotations

import time
from typing import Literal

import jwt
from pydantic import BaseModel, Field, ValidationError

from orchestrator.exceptions import OrchestratorError

#: Seconds a caller token is valid after it is made.
TOKEN_TTL_S = 300
#: The longest life a token may claim (``exp`` minus ``iat``), in seconds: a token signed
#: for longer (a mistake, or one minted by hand to last years) is refused, as is one issued
#: in the future (PyJWT checks ``iat``; the app and this service share one host's clock).
MAX_TOKEN_TTL_S = 86_400
#: The signature algorithm (a shared secret: HMAC-SHA256).
ALGORITHM = "HS256"
Role = Literal["customer", "operator"]


class AuthError(OrchestratorError, PermissionError):
    """A request without a valid caller token (HTTP 401)."""


class RefusedError(OrchestratorError, PermissionError):
    """An action the caller may not take: ``status`` 401, 403, 404 or 409, ``message`` one
    line that says why (shown to the person as it is)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Caller(BaseModel):
    """A signed-in person, as the Chainlit app vouches for them.

    Attributes:
        name: The user name they signed in with.
        role: ``customer`` (their own threads and orders) or ``operator`` (decides handoffs).
        customer_id: The customer a ``customer`` is (required for that role), else None.
        session: The Chainlit session the request comes from (the token's ``sid``): its
            uploads are the only ones the caller may name (Chainlit keeps them in
            ``.files/<session id>/``). None from a client that names none.
    """

    name: str = Field(min_length=1, max_length=64)
    role: Role
    customer_id: str | None = Field(None, max_length=16)
    session: str | None = Field(None, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")

    @property
    def key(self) -> str:
        """Who this caller is, for what is theirs alone (a report file): ``customer:<id>``
        for a customer, ``operator:<name>`` for an operator."""
        return f"{self.role}:{self.customer_id if self.role == 'customer' else self.name}"

    def owns(self, customer_id: object) -> bool:
        """Whether this caller is the customer ``customer_id`` (never true for an operator)."""
        return self.role == "customer" and customer_id == self.customer_id


def sign_caller(secret: str, caller: Caller, *, ttl_s: int = TOKEN_TTL_S) -> str:
    """A token for ``caller``, valid for ``ttl_s`` seconds (what ``ui/app.py`` sends as
    ``Authorization: Bearer <token>``)."""
    now = int(time.time())
    claims = {
        "sub": caller.name,
        "role": caller.role,
        "customer_id": caller.customer_id,
        "sid": caller.session,
        "iat": now,
        "exp": now + ttl_s,
    }
    return jwt.encode(claims, secret, algorithm=ALGORITHM)


def read_caller(secret: str, authorization: str | None) -> Caller:
    """The caller an ``Authorization`` header names.

    Raises:
        AuthError: No bearer token, a bad signature, an expired token, a token that claims
            to live longer than :data:`MAX_TOKEN_TTL_S` or was issued in the future, or a
            token whose role or customer id is malformed (a customer token must name a
            customer).
    """
    if not authorization or not authorization.startswith("Bearer "):
        raise AuthError("sign in first: the request has no caller token")
    try:
        claims = jwt.decode(
            authorization.removeprefix("Bearer ").strip(),
            secret,
            algorithms=[ALGORITHM],
            options={"require": ["exp", "iat", "sub", "role"]},
        )
        caller = Caller(
            name=claims["sub"],
            role=claims["role"],
            customer_id=claims.get("customer_id"),
            session=claims.get("sid"),
        )
    except jwt.ExpiredSignatureError as exc:
        raise AuthError("the caller token has expired; reload the page") from exc
    except (jwt.InvalidTokenError, ValidationError, KeyError) as exc:
        raise AuthError("the caller token is not valid; sign in again") from exc
    if caller.role == "customer" and not caller.customer_id:
        raise AuthError("a customer token must name the customer; sign in again")
    if int(claims["exp"]) - int(claims["iat"]) > MAX_TOKEN_TTL_S:
        raise AuthError("the caller token claims to live too long; sign in again")
    return caller
