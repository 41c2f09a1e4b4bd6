"""The parts of a request that the classifier reads on their own, besides the whole text.

* The text as read: Traditional Chinese folded to Simplified (:func:`simplified`), normalised
  (:func:`fold`), and over the scan limit its head and tail windows (:func:`scan`).
* Its *framing*: the words around a quotation or before a label's colon (:func:`framing`), or
  a short first or last line (:func:`line_framings`), where the ask about a quoted post is.
* Its *ask*: the first or last paragraph, line or sentences of a long text
  (:func:`ask_spans`), less a letter's salutation and sign-off (:func:`letter_body`).

How those reads decide is :class:`orchestrator.classifier.core.RuleClassifier`'s.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from orchestrator.classification import Classification
from orchestrator.classifier.engine import normalise
from orchestrator.routes import FALLBACK, Route
from orchestrator.textnorm import to_simplified


def simplified(text: str) -> str:
    """Traditional Chinese folded to Simplified (OpenCC t2s, :func:`to_simplified`) before any
    rule, n-gram or framing reads the text: the rules, the lexicon of the learned tiers and the
    labelled set are Simplified, and a request in Traditional characters must route like its
    Simplified twin (issue 46). ASCII text is returned as it is, without a lookup."""
    return text if text.isascii() else to_simplified(text)


def fold(text: str) -> str:
    """:func:`normalise`, with fold_text's own ASCII fast path inlined: plain printable ASCII
    needs no homoglyph, zero-width or NFKC folding, only lower case."""
    return text.lower() if text.isascii() and text.isprintable() else normalise(text)


def scan(text: str, limit: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The normalised text that is read, and the ranges of ``text`` it came from.

    A text over ``limit`` characters is read without its leading and trailing whitespace (a
    request padded with blank lines is not cut inside the padding), in two windows: the first
    ``limit // 2`` characters and the last ``limit - limit // 2`` of what remains, joined by a
    blank line so that no phrase spans the cut (one window when what remains fits).
    """
    n = len(text)
    if n <= limit:
        return normalise(text), ((0, n),)
    a = n - len(text.lstrip())
    b = len(text.rstrip())
    if b - a <= limit:
        return normalise(text[a:b]), ((a, b),)
    head, tail = limit // 2, limit - limit // 2
    norm = normalise(text[a : a + head]) + "\n\n" + normalise(text[b - tail : b])
    return norm, ((a, a + head), (b - tail, b))


#: Shortest request whose first and last paragraph are read on their own too (characters,
#: with two blank lines or more): shorter ones are an ask, not material with an ask in it.
ASK_MIN_CHARS = 400
#: Confidence the ask of a request within the scan limit needs to overrule the whole text.
ASK_SURE = 0.85
#: Longest ask unit that :func:`ask_spans` reads on its own (characters): a paragraph longer
#: than this is material, not an ask.
ASK_MAX_CHARS = 1000
#: Units of a long text, coarse to fine: paragraphs, lines, sentences.
_ASK_UNITS = (
    re.compile(r"\n[ \t\r\f\v]*\n\s*"),
    re.compile(r"\n\s*"),
    re.compile(r"(?<=[.!?。！？])\s*"),
)


#: What an ask looks like in a sentence of prose: a question mark, or a request's words
#: (English, Chinese). A story's sentence without one is material, not an ask.
ASK_LOOK = re.compile(
    r"[?？]|(?i:\b(please|pls|kindly|can you|could you|would you|will you|i need|i want|"
    r"i'?d like|i would like|help me|where is|when will|why (is|was|did|has|hasn'?t|have)|"
    r"how (do|can|long|much)|cancel|refund|resend|re-send|send me|change my|update my|"
    r"summari[sz]e|analy[sz]e|reset|fix)\b)|请|帮我|帮忙|麻烦|我要|我想|为什么|怎么|吗|呢"
)

#: Moderation rules (id prefixes) that ask for a review or name abuse: a long text where one
#: fires is a post to review, whatever its last sentence asks. What a post is called ("post",
#: "comment": ``mod.object``) and the swearing of an angry customer are not among them.
MODERATION_ASK_RULES = ("mod.request", "mod.framing", "mod.decisive", "mod.harm", "mod.tweet")


