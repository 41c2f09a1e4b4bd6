"""Generalisations about a group, as a kind (issue 47): a group named, a word that speaks of
all of it, and contempt ("穆斯林都是恐怖分子", 河南人全是骗子, "immigrants are all criminals",
"all muslims are terrorists"), with no lexicon word needed. The word lists are data
(``generalised.toml`` beside this module); the matcher
(:meth:`~workflows.content_moderation.matcher.Matcher.scan`) reports each match as a hate hit
(term ``<group> generalised``). A claim denied just before the group ("不是所有…都是", "not
all … are") is no match; one reported, quoted or condemned is a mention (:mod:`.findings`).

Regular expressions over word lists are home-made on purpose, like :mod:`.addressed`: no
maintained library covers this narrow bilingual pattern, and the lists stay editable data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from workflows.content_moderation.addressed import alternation
from workflows.content_moderation.verdict import Severity

#: The packaged list file.
DEFAULT_GENERALISED_PATH = Path(__file__).resolve().parent / "generalised.toml"
_Words = tuple[str, ...]
#: Characters that end a clause: the three parts must sit in one clause.
_CLAUSE_ZH = r"[^，,。！？!?；;\n]"
#: A negation between the group and the contempt word.
_NEGATED = re.compile(r"[不没非无别]|\bnot\b|n't\b")


class GeneralisedFile(BaseModel):
    """``generalised.toml`` (see its comments for each list)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    severity: Severity
    groups_zh: _Words = Field(min_length=1)
    quantifiers_zh: _Words = Field(min_length=1)
    contempt_zh: _Words = Field(min_length=1)
    denials_zh: _Words = ()
    groups_en: _Words = Field(min_length=1)
    quantifiers_en: _Words = Field(min_length=1)
    contempt_en: _Words = Field(min_length=1)
    denials_en: _Words = ()


class GeneralisedError(DataFileError):
    """The generalisation list file is invalid (``file:line: reason``)."""


@dataclass(frozen=True)
class GeneralisedRules:
    """Compiled patterns (group ``group`` is the group named) and the denials before one."""

    en: re.Pattern[str]
    zh: re.Pattern[str]
    denial_en: re.Pattern[str] | None
    denial_zh: re.Pattern[str] | None
    severity: Severity
    version: str


@lru_cache(maxsize=8)
def load_generalised_rules(path: Path | str = DEFAULT_GENERALISED_PATH) -> GeneralisedRules:
    """Read and compile a list file (cached per path).

    Raises:
        GeneralisedError: Unreadable, not TOML, or fails validation (``file:line: reason``).
    """
    loaded = load_toml(Path(path), GeneralisedFile, error=GeneralisedError)
    f = loaded.value
    zh = re.compile(
        rf"(?P<group>{alternation(f.groups_zh)})(?P<mid>{_CLAUSE_ZH}{{0,3}}?"
        rf"{alternation(f.quantifiers_zh)}{_CLAUSE_ZH}{{0,4}}?){alternation(f.contempt_zh)}"
    )
    en = re.compile(
        rf"\b(?:all\s+)?(?P<group>{alternation(f.groups_en)})(?P<mid>\s+"
        rf"{alternation(f.quantifiers_en)}\s+(?:(?:all|just|such|so|a\s+bunch\s+of|dirty|"
        rf"filthy|stupid|fucking)\s+)*){alternation(f.contempt_en)}\b"
    )

    def denial(words: _Words, end: str) -> re.Pattern[str] | None:
        return re.compile(rf"(?:{alternation(words)}){end}") if words else None

    return GeneralisedRules(
        en=en,
        zh=zh,
        denial_en=denial(f.denials_en, r"\s+(?:all\s+)?$"),
        denial_zh=denial(f.denials_zh, r"$"),
        severity=f.severity,
        version=f"{f.version}+{content_hash(loaded.text, digits=8)}",
    )


def generalisations(text: str, rules: GeneralisedRules | None = None) -> list[tuple[int, int, str]]:
    """Generalisations about a group in normalised ``text``.

    Returns:
        ``(start, end, term)`` per match, offsets into ``text``, term ``<group> generalised``.

    Example:
        >>> generalisations("immigrants are all criminals")
        [(0, 28, 'immigrants generalised')]
        >>> generalisations("not all immigrants are criminals")
        []
    """
    rules = rules or load_generalised_rules()
    out = []
    for pattern, denial in ((rules.en, rules.denial_en), (rules.zh, rules.denial_zh)):
        for m in pattern.finditer(text):
            before = text[max(0, m.start() - 12) : m.start()]
            if denial is not None and denial.search(before):
                continue  # denied just before the group
            if _NEGATED.search(m.group("mid")):
                continue  # "都不是骗子": negated between the group and the contempt
            out.append((m.start(), m.end(), f"{m.group('group')} generalised"))
    return out
