"""Exceptions raised by the orchestrator.

Usage mistakes (bad input, bad configuration) are distinct from runtime failures (the server,
the model, the store). Each class also subclasses the built-in that existing ``except`` blocks
already catch::

    OrchestratorError
    ├── UserError (ValueError) ............. the caller passed something invalid; fix the input
    │   └── UnknownRouteError (KeyError) ... no workflow is registered for a route
    ├── ServerUnavailableError (ConnectionError) .. the vLLM server cannot be reached
    ├── ModelCallError (RuntimeError) ...... the server answered, but not usably
    └── TelemetryError (RuntimeError) ...... the telemetry store could not be written

Request validation itself raises :class:`pydantic.ValidationError` (a ``ValueError``), which
names the field and the rule it broke. Serving-side errors (checkpoint, launcher, routing
decode) live in :mod:`serving.errors`.
"""

from __future__ import annotations


class OrchestratorError(Exception):
    """Base class of every error the orchestrator raises on purpose."""


class UserError(OrchestratorError, ValueError):
    """The caller used the framework wrongly; the message says how to fix it."""


class UnknownRouteError(UserError, KeyError):
    """A route was dispatched for which no workflow is registered."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ServerUnavailableError(OrchestratorError, ConnectionError):
    """The model server did not answer.

    Attributes:
        url: The base URL that was tried.
        hint: The command that starts a server there.
    """

    def __init__(self, url: str, reason: str, hint: str = "orchestrator serve") -> None:
        self.url = url
        self.reason = reason
        self.hint = hint
        super().__init__(
            f"vLLM server at {url} is unreachable ({reason}). Start one with `{hint}`, "
            f"or point ORCH_SERVER_URL at a running server."
        )


class ModelCallError(OrchestratorError, RuntimeError):
    """A model call failed after the server was reached (HTTP error, malformed response).

    Attributes:
        request_id: The request the call was made for, when known.
        node: The workflow node that made the call, when known.
    """

    def __init__(self, message: str, *, request_id: str | None = None, node: str | None = None):
        self.request_id = request_id
        self.node = node
        where = ", ".join(
            part
            for part in (
                f"request {request_id}" if request_id else "",
                f"node {node}" if node else "",
            )
            if part
        )
        super().__init__(f"{message} ({where})" if where else message)


class TelemetryError(OrchestratorError, RuntimeError):
    """A telemetry row could not be written; the transaction was rolled back."""
