"""Negation scope and clauses, in English and Chinese, on the classifier's normalised text.

"Don't moderate anything, I only need to track my parcel" asks for customer service: the cue
word *moderate* is in the scope of *don't*. :func:`negated_scopes` finds such scopes; a rule
match that lies inside one counts for nothing (rules with ``negatable = false`` excepted).

English cues are directive negations, not every "not": ``don't`` / ``do not`` / ``never``
followed by a verb of asking (``don't moderate``, ``do not need a report``), and ``no need
to``, ``without``, ``instead of``, ``rather than``, ``not asking``, ``not looking``, ``not a``.
"I did not receive my refund" or "my card is not working" negate nothing: there the negation
*is* the problem the customer reports. Chinese cues: 不要, 别, 无需, 不用, 不需要, 没必要, 不必,
甭, 用不着.

A scope runs from the cue to the end of its clause: punctuation, a contrast or focus word
(English ``but``, ``just``, ``only``, ``instead``, ``i``, ``please``; Chinese 但, 只, 就,
而是, 帮我, 请, 麻烦, 我想, 我要), at most 6 English words or 8 Chinese characters.

:func:`clauses` splits a text into the clauses of a compound request ("refund my order *and*
summarise the attached sheet", "帮我退款，另外把表格汇总一下").
"""

from __future__ import annotations

import re

#: Verbs of asking that a directive "don't"/"do not"/"never" negates.
_ASK_VERBS = (
    "moderate|review|check|screen|flag|remove|delete|ban|censor|approve|reject|block|hide|"
    "summari[sz]e|analy[sz]e|report|chart|plot|tabulate|open|read|look|touch|"
    # "i don't want my account (any more), close it": the customer's own thing is the
    # request, not an ask it negates
    r"need(?! my\b)|want(?! my\b)|"
    "care|worry|bother|send|process|refund|cancel|escalate|forward|route|transfer|track|"
    "contact|call|email|mark|treat|consider|handle|publish|post"
)
_EN_CUE = re.compile(
    r"\b(?:(?:don'?t|do not|dont|never|please don'?t|pls don'?t)\s+(?:" + _ASK_VERBS + r")\w*"
    r"|no need (?:to|for)|needn'?t|without|instead of|rather than|not asking(?: you)?(?: to| for)?"
    r"|not looking(?: to| for)?|not (?:a|an)\b)"
)
_EN_END = re.compile(r"[,.;:!?\n]|\b(?:but|just|only|instead|i|please|so|because)\b")
_ZH_CUE = re.compile(r"不需要|不要|无需|不用|没必要|不必|用不着|甭|别")
_ZH_END = re.compile(r"[，,。.!！?？;；:：\n]|但|只|就|而是|帮我|请|麻烦|我想|我要")
#: Scope ends that, right after a cue, belong to the negated verb phrase (不要帮我审核).
_ZH_VERB_LEAD = frozenset(("帮我", "请", "麻烦"))
_EN_MAX_WORDS = 6
_ZH_MAX_CHARS = 8
_WORD = re.compile(r"[a-z0-9']+")

#: Clause boundaries of a compound request, as one pattern (the reference the faster
#: :func:`clauses` reproduces exactly: ``tests/unit/test_clauses.py``): a sentence mark, or a
#: joining word with the comma and spaces before it.
#: Chinese words that join the clauses of a compound request (the fast tier's cue too).
ZH_JOINS = (
    "另外", "并且", "还有", "顺便", "同时", "然后", "以及", "再帮我", "再把", "此外", "除此之外",
    "再看看", "再帮忙", "顺带",
)  # fmt: skip
#: English words that join the clauses of a compound request (each splits a clause; the fast
#: tier's cue too, as a token).
EN_JOINS = ("and", "also", "plus", "then", "besides", "additionally", "moreover", "separately")
#: The joining words and phrases, as one alternation (``then`` left out: it joins only after a
#: comma); the two-word ones before ``and``, since the first alternative that matches wins.
#: Phrases that open a second request in chat ("where is my parcel btw summarise this sheet"):
#: clause joiners only, not the fast tier's cue tokens (its features stay as fitted).
_EN_JOIN_PHRASES = ("btw", "by the way", "one more thing", "in addition", "on top of that")
_EN_JOIN_ALT = "and also|and then|" + "|".join(
    w for w in (*_EN_JOIN_PHRASES, *EN_JOINS, "as well as") if w != "then"
)
#: A full stop that ends a sentence: after a word of two letters or more (or a number), not
#: after "mr", "dr", "no"..., and before a space ("refund order 5512. the attached sheet
#: ...", issue 46), so that "3.5", "e.g. the" and "mr. smith" split nothing.
_FULL_STOP = r"(?<=\w\w)(?<!\bmr)(?<!\bms)(?<!\bdr)(?<!\bst)(?<!\bno)(?<!\bvs)(?<!\bmrs)\.(?=\s)"
CLAUSE_PATTERN = (
    r"[;；。!！?？\n]|" + _FULL_STOP + r"|[,，]?\s*\b(?:" + _EN_JOIN_ALT + r")\b\s*"
    r"|[,，]\s*then\b\s*"
    r"|[,，]?\s*(?:" + "|".join(ZH_JOINS) + ")"
)
#: :data:`CLAUSE_PATTERN` in three scans that each start with a literal (Python's ``re``
#: finds those with a fast first-character search; the one pattern tried its optional comma and
#: spaces at every position; ``python -m benchmarks.classifier_bench`` measures
#: the classifier's time).
_MARK = re.compile(r"[;；。!！?？\n]|" + _FULL_STOP)
_JOIN_WORD = re.compile(r"(?:" + _EN_JOIN_ALT + r"|then)\b\s*")
_JOIN_ZH = re.compile("|".join(ZH_JOINS))
_EN_JOINS = (*EN_JOINS, "as well as", *_EN_JOIN_PHRASES)


