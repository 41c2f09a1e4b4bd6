"""The positive side of the write gate: the forms in which a customer asks for a write now.

:mod:`workflows.customer_service.asks` counts a write word (refund, cancel, address change) as
the customer's ask only when :func:`asked` finds it in one of these forms, and no exclusion of
that module applies (negated, quoted, question, past, hesitant, bulk, :func:`conditional`):

* an **ask cue** before it in the same comma piece (``I want``, ``I'd like``, ``please``,
  ``can you``, ``go ahead and``, ``我要``, ``请``, ``帮我``, ``麻烦``, ``申请``, Cantonese
  ``唔该``), with at most a few words between and none of them a reading verb (``can you
  tell me about refunds`` asks for a read);
* a **bare request**: the write word at the start of its piece, with before it only courtesy,
  an order id or "my order" (``ok``, ``just``, ``ORD-100200``, ``订单``, ``把…``), and after it
  only an order id, "please", "now", "for me", a particle (``吧``, ``一下``, ``谢谢``) or a
  reason (``because …``, ``因为…``): ``Refund ORD-100200, it arrived broken``,
  ``订单ORD-100200退款``. A bare form in a sentence that ends with a question mark is a
  question (``Refund ORD-100200?``), not an ask.

Anything else (a statement, a question, someone else's words, a condition) is no ask: the gate
fails safe, and the reply tells the customer how to ask. :func:`fix_typos` first folds
mistyped negations (``don;t``, ``do nt``, ``dnt``, ``donot``, ``dun``) into ``don't`` and
one-letter typos of the ask words (``cancle``, ``wnat``, ``plaese``) into the words.

Hand-written patterns, as in :mod:`workflows.customer_service.asks`: this decision moves money,
so code that a test can pin makes it.
"""

from __future__ import annotations

import re

