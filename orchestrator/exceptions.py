"""The one error tree of the project: every exception class it defines, and where it lives.

Usage mistakes (bad input, a bad data file, bad configuration) are kept apart from runtime
failures (the server, the model, the store), as pydantic-ai keeps ``UserError`` apart from its
runtime errors. Each class also subclasses the built-in that existing ``except`` blocks already
catch (in parentheses). Classes are defined in this module unless a ``[module]`` is given::

    OrchestratorError
    ├── UserError (ValueError) ................. the caller passed something invalid; fix it
    │   ├── UnknownRouteError (KeyError) ....... no workflow is registered for a route
    │   ├── DataFileError ...................... a data file is invalid: ``file:line: reason``
    │   │   ├── RulesError ..................... classifier rules or calibration file
    │   │   │                                    [orchestrator.classifier.loader]
    │   │   ├── LexiconError ................... moderation lexicon folder or term file
    │   │   │                                    [workflows.content_moderation.lexicon]
    │   │   ├── PolicyError .................... moderation policy file
    │   │   │                                    [workflows.content_moderation.policy]
    │   │   ├── MentionError ................... moderation mention-cue file
    │   │   │                                    [workflows.content_moderation.mention]
    │   │   ├── ScorerError .................... moderation risk-scorer file
    │   │   │                                    [workflows.content_moderation.scorer]
    │   │   └── TargetingError ................. moderation hate-targeting cue file
    │   │                                        [workflows.content_moderation.targeting]
    │   └── SpreadsheetError ................... a spreadsheet cannot be turned into tables
    │       │                                    [orchestrator.spreadsheet.errors]
    │       ├── UnsupportedFileError ........... not a spreadsheet, or an unsupported format
    │       │                                    [orchestrator.spreadsheet.errors]
    │       ├── PasswordProtectedError ......... encrypted workbook
    │       │                                    [orchestrator.spreadsheet.errors]
    │       ├── CorruptFileError ............... a spreadsheet, but damaged or unparseable
    │       │                                    [orchestrator.spreadsheet.errors]
    │       ├── EmptyWorkbookError ............. no sheet has a single value
    │       │                                    [orchestrator.spreadsheet.errors]
    │       └── SpreadsheetTooLargeError ....... over a reading limit (rows, cells)
    │                                            [orchestrator.spreadsheet.errors]
    ├── ServerUnavailableError (ConnectionError) .. the vLLM server cannot be reached
    ├── ModelCallError (RuntimeError) .......... the server answered, but not usably
    ├── TelemetryError (RuntimeError) .......... the telemetry store could not be written
    ├── ModelRequestsBlockedError (RuntimeError) .. a request to a real model server while
    │                                               requests are off (the unit suite)
    │                                               [orchestrator.core.client]
    ├── RequestTimeoutError (TimeoutError) .... a batch request ran past its timeout
    │                                           [orchestrator.batch.runner]
    ├── HandoffError (LookupError) ............. no handoff waits on that conversation
    │                                            [workflows.customer_service.graph]
    ├── ToolError (ValueError) ................. a customer-service tool refused its call
    │   │                                        [workflows.customer_service.store.tools]
    │   └── ToolArgumentsError ................. a tool call's arguments do not validate
    │                                            [workflows.customer_service.store.tools]
    └── ServingError ........................... the serving layer
        │                                        [serving.errors]
        ├── CheckpointError (ValueError) ....... a checkpoint folder is missing or malformed
        │                                        [serving.errors]
        ├── ServerStartError (RuntimeError) .... the vLLM server exited or never became healthy
        │                                        [serving.errors]
        └── ExpertRoutingDecodeError (ValueError) .. a server's expert-routing payload could
                                                     not be decoded [serving.errors]

``tests/unit/test_exceptions.py`` imports every module of ``orchestrator``, ``serving``,
``skills`` and ``workflows`` and checks that each exception class it finds subclasses
:class:`OrchestratorError` and is drawn above, under its parent, with its built-in bases and
its module.

Request validation itself raises :class:`pydantic.ValidationError` (a ``ValueError``), which
names the field and the rule it broke.

This module imports nothing from the project, so every layer may import it.
"""

from __future__ import annotations

from pathlib import Path


class OrchestratorError(Exception):
    """Base class of every error the orchestrator raises on purpose."""


class UserError(OrchestratorError, ValueError):
    """The caller used the framework wrongly; the message says how to fix it."""


class UnknownRouteError(UserError, KeyError):
    """A route was dispatched for which no workflow is registered."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class DataFileError(UserError):
    """A data file (TOML rules, calibration, lexicon, policy) is invalid.

    The message is ``{path}:{line}: {reason}``, or ``{path}: {reason}`` when the line is not
    known, so editors and terminals can jump to the spot.

    Attributes:
        path: The file (or folder) that is wrong.
        line: 1-based line of the problem, or None when unknown.
        reason: What is wrong and how to fix it.
    """

    def __init__(self, path: Path | str, line: int | None, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}" if line else f"{path}: {reason}")


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
