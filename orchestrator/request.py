"""The unit of work: a :class:`Request` handed to the framework by an app or a batch job."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePath

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator.exceptions import UserError

#: Longest request text accepted, in characters (1 MiB of ASCII). Longer text is refused
#: with a validation error rather than truncated silently.
MAX_TEXT_CHARS = 1_000_000
#: Who decides a handoff (``handoff resume --by``, the UI's operator): a user name as
#: ``orchestrator ui-user`` takes one (one line, 1-64 letters, digits or _ . @ -).
DECIDER = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
#: Deciders the audit writes for what no person decided (the automatic policy, the system).
_NOT_A_PERSON = frozenset({"policy", "system", "auto", "automatic"})
#: A name that reads as a customer's or an order's id (C00001, ORD-100057; ids are upper case, a
#: login name such as ab1234 is not): never a person's.
_AN_ID = re.compile(r"[A-Z]{1,4}-?\d{4,}")


def decider_name(by: str) -> str:
    """``by`` (stripped) as the name the audit records for who decided a handoff.

    Raises:
        UserError: It is not a user name (:data:`DECIDER`: blank, several lines, spaces,
            over 64 characters), or it reads as no person: ``policy`` and the like, or an
            id (``C00001``: the record would read as the customer approving themselves).
    """
    name = by.strip()
    if not DECIDER.fullmatch(name):
        raise UserError(
            "name who decided (--by NAME): a decision needs a non-blank name, a user name "
            "of 1-64 letters, digits or _ . @ - on one line"
        )
    if name.casefold() in _NOT_A_PERSON or _AN_ID.fullmatch(name):
        raise UserError(
            f"--by {name!r} does not name a person (it reads as the policy or an id); give "
            "the decider's own user name"
        )
    return name


#: Longest note a person writes with a handoff decision (``handoff resume --note``), in
#: characters: it goes to the customer's record, a 2,000-character column.
MAX_NOTE_CHARS = 2000


def decision_note(note: str) -> str:
    """``note`` unchanged when it can go with a handoff decision: at most
    :data:`MAX_NOTE_CHARS` characters of valid Unicode (``handoff resume`` checks it, with
    :func:`decider_name`, before it reaches the store or a model server).

    Raises:
        UserError: It is longer, or holds a lone surrogate (bytes that are not UTF-8 on the
            command line); the message says which, in one line.
    """
    if len(note) > MAX_NOTE_CHARS:
        raise UserError(f"the note is over {MAX_NOTE_CHARS:,} characters; shorten it")
    try:
        _valid_unicode(note)
    except ValueError as exc:
        raise UserError(f"--note {exc}") from None
    return note


def _valid_unicode(value: object) -> object:
    """``value`` when every string in it (keys too) encodes as UTF-8, else ValueError.

    A lone surrogate (``"\\ud800"``) is a Python ``str`` but no Unicode text: it cannot be
    written to JSON, a database or a socket, so it is refused at the door rather than failing
    later in telemetry.
    """
    strings = (
        [value]
        if isinstance(value, str)
        else [s for pair in value.items() for s in pair if isinstance(s, str)]
        if isinstance(value, dict)
        else []
    )
    for text in strings:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                f"holds a lone surrogate at offset {exc.start} (not valid Unicode); send UTF-8 text"
            ) from None
    return value


class Attachment(BaseModel):
    """A file that came with a request (only its name and type; contents are read by workflows).

    Attributes:
        filename: Original file name, e.g. ``"q3_sales.xlsx"``.
        media_type: MIME type when known.
        path: Where the file is on this host, when it is.
    """

    model_config = ConfigDict(frozen=True)

    filename: str = Field(min_length=1, max_length=255)
    media_type: str | None = None
    path: str | None = None

    _unicode = field_validator("filename", "media_type", "path")(_valid_unicode)

    @property
    def extension(self) -> str:
        """Lower-case suffix without the dot: ``"xlsx"``; ``""`` when there is none."""
        return PurePath(self.filename).suffix.lower().lstrip(".")


class Request(BaseModel):
    """An incoming request.

    Attributes:
        text: What the user wrote; must contain a non-whitespace character.
        id: Unique id (a UUID4 hex by default); every telemetry row carries it.
        channel: Where it came from (``"chat"``, ``"email"``, ``"api"``...), optional.
        attachments: Files sent with it.
        metadata: Free string tags, e.g. the source data file and row.
        received_at: UTC time of arrival.
        thread_id: The conversation this request continues (multi-turn workflows keep their
            state per thread: LangGraph checkpoints); None for a one-off request.
        customer_id: The signed-in customer the conversation is for; customer-service tools
            look up only this customer's data. None when unknown.

    Raises:
        pydantic.ValidationError: Empty or whitespace-only text, text over
            :data:`MAX_TEXT_CHARS`, or any string (text, id, channel, metadata keys and
            values, attachment names and paths) that is not valid Unicode (lone surrogates).

    Example:
        >>> Request(text="Where is my refund?").text
        'Where is my refund?'
    """

    model_config = ConfigDict(frozen=True)

    text: str = Field(max_length=MAX_TEXT_CHARS)
    id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=64)
    channel: str | None = Field(None, max_length=64)
    attachments: tuple[Attachment, ...] = ()
    metadata: dict[str, str] = Field(default_factory=dict)
    received_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    thread_id: str | None = Field(None, min_length=1, max_length=128, pattern=r"^[\w.:-]+$")
    customer_id: str | None = Field(None, min_length=1, max_length=16, pattern=r"^[\w-]+$")

    _unicode = field_validator("text", "id", "channel", "metadata", "thread_id", "customer_id")(
        _valid_unicode
    )

    @field_validator("text")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("request text is empty or whitespace; send the user's message")
        return value


def resolve_attachment_path(path: str | Path, allowed: Sequence[str | Path]) -> Path:
    """The real path of an attachment file that lies inside one of the ``allowed`` folders.

    Symlinks are resolved (in ``path`` and in each folder) before the check, so neither ``..``
    nor a link can lead outside; a relative ``path`` is taken from the current folder. Only a
    regular file is accepted: not a folder, a device, a FIFO or a socket. Callers open the
    returned path, not ``path``, so a link swapped after the check is not followed.

    Args:
        path: The attachment's ``path`` as the request carries it.
        allowed: Folders attachments may come from.

    Returns:
        The resolved path.

    Raises:
        UserError: The path cannot be resolved (a NUL byte, a symlink loop), lies outside
            every allowed folder, or is not a regular file; the message names the path and
            the folders.

    Example:
        >>> try:
        ...     resolve_attachment_path("../../etc/passwd", ["/tmp/uploads"])
        ... except UserError as exc:
        ...     print(str(exc).split(";")[0])
        attachment '../../etc/passwd' is outside the allowed folders (/tmp/uploads)
    """
    if not allowed:
        raise UserError("no folder is allowed for attachments; configure at least one")
    try:
        target = Path(path).resolve()
        folders = [Path(folder).resolve() for folder in allowed]
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte
        raise UserError(f"attachment {str(path)!r} cannot be resolved ({exc})") from None
    names = ", ".join(str(folder) for folder in folders)
    if not any(target.is_relative_to(folder) for folder in folders):
        raise UserError(
            f"attachment {str(path)!r} is outside the allowed folders ({names}); upload the "
            "file again, or add its folder to the allowed ones"
        )
    if not target.is_file():
        raise UserError(f"attachment {str(path)!r} is not a file in the allowed folders ({names})")
    return target