#: Moderation rules (id prefixes) that ask for a decision on a text (review it, flag it, may it be
#: posted): :func:`~orchestrator.classifier.compound.asks_to_moderate` with these tells a text
#: that asks to *moderate* what it quotes from one that asks to repeat or translate it.
REVIEW_ASK_RULES = ("mod.request", "mod.framing", "mod.decisive.framing", "mod.decisive.venue")

#: A request to do something with a quoted or colon-introduced text other than to judge it
#: (tester7 F15): repeat, say, read back, copy, translate, explain it, or look at a plain
#: sentence or message (帮我看看这句话：... : a customer who asks what a message about their order
#: means, not whether it may be posted; "check this comment: ..." names a post and stays out).
#: What someone said or wrote is no such task ("my friend wrote: ..."): it goes by what it
#: says (a customer's matter reads as customer service already; abuse is a post to judge).
#: Read on normalised Simplified text (:func:`simplified`, :func:`fold`), in the request's own
#: words (the quotation's contents left out).
TEXT_TASK = re.compile(
    r"(?i:\b(repeat|echo|read (it |this |that )?(back|out|aloud)|copy (it|this|that)\b"
    r"|say (it|this|that|after|back|exactly|the following)|translat(e|ion)|paraphrase|rephrase"
    r"|spell (it|this|that|out)|explain|meaning of|what does\b[^:\n]{0,40}\bmean"
    r"|what (this|that|it) means|(type|write) (it|this|that) (out|up|down|back)"
    r"|quote (it|this|that) back)\b"
    r"|^\W*(please |pls |just |now |can you |could you )?say\b"
    r"|\b(look at|check|see)\b[^:\n]{0,12}\b(this|that|the) (sentence|line|message|text|sms"
    r"|email|e-mail|letter|notice|notification)\b)"
    r"|重复|复述|照着[说念读写]|跟着[说念读]|跟我[说念读]|说一遍|念一[遍下]|念出来|读一[遍下]|读出来"
    r"|朗读|翻译|译成|解释|什么意思|啥意思|抄一[遍下]|复制"
    r"|(英文|英语|中文|日语|日文|韩语|粤语|法语|德语|普通话)[里中]?怎么(说|讲|写|念|读)"
    r"|(看看|看一下|看下|瞧瞧|瞅瞅)[^：:\n]{0,4}(这句话|这段话|这段文字|这句|这条(消息|短信|通知)|这封)"
)

#: Words that ask for a decision on a text, besides the moderation rules
#: (:data:`REVIEW_ASK_RULES`): "let it stand or delete it?", "is it rude", 能不能留, 删不删.
REVIEW_ASK = re.compile(
    r"(?i:\b(let it (stand|stay|through|go)|stand or|or (delete|remove|keep|ban|block|hide|flag"
    r"|report)|(delete|remove|hide|flag|report|ban|block) (it|this|that)|take (it|this) down"
    r"|(ok|okay|fine|allowed|alright|safe) to|allowed|appropriate|acceptable|offensive|rude"
    r"|abusive|toxic|spam)\b)|[删屏举违审]|合适|妥|能不能[发留用过]|可以[发留]|能[发留]吗"
)


def asks_past_prose(ask: Classification, whole: Classification, wraps: Route | None) -> bool:
    """Whether ``ask`` (the first or last unit of a long text, read alone) may overrule
    ``whole`` though it is not sure: the whole text read as moderation, and the ask decided
    customer service or a report (it passed the classifier's own thresholds: not a fallback).
    A story read as one reads as a post to review, however plainly the sentence after it asks
    for a refund (issue 46: "...600 words of a story... Can you refund order X?"); the caller
    also checks that no moderation rule asks for a review (only the n-grams of prose made the
    whole text a post) and that the request came on no channel."""
    return wraps is not None and whole.route == wraps and ask.route not in (FALLBACK, wraps)


