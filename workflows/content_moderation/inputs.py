"""Input handling: decode bytes, sanitise, bound what each judge sees, report what was done.

Truncation policy (limits from ``policy.toml``):

* The **lexicon** scans the first ``limits.scan_chars`` characters (200,000 by default; about
  0.1 s per 100,000 characters). A longer post is marked ``scan_truncated``.
* The **model** sees a window: the first ``model_head_bytes`` and the last
  ``model_tail_bytes`` UTF-8 bytes of the sanitised post, cut at character boundaries, joined
  by a marker that says how many characters were left out. The verdict's ``input`` says
  ``truncated=True`` with the post length and the window length.

Bad input never crashes the moderation:

* empty or whitespace/invisible-only post → ``empty=True``, decision allow, no model call;
* invalid UTF-8 bytes (:func:`decode_post`) → decoded as U+FFFD, counted in
  ``invalid_utf8_bytes``; lone surrogates in a ``str`` are replaced and counted the same way;
* control and invisible characters → removed before matching and from the model's window,
  counted in ``control_chars``;
* mixed scripts → reported in ``scripts``; Latin words with Cyrillic/Greek letters inside are
  counted in ``mixed_script_words`` (their look-alikes are folded before matching).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

from workflows.content_moderation.normalize import Normalized, normalize, scripts_report
from workflows.content_moderation.policy import Limits
from workflows.content_moderation.verdict import InputReport

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def decode_post(data: bytes) -> tuple[str, int]:
    """Decode bytes as UTF-8 (a leading BOM is dropped), replacing invalid bytes with U+FFFD.

    The count needs no error-handler state: every maximal invalid subsequence becomes one
    U+FFFD (3 bytes when re-encoded) and valid characters re-encode to their own bytes, so the
    invalid bytes are ``len(data) - (len(re-encoded) - 3 * replacements)``; U+FFFD characters
    that were validly encoded in ``data`` are not replacements.

    Returns:
        ``(text, number of invalid bytes)``.

    Example:
        >>> decode_post(b"ok \\xff\\xfe")
        ('ok \\ufffd\\ufffd', 2)
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"decode_post takes bytes, got {type(data).__name__}")
    data = bytes(data)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    text = data.decode("utf-8", errors="replace")
    replacements = text.count("\ufffd") - data.count("\ufffd".encode())
    invalid = len(data) - (len(text.encode("utf-8")) - 3 * replacements)
    return text, invalid


@dataclass(frozen=True)
class PreparedPost:
    """A post ready for both judges.

    Attributes:
        text: The post as received (lone surrogates replaced by U+FFFD); spans index into it.
        normalized: Normalisation of ``text[:limits.scan_chars]`` with its offset map.
        window: What the model sees (sanitised, bounded, with an omission marker).
        report: The :class:`InputReport` that goes into the verdict.
    """

    text: str
    normalized: Normalized
    window: str
    report: InputReport


def _sanitise(text: str) -> str:
    """Drop C0/C1 controls (except newline and tab) and invisible format characters."""
    return "".join(
        ch
        for ch in text
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf") or ch == "\u200d"
    )


def _head_bytes(text: str, limit: int) -> str:
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def _tail_bytes(text: str, limit: int) -> str:
    if limit <= 0:
        return ""
    return text.encode("utf-8")[-limit:].decode("utf-8", errors="ignore")


def model_window(text: str, limits: Limits) -> tuple[str, int, bool]:
    """The model's view of ``text``: ``(window, characters of the post in it, truncated)``."""
    budget = limits.model_head_bytes + limits.model_tail_bytes
    if len(text.encode("utf-8")) <= budget:
        return text, len(text), False
    head = _head_bytes(text, limits.model_head_bytes)
    tail = _tail_bytes(text[len(head) :], limits.model_tail_bytes)
    left_out = len(text) - len(head) - len(tail)
    window = f"{head}\n[... {left_out} characters left out ...]\n{tail}"
    return window, len(head) + len(tail), True


def prepare_post(text: str, limits: Limits, *, invalid_utf8_bytes: int = 0) -> PreparedPost:
    """Sanitise and bound ``text`` for the lexicon and the model, and report what was done.

    Args:
        text: The post (any string; may be empty).
        limits: The policy's limits.
        invalid_utf8_bytes: Invalid bytes already replaced by :func:`decode_post`.

    Returns:
        The :class:`PreparedPost`.
    """
    surrogates = len(_SURROGATE.findall(text))
    if surrogates:
        text = _SURROGATE.sub("\ufffd", text)
    scanned = text[: limits.scan_chars]
    norm = normalize(scanned)
    sanitised = _sanitise(text)
    empty = not norm.text.strip() and not sanitised.strip()
    window, model_chars, truncated = model_window(sanitised, limits)
    scripts, mixed = scripts_report(scanned)
    report = InputReport(
        chars=len(text),
        scanned_chars=len(scanned),
        model_chars=0 if empty else model_chars,
        truncated=truncated and not empty,
        scan_truncated=len(scanned) < len(text),
        empty=empty,
        invalid_utf8_bytes=invalid_utf8_bytes + surrogates,
        control_chars=norm.removed,
        scripts=scripts,
        mixed_script_words=mixed,
        bidi_controls=norm.bidi,
        emoji_words=norm.emoji,
    )
    return PreparedPost(text=text, normalized=norm, window=window, report=report)
