"""The checks of :meth:`~orchestrator.classifier.core.RuleClassifier.classify_text` on raw
input: text that :class:`~orchestrator.request.Request` would refuse gets a clear reason."""

from __future__ import annotations

import re
from collections.abc import Sequence

from orchestrator.exceptions import UserError
from orchestrator.request import MAX_TEXT_CHARS

#: C0 control characters other than tab, line feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


class InvalidTextError(UserError):
    """Text the classifier cannot read; the message says what was wrong and what to send."""


def checked_input(
    text: object, attachments: Sequence[str] | None, channel: object
) -> tuple[str, tuple[str, ...]]:
    """``(text, attachment extensions)`` of raw input: ``text`` as ``str`` (UTF-8 bytes
    decoded), each extension lower case without the dot (``""`` for a name without one).

    Raises:
        TypeError: ``attachments`` is a single string or holds something other than strings,
            or ``channel`` is not a string (the message says what to pass).
        InvalidTextError: The text is not UTF-8, not text, empty, over :data:`MAX_TEXT_CHARS`
            characters, holds lone surrogates, or looks binary.
    """
    if isinstance(attachments, str | bytes):
        raise TypeError(
            f"attachments must be a list of file names, got the single {attachments!r}: "
            f"pass [{attachments!r}]"
        )
    names = tuple(attachments or ())
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"attachments must be file names (str), got {names!r}")
    if channel is not None and not isinstance(channel, str):
        raise TypeError(f"channel must be a str or None, got {type(channel).__name__}")
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")  # a UTF-16 byte-order mark
            raise InvalidTextError(
                f"text is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                f"{exc.start}); send UTF-8 text"
                + ("; it starts like UTF-16: save it as UTF-8" if utf16 else "")
            ) from None
    if not isinstance(text, str):
        raise InvalidTextError(f"text must be str or bytes, got {type(text).__name__}")
    if not text.strip():
        raise InvalidTextError("text is empty or whitespace; send the user's message")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidTextError(
            f"text has {len(text):,} characters, over the {MAX_TEXT_CHARS:,} limit; "
            "send long content as an attachment"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidTextError(
            "text has lone surrogate code points (not valid Unicode); decode the source "
            "with errors='replace' (or 'surrogatepass' and re-encode) before sending it"
        ) from None
    head = text[:4096]
    controls = len(_CONTROL.findall(head))
    if "\x00" in head or controls > len(head) // 10:
        raise InvalidTextError(
            f"text looks binary ({controls} control characters in the first "
            f"{len(head)}); send text, or the file as an attachment"
        )
    return text, tuple(name.rsplit(".", 1)[-1].lower() if "." in name else "" for name in names)
