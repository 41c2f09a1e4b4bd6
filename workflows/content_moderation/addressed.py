"""Insults aimed at the reader, as a *kind* rather than a list of phrases (issue 47).

"you racist pigs", "you filthy little rats", "you guys are such pathetic clowns",
"ur a worthless maggot", 你们这群猪, 你就是个废物: a second-person opener, an optional link
(a copula and a determiner: "are such", 这群, 就是个), up to three contempt words and an
insult noun. The word lists are data (``addressed.toml`` beside this module); this module
compiles them into one English and one Chinese pattern, and the matcher
(:meth:`~workflows.content_moderation.matcher.Matcher.scan`) reports each match as a
harassment hit (term ``you <noun>`` or ``你<noun>``).

The same nouns said about animals or things stay ordinary: "pigs are smart animals" and "the
rats in the subway study" have no opener; in "did you see the clowns?" a verb stands between
the opener and the noun; "you pig farmers" and 你是狗主人 are compounds (``compound_*``); a
bare singular noun that is also a verb ("did you rat me out", "you trash the place") counts
only when nothing but punctuation follows it ("you rat!").

Regular expressions over word lists are home-made on purpose: no maintained library covers
this narrow, bilingual address pattern, and the lists stay editable data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from workflows.content_moderation.verdict import Severity

#: The packaged list file.
DEFAULT_ADDRESSED_PATH = Path(__file__).resolve().parent / "addressed.toml"
_Words = tuple[str, ...]


class AddressedFile(BaseModel):
    """``addressed.toml`` (see its comments for each list)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1, max_length=40)
    severity: Severity
    openers_en: _Words = Field(min_length=1)
    orders_en: _Words = Field(default=())
    groups_en: _Words = ()
    not_after_en: _Words = ()
    copulas_en: _Words = ()
    fused_en: _Words = ()
    fused_det_en: _Words = ()
    determiners_en: _Words = ()
    modifiers_en: _Words = ()
    nouns_en: _Words = Field(min_length=1)
    nouns_modified_en: _Words = ()
    compound_en: _Words = ()
    openers_zh: _Words = Field(min_length=1)
    not_after_zh: _Words = ()
    links_zh: _Words = ()
    modifiers_zh: _Words = ()
    nouns_zh: _Words = Field(min_length=1)
    body_nouns_zh: _Words = Field(default=())
    person_nouns_zh: _Words = Field(default=())
    compound_zh: _Words = ()
    forum_openers_zh: _Words = Field(default=())
    forum_links_zh: _Words = Field(default=())
    looks_zh: _Words = Field(default=())
    looks_intensifiers_zh: _Words = Field(default=())
    looks_degrees_zh: _Words = Field(default=())
    looks_follow_zh: _Words = Field(default=())
    looks_openers_en: _Words = Field(default=())
    looks_en: _Words = Field(default=())
    looks_intensifiers_en: _Words = Field(default=())
    looks_tail_en: _Words = Field(default=())


class AddressedError(DataFileError):
    """The addressed-insult list file is invalid (``file:line: reason``)."""


@dataclass(frozen=True)
class AddressedRules:
    """Compiled patterns.

    Attributes:
        en: English pattern on normalised (case-folded) text; group ``noun`` is the insult.
        zh: Chinese pattern; group ``noun`` is the insult.
        zh_forum: Chinese pattern for another user named by place (楼上的死胖子, 楼主这个丑八怪);
            groups ``opener`` and ``noun``.
        zh_looks: Chinese pattern for a remark on the reader's looks (你长得真丑, 你好胖啊);
            group ``noun`` is the adjective.
        en_looks: English pattern for a remark on the reader's looks or wits, "you're" often
            misspelled ("your so fat", "ur ugly af"); group ``noun`` is the adjective.
        aimed: Pattern for an insult noun aimed by other means than "you": at a user named by
            handle ("@user rat", what "@user 🐀" reads as) or before a bare "you" ("pig you",
            what "🐷 you" reads as); group ``noun``.
        severity: Severity of every hit.
        version: ``version`` plus 8 hex digits of the file's SHA-256.
    """

    en: re.Pattern[str]
    zh: re.Pattern[str]
    zh_forum: re.Pattern[str]
    zh_looks: re.Pattern[str]
    en_looks: re.Pattern[str]
    aimed: re.Pattern[str]
    severity: Severity
    version: str