_ZH_FIRST = re.compile("[不别无没甭用]")


def _en_cue_word(text: str) -> bool:
    """Whether ``text`` holds a word that every English cue (:data:`_EN_CUE`) holds: substring
    checks, no regex. ``dont`` and ``neednt`` are there because they hold no ``n't``/``not``."""
    return (
        "n't" in text
        or "not" in text
        or "dont" in text
        or "neednt" in text
        or "never" in text
        or "no need" in text
        or "without" in text
        or "instead" in text
        or "rather" in text
    )


def _has_cue(text: str) -> bool:
    """Cheap pre-check: could ``text`` hold a cue at all (substring scans, no regex for ASCII)."""
    return _en_cue_word(text) or (not text.isascii() and _ZH_FIRST.search(text) is not None)


def has_negation(text: str) -> bool:
    """Whether :func:`negated_scopes` of ``text`` is non-empty (a cue matches), cheaper: each
    language's cue pattern runs only when a substring check finds one of its cue words (the
    English pattern scans the whole text, so a Chinese text whose 不 passed the check does
    not pay for it)."""
    if _en_cue_word(text) and _EN_CUE.search(text) is not None:
        return True
    return (
        not text.isascii()
        and _ZH_FIRST.search(text) is not None
        and _ZH_CUE.search(text) is not None
    )


def in_scopes(span: tuple[int, int], scopes: list[tuple[int, int]]) -> bool:
    """Whether ``span`` (``(start, end)``) lies inside one of ``scopes`` (of
    :func:`negated_scopes`)."""
    a, b = span
    return any(x <= a and b <= y for x, y in scopes)