def ask_spans(text: str) -> list[tuple[tuple[int, int], str]]:
    """Where a long text's ask may be: its first and its last unit, as ``(start, end)`` ranges.

    A unit is the coarsest of paragraph, line and sentences that is non-blank, at most
    :data:`ASK_MAX_CHARS` long and at most half the text (a unit that is most of the text is
    the material itself); for sentences, the last one and the last two (the first one and the
    first two), since an ask is often one sentence after a story (issue 46). Only the first
    and the last ``2 * ASK_MAX_CHARS`` characters are searched, so a 200,000-character text
    costs what a short one does.
    """
    window = 2 * ASK_MAX_CHARS
    longest = min(ASK_MAX_CHARS, len(text) // 2)
    out: list[tuple[tuple[int, int], str]] = []
    tail_off = max(0, len(text) - window)
    for end, piece, off in (("first", text[:window], 0), ("last", text[tail_off:], tail_off)):
        for unit, name in zip(_ASK_UNITS, ("paragraph", "line", "sentences"), strict=True):
            parts = letter_body(piece, [m for m in _split_spans(piece, unit) if m[1] > m[0]])
            if len(parts) < 2:  # the piece is one unit: no ask of its own in it
                continue
            edge = parts[0] if end == "first" else parts[-1]
            if edge[1] - edge[0] > longest:
                continue
            spans = [edge]
            if name == "sentences":
                pair = (parts[0][0], parts[1][1]) if end == "first" else (parts[-2][0], edge[1])
                if pair[1] - pair[0] <= longest:
                    spans.append(pair)
            out += [((a + off, b + off), f"{end} {name}") for a, b in spans]
            break
    return out


#: A letter's salutation and sign-off (English, Chinese), each a short unit of its own: read
#: on its own it is out of scope, though the letter is not. Longest unit taken for one.
_COURTESY_MAX_CHARS = 60
SALUTATION = re.compile(
    r"(?i)(?:(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings)"
    r"(?:[\s,]+[^\s?,.!]+){0,3}|to whom it may concern)[\s,!:.]*"
    r"|(?:您好|你好|客服你好|客服您好|亲爱的客服|亲|各位好|大家好|尊敬的[^，,：:。？?]{0,12})"
    r"[，,！!：:。\s]*"
)
SIGN_OFF = re.compile(
    r"(?i)(?:(?:many |warm |kind |best )?(?:thanks|thank you|regards|wishes)|cheers|best"
    r"|sincerely|yours(?: truly| sincerely)?|all the best|thx|ta)[\s,.!]*(?:[^\s?]+[\s,.]*){0,3}"
    r"|(?:谢谢|多谢|感谢|此致|祝好|辛苦了)[^？?]{0,8}"
)


def letter_body(text: str, parts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``parts`` (``(start, end)`` in ``text``) less a leading salutation and a trailing
    sign-off, so that the first and last units are the letter's body (all of them when that
    would leave none)."""
    a, b = 0, len(parts)
    if b - a > 1 and _courtesy(text, parts[a], SALUTATION):
        a += 1
    if b - a > 1 and _courtesy(text, parts[b - 1], SIGN_OFF):
        b -= 1
    return parts[a:b]


def _courtesy(text: str, span: tuple[int, int], pattern: re.Pattern[str]) -> bool:
    a, b = span
    return b - a <= _COURTESY_MAX_CHARS and pattern.fullmatch(text, a, b) is not None


#: A quotation of a text (four characters or more) inside a request: paired marks only, so
#: that an apostrophe never opens one.
_QUOTED = re.compile(r'“[^”]{4,}”|"[^"\n]{4,}"|「[^」]{4,}」|『[^』]{4,}』|«[^»]{4,}»')
#: A short label and a colon before a text: ``待审内容：...``, ``Flagged comment: ...``.
_LABEL = re.compile(r"\s*([^\n:：?？!！。.\"“「]{2,40}?)\s*[:：]\s*\S.{3,}", re.DOTALL)
#: Fewest characters a framing keeps outside the quotation (an ellipsis and a mark do not ask).
_FRAME_MIN_CHARS = 4


#: Longest line that :func:`line_framings` reads as the ask of a post on the other lines.
_FRAME_LINE_MAX = 120


def line_framings(text: str) -> list[str]:
    """For a text of two lines or more with nothing quoted or labelled, its last line and its
    first line, each with the rest as ``…``: where a post's ask on a line of its own may be
    (``{post}\\n(left under our video; does it stay?)``, ``Flag or keep?\\n{post}``). Only a
    line of at most :data:`_FRAME_LINE_MAX` characters."""
    if "\n" not in text:
        return []
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return []
    out = []
    if len(lines[-1]) <= _FRAME_LINE_MAX:
        out.append("…\n" + lines[-1])
    if len(lines[0]) <= _FRAME_LINE_MAX:
        out.append(lines[0] + "\n…")
    return out


def framing(text: str) -> str | None:
    """The words of ``text`` around the material it quotes or labels, or None when it has none.

    With a quotation (:data:`_QUOTED`), the text with each quotation's content replaced by
    ``…``; else with a label before a colon (:data:`_LABEL`), the label and the colon.
    """
    if not ('"' in text or "“" in text or "「" in text or "『" in text or "«" in text):
        m = _LABEL.match(text) if (":" in text or "：" in text) else None
        return m.group(1) + ":" if m else None
    frame, n = _QUOTED.subn(lambda q: q.group()[0] + "…" + q.group()[-1], text)
    if not n or len(frame.strip()) - 3 * n < _FRAME_MIN_CHARS:
        return None
    return frame


def _split_spans(text: str, sep: re.Pattern[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of the pieces of ``text`` between matches of ``sep``, stripped."""
    spans, start = [], 0
    for m in sep.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        out.append((a + lead, a + len(piece.rstrip())))
    return out


#: The n-gram moderation probability under which a line is not read alone as an ask to
#: moderate the lines around it (:meth:`~orchestrator.classifier.core.RuleClassifier._frame_of`).
LINE_MODERATION_P = 0.2
#: The n-gram probability of another route under which a framing is not read in full.
FRAME_OTHER_P = 0.1


class FastView(NamedTuple):
    """The fast tier's view of a part of a request (``RuleClassifier._fast_view``)."""

    #: class probabilities, in the order of ``classes``
    probs: list[float]
    #: cue flags (:data:`~orchestrator.classifier.learned.NEGATION` ...)
    flag: int
    #: the most probable class
    best: Route
    #: whether the whole read (``RuleClassifier._read``) would end with the fast decision
    #: for ``best``
    sure: bool
    #: the learned tier's classes (:attr:`~orchestrator.classifier.learned.LearnedModel.classes`)
    classes: tuple[Route, ...] = ()


class FrameRead:
    """What one framing read as, filled as it is needed: its fast view, then its full read."""

    __slots__ = ("full", "seen")

    def __init__(self, seen: FastView | None) -> None:
        self.seen = seen
        self.full: Classification | None = None


def leans_nowhere(seen: FastView, whole: Classification, only: Route | None) -> bool:
    """Whether a part's n-grams barely lean to any route it could decide (``only``, or any
    route but the whole text's), so that its full read is spared: a framing that
    decided had p >= 0.18 for its route on every labelled request and test case
    (:data:`FRAME_OTHER_P` 0.1; 381 of 654 full reads spared, no decision lost), a line that
    asked to moderate p >= 0.5 (:data:`LINE_MODERATION_P` 0.2)."""
    probs = seen.probs
    if only is not None:
        return probs[seen.classes.index(only)] < LINE_MODERATION_P if only in seen.classes else True
    other = max(
        (p for p, c in zip(probs, seen.classes, strict=True) if c != whole.route and c != FALLBACK),
        default=0.0,
    )
    return other < FRAME_OTHER_P


def keeps(seen: FastView, route: Route) -> bool:
    """Whether a part's fast view (:class:`FastView`) is a sure fast decision for ``route``
    or for fallback: its full read would keep the whole text's ``route``."""
    return seen.sure and (seen.best == route or seen.best == FALLBACK)