#: A negation typed with a stray or missing mark (``don;t``, ``do nt``, ``didn' t``, ``isnt``).
_NEG_TYPO = re.compile(
    r"\b(do|does|did|is|are|was|were|ca|wo|could|would|should|have|has|had|must|need)"
    r"(?:\s*[;,.'`]\s*|\s+)?n\s*[;,.'`]?\s*t\b'?",
    re.I,
)
#: Shorthand negations: ``dnt``, ``dn't``, ``donot``, ``dun`` (Singlish), ``don`` before a verb.
_NEG_SHORT = re.compile(
    r"\b(?:dnt|dn'?t|dun|don(?=\s+(?:want|wanna|wan|need|like|cancel|refund|change)\b))\b|"
    r"\b(do|does|did)not\b",
    re.I,
)
#: Words whose one-letter typos are read as the word (a real English word never is).
_TYPO_TARGETS = ("refund", "cancel", "please", "want", "need", "like", "would")
#: Negations a typo fold must never turn into an ask word ("wont" is one edit from "want").
_NOT_TYPOS = frozenset({"wont", "dont", "cant", "went", "won", "wan"})


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one insertion, deletion, substitution or swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        swap = len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]
        return len(diff) == 1 or (swap and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _fold_word(match: re.Match[str]) -> str:
    word = match.group(0)
    low = word.lower()
    if low in _NOT_TYPOS or low in _TYPO_TARGETS:
        return word
    for target in _TYPO_TARGETS:
        if low[0] == target[0] and _one_edit(low, target):
            from wordfreq import zipf_frequency  # only for a word one edit from a target

            if target == "please" or zipf_frequency(low, "en", wordlist="small") < 3.0:
                return target
    return word


def fix_typos(text: str, *, words: bool = True) -> str:
    """``text`` with mistyped negations folded into ``n't`` / ``not`` forms and (``words``)
    one-letter typos of :data:`_TYPO_TARGETS` into the word; other text is kept as is (the
    length may change).

    Example:
        >>> fix_typos("I don;t want it, I do nt, I dnt, I donot. Cancle it, plaese")
        "I don't want it, I don't, I don't, I do not. cancel it, please"
    """
    text = _NEG_TYPO.sub(lambda m: m.group(1) + "n't", text)
    text = _NEG_SHORT.sub(lambda m: f"{m.group(1)} not" if m.group(1) else "don't", text)
    if words:
        text = re.sub(r"(?<![\w'-])[A-Za-z]{4,7}(?![\w'-])", _fold_word, text)
    return text


#: An ask of the customer's own, in the present: what may stand before the write word.
#: What makes 只要 "as long as" (a condition): a 就/便 (not 就行, 就好 "that will do") or 都
#: later in its clause; else 只要 is "only want" (只要退40块: an ask; cs15).
_AS_LONG_AS = r"(?=[^，,。！？!?；;]*?(?:[就便](?!行|好|可以|够|成)|都))"
ASK_CUE = re.compile(
    r"\b(?:i\s+(?:(?:really|just|now|urgently|would|do|still|definitely|also|only)\s+)*"
    r"(?:want|wanna|need|request|"
    r"demand|require|wish|would like|'d like)|i'd\s+(?:like|want|appreciate|prefer)|"
    r"i would (?:like|appreciate|prefer)|we\s+(?:want|need|would like|'d like)|we'd like|"
    r"i'?m\s+(?:requesting|asking\s+for|asking\s+you|writing\s+to\s+(?:request|ask\s+for))|"
    r"i am\s+(?:requesting|asking\s+for|asking\s+you)|requesting|please|pls|plz|kindly|"
    r"(?:can|could|would|will)\s+(?:you|u|ya)|go\s+ahead|let'?s|help\s+me|my\s+request\s+is|"
    r"i\s+(?:hereby\s+)?(?:ask|apply)\s+for)\b|"
    r"(?:我们?要|我们?想|想要|需要|请|帮我|帮忙|麻烦|给我|申请|要求|希望|唔该|劳驾|替我|我得|"
    rf"只要(?!{_AS_LONG_AS})|只想|(?<![不重主只])要(?![是不求]))(?![了咗过])",
    re.I,
)
#: A polite past that asks now ("I wanted to cancel my order"): a cue for :func:`asked` only,
#: so that a past marker in its piece ("I wanted to cancel it yesterday") still declines it.
_POLITE_PAST = re.compile(
    r"\bi (?:just )?wanted to\b|\bi was hoping (?:to|you could|you'd)\b", re.I
)
#: A cue without its subject at the start of a piece ("need a refund for …", "想取消…").
_SUBJECTLESS = re.compile(
    r"\s*(?:(?:really|just|urgently|also)\s+)?(?:need|want|wanna|would like|requesting)\b|"
    r"\s*(?:还|也|就)?想(?![了过])",
    re.I,
)
#: A verb that asks for a read, between a cue and the write word ("can you tell me about").
_READ_VERB = re.compile(
    r"\b(?:check|tell|explain|know|see|find|look|show|verify|confirm|understand|clarify|"
    r"inform|describe|learn|ask about|about|whether|if|how|what|when|why)\b|"
    r"查|看|问|了解|知道|确认|告诉|解释|咨询|说明|怎么|怎样|如何|什么|多久",
    re.I,
)
#: What may stand before a bare request in its piece: courtesy, the order, 把.
_BARE_BEFORE = re.compile(
    r"(?:\s|[#:\-]|ord-\d+|\b(?:ok|okay|so|just|then|and|now|hi|hello|hey|right|alright|well|"
    r"please|pls|plz|kindly|yes|yeah|also|order|my|this|the|that|a|full|urgent|urgently|asap|"
    r"immediate|immediately|get|quick|quickly|only|actually|instead|on second thought)\b|"
    r"把|将|给|订单号?|我的|这个|这|该|单|那就|那么|那|就|直接|马上|立刻|立即|赶紧|尽快|急|好的|好|"
    r"请|麻烦|帮忙|的|嘅|收货|配送|送货|寄送|最多|至多|最高|只|仅|改成|改为|换成)*+",
    re.I,
)
#: What may follow a bare request in its piece: the order, courtesy, a particle.
_BARE_AFTER = re.compile(
    r"(?:\s|[#\-.!！。~]|ord-\d+|\b(?:for|on|of|from|to|me|my|the|this|that|it|them|order|"
    r"number|no|item|purchase|payment|card|account|original|please|pls|plz|now|asap|right|"
    r"away|straight|immediately|today|thanks|thank|you|thx|ty|cheers|then|request|full|fully|"
    r"in|amount|total|entire|whole|too|a|an|"
    # a part of the order, with or without its amount (workflows.customer_service.amounts
    # reads it): "refund half of ORD-…", "refund USD 20 of ORD-…"
    r"half|part|usd|eur|gbp|cny|rmb|hkd|cad|aud|dollars?|bucks|yuan|euros?|pounds?|only|just|"
    r"instead|"
    # a cap on it (asked back for the amount, never read as the whole): "up to $20"
    r"up|at|most|max|maximum|more|than|over|under|below|within|capped|limit|exceeding|tops)\b|"
    r"[$€£¥￥]|\d+(?:[.,]\d+)*|"
    r"吧|一下|下|谢谢|谢了|多谢|唔该|啦|呗|哈|呀|啊|嘛|哦|喔|订单号?|这个|这单|的|掉|给我|全额|全款|"
    r"马上|立即|立刻|现在|尽快|请|麻烦|急|号|申请|一半|部分|美元|元|块钱?|就行|就好|就可以|就够了?|"
    r"最多|至多|不超过|以内|封顶|上限|为限)*+",
    re.I,
)
#: The words that open a reason ("because", "since", 因为): what follows is the customer's why.
_REASON_WORDS = r"\b(?:because|since|cause|due to)\b|'cause\b|因为|由于"
#: A reason after the request (the reason words, and "as", "cos", "coz"): anything may follow it.
_REASON = re.compile(r"\b(?:as|cos|coz)\b|" + _REASON_WORDS, re.I)
#: A courtesy word that closes a request: what follows it is a new sentence typed without
#: a stop ("refund ORD-100200 pls the box was crushed").
_COURTESY = re.compile(
    r"\b(?:please|pls|plz|thanks|thank you|thx|ty|cheers)\b|谢谢|多谢|唔该", re.I
)
#: Where a clause's comma pieces break.
_PIECE_BREAK = re.compile(r"[,，、:：]|\s[-–—]\s|[—–]")


def _piece(clause: str, start: int, end: int) -> tuple[int, int]:
    """The bounds of the comma piece of ``clause`` that holds ``clause[start:end]``."""
    before = [m.end() for m in _PIECE_BREAK.finditer(clause, 0, start)]
    after = _PIECE_BREAK.search(clause, end)
    return (before[-1] if before else 0), (after.start() if after else len(clause))


def _cued(clause: str, start: int, piece_start: int) -> bool:
    """An ask cue before the write word in its piece, with a few words between, none read."""
    cues = [*ASK_CUE.finditer(clause, piece_start, start)]
    cues += _POLITE_PAST.finditer(clause, piece_start, start)
    cues += [m for m in [_SUBJECTLESS.match(clause, piece_start, start)] if m is not None]
    cues.sort(key=lambda m: m.end())
    if not cues:
        return False
    between = clause[cues[-1].end() : start]
    return len(between.split()) <= 6 and len(between) <= 40 and not _READ_VERB.search(between)


def _bare(intent: str, clause: str, start: int, end: int, bounds: tuple[int, int]) -> bool:
    """A bare request: only courtesy or the order before the write word in its piece, and only
    the order, courtesy, a particle or a reason after it."""
    piece_start, piece_end = bounds
    if not _BARE_BEFORE.fullmatch(clause[piece_start:start]):
        return False
    after = clause[end:piece_end]
    if intent == "change_address":  # the new address follows ("change the address to …")
        return True
    lead = _BARE_AFTER.match(after)
    rest = after[lead.end() if lead else 0 :]
    closed = lead is not None and _COURTESY.search(lead.group(0)) is not None
    return not rest.strip() or closed or _REASON.match(rest) is not None


def asked(intent: str, clause: str, start: int, end: int, question_mark: bool) -> bool:
    """Whether the write word at ``clause[start:end]`` stands in a positive ask form: an ask
    cue before it, or a bare request (not in a sentence that ends with a question mark,
    ``question_mark``). ``clause`` is lower-cased, normalised text."""
    bounds = _piece(clause, start, end)
    if _cued(clause, start, bounds[0]):
        return True
    return not question_mark and _bare(intent, clause, start, end, bounds)


#: A write made to wait on something: it is not asked for now.
_CONDITION = re.compile(
    r"\b(?:when(?! will\b)|whenever|once|until|till|otherwise|or else|"
    r"as soon as(?! (?:possible|you can|u can)\b)|in case|in the event|provided|providing|"
    r"as long as|unless|if|should (?:it|the|they|this)|by the time|"
    # "I'm (not) after a refund" seeks (or does not seek) one: no condition
    r"(?<!'m )(?<!\bam )(?<!\bnot )(?<!'re )(?<!\bare )"
    r"after(?! (?:waiting|all|so long|(?:\w+ ){0,2}of waiting)\b))\b|"
    r"如果|要是|假如|万一|的话|到时候?|之后|以后|否则|不然|除非|一旦|等(?:我|到|它|货|快递|收到)|"
    rf"只要{_AS_LONG_AS}|"
    r"再说|前(?:没|冇|还没|未|不)|(?:没|冇|不|未)(?:到|发货|来|送到)就|超过.{0,8}就",
    re.I,
)
#: What may stand before 就 ("then") when it is no condition's "then" (那就退款吧).
_PLAIN_THEN = re.compile(
    r"(?:\s|ord-\d+|那么|那|好吧|好的|好|行|我|你们|你|订单|这个|这单|直接|也|都)*"
)
#: Where a reason begins: what follows it is not read for a condition ("because when it came").
_REASON_START = re.compile(_REASON_WORDS, re.I)


def conditional(sentence: str, at: int) -> bool:
    """Whether ``sentence`` (lower-cased) makes the write word that ends at ``sentence[at]``
    wait on a condition or a time: a condition word (``when / once / until / otherwise / as
    soon as / after``, ``到时候 / 之后 / 否则 / 除非``) in the write's comma piece or before it,
    or opening a later piece (``cancel it, once it's back``), or a 就 ("then") after a
    condition (``周五前没到就退款``). A reason (``because …``, ``因为…``) is not read."""
    reason = _REASON_START.search(sentence, at)
    text = sentence[: reason.start()] if reason else sentence
    piece_end = _PIECE_BREAK.search(text, at)
    head = text[: piece_end.start()] if piece_end else text
    if _CONDITION.search(head):
        return True
    if piece_end is not None and any(
        _CONDITION.match(piece.strip()) for piece in _PIECE_BREAK.split(text[piece_end.end() :])
    ):
        return True
    piece = head[max((m.end() for m in _PIECE_BREAK.finditer(head, 0, at)), default=0) :]
    then = next((m.start() for m in re.finditer(r"就(?!行|好|可以|够)", piece)), -1)
    return then >= 0 and not _PLAIN_THEN.fullmatch(piece[:then])  # 就行: "that will do"