def alternation(words: _Words) -> str:
    """A non-capturing alternation of ``words`` (longest first, spaces as ``\\s+``)."""
    parts = sorted({w.casefold() for w in words}, key=len, reverse=True)
    return "(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in parts) + ")"


def _english(f: AddressedFile) -> re.Pattern[str]:
    opener = alternation(f.openers_en)
    group = rf"(?:\s+{alternation(f.groups_en)})?" if f.groups_en else ""
    copula = rf"\s+{alternation(f.copulas_en)}" if f.copulas_en else "(?!)"
    fused = alternation(f.fused_en) if f.fused_en else "(?!)"
    dets = rf"(?:\s+{alternation(f.determiners_en)})+" if f.determiners_en else "(?!)"
    fused_det = rf"|(?P<fdet>{alternation(f.fused_det_en)}){dets}" if f.fused_det_en else ""
    det = rf"(?:\s+{alternation(f.determiners_en)})*" if f.determiners_en else ""
    mods = (
        rf"(?P<mods>(?:,?\s+{alternation(f.modifiers_en)}){{0,3}})"
        if f.modifiers_en
        else "(?P<mods>)"
    )
    # one fixed-width look-behind per word (Python's re needs fixed widths)
    not_after = "".join(rf"(?<!\b{re.escape(w.casefold())}\s)" for w in f.not_after_en)
    orders = rf"|{alternation(f.orders_en)},?" if f.orders_en else ""  # "get lost, loser"
    fused = rf"(?P<fused>{fused}){det}{fused_det}{orders}"
    head = rf"{not_after}\b(?:{opener}{group}(?P<cop>{copula}{det})?|{fused})"
    compound = rf"(?!\s+{alternation(f.compound_en)}\b)" if f.compound_en else ""
    nouns = alternation(f.nouns_en)
    # more nouns may follow ("you pig clown", what 🐷 🤡 read as); the last one decides
    noun = rf"\s+(?P<noun>{nouns})(?:\s+{nouns})*(?P<plural>s|es)?\b{compound}"
    if f.nouns_modified_en:  # these only after at least one contempt word
        modified = rf"\s+(?P<mnoun>{alternation(f.nouns_modified_en)})(?:s|es)?\b{compound}"
        noun = rf"(?:{noun}|{modified})"
    return re.compile(head + mods + noun)


def _chinese(f: AddressedFile) -> re.Pattern[str]:
    not_after = "".join(f"(?<!{re.escape(w)})" for w in f.not_after_zh)
    link = alternation(f.links_zh) if f.links_zh else "(?!)"
    mod = alternation(f.modifiers_zh) if f.modifiers_zh else "(?!)"
    compound = rf"(?!{alternation(f.compound_zh)})" if f.compound_zh else ""
    nouns = alternation((*f.nouns_zh, *f.body_nouns_zh))
    # emoji read as words arrive with spaces around them ("你这头 猪"): allow them between parts
    return re.compile(
        rf"{not_after}{alternation(f.openers_zh)}\s*(?:{link}\s*(?:{mod}\s*)?|{mod}\s*)"
        rf"(?P<noun>{nouns}){compound}"
    )


def _any(words: _Words) -> str:
    """:func:`alternation` of ``words``, or a pattern that never matches when there are none."""
    return alternation(words) if words else "(?!)"


