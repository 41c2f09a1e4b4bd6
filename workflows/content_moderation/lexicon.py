"""The sensitive-term lexicon: one TOML file per category, validated, hashed and reloadable.

Files live in a folder (the packaged ``lexicon/`` beside this module by default). Each file
names its category and lists terms::

    category = "harassment"

    [[term]]
    text = "bitch"          # canonical spelling (English: a word or phrase; Chinese: characters)
    severity = "medium"     # low | medium | high | critical
    match = "prefix"        # English only: word (default) | prefix | suffix | infix
    variants = ["biatch"]   # other spellings, same severity
    exclude = ["bitchin"]   # innocent words or contexts that contain a match

Field reference: :class:`Term`. A file ``allowlist.toml`` holds ``words = [...]``: words
that prefix, suffix, infix and fuzzy matching never flag (``scunthorpe``, ``cocktail``).

A bad file raises :class:`LexiconError` naming the file, the line and the fix. A running
:class:`Lexicon` re-reads the folder when a file changes; a bad edit is logged and the last
good lexicon stays live.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from orchestrator.exceptions import UserError
from workflows.content_moderation.normalize import is_han
from workflows.content_moderation.verdict import Category, Severity

log = logging.getLogger(__name__)

#: The packaged lexicon folder.
DEFAULT_LEXICON_DIR = Path(__file__).resolve().parent / "lexicon"

MatchMode = Literal["word", "prefix", "suffix", "infix"]


class LexiconError(UserError):
    """A lexicon file is invalid.

    Attributes:
        path: The file (or folder).
        line: 1-based line of the problem, or None when unknown.
        reason: What is wrong and how to fix it.
    """

    def __init__(self, path: Path | str, line: int | None, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        super().__init__(f"{path}:{line}: {reason}" if line else f"{path}: {reason}")


class Term(BaseModel):
    """One lexicon entry.

    Attributes:
        text: Canonical spelling. English terms are words or phrases of letters, digits,
            spaces, apostrophes and hyphens; Chinese terms hold at least one Chinese character
            and match as substrings after separators are removed (``傻 逼`` = ``傻逼``).
        severity: ``low`` (noted, allowed), ``medium`` (review), ``high`` / ``critical``
            (block) under the default policy.
        match: English only. ``word``: the whole word, plus English inflections when
            ``inflect``; ``prefix``: any word starting with it (``fuck`` → ``fucking``);
            ``suffix``: any word ending with it (``ass`` → ``dumbass``); ``infix``: any word
            containing it (``motherfucker``).
        inflect: Also match ``+s, +es, +ed, +ing, +in, +er, +ers, +z`` (word mode).
        fuzzy: Also match words within one edit (rapidfuzz ``ratio`` ≥ ``cutoff``); English
            terms of 5+ letters only. Default: on for single-word English terms of 5+ letters.
        cutoff: rapidfuzz ratio threshold for fuzzy matches (0–100).
        variants: Other spellings with the same severity (homophones, misspellings).
        abbreviations: Latin abbreviations of a Chinese term (``sb`` for 傻逼), matched as
            whole words.
        pinyin: Chinese terms: also match their toneless pinyin spelling as a word
            (``shabi``) when it has at least ``MIN_PINYIN_LETTERS`` letters.
        exclude: Innocent words (English) or contexts (Chinese) that contain a match; a match
            inside one of them does not count.
        note: Free text for maintainers.
        line: Line of the entry in its file (set by the loader).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1, max_length=80)
    severity: Severity
    match: MatchMode = "word"
    inflect: bool = True
    fuzzy: bool | None = None
    cutoff: float = Field(88.0, ge=50, le=100)
    variants: tuple[str, ...] = ()
    abbreviations: tuple[str, ...] = ()
    pinyin: bool = True
    exclude: tuple[str, ...] = ()
    note: str = ""
    line: int | None = Field(default=None, exclude=True)

    @field_validator("severity")
    @classmethod
    def _not_none(cls, value: Severity) -> Severity:
        if value is Severity.NONE:
            raise ValueError("a term's severity must be low, medium, high or critical")
        return value

    @field_validator("text", "variants", "abbreviations", "exclude")
    @classmethod
    def _no_blank(cls, value: Any) -> Any:
        for item in (value,) if isinstance(value, str) else value:
            if not item.strip():
                raise ValueError("terms, variants, abbreviations and excludes must not be blank")
        return value

    @field_validator("abbreviations")
    @classmethod
    def _latin(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for item in value:
            if not re.fullmatch(r"[A-Za-z0-9]+", item):
                raise ValueError(f"abbreviation {item!r} must be letters and digits only")
        return value

    @model_validator(mode="after")
    def _check_mode(self) -> Term:
        if self.is_chinese and self.match != "word":
            raise ValueError(
                f"term {self.text!r}: Chinese terms always match as substrings; remove "
                f"match = {self.match!r}"
            )
        return self

    @property
    def is_chinese(self) -> bool:
        """True when the term holds a Chinese character."""
        return any(is_han(ch) for ch in self.text)


class LexiconFile(BaseModel):
    """One category file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: Category
    description: str = ""
    term: tuple[Term, ...] = Field(min_length=1)


class AllowList(BaseModel):
    """``allowlist.toml``: words never flagged by prefix/suffix/infix/fuzzy matching."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    words: tuple[str, ...] = ()


@dataclass(frozen=True)
class LexiconData:
    """Everything read from a lexicon folder.

    Attributes:
        terms: ``(category, term)`` for every term of every file.
        allow: Allow-listed words (lower case).
        version: 12 hex digits of SHA-256 over the files' names and bytes.
        directory: The folder.
    """

    terms: tuple[tuple[Category, Term], ...]
    allow: frozenset[str]
    version: str
    directory: Path


def locate_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line of a pydantic error location such as ``('term', 3, 'severity')``."""
    lines = text.splitlines()
    if len(loc) >= 2 and isinstance(loc[1], int):
        count, start = -1, None
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped == f"[[{loc[0]}]]":
                count += 1
                if count == loc[1]:
                    start = i
                elif start is not None:
                    break
                continue
            key = re.escape(str(loc[2])) if len(loc) >= 3 else None
            if start is not None and key and re.match(rf"{key}\s*=", stripped):
                return i + 1
        return start + 1 if start is not None else None
    if loc:
        for i, line in enumerate(lines):
            if re.match(rf"\s*{re.escape(str(loc[0]))}\s*=", line):
                return i + 1
    return None


def _read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LexiconError(path, None, f"cannot read as UTF-8 text: {exc}") from exc
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise LexiconError(
            path, int(found.group(1)) if found else None, f"not valid TOML: {exc}"
        ) from exc


def validation_error(path: Path, text: str, exc: ValidationError) -> LexiconError:
    first = exc.errors()[0]
    loc = tuple(first.get("loc", ()))
    field = ".".join(str(p) for p in loc) or "(file)"
    more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    return LexiconError(path, locate_line(text, loc), f"{field}: {first['msg']}{more}")


def load_lexicon(directory: Path | str = DEFAULT_LEXICON_DIR) -> LexiconData:
    """Read and validate every ``*.toml`` of ``directory``.

    Args:
        directory: Folder of category files (plus an optional ``allowlist.toml``).

    Returns:
        The validated terms, allow-list and version hash.

    Raises:
        LexiconError: The folder is missing or holds no category file, a file is not UTF-8
            TOML, an entry fails validation, or one category is defined in two files; the
            message names the file and, when known, the line.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise LexiconError(directory, None, "lexicon folder not found; pass an existing folder")
    paths = sorted(directory.glob("*.toml"))
    digest = hashlib.sha256()
    terms: list[tuple[Category, Term]] = []
    allow: set[str] = set()
    owners: dict[Category, Path] = {}
    for path in paths:
        text, data = _read_toml(path)
        digest.update(path.name.encode() + b"\0" + text.encode() + b"\0")
        if path.name == "allowlist.toml":
            try:
                allow |= {w.lower() for w in AllowList.model_validate(data).words}
            except ValidationError as exc:
                raise validation_error(path, text, exc) from exc
            continue
        try:
            parsed = LexiconFile.model_validate(data)
        except ValidationError as exc:
            raise validation_error(path, text, exc) from exc
        if parsed.category in owners:
            raise LexiconError(
                path,
                locate_line(text, ("category",)),
                f"category {parsed.category.value!r} is already defined in "
                f"{owners[parsed.category].name}; keep one file per category",
            )
        owners[parsed.category] = path
        for i, term in enumerate(parsed.term):
            located = term.model_copy(update={"line": locate_line(text, ("term", i))})
            terms.append((parsed.category, located))
    if not terms:
        raise LexiconError(directory, None, "no category file (*.toml with [[term]] entries)")
    return LexiconData(tuple(terms), frozenset(allow), digest.hexdigest()[:12], directory)


def _signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    out = []
    for path in sorted(directory.glob("*.toml")):
        try:
            st = os.stat(path)
        except OSError:
            continue
        out.append((path.name, st.st_mtime_ns, st.st_size))
    return tuple(out)


class Lexicon:
    """A live lexicon folder: compiled once, re-read when a file changes.

    Args:
        directory: The folder (the packaged one by default).
        reload_interval: Seconds between checks for changed files; 0 checks on every
            :meth:`matcher` call, None never.

    Raises:
        LexiconError: The initial folder is invalid.

    Example:
        >>> lex = Lexicon()
        >>> [h.term for h in lex.matcher().scan("what the f*ck").hits]
        ['fuck']
    """

    def __init__(
        self, directory: Path | str = DEFAULT_LEXICON_DIR, *, reload_interval: float | None = 1.0
    ) -> None:
        from workflows.content_moderation.matcher import Matcher

        self._matcher_cls = Matcher
        self.directory = Path(directory)
        self.reload_interval = reload_interval
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._signature = _signature(self.directory)
        self._matcher = Matcher(load_lexicon(self.directory))
        self._next_check = time.monotonic() + (reload_interval or 0)

    @property
    def version(self) -> str:
        """Version hash of the live lexicon."""
        return self._matcher.version

    def reload(self) -> bool:
        """Re-read the folder now if a file changed.

        Returns:
            True when a new lexicon went live; False when nothing changed or the new files
            are invalid (the error is logged and kept in :attr:`last_error`).
        """
        if not self._lock.acquire(blocking=False):
            return False
        try:
            signature = _signature(self.directory)
            if signature == self._signature:
                return False
            self._signature = signature
            try:
                matcher = self._matcher_cls(load_lexicon(self.directory))
            except LexiconError as exc:
                self.last_error = str(exc)
                log.error("lexicon reload failed, keeping version %s: %s", self.version, exc)
                return False
            self._matcher = matcher  # one reference swap: atomic for concurrent readers
            self.last_error = None
            log.info("lexicon reloaded (version %s)", matcher.version)
            return True
        finally:
            self._lock.release()

    def matcher(self):  # -> Matcher
        """The live compiled matcher (checks the files first, at most every interval)."""
        if self.reload_interval is not None:
            now = time.monotonic()
            if now >= self._next_check:
                self._next_check = now + self.reload_interval
                self.reload()
        return self._matcher
