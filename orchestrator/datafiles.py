"""Data files: TOML read into pydantic models with ``file:line`` errors, hashed, hot-reloaded.

The classifier's rules and calibration (``orchestrator/rules/*.toml``) and the moderation
lexicon and policy (``workflows/content_moderation/``) are all TOML files that people edit by
hand while the service runs. This module is their one loader:

* :func:`load_toml` reads a file and validates it into a pydantic model. Every failure raises
  a :class:`~orchestrator.exceptions.DataFileError` (or the subclass the caller passes, such as
  ``RulesError``) whose message is ``file:line: reason``: the line of a TOML syntax error
  comes from :mod:`tomllib`, the line of a validation error is the line of the offending key
  (:func:`locate_line`).
* :func:`content_hash` gives the short SHA-256 used as a file's version.
* :class:`HotReloader` keeps the last good value built from one or more files and rebuilds it
  when a file changes (at most one ``stat`` per file per ``interval_s`` seconds); a broken
  edit is logged and the last good value stays live. :class:`HotReloaded` gives a class that
  holds one its public ``reload()``, ``reload_interval`` and ``last_error``.

It imports only the standard library, pydantic and :mod:`orchestrator.exceptions`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from orchestrator.exceptions import DataFileError

__all__ = [
    "HotReloaded",
    "HotReloader",
    "TomlFile",
    "content_hash",
    "file_signature",
    "load_toml",
    "locate_line",
    "read_toml",
    "validation_error",
]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

log = logging.getLogger(__name__)

#: One file's state for change detection: ``(path, st_mtime_ns, st_size)``, or
#: ``(path, None, None)`` when the file cannot be stat'ed (missing, no permission).
Signature = tuple[tuple[str, int | None, int | None], ...]


# ---------------------------------------------------------------------- lines


def locate_line(text: str, loc: Sequence[Any]) -> int | None:
    """Best-effort 1-based line of a pydantic error location in a TOML text.

    Args:
        text: The file's text.
        loc: A pydantic ``loc`` such as ``("rule", 3, "weight")`` (key ``weight`` of the fourth
            ``[[rule]]`` entry), ``("thresholds", "min_score")`` or ``("version",)``.

    Returns:
        For ``(table, i, key, ...)``: the line of ``key =`` inside the ``i``-th ``[[table]]``
        entry, else the entry's header line. Otherwise the first line that opens ``[table]``
        or assigns the last key of ``loc`` (the table itself for a one-part ``loc``). None when
        nothing matches (the key is missing, or written as an inline table).
    """
    if not loc:
        return None
    lines = text.splitlines()
    table = str(loc[0])
    if len(loc) >= 2 and isinstance(loc[1], int):
        count = -1
        start = None
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped == f"[[{table}]]":
                count += 1
                if count == loc[1]:
                    start = i
                    continue
            if start is not None and stripped.startswith("["):
                break  # the next header: the entry ended without the key
            if (
                start is not None
                and len(loc) >= 3
                and re.match(rf"{re.escape(str(loc[2]))}\s*=", stripped)
            ):
                return i + 1
        return start + 1 if start is not None else None
    key = table if len(loc) == 1 else str(loc[-1])
    for i, line in enumerate(lines):
        if re.match(rf"\s*(\[{re.escape(table)}\]|{re.escape(key)}\s*=)", line):
            return i + 1
    return None


# ---------------------------------------------------------------------- loading


def read_toml(
    path: Path | str,
    *,
    error: type[DataFileError] = DataFileError,
    missing_reason: str | None = None,
) -> tuple[str, dict[str, Any]]:
    """Read a UTF-8 TOML file.

    Args:
        path: The file.
        error: The :class:`DataFileError` subclass to raise.
        missing_reason: The reason given when the file does not exist; None reports a missing
            file like any other unreadable one (``cannot read as UTF-8 text: ...``).

    Returns:
        The text and the parsed table.

    Raises:
        DataFileError: (as ``error``) The file is missing or unreadable or not UTF-8 (line
            None), or not valid TOML (the line :mod:`tomllib` reports).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        if missing_reason is None:
            raise error(path, None, f"cannot read as UTF-8 text: {exc}") from exc
        raise error(path, None, missing_reason) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise error(path, None, f"cannot read as UTF-8 text: {exc}") from exc
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)  # Python 3.14+; earlier ones put it in the message
        if line is None:
            found = re.search(r"line (\d+)", str(exc))
            line = int(found.group(1)) if found else None
        raise error(path, line, f"not valid TOML: {exc}") from exc