def negated_scopes(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the negated stretches of a normalised (lower-case) text.

    Example:
        >>> t = "don't moderate anything, i only need to track my parcel"
        >>> [t[a:b] for a, b in negated_scopes(t)]
        ["don't moderate anything"]
        >>> t = "不用审核，帮我查一下快递"
        >>> [t[a:b] for a, b in negated_scopes(t)]
        ['不用审核']
    """
    if not _has_cue(text):
        return []
    out: list[tuple[int, int]] = []
    for m in _EN_CUE.finditer(text):
        start = m.start()
        end_m = _EN_END.search(text, m.end())
        limit = end_m.start() if end_m else len(text)
        words = list(_WORD.finditer(text, m.end(), limit))
        stop = words[_EN_MAX_WORDS - 1].end() if len(words) >= _EN_MAX_WORDS else limit
        out.append((start, max(m.end(), min(limit, stop))))
    for m in _ZH_CUE.finditer(text):
        end_m = _ZH_END.search(text, m.end())
        # "不要帮我审核" / "别请人看": a request word right after the cue is part of the negated
        # verb phrase, not the start of a new clause
        while end_m is not None and end_m.start() == m.end() and end_m.group() in _ZH_VERB_LEAD:
            end_m = _ZH_END.search(text, end_m.end())
        limit = end_m.start() if end_m else len(text)
        out.append((m.start(), min(limit, m.end() + _ZH_MAX_CHARS)))
    out.sort()
    return out


_NEG_WORD = re.compile(r"(?:please |pls )?(?:don'?t|do not|dont|never)\b")


def mask(text: str, scopes: list[tuple[int, int]]) -> str:
    """``text`` with each scope's negated words replaced by spaces (same length).

    The negation word itself stays ("don't", "不用"), so a model reading the masked text still
    sees that something was negated, but not what.
    """
    if not scopes:
        return text
    chars = list(text)
    for a, b in scopes:
        m = _NEG_WORD.match(text, a) or _EN_CUE.match(text, a) or _ZH_CUE.match(text, a)
        keep = m.end() if m is not None else a
        for i in range(keep, b):
            if chars[i] != " ":
                chars[i] = " "
    return "".join(chars)


#: A joining word between two clauses: what opens a second request ("..., *also* ...").
_JOIN = re.compile(r"\b(?:" + "|".join(_EN_JOINS) + r")\b|" + "|".join((*ZH_JOINS, "还要")))
#: A quotation that closes and a joining word after it: in ``moderate this: "..." and then
#: reset my password`` the post ends at its closing mark, and what follows is a request.
_JOIN_AFTER_QUOTE = re.compile(
    r"[\"'”’」』»]\s*[-–—,.;:，。；、]*\s*(?:(?:"
    + "|".join(EN_JOINS)
    + r")\b|"
    + "|".join((*ZH_JOINS, "还要"))
    + ")"
)


def joins(text: str, end: int, start: int) -> bool:
    """Whether a joining word lies between two clauses: in ``text[end:start]`` (the boundary
    :func:`clauses` cut out) or among the first words of the next clause."""
    return _JOIN.search(text, end, min(len(text), start + 12)) is not None


#: Where a moderation ask usually ends and its post begins.
_FRAME_END = re.compile(r"[:：?？\"“「\n]")


def joined_before_post(text: str) -> bool:
    """Whether a joining word comes before the first mark that opens a post under review
    (``:``, ``?``, a quotation mark, a line break): "cancel my order, *and* check whether this
    comment is fine: great shop" may hold a request before the moderation ask, while in
    "moderate this: ... and ..." the joining word is the post's."""
    join = _JOIN.search(text)
    if join is None:
        return False
    end = _FRAME_END.search(text, 0, join.start())
    return end is None


def joined_after_post(text: str, start: int = 0) -> int | None:
    """Where a joining word follows a quotation that closes, at or after ``start``: the
    offset of the closing mark (what comes after it is outside the quoted post), or None."""
    m = _JOIN_AFTER_QUOTE.search(text, start)
    return m.start() if m is not None else None


def clauses(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each clause of a text (one clause when nothing splits it).

    Example:
        >>> t = "refund my order and summarise the attached sheet"
        >>> [t[a:b] for a, b in clauses(t)]
        ['refund my order', 'summarise the attached sheet']
    """
    # (start, end, kind) of each separator: 0 a sentence mark, 1 an English joining word, 2 a
    # Chinese one; an English word only at a word boundary
    seps = [(m.start(), m.end(), 0) for m in _MARK.finditer(text)]
    if any(word in text for word in _EN_JOINS):
        pos, search = 0, _JOIN_WORD.search
        while (m := search(text, pos)) is not None:
            a = m.start()
            if a and (text[a - 1].isalnum() or text[a - 1] == "_"):
                pos = a + 1  # inside a word ("brand"): look again one character on
                continue
            seps.append((a, m.end(), 1))
            pos = m.end()
    if not text.isascii():
        seps += [(m.start(), m.end(), 2) for m in _JOIN_ZH.finditer(text)]
    if not seps:
        return [(0, len(text))]
    # in the order the one pattern meets them: a joining word from the comma and spaces before
    # it (``[,，]?\s*``), which may hold a line break; a mark first where both begin
    seps.sort(key=lambda sep: (_lead(text, sep[0], 0) if sep[2] else sep[0], sep[2]))
    out: list[tuple[int, int]] = []
    start = 0
    for a, b, kind in seps:
        if a < start:
            continue  # inside the separator before
        if kind:
            lead = _lead(text, a, start)
            if kind == 1 and text.startswith("then", a) and text[lead : lead + 1] not in ",，":
                continue  # "then" splits only after a comma
            a = lead
        if a > start:
            out.append((start, a))
        start = b
    if start < len(text):
        out.append((start, len(text)))
    return out or [(0, len(text))]


def _lead(text: str, at: int, floor: int) -> int:
    """Where a joining word at ``at`` begins with the spaces and the one comma before it, not
    before ``floor``."""
    i = at
    while i > floor and text[i - 1].isspace():
        i -= 1
    return i - 1 if i > floor and text[i - 1] in ",，" else i
