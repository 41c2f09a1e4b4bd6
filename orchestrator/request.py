"""The unit of work: a :class:`Request` handed to the framework by an app or a batch job."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Longest request text accepted, in characters (1 MiB of ASCII). Longer text is refused
#: with a validation error rather than truncated silently.
MAX_TEXT_CHARS = 1_000_000


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