def _chinese_forum(f: AddressedFile) -> re.Pattern[str]:
    """Another user named by their place in the thread (楼上, 楼主), a link (的, 这个) and a
    noun for a person (an animal noun is left out: 楼上的狗 is often the neighbour's dog)."""
    compound = rf"(?!{alternation(f.compound_zh)})" if f.compound_zh else ""
    nouns = _any((*f.person_nouns_zh, *f.body_nouns_zh))
    return re.compile(
        rf"(?P<opener>{_any(f.forum_openers_zh)})\s*{_any(f.forum_links_zh)}?"
        rf"\s*(?:{_any(f.modifiers_zh)}\s*)?(?P<noun>{nouns}){compound}"
    )


def _chinese_looks(f: AddressedFile) -> re.Pattern[str]:
    """你 or a thread place (楼上), then 长得 or an intensifier and a word for ugly or fat that
    ends the clause (你长得真丑, 你好胖啊, 楼主长得真丑), or 长得像 and an insult noun
    (你长得像头猪, 楼上长得跟猪一样). Without the clause end it is often another word (你好胖虎,
    a name), and without 长得 or an intensifier a friendly remark (你胖了)."""
    very = rf"(?:{_any(f.looks_intensifiers_zh)}\s*){{0,2}}"
    who = rf"(?:[你妳]们?|{_any(f.forum_openers_zh)}的?)"
    looks = _any(f.looks_zh)
    # 长得 / 真是 with an optional intensifier, else an intensifier or a degree complement
    # (你丑得可以); up to two intensifiers (你真的好丑, 你也太胖了吧)
    lead = r"(?:咋|怎么|真是|可真是)?\s*"  # 你咋长这么丑, 你怎么胖成这样
    adjective = (
        rf"(?:{lead}(?:(?:长得|长的|长|看起来)\s*|真是\s*|也?\s*(?={_any(f.looks_intensifiers_zh)}))"
        rf"{very}{looks}(?:{_any(f.looks_degrees_zh)})?|{lead}{looks}{_any(f.looks_degrees_zh)})"
    )
    particles = r"(?:[啊呀了吧哦呢嘛啦的]|了?一?点|哈+)*"
    end = rf"{particles}(?=$|[\s，。！？!?,.~…]|{_any(f.looks_follow_zh)})"
    nouns = _any((*f.nouns_zh, *f.body_nouns_zh))
    like = rf"(?:长得|长的|{looks}得)\s*(?:像|跟|和)\s*(?:一?[头个只条])?\s*{nouns}"
    return re.compile(rf"{who}\s*(?P<noun>{adjective}{end}|{like})")


def _english_looks(f: AddressedFile) -> re.Pattern[str]:
    """A second-person copula (misspellings too: "your", "ur", "u r"), up to two intensifiers
    and an adjective of ``looks_en`` ending the clause ("your so fat", "ur ugly af"); a bare
    "you" / "u" needs an intensifier ("u so dumb")."""
    if not f.looks_en:
        return re.compile("(?!)")
    very = _any(f.looks_intensifiers_en)
    who = rf"(?:{_any(f.looks_openers_en)}(?:\s+{very}){{0,2}}|(?:you|u)(?:\s+{very}){{1,2}})"
    tail = rf"(?:,?\s+{_any(f.looks_tail_en)})?" if f.looks_tail_en else ""
    return re.compile(
        rf"(?<![\w'’]){who}\s+(?P<noun>{_any(f.looks_en)})\b{tail}"
        r"(?=\s*(?:[.!?,;:…)]|$))"
    )


