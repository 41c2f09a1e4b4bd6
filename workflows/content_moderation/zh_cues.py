"""Cue features of the Chinese risk scorer that carry across topics (issue 47).

COLD's offensive posts attack a group (targets and generalisations, insults, hostility), and
its anti-bias posts name the same groups to oppose, report or question bias. Character
n-grams learn topic words ("河南人", "黑人") that do not transfer to an unseen topic; these
cues do: which kinds of words a post holds, and which kinds occur together in one sentence
("a group named + a generalisation", "a group named + an insult", "an anti-bias cue").

The cue words are data (``zh_cues.toml``); :func:`zh_cue_features` turns a normalised post
into feature strings (``z:<cue>`` and ``z:<cue>&<cue>``), hashed with the n-grams by the scorer.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError

DEFAULT_ZH_CUES_PATH = Path(__file__).resolve().parent / "zh_cues.toml"
CUE_NAMES = ("target", "general", "insult", "hostile", "anti", "negation", "report", "question")
#: One sentence of Chinese or mixed text, with its closing punctuation.
SENTENCE = re.compile(r"[^。！？!?；;\n]+[。！？!?；;\n]*")


class ZhCueFile(BaseModel):
    """``zh_cues.toml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    cues: dict[str, str]


class ZhCueError(DataFileError):
    """The cue file is invalid (``file:line: reason``)."""


@dataclass(frozen=True)
class ZhCues:
    """Compiled cues: name → pattern, and the file's version."""

    patterns: dict[str, re.Pattern[str]]
    version: str


@lru_cache(maxsize=4)
def load_zh_cues(path: Path | str = DEFAULT_ZH_CUES_PATH) -> ZhCues:
    """Read and compile the cue file (cached per path).

    Raises:
        ZhCueError: Unreadable, not TOML, a cue of :data:`CUE_NAMES` missing or unknown, or a
            pattern that is not a valid regular expression.
    """
    path = Path(path)
    loaded = load_toml(path, ZhCueFile, error=ZhCueError)
    names = set(loaded.value.cues)
    if names != set(CUE_NAMES):
        raise ZhCueError(path, loaded.line_of("cues"), f"cues must be exactly {CUE_NAMES}")
    patterns = {
        name: loaded.regex(pattern, name, error=ZhCueError)
        for name, pattern in loaded.value.cues.items()
    }
    return ZhCues(patterns, f"{loaded.value.version}+{content_hash(loaded.text, digits=8)}")


def zh_cue_features(
    text: str, cues: ZhCues | None = None, use: frozenset[str] | None = None
) -> list[str]:
    """Feature strings of a normalised Chinese post: ``z:<cue>`` for each cue present, and
    ``z:<a>&<b>`` for each pair of cues present in one sentence.

    Args:
        text: The normalised post (:func:`~.normalize.normalize`; Simplified).
        cues: Compiled cues (default: the packaged file).
        use: The cue names to use (default: all; the ablation leaves some out).

    Example:
        >>> zh_cue_features("河南人都是骗子")[:3]
        ['z:target', 'z:general', 'z:insult']
    """
    cues = cues or load_zh_cues()
    names = [n for n in CUE_NAMES if use is None or n in use]
    seen: set[str] = set()
    pairs: set[str] = set()
    for sentence in SENTENCE.findall(text) or [text]:
        here = sorted(n for n in names if cues.patterns[n].search(sentence))
        seen.update(here)
        pairs.update(f"z:{a}&{b}" for a, b in itertools.combinations(here, 2))
    return [f"z:{n}" for n in names if n in seen] + sorted(pairs)