def validation_error(
    path: Path | str,
    text: str,
    exc: ValidationError,
    *,
    error: type[DataFileError] = DataFileError,
) -> DataFileError:
    """The ``file:line: reason`` error for a pydantic validation failure.

    Args:
        path: The file.
        text: Its text (to find the line).
        exc: The validation error.
        error: The :class:`DataFileError` subclass to build.

    Returns:
        An ``error`` for the first problem: the reason is ``dotted.location: message``, plus
        ``(and N more problem(s))`` when there are more; the line is that of the key.
    """
    first = exc.errors()[0]
    loc = tuple(first.get("loc", ()))
    field = ".".join(str(p) for p in loc) or "(file)"
    more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    return error(Path(path), locate_line(text, loc), f"{field}: {first['msg']}{more}")


@dataclass(frozen=True)
class TomlFile(Generic[M]):
    """A TOML file read and validated by :func:`load_toml`.

    Attributes:
        path: The file.
        text: Its text, as read (UTF-8).
        value: The validated model.
    """

    path: Path
    text: str
    value: M

    def line_of(self, *loc: str | int) -> int | None:
        """Line of a location in the file, e.g. ``line_of("rule", 3)`` (see :func:`locate_line`)."""
        return locate_line(self.text, loc)

    def regex(
        self, pattern: str, *loc: str | int, error: type[DataFileError] = DataFileError
    ) -> re.Pattern[str]:
        """``pattern`` (a regular expression from the file, at ``loc``) compiled.

        Raises:
            DataFileError: (as ``error``) ``file:line: bad regular expression: <why>``, the
                line being that of ``loc``.
        """
        try:
            return re.compile(pattern)
        except re.error as exc:
            raise error(self.path, self.line_of(*loc), f"bad regular expression: {exc}") from exc


def load_toml(
    path: Path | str,
    model: type[M],
    *,
    error: type[DataFileError] = DataFileError,
    missing_reason: str | None = None,
) -> TomlFile[M]:
    """Read a TOML file and validate it into ``model``.

    Args:
        path: The file.
        model: The pydantic model of the whole file.
        error: The :class:`DataFileError` subclass to raise.
        missing_reason: See :func:`read_toml`.

    Returns:
        The file's path, text and validated model.

    Raises:
        DataFileError: (as ``error``) Unreadable, not TOML, or fails validation; the message
            is ``file:line: reason`` (``file: reason`` when the line is unknown).
    """
    path = Path(path)
    text, data = read_toml(path, error=error, missing_reason=missing_reason)
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, text, exc, error=error) from exc
    return TomlFile(path, text, value)


def content_hash(*parts: str | bytes, digits: int = 12) -> str:
    """Hex SHA-256 of the concatenated parts (``str`` encoded as UTF-8), cut to ``digits``.

    Example:
        >>> content_hash("a = 1\\n")
        'cb78bd8a17f7'
    """
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
    return digest.hexdigest()[:digits]


# ---------------------------------------------------------------------- hot reload


def file_signature(paths: Iterable[Path]) -> Signature:
    """``(path, mtime in ns, size in bytes)`` of each file, for change detection.

    A file that cannot be stat'ed gives ``(path, None, None)``, so its disappearance and its
    return both count as changes. Never raises.
    """
    out: list[tuple[str, int | None, int | None]] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append((str(path), None, None))
        else:
            out.append((str(path), st.st_mtime_ns, st.st_size))
    return tuple(out)


def _unknown_version(_value: object) -> str:
    return "?"


