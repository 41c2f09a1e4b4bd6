"""The one error tree of the project: every exception class it defines, and where it lives.

Usage mistakes (bad input, a bad data file, bad configuration) are kept apart from runtime
failures (the server, the model, the store), as pydantic-ai keeps ``UserError`` apart from its
runtime errors. Each class also subclasses the built-in that existing ``except`` blocks already
catch (in parentheses). Classes are defined in this module unless a ``[module]`` is given::

    OrchestratorError
    ├── UserError (ValueError) ................. the caller passed something invalid; fix it
    │   ├── UnknownRouteError (KeyError) ....... no workflow is registered for a route
    │   ├── InvalidTextError ................... raw text the classifier cannot read
    │   │                                        [orchestrator.classifier.inputs]
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
    │   │   ├── TargetingError ................. moderation hate-targeting cue file
    │   │   │                                    [workflows.content_moderation.targeting]
    │   │   ├── EmojiError ..................... moderation emoji-as-words file
    │   │   │                                    [workflows.content_moderation.disguise]
    │   │   ├── AddressedError ................. moderation addressed-insult list file
    │   │   │                                    [workflows.content_moderation.addressed]
    │   │   ├── GeneralisedError ............... moderation group-generalisation list file
    │   │   │                                    [workflows.content_moderation.generalised]
    │   │   ├── ConstructionsError ............. moderation construction file
    │   │   │                                    [workflows.content_moderation.constructions]
    │   │   └── ZhCueError ..................... moderation Chinese cue file
    │   │                                        [workflows.content_moderation.zh_cues]
    │   ├── ThreadOwnerError (PermissionError) .. the thread belongs to another customer
    │   ├── MixedFamiliesError ................. calls of two MoE families asked to be pooled
    │   │                                        [orchestrator.telemetry.read]
    │   ├── PluginError ........................ a command plugin does not load, or two claim
    │   │                                        one command name [orchestrator.cli.app]
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
    │   ├── PromptTooLongError ................. HTTP 400: the prompt is over the model's context
    │   └── TruncatedStreamError ............... a stream ended with no finish reason
    │                                            [orchestrator.core.client]
    ├── TelemetryError (RuntimeError) .......... the telemetry store could not be written
    ├── StorageError (RuntimeError) ............ a database file is damaged, locked, full,
    │                                            read-only or from a newer release
    ├── TurnBusyError (RuntimeError) ........... a turn is already running on that thread
    ├── AuthError (PermissionError) ............ a UI request without a valid caller token
    │                                            [orchestrator.ui.auth]
    ├── RefusedError (PermissionError) ......... a UI action the caller may not take
    │                                            (401/403/404/409) [orchestrator.ui.auth]
    ├── PartitionSearchLimitError (RuntimeError) .. the pivot subtotal search passed its
    │                                               step limit (caught inside the reader)
    │                                               [orchestrator.spreadsheet.structure]
    ├── ModelRequestsBlockedError (RuntimeError) .. a request to a real model server while
    │                                               requests are off (the unit suite)
    │                                               [orchestrator.core.client]
    ├── RequestTimeoutError (TimeoutError) .... a batch request ran past its timeout
    │                                           [orchestrator.batch.runner]
    ├── HandoffError (LookupError) ............. no handoff waits on that conversation
    │   └── HandoffDecidedError ................ another person decided that handoff already
    │       └── HandoffWithdrawnError .......... the customer withdrew the write first
    │                                            [workflows.customer_service.store.threads]
    ├── ToolError (ValueError) ................. a customer-service tool refused its call
    │   │                                        [workflows.customer_service.store.tools]
    │   └── ToolArgumentsError ................. a tool call's arguments do not validate
    │                                            [workflows.customer_service.store.tools]
    └── ServingError ........................... the serving layer
        │                                        [serving.errors]
        ├── CheckpointError (ValueError) ....... a checkpoint folder is missing or malformed
        │   │                                    [serving.errors]
        │   └── UnsupportedArchitectureError ... an MoE config of no supported family
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

    The client raises it; the gateway names the request and node on the same object
    (:meth:`at`) and lets it go on, so the status and body the client saw reach the caller.

    Attributes:
        request_id: The request the call was made for, when known.
        node: The workflow node that made the call, when known.
        status_code: The HTTP status the server answered with; None when the failure was not
            an error status (a malformed body, an error event in a stream).
        body: The error body the server sent with ``status_code`` (parsed JSON or text), when
            it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        request_id: str | None = None,
        node: str | None = None,
        status_code: int | None = None,
        body: object | None = None,
    ):
        self.message = message
        self.request_id = request_id
        self.node = node
        self.status_code = status_code
        self.body = body
        super().__init__(self._where(message))

    def _where(self, message: str) -> str:
        where = ", ".join(
            part
            for part in (
                f"request {self.request_id}" if self.request_id else "",
                f"node {self.node}" if self.node else "",
            )
            if part
        )
        return f"{message} ({where})" if where else message

    def at(self, *, request_id: str | None, node: str | None) -> ModelCallError:
        """Name the request and node the call was made for (where not named yet); returns self.

        The message (``str(exc)``) then ends with ``(request R, node N)``.
        """
        self.request_id = self.request_id or request_id
        self.node = self.node or node
        self.args = (self._where(self.message), *self.args[1:])
        return self


class PromptTooLongError(ModelCallError):
    """The server refused the prompt as longer than the model's context (vLLM's HTTP 400
    "maximum context length" / "longer than the maximum model length").

    The server is up: a caller should answer that the input is too long, not that the
    server is lost. Attributes as :class:`ModelCallError`.
    """

    #: Words of vLLM's 400 body for a prompt over ``--max-model-len`` (0.24 to 0.32).
    MARKERS = ("maximum context length", "maximum model length", "max_model_len")

    @classmethod
    def matches(cls, status_code: int | None, body: object) -> bool:
        """Whether an HTTP error with ``status_code`` and ``body`` is a prompt too long."""
        text = str(body).lower()
        return status_code == 400 and any(marker in text for marker in cls.MARKERS)


class TelemetryError(OrchestratorError, RuntimeError):
    """A telemetry row could not be written; the transaction was rolled back."""


class ThreadOwnerError(UserError, PermissionError):
    """A turn names a thread that belongs to another customer; the turn is refused (and the
    refusal recorded). The message says to start a new thread."""


class StorageError(OrchestratorError, RuntimeError):
    """A database (order store, conversations, telemetry) cannot be used: damaged, locked,
    full, read-only, or written by a newer release. The message names the file and the fix;
    build one with :func:`storage_error`."""


class TurnBusyError(OrchestratorError, RuntimeError):
    """A turn is already running on the thread (another process or task) and did not end
    within the wait; nothing of this turn ran. Send it again."""


class HandoffError(OrchestratorError, LookupError):
    """No handoff waits on that thread: it was never handed off, or it was resumed already."""


class HandoffDecidedError(HandoffError):
    """Another person (process) decided the handoff first; this decision was not applied.

    Attributes:
        decided_by: Who decided. decided_at: When (ISO 8601, UTC). decision: ``approved``
            or ``rejected``.
    """

    def __init__(self, thread_id: str, decided_by: str, decided_at: str, decision: str) -> None:
        self.decided_by, self.decided_at, self.decision = decided_by, decided_at, decision
        super().__init__(
            f"handoff on thread {thread_id} was decided already by {decided_by} at "
            f"{decided_at} ({decision}); this decision was not applied "
            "(orchestrator handoff list --all shows it)"
        )


#: What a database error says (lower case) → what is wrong with the file and what to do.
_STORAGE_KINDS = (
    (
        ("file is not a database", "malformed", "file is encrypted", "not a database"),
        "is damaged (not a readable SQLite database)",
        "move it aside (mv {file} {file}.broken) to start an empty one, or restore it from "
        "a backup",
    ),
    (
        ("database is locked", "database table is locked", "lock timeout", "busy"),
        "is locked by another process",
        "wait for that process to finish (or stop it), then run the command again",
    ),
    (
        ("disk is full", "no space left", "disk full", "database or disk is full"),
        "cannot be written: the disk is full",
        "free disk space on that file's disk, then run the command again",
    ),
    (
        ("readonly database", "read-only", "permission denied", "unable to open"),
        "cannot be opened for writing",
        "check that the file and its folder exist and are writable, or point the setting at "
        "another file",
    ),
)


def storage_error(exc: BaseException, file: str, what: str = "database") -> StorageError | None:
    """``exc`` (a sqlite3, SQLAlchemy, psycopg or ``OSError``) as one clear
    :class:`StorageError` naming ``file`` and the fix, or None when it is no storage failure
    this module knows (the caller re-raises it then).

    Args:
        exc: The error raised while reading or writing the database.
        file: The file (or URL, password hidden) as shown to the user.
        what: What the database is, e.g. ``conversations database``.
    """
    import errno

    if isinstance(exc, StorageError):
        return exc
    file = f"{what} {file}".strip()
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return StorageError(
            f"{file} cannot be written: the disk is full; free disk space on that "
            "file's disk, then run the command again"
        )
    cause: BaseException | None = exc
    text = ""
    for _ in range(4):  # SQLAlchemy wraps the driver's error in .orig
        if cause is None:
            break
        text += f" {cause}".lower()
        cause = getattr(cause, "orig", None) or cause.__cause__
    for needles, problem, fix in _STORAGE_KINDS:
        if any(needle in text for needle in needles):
            return StorageError(f"{file} {problem}; {fix.format(file=file.split()[-1])}")
    return None
