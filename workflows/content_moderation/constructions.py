"""Harm said as a *construction* rather than a listed word (tester15 T15-3/4/5): who + what +
to whom, with no lexicon term needed. A first-person intent to die with a plan, a means, a
time or a goodbye ("I have the pills ready, goodbye", 药已经准备好了，再见了) is self-harm; a
call to kill a whole group or a wish that someone die ("refugees should be exterminated",
"I hope your whole family gets cancer", 卖家去死) and a threat whose verb is written as a
letter, pinyin or emoji (我要s了你, 我要sha了你, 我要💀了你) are threats or hate; paying a fee
or a gift card to receive a prize or more money back is a scam (spam).

The constructions are data (``constructions.toml`` beside this module): each names a
category, a severity and one or more *parts*, regular expressions over ``@name`` word lists;
a construction matches when every part occurs in the post (in any order, as a post is short)
and its ``unless`` pattern (a warning against scams) does not; the hit spans from the first
part to the last. The matcher
(:meth:`~workflows.content_moderation.matcher.Matcher.scan`) reports each as a hit found
``construction``, which the learned scorer may not clear (:mod:`.judgement`); one reported,
quoted or condemned is a mention like any hit (:mod:`.findings`).

Regular expressions over word lists are home-made on purpose, like :mod:`.generalised`: no
maintained library covers these bilingual constructions, and the lists stay editable data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from workflows.content_moderation.addressed import alternation
from workflows.content_moderation.generalised import DEFAULT_GENERALISED_PATH, GeneralisedFile
from workflows.content_moderation.verdict import Category, Severity

#: The packaged construction file.
DEFAULT_CONSTRUCTIONS_PATH = Path(__file__).resolve().parent / "constructions.toml"
#: ``@name`` in a part: the alternation of the word list ``name``.
_LIST_REF = re.compile(r"@(\w+)")


class ConstructionSpec(BaseModel):
    """One construction: its hit's term, category and severity, and its parts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    term: str = Field(min_length=1, max_length=80)
    category: Category
    severity: Severity
    parts: tuple[str, ...] = Field(min_length=1, max_length=4)
    unless: str | None = None


class ConstructionsFile(BaseModel):
    """``constructions.toml`` (see its comments)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    words: dict[str, tuple[str, ...]]
    construction: tuple[ConstructionSpec, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _lists_exist(self) -> ConstructionsFile:
        known = set(self.words) | {"groups_en", "groups_zh"}
        for c in self.construction:
            for part in (*c.parts, c.unless or ""):
                missing = set(_LIST_REF.findall(part)) - known
                if missing:
                    raise ValueError(f"{c.term}: unknown word list @{sorted(missing)[0]}")
        return self


class ConstructionsError(DataFileError):
    """The construction file is invalid (``file:line: reason``)."""


@dataclass(frozen=True)
class Construction:
    """A compiled construction."""

    term: str
    category: Category
    severity: Severity
    parts: tuple[re.Pattern[str], ...]
    unless: re.Pattern[str] | None


@dataclass(frozen=True)
class ConstructionRules:
    """The compiled constructions and the file's version."""

    constructions: tuple[Construction, ...]
    version: str


@lru_cache(maxsize=8)
def load_constructions(path: Path | str = DEFAULT_CONSTRUCTIONS_PATH) -> ConstructionRules:
    """Read and compile a construction file (cached per path). The groups of people named in
    ``generalised.toml`` are the lists ``@groups_en`` and ``@groups_zh`` (said once).

    Raises:
        ConstructionsError: Unreadable, not TOML, fails validation or a part is not a regular
            expression (``file: reason``).
    """
    loaded = load_toml(Path(path), ConstructionsFile, error=ConstructionsError)
    groups = load_toml(DEFAULT_GENERALISED_PATH, GeneralisedFile, error=ConstructionsError).value
    words = {"groups_en": groups.groups_en, "groups_zh": groups.groups_zh, **loaded.value.words}

    def compiled(part: str, term: str) -> re.Pattern[str]:
        source = _LIST_REF.sub(lambda m: alternation(words[m.group(1)]), part)
        try:
            return re.compile(source)
        except re.error as exc:
            reason = f"{term}: not a regular expression: {exc}"
            raise ConstructionsError(path, None, reason) from exc

    return ConstructionRules(
        constructions=tuple(
            Construction(
                c.term,
                c.category,
                c.severity,
                tuple(compiled(p, c.term) for p in c.parts),
                compiled(c.unless, c.term) if c.unless else None,
            )
            for c in loaded.value.construction
        ),
        version=f"{loaded.value.version}+{content_hash(loaded.text, digits=8)}",
    )


def constructions(
    text: str, rules: ConstructionRules | None = None
) -> list[tuple[int, int, Construction]]:
    """The constructions found in normalised, un-leeted ``text``.

    Returns:
        ``(start, end, construction)`` per construction whose parts all occur, offsets into
        ``text`` (from the first part's start to the last part's end).

    Example:
        >>> [c.term for _, _, c in constructions("i have the pills ready, goodbye")]
        ['intent to die with a means']
    """
    rules = rules or load_constructions()
    out = []
    for c in rules.constructions:
        spans = []
        for part in c.parts:  # the first part that is absent ends the construction
            m = part.search(text)
            if m is None:
                break
            spans.append(m.span())
        else:
            if c.unless is None or not c.unless.search(text):
                out.append((min(a for a, _ in spans), max(b for _, b in spans), c))
    return out