def _aimed(f: AddressedFile) -> re.Pattern[str]:
    """An insult noun said to a user named by handle ("@user rat", "@小明 猪", "@user is a rat",
    "rat @user"), or said before a bare "you" that ends the clause ("pig you", "clown you!");
    a compound word after the noun ("@user pig farm") is no hit. Each alternative names its
    noun group ``n_*`` (English) or ``zh``."""
    en_nouns = _any(f.nouns_en)
    en_compound = rf"(?!\s+{_any(f.compound_en)}\b)" if f.compound_en else ""
    zh_compound = rf"(?!{_any(f.compound_zh)})" if f.compound_zh else ""
    end = r"(?=\s*(?:[.!?,;:…)，。！？~]|lol\b|$))"
    at = r"(?<![\w@])@[^\s@]{1,30}"
    handle = (
        rf"{at}[:,：，]?\s+(?:(?:is|'s)\s+(?:a|an|such\s+an?|the)\s+)?(?:(?P<n_at>{en_nouns})"
        rf"(?:\s+{en_nouns})*(?:s|es)?\b{en_compound}|(?P<zh>{_any(f.nouns_zh)}){zh_compound}){end}"
    )
    before = rf"(?<![\w'’])(?P<n_first>{en_nouns})(?:\s+{en_nouns})*,?\s+(?:you|u\b|{at}){end}"
    return re.compile(rf"{handle}|{before}")


@lru_cache(maxsize=8)
def load_addressed_rules(path: Path | str = DEFAULT_ADDRESSED_PATH) -> AddressedRules:
    """The compiled lists of ``path``, cached per path; :class:`AddressedError`
    (``file:line: reason``) for a file that is unreadable, not TOML or invalid."""
    loaded = load_toml(Path(path), AddressedFile, error=AddressedError)
    f = loaded.value
    return AddressedRules(
        en=_english(f),
        zh=_chinese(f),
        zh_forum=_chinese_forum(f),
        zh_looks=_chinese_looks(f),
        en_looks=_english_looks(f),
        aimed=_aimed(f),
        severity=f.severity,
        version=f"{f.version}+{content_hash(loaded.text, digits=8)}",
    )


_TAIL_END = re.compile(r"\s*(?:[.!?,;:)\]\"'…]|$)")


def addressed_insults(text: str, rules: AddressedRules | None = None) -> list[tuple[int, int, str]]:
    """Insults aimed at the reader in normalised ``text``.

    Args:
        text: Normalised post (:func:`~workflows.content_moderation.normalize.normalize`).
        rules: The compiled lists (the packaged ``addressed.toml`` by default).

    Returns:
        ``(start, end, term)`` per match, offsets into ``text``, term ``you <noun>``,
        ``你<noun>`` or ``<place><noun>`` (楼上胖子). For example ``you racist pigs`` gives
        ``[(0, 15, 'you pig')]`` and ``pigs are smart animals`` gives ``[]``
        (``tests/unit/test_moderation_addressed.py``).
    """
    rules = rules or load_addressed_rules()
    out = []
    for m in rules.en.finditer(text):
        mods = m.group("mods").strip()
        if m.group("mnoun") and not mods:  # "you guys are animals": praise as often as not
            continue
        bare = not (m.group("cop") or m.group("fused") or m.group("fdet") or mods)
        # a bare singular may be a verb ("did you rat me out"): only before punctuation or the end
        if bare and not m.group("plural") and not _TAIL_END.match(text, m.end()):
            continue
        out.append((m.start(), m.end(), f"you {m.group('noun') or m.group('mnoun')}"))
    out += [(m.start(), m.end(), f"你{m.group('noun')}") for m in rules.zh.finditer(text)]
    for m in rules.zh_forum.finditer(text):
        out.append((m.start(), m.end(), f"{m.group('opener')}{m.group('noun')}"))
    out += [(m.start(), m.end(), f"你{m.group('noun')}") for m in rules.zh_looks.finditer(text)]
    out += [(m.start(), m.end(), f"you {m.group('noun')}") for m in rules.en_looks.finditer(text)]
    for m in rules.aimed.finditer(text):
        noun = m.group("n_at") or m.group("n_first")
        out.append((m.start(), m.end(), f"you {noun}" if noun else f"你{m.group('zh')}"))
    return out