@dataclass(eq=False, repr=False)
class HotReloader(Generic[T]):
    """The last good value built from some files, rebuilt when one of them changes.

    :meth:`get` looks at the files (one ``stat`` each) at most once every ``interval_s``
    seconds, on the calling thread. When their modification time or size changed, ``load`` is
    called *aside*; only when it returns does the new value replace the live one (one reference
    swap, so a concurrent reader sees the old value or the new one, never a mix). When it raises
    one of ``errors``, the error is logged at ERROR level and kept in :attr:`last_error`, and
    the last good value stays live until the files change again. One reload runs at a time
    (a lock); other threads keep reading the live value meanwhile.

    Args:
        load: Builds the value from the files; raises one of ``errors`` when they are invalid.
            Called once here, and again on each change.
        watch: The files to watch, or a callable that lists them (called at every check, so
            a folder's new files are seen: ``lambda: sorted(folder.glob("*.toml"))``).
        interval_s: Seconds between checks; 0 checks on every :meth:`get`, None never (then
            only :meth:`reload` looks).
        what: What the value is, for log messages (``"rules"``, ``"lexicon"``).
        version: The version of a value, for log messages.
        errors: Exceptions of ``load`` that mean "a broken edit": logged, last good value
            kept. Any other exception propagates.
        logger: Where to log (the caller's module logger, so records keep its name); this
            module's by default.

    Attributes:
        last_error: The message of the last reload that failed, or None after a good one.

    Raises:
        Exception: Whatever ``load`` raises the first time (there is no good value to keep).

    Example:
        >>> import pathlib, tempfile
        >>> folder = tempfile.TemporaryDirectory()
        >>> path = pathlib.Path(folder.name) / "n.txt"
        >>> _ = path.write_text("1")
        >>> live = HotReloader(lambda: int(path.read_text()), [path], interval_s=0)
        >>> live.get()
        1
        >>> _ = path.write_text("22")  # a new size (or modification time) is a change
        >>> live.get()
        22
        >>> folder.cleanup()
    """

    load: Callable[[], T]
    watch: Sequence[Path] | Callable[[], Iterable[Path]]
    _: KW_ONLY
    interval_s: float | None = 1.0
    what: str = "data"
    version: Callable[[T], str] = _unknown_version
    errors: tuple[type[BaseException], ...] = (DataFileError, OSError)
    logger: logging.Logger = log
    last_error: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._signature = self.signature()  # before loading: an edit during the load is seen
        self._value = self.load()
        self._next_check = time.monotonic() + (self.interval_s or 0)

    @property
    def value(self) -> T:
        """The live value, without looking at the files."""
        return self._value

    def get(self) -> T:
        """The live value, after looking at the files if ``interval_s`` has passed."""
        if self.interval_s is not None:
            now = time.monotonic()
            if now >= self._next_check:
                self._next_check = now + self.interval_s
                self.reload()
        return self._value

    def signature(self) -> Signature:
        """The watched files' current :func:`file_signature`."""
        paths = self.watch() if callable(self.watch) else self.watch
        return file_signature(paths)

    def reload(self) -> bool:
        """Rebuild the value now if a watched file changed.

        Returns:
            True when a new value went live; False when nothing changed, another thread is
            reloading, or ``load`` raised one of ``errors`` (then it is logged and kept in
            :attr:`last_error`).
        """
        if not self._lock.acquire(blocking=False):
            return False  # another thread is reloading
        try:
            signature = self.signature()
            if signature == self._signature:
                return False
            self._signature = signature  # a broken edit is not retried until the next change
            try:
                value = self.load()
            except self.errors as exc:
                self.last_error = str(exc)
                self.logger.error(
                    "%s reload failed, keeping the last good %s (version %s): %s",
                    self.what,
                    self.what,
                    self.version(self._value),
                    exc,
                )
                return False
            self._value = value  # one reference swap: atomic for concurrent readers
            self.last_error = None
            self.logger.info("%s reloaded (version %s)", self.what, self.version(value))
            return True
        finally:
            self._lock.release()


class HotReloaded(Generic[T]):
    """The hot-reload controls of a class whose live value is a :class:`HotReloader` kept in
    ``self._live``: :meth:`reload`, :attr:`reload_interval` and :attr:`last_error`.

    The classifier's rules and the moderation lexicon both offer these three; a subclass sets
    ``self._live`` in its ``__init__``.
    """

    _live: HotReloader[T]

    def reload(self) -> bool:
        """Re-read the files now if one changed.

        Returns:
            True when the new files went live; False when nothing changed, another thread is
            reloading, or the new files are invalid (the error is logged and kept in
            :attr:`last_error`).
        """
        return self._live.reload()

    @property
    def reload_interval(self) -> float | None:
        """Seconds between checks of the files for changes (0: every call, None: never)."""
        return self._live.interval_s

    @reload_interval.setter
    def reload_interval(self, seconds: float | None) -> None:
        self._live.interval_s = seconds

    @property
    def last_error(self) -> str | None:
        """The error of the last failed reload; None once new files have gone live."""
        return self._live.last_error
