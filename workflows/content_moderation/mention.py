"""Mentions: a lexicon term that *names* a harm (``names_harm``: ``歧视``, ``地域黑``) in a
sentence that negates or condemns it ("反对歧视", "racism is wrong", "stop hate") is a
``mention``: noted, but not a verdict by itself; the policy table decides what a mention
leads to (``lexicon = "mention"``).

The cues are data (``mention.toml`` beside this module): English and Chinese regular
expressions for negation and condemnation, and "but" cues that cancel them ("我不歧视，但是…",
"I'm not racist, but ..." are no mentions). A sentence ends at ``. ! ? ; 。 ！ ？ ；`` or a line
break.

A term inside quotation marks whose sentence, outside the quotes, holds a reporting cue
(``quote_*``: "he shouted", "was called", "is a slur", 有人骂, 举报) is *quoted*
(:meth:`MentionRules.is_quoted`): a report of someone else's words, a mention too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from workflows.content_moderation.normalize import unleet_words

#: The packaged cue file.
DEFAULT_MENTION_PATH = Path(__file__).resolve().parent / "mention.toml"
_SENTENCE_END = re.compile(r"[.!?;。！？；\n]")
#: The words just before a term that address the reader with it ("you stupid <term>",
#: "你这个<term>"): such a term is said to someone, never a mention by speech-about-harm cues.
_ADDRESSED = re.compile(
    r"(?:\b(?:you|u|ur|your|you're|youre)\b[\w\s'-]{0,20}|你(?!说|们说)[^\s。！？!?，,；;“”\"]{0,4})$",
    re.IGNORECASE,
)
#: A quoted passage: straight, curly, corner-bracket or single curly quotes, on one line.
#: Straight single quotes count only around a word or phrase that no letter or apostrophe
#: touches outside (so "don't ... isn't" and "the kids' toys" are no quotes).
_QUOTED = re.compile(
    r'"[^"\n]{1,120}"|“[^”\n]{1,120}”|「[^」\n]{1,120}」|『[^』\n]{1,120}』|‘[^’\n]{1,120}’'
    r"|(?<![\w'])'[^'\n]{1,60}'(?![\w'])"
)


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
    quote_en: tuple[str, ...] = ()
    quote_zh: tuple[str, ...] = ()
    quote_critical_en: tuple[str, ...] = ()
    quote_critical_zh: tuple[str, ...] = ()


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
    quote: re.Pattern[str] | None = None
    quote_critical: re.Pattern[str] | None = None

    def is_speech_about_harm(self, text: str) -> bool:
        """True when ``text`` (the normalised post) opposes, reports or quotes discrimination
        (a ``speech_*`` cue) and no "but" cue follows the last such cue."""
        if self.speech is None:
            return False
        ends = [m.end() for m in self.speech.finditer(text)]
        if not ends:
            return False
        return self.but is None or not self.but.search(text[ends[-1] :])

    def is_quoted(self, text: str, start: int, end: int, *, critical: bool = False) -> bool:
        """True when ``text[start:end]`` lies inside quotation marks and the rest of its
        sentence (the quotes taken out) holds a reporting cue (``quote_*``) and no "but" cue:
        someone else's words reported or named, not said to the reader. ``critical``: the
        stricter cues of ``quote_critical_*`` (the word named as a slur, or documented: "the
        word 'X'", "'X' is a slur", spray-painted, the court heard), for the worst terms."""
        cues = self.quote_critical if critical else self.quote
        if cues is None:
            return False
        for m in _QUOTED.finditer(text):
            if m.start() < start and end < m.end():
                lo = max((e.end() for e in _SENTENCE_END.finditer(text, 0, m.start())), default=0)
                stop = _SENTENCE_END.search(text, m.end())
                rest = (
                    text[lo : m.start()]
                    + " … "
                    + text[m.end() : stop.start() if stop else len(text)]
                )
                rest = rest.casefold()
                return bool(cues.search(rest)) and not (self.but and self.but.search(rest))
        return False

    @staticmethod
    def is_addressed(text: str, start: int) -> bool:
        """True when the term at ``text[start:]`` is aimed at the reader ("you <term>",
        "你这个<term>"; :data:`_ADDRESSED` over the 30 characters before it, leetspeak read as
        letters: "y0u r a <term>")."""
        return bool(_ADDRESSED.search(unleet_words(text[max(0, start - 30) : start])))

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
    """The compiled cues of ``path``, cached per path; :class:`MentionError` names the file
    and line of one that is unreadable, not TOML, invalid or holds a bad regular expression."""
    loaded = load_toml(path, MentionFile, error=MentionError)
    f = loaded.value

    def compile_all(patterns: tuple[str, ...], key: str) -> re.Pattern[str] | None:
        if not patterns:
            return None
        return loaded.regex("|".join(f"(?:{p})" for p in patterns), key, error=MentionError)

    cues = compile_all(f.cues_en + f.cues_zh, "cues_en")
    assert cues is not None
    return MentionRules(
        cues=cues,
        speech=compile_all(f.speech_en + f.speech_zh, "speech_en"),
        quote=compile_all(f.quote_en + f.quote_zh, "quote_en"),
        quote_critical=compile_all(f.quote_critical_en + f.quote_critical_zh, "quote_critical_en"),
        but=compile_all(f.but_en + f.but_zh, "but_en"),
        version=f"{f.version}+{content_hash(loaded.text, digits=8)}",
    )
