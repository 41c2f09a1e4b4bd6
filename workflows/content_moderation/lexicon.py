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

A bad file raises :class:`LexiconError` naming the file, the line and the fix (read and
validated by :mod:`orchestrator.datafiles`).

This module holds the data models and the loader only. The compiled, hot-reloaded form is
:class:`workflows.content_moderation.matcher.Lexicon` (the matcher builds on this module, never
the other way round).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from workflows.content_moderation.normalize import is_han
from workflows.content_moderation.verdict import Category, Severity

#: The packaged lexicon folder.
DEFAULT_LEXICON_DIR = Path(__file__).resolve().parent / "lexicon"

MatchMode = Literal["word", "prefix", "suffix", "infix"]


class LexiconError(DataFileError):
    """A lexicon folder or term file is invalid (``file:line: reason``; see
    :class:`~orchestrator.exceptions.DataFileError` for the attributes)."""


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
        context_exclude: English words or phrases that give the term an innocent sense when
            they occur within a few words of it (``transmission`` for ``tranny``).
        context_window: How many words either side of a hit are searched for a
            ``context_exclude`` phrase (default 4; a word whose ordinary sense is told by its
            sentence, ``dyke`` beside ``engineers`` or ``North Sea``, takes a wider one).
        obfuscated_only: English single words that are ordinary as written (``die``, ``kill``)
            but an evasion when disguised: they match only as leetspeak (``d!e``, ``k1ll``) or
            spaced-out letters (``d i e``), never in plain spelling, inflections, stems or
            fuzzy matches.
        names_harm: The term names a harm (``racism``, ``歧视``) rather than commits one: in a
            sentence that negates or condemns it the hit is a ``mention``
            (:mod:`workflows.content_moderation.mention`), and the policy decides.
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
    context_exclude: tuple[str, ...] = ()
    context_window: int = Field(4, ge=1, le=40)
    names_harm: bool = False
    obfuscated_only: bool = False
    note: str = ""
    line: int | None = Field(default=None, exclude=True)

    @field_validator("severity")
    @classmethod
    def _not_none(cls, value: Severity) -> Severity:
        if value is Severity.NONE:
            raise ValueError("a term's severity must be low, medium, high or critical")
        return value

    @field_validator("text", "variants", "abbreviations", "exclude", "context_exclude")
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
        if self.obfuscated_only and (self.is_chinese or not re.fullmatch(r"[a-z]+", self.text)):
            raise ValueError(
                f"term {self.text!r}: obfuscated_only is for single lower-case English words; "
                "remove it or spell the term as one word"
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
    parts: list[str] = []
    terms: list[tuple[Category, Term]] = []
    allow: set[str] = set()
    owners: dict[Category, Path] = {}
    for path in lexicon_files(directory):
        if path.name == "allowlist.toml":
            allowed = load_toml(path, AllowList, error=LexiconError)
            parts += (path.name, "\0", allowed.text, "\0")
            allow |= {w.lower() for w in allowed.value.words}
            continue
        loaded = load_toml(path, LexiconFile, error=LexiconError)
        parts += (path.name, "\0", loaded.text, "\0")
        parsed = loaded.value
        if parsed.category in owners:
            raise LexiconError(
                path,
                loaded.line_of("category"),
                f"category {parsed.category.value!r} is already defined in "
                f"{owners[parsed.category].name}; keep one file per category",
            )
        owners[parsed.category] = path
        for i, term in enumerate(parsed.term):
            located = term.model_copy(update={"line": loaded.line_of("term", i)})
            terms.append((parsed.category, located))
    if not terms:
        raise LexiconError(directory, None, "no category file (*.toml with [[term]] entries)")
    return LexiconData(tuple(terms), frozenset(allow), content_hash(*parts), directory)


def lexicon_files(directory: Path | str) -> list[Path]:
    """The ``*.toml`` files of a lexicon folder, sorted by name (the order they are read and
    hashed in); an empty list when the folder is missing."""
    return sorted(Path(directory).glob("*.toml"))
