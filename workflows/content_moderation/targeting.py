"""Targeting features: what tells *group-directed hate* from offensive language, for the
learned scorer's English hate model (:mod:`.scorer`, model ``en/hate``).

A slur or a swear word alone does not make hate speech: on Davidson et al.'s tweets the same
slur is labelled hate in one post and offensive in the next, and most profanity ("bitch",
"hoe") is offensive. What annotators call hate is language aimed at a *group*, or at a person
*as a member* of one. The features describe that, not the words themselves:

* **lexicon tiers** — each lexicon hit that is not a mention, as its term, its category and
  (category, severity) (``lex:fag``, ``cat:hate``, ``sev:hate:high``), so the fit learns how
  often each tier is hate rather than an insult;
* **how a slur is used** — plural (aimed at a group: ``slur:plural``), as a label after
  "is a / such a / like a" (``slur:label``), or addressing the reader ("you f*",
  ``slur:address``);
* **cues around it** (word lists in ``targeting.toml``) — a protected group named (``grp``),
  generalisation ("all", "these", ``gen``), dehumanising words (``dehum``), violence or
  exclusion (``viol``), banter ("lol", "miss you", ``banter``), and their pairs with a slur
  or a group (``slur&gen``, ``grp&dehum`` ...).

Only the English hate model uses them; the flagged models keep words and character n-grams.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from workflows.content_moderation.normalize import normalize
from workflows.content_moderation.verdict import Category, Span

#: The packaged cue file.
DEFAULT_TARGETING_PATH = Path(__file__).resolve().parent / "targeting.toml"
_WORD = re.compile(r"[a-z0-9']+")
#: Categories whose terms are slurs against a group.
SLUR_CATEGORIES = frozenset({Category.HATE, Category.REGIONAL_DISCRIMINATION})
#: How far before a slur the label/address patterns look (characters).
_BEFORE = 30


class TargetingFile(BaseModel):
    """``targeting.toml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    groups: tuple[str, ...] = Field(min_length=1)
    generalisers: tuple[str, ...] = Field(min_length=1)
    dehumanising: tuple[str, ...] = Field(min_length=1)
    violence: tuple[str, ...] = Field(min_length=1)
    banter: tuple[str, ...] = Field(min_length=1)
    label_before: str = Field(min_length=1)
    address_before: str = Field(min_length=1)


class TargetingError(DataFileError):
    """The targeting cue file is invalid (``file:line: reason``)."""


@dataclass(frozen=True)
class TargetingCues:
    """Compiled cues.

    Attributes:
        words: Cue name (``grp``, ``gen``, ``dehum``, ``viol``, ``banter``) → its words.
        label_before: Pattern ending right before a slur used as a label.
        address_before: Pattern ending right before a slur addressing the reader.
        version: ``version`` plus 8 hex digits of the file's SHA-256.
    """

    words: dict[str, frozenset[str]]
    label_before: re.Pattern[str]
    address_before: re.Pattern[str]
    version: str


@lru_cache(maxsize=8)
def load_targeting_cues(path: Path | str = DEFAULT_TARGETING_PATH) -> TargetingCues:
    """Read and compile a cue file (cached per path).

    Raises:
        TargetingError: Unreadable, not TOML, fails validation, or a pattern is not a valid
            regular expression.
    """
    loaded = load_toml(path, TargetingFile, error=TargetingError)
    f = loaded.value
    return TargetingCues(
        words={
            "grp": frozenset(w.casefold() for w in f.groups),
            "gen": frozenset(w.casefold() for w in f.generalisers),
            "dehum": frozenset(w.casefold() for w in f.dehumanising),
            "viol": frozenset(w.casefold() for w in f.violence),
            "banter": frozenset(w.casefold() for w in f.banter),
        },
        label_before=loaded.regex(f.label_before, "label_before", error=TargetingError),
        address_before=loaded.regex(f.address_before, "address_before", error=TargetingError),
        version=f"{f.version}+{content_hash(loaded.text, digits=8)}",
    )


def targeting_features(
    text: str, spans: Sequence[Span], cues: TargetingCues | None = None
) -> list[str]:
    """The targeting feature strings of a post (see the module docstring).

    Args:
        text: The post as given.
        spans: Its lexicon spans (:func:`~.judgement.lexicon_findings`); mentions and model
            quotes are skipped.
        cues: The cue lists (the packaged ``targeting.toml`` by default).

    Example:
        >>> targeting_features("these people are all animals", ())
        ['dehum', 'gen', 'grp', 'grp&dehum', 'grp&gen']
    """
    cues = cues or load_targeting_cues()
    norm = normalize(text).text
    words = {w.strip("'") for w in _WORD.findall(norm)}
    present = sorted(name for name, ws in cues.words.items() if words & ws)
    out = list(present)
    slur = False
    for s in spans:
        if s.mention or s.source != "lexicon":
            continue
        out += [f"lex:{s.term}", f"cat:{s.category.value}",
                f"sev:{s.category.value}:{s.severity.value}"]  # fmt: skip
        if s.category not in SLUR_CATEGORIES:
            continue
        slur = True
        hit = normalize(s.text).text
        if hit.endswith("s") and not s.term.casefold().endswith("s"):
            out.append("slur:plural")
        at = norm.find(hit)
        before = norm[max(0, at - _BEFORE) : at] if at >= 0 else ""
        if before and cues.label_before.search(before):
            out.append("slur:label")
        if before and cues.address_before.search(before):
            out.append("slur:address")
    if slur:
        out += [f"slur&{name}" for name in present]
    if "grp" in present:
        out += [f"grp&{name}" for name in present if name != "grp"]
    return list(dict.fromkeys(out))
