"""Mentions: a lexicon term that *names* a harm (``names_harm``: ``歧视``, ``地域黑``) in a
sentence that negates or condemns it ("反对歧视", "racism is wrong", "stop hate") is a
``mention``: noted, but not a verdict by itself; the policy table decides what a mention
leads to (``lexicon = "mention"``).

The cues are data (``mention.toml`` beside this module): English and Chinese regular
expressions for negation and condemnation, and "but" cues that cancel them ("我不歧视，但是…",
"I'm not racist, but ..." are no mentions). A sentence ends at ``. ! ? ; 。 ！ ？ ；`` or a line
break.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError

#: The packaged cue file.
DEFAULT_MENTION_PATH = Path(__file__).resolve().parent / "mention.toml"
_SENTENCE_END = re.compile(r"[.!?;。！？；\n]")


class MentionFile(BaseModel):
    """``mention.toml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    cues_en: tuple[str, ...] = Field(min_length=1)
    cues_zh: tuple[str, ...] = Field(min_length=1)
    but_en: tuple[str, ...] = ()
    but_zh: tuple[str, ...] = ()
    speech_en: tuple[str, ...] = ()
    speech_zh: tuple[str, ...] = ()


@dataclass(frozen=True)
class MentionRules:
    """Compiled cues.

    Attributes:
        cues: One alternation of every negation/condemnation cue.
        but: One alternation of every cancelling cue (None when none).
        version: ``version`` plus 8 hex digits of the file's SHA-256.
    """

    cues: re.Pattern[str]
    but: re.Pattern[str] | None
    version: str
    speech: re.Pattern[str] | None = None

    def is_speech_about_harm(self, text: str) -> bool:
        """True when ``text`` (the normalised post) opposes, reports or quotes discrimination
        (a ``speech_*`` cue) and no "but" cue follows the last such cue."""
        if self.speech is None:
            return False
        ends = [m.end() for m in self.speech.finditer(text)]
        if not ends:
            return False
        return self.but is None or not self.but.search(text[ends[-1] :])

    def sentence(self, text: str, start: int, end: int) -> str:
        """The sentence of ``text`` holding ``text[start:end]``."""
        lo = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
        stop = _SENTENCE_END.search(text, end)
        return text[lo : stop.start() if stop else len(text)]

    def is_mention(self, text: str, start: int, end: int) -> bool:
        """True when the sentence around ``text[start:end]`` negates or condemns it and no
        cancelling cue ("but", 但是) follows the term."""
        lo = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
        stop = _SENTENCE_END.search(text, end)
        hi = stop.start() if stop else len(text)
        after = text[end:hi].casefold()
        if self.but is not None and self.but.search(after):
            return False
        # the sentence with its end mark: a question about the harm is a cue ("这是歧视？")
        return bool(self.cues.search(text[lo : hi + 1].casefold()))


class MentionError(DataFileError):
    """The mention cue file is invalid (``file:line: reason``)."""


@lru_cache(maxsize=8)
def load_mention_rules(path: Path | str = DEFAULT_MENTION_PATH) -> MentionRules:
    """Read and compile a cue file (cached per path).

    Raises:
        MentionError: Unreadable, not TOML, fails validation, or a cue is not a valid
            regular expression.
    """
    path = Path(path)
    loaded = load_toml(path, MentionFile, error=MentionError)
    f = loaded.value

    def compile_all(patterns: tuple[str, ...], key: str) -> re.Pattern[str] | None:
        if not patterns:
            return None
        try:
            return re.compile("|".join(f"(?:{p})" for p in patterns))
        except re.error as exc:
            raise MentionError(path, loaded.line_of(key), f"bad regular expression: {exc}") from exc

    cues = compile_all(f.cues_en + f.cues_zh, "cues_en")
    assert cues is not None
    return MentionRules(
        cues=cues,
        speech=compile_all(f.speech_en + f.speech_zh, "speech_en"),
        but=compile_all(f.but_en + f.but_zh, "but_en"),
        version=f"{f.version}+{content_hash(loaded.text, digits=8)}",
    )
