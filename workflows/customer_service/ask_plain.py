"""Plain ask forms: the allow-list half of the write gate (gate10).

The other marks of the gate (:mod:`~workflows.customer_service.asks`,
:mod:`~workflows.customer_service.ask_marks`, :mod:`~workflows.customer_service.ask_later`)
recognise bad forms by their words, and a list of bad forms is never complete: "anything but
a refund", "cancel the gift wrap on ORD-…", "please stop ORD-… from being cancelled",
我妈妈想要…退款, 昨天我说要退款, "remind me later to request a refund" each passed a list.
This half works the other way round: a sentence that mentions a write must BE a plain ask.

A sentence is plain when, after the benign words are set aside, each of its clauses is either

* a plain ask: an ask cue of the customer's own (``I want``, ``I'd like to``, ``can you``,
  ``please``, 我要, 我想, 请, 帮我, 麻烦 …; or none: an imperative) that directly governs the
  write verb or noun (``refund``, ``a refund``, ``my money back``, ``cancel``, ``cancellation``,
  退款, 退钱, 取消, "change the address of … to …", 把…的地址改成…), whose object is the order
  (its id, "my order", "it", 这个订单, or nothing), or
* a clause of a kind that goes with an ask and mentions no write
  (:func:`~workflows.customer_service.ask_tail.unsure_tail`: what is wrong with the goods,
  thanks, urgency, a detail of the order).

Benign words: greetings and thanks, politeness (please, kindly, 请, 麻烦, 一下), the order id
and "my order", an amount phrase (the amount itself is read by
:mod:`~workflows.customer_service.amounts`, not here), "in full"/全额, "now"/"today"/"asap"/
现在/马上/尽快, and a reason clause (``because``, ``since``, ``as``, 因为, 由于 …) that
mentions no write and no other time, and does not speak of the shop or the ask in words of
no kind that goes with an ask (``because that always works``: sarcasm). The address after
"to"/改成 is the address reader's (:func:`~workflows.customer_service.asks.extract_address`).

Anything else ("cancel ORD-… tomorrow", "would you recommend cancelling …", "please calculate
my refund", 请阻止…被取消, 取消…的礼品包装) is an unusual form: no write is offered, and the
reply says the plain words that ask for it (``say "refund ORD-…"``), which are plain here.
Failing this way costs a customer one more message; failing the other way writes against
their intent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from workflows.customer_service.ask_forms import fix_typos
from workflows.customer_service.ask_tail import unsure_tail

#: Where a sentence ends (not the point of a figure: ``$7.50``).
_SENTENCES = re.compile(r"[.!?。！？\n](?!\d)")
#: The words that join two clauses ("go ahead and cancel" is one).
_JOINS = ("and", "so", "then", "also", "but", "however", "though", "although")
#: Where a clause ends: a comma, a semicolon, a colon, a dash, a join word, 然后.
_CLAUSES = re.compile(
    r"[,，;；:：、]|\s[-–—]+\s|[–—]+|(?<!ahead )(?<!thank you )(?<!thanks )\b(?:"
    + "|".join(_JOINS)
    + r")\b|"
    r"然后|并且|而且|所以|另外|并(?=给|把|帮|退|取消)"
)
#: The order, written ``§``: an order id (a malformed one is asks.py's business), six bare
#: digits (read_ids: an id), "my order" (with or without its id).
_ORDER_ID = re.compile(r"(?<![a-z0-9])ord[-\s_]?\d+|(?<![\w$¥￥€£.,])\d{6}(?![\w.,])")
_ORDER_EN = re.compile(
    r"\b(?:(?:my|the|this|that|our|an?) (?:\w+ )?(?=order|purchase))?"
    r"(?:(?:my|the|this|that|our|an?) )?(?:(?:whole|entire|recent|last|first|second|third|"
    r"latest|newest|oldest|older|newer|other|previous|earlier|blue|red|black|white) )?"
    r"(?:order|purchase|item|product|parcel|package|one)(?: (?:number|no\.?|num|#|id))?"
    r"(?:\s*[:#]?\s*§)?(?: with (?:the )?tracking (?:number|no\.?) \w+)?(?!\w)|"
    r"\bsomething (?:i|we) (?:bought|ordered|purchased)\b|§(?: (?:and|&) §)*"
)
_ORDER_ZH = re.compile(
    r"(?:(?:我的|这个|这|该|此)?(?:订单|单子|这单)(?:号|编号)?[:：]?\s*§?(?:号)?|§|单号§|"
    r"(?:有)?(?:(?![退款取消地址把给帮请我])[\u4e00-\u9fff]){1,6}的那(?:张|个|笔|一)?(?:订单|单)|"
    r"(?:最早|最近|最新|较旧|较早|较新|另一|上一|第[一二三四五六七八九十\d]+)(?:的)?(?:那)?(?:张|个|笔)?(?:订单|单))"
)
#: An amount (the amount reader's business: here it is only allowed to stand in the ask).
_AMOUNT = re.compile(
    r"(?:(?:up to|at most|no more than|max(?:imum)?|最多只?|不超过|顶多) ?)?"
    r"(?:(?:usd|us\$|\$|eur|€|gbp|£|rmb|cny|¥|￥|hkd|aud|cad)\s?[-−]?\s?\d[\d,.]*|"
    r"[-−]?\d[\d,]*(?:\.\d+)?\s?(?:usd|dollars?|bucks|euros?|eur|pounds?|gbp|rmb|cny|元|块钱?|美元|"
    r"人民币)|\d[\d,]*(?:\.\d+)?)|\b(?:in full|fully|the full amount|the whole amount|"
    r"all of|the whole of|the entire amount of|half(?: of)?|a half)\b|全额|全款|全部|一半|部分|"
    r"\b(?:(?:twenty|thirty|forty|fifty|a|one) )?(?:one|two|three|four|five|six|seven|eight|nine|"
    r"ten|twenty|thirty|forty|fifty|hundred|thousand) (?:dollars?|bucks?|euros?|pounds?|quid)\b|"
    r"\b(?:a|one) (?:dollar|buck|euro|pound|quid)\b|"
    r"[零一二两三四五六七八九十百千万几]+(?:元|块钱?|美元)"
)
#: Greetings, thanks, politeness and "now": set aside wherever they stand.
_BENIGN_EN = re.compile(
    r"\b(?:hi|hello|hey|dear (?:team|support|sir|madam)|good (?:morning|afternoon|evening)|"
    r"thanks(?: a lot| so much)?|thank you(?: (?:so|very) much| a lot)?|many thanks|thx|ty|"
    r"cheers|much appreciated|yes|yeah|yep|actually|on second thought|instead(?! of)|"
    r"please|pls|plz|kindly|sorry|ok|okay|just|right now|now|today|asap|as soon as possible|"
    r"immediately|right away|straight away|urgently|quickly|for me|if possible|"
    r"if you can|if you could|if you don't mind|thank u|sure|too|as well|"
    r"(?:can|could) (?:you|u) (?:help(?: me)?|do (?:it|that|this))|is (?:that|this|it) possible|"
    r"as a (?:long-time |loyal |regular )?customer)\b"
)
_BENIGN_ZH = re.compile(
    r"客服|你好|您好|谢谢(?:你|您)?|多谢|感谢|辛苦(?:了|啦)?|麻烦(?:你|您)?了|(?<!申)请(?:你|您)?|唔该|"
    r"麻烦(?:你|您)?|拜托|劳驾|帮忙|一下|现在|马上|立刻|立即|尽快|赶紧|今天|直接|"
    r"(?:好吗|可以吗|行吗|好不好|就行|就好|就可以|吗|吧|呢|啊|呀|哦|喔|嘛|了|啦)$"
)
#: A reason clause: from its word to the end of the clause.
_REASON = re.compile(r"(?:\b(?:because|since|as|cause|'cause|cos|coz|due to)\b|因为|由于|因)(.*)$")
#: What a reason clause may not hold: another time, a wait, someone else's say.
_REASON_NOT = re.compile(
    r"\b(?:tomorrow|next|later|until|till|after|before|wait\w*|week|month|said|says|wants?|"
    r"told)\b|明天|下(?:周|个|星期|礼拜|次)|以后|之后|再|等|说|让"
)

#: Words of a reason that speak of the shop or of the ask itself ("because that always
#: works", "since you're all so reliable", 因为你们最靠谱了).
_OF_THE_SHOP = re.compile(
    r"\b(?:you|your|yours|you'?re|you'?ve|you'?ll|u|ya|y'?all|that|this|it'?ll|that'?ll)\b|"
    r"你|贵司|贵店|客服"
)


def _mocking(reason: str) -> bool:
    """Whether a reason clause speaks of the shop or of the ask and is not of a kind that
    goes with an ask (:func:`~workflows.customer_service.ask_tail.unsure_tail`: what is wrong
    with the goods, a detail of the order): sarcasm ("refund …, because that always works")
    reads so, and any such reason is no plain ask (cs12). "because you sent the wrong size"
    goes with an ask; "because it doesn't fit" speaks of neither."""
    return bool(_OF_THE_SHOP.search(reason)) and unsure_tail(reason)


def mocking_reason(text: str, mentions: Iterable[re.Pattern[str]]) -> bool:
    """Whether a reason clause of a sentence of ``text`` (lower-cased, normalised) that
    mentions no write (one of ``mentions``) is :func:`_mocking`:
    :func:`~workflows.customer_service.asks.doubt` reads it as ``unclear`` (sarcasm), so what
    the customer wants is asked back rather than offered."""
    patterns = list(mentions)
    reasons = (_REASON.search(_tokens(sentence)) for sentence in _SENTENCES.split(text))
    return any(
        r is not None and not any(p.search(r.group(1)) for p in patterns) and _mocking(r.group(1))
        for r in reasons
    )


#: The customer's own ask cue, present, first person or "you" (imperative: none).
_CUE_EN = (
    r"(?:(?:i|we)(?:'d| would) (?:like|love|appreciate)(?: you)?|"
    r"(?:i|we) (?:really |also |still |do |just )?"
    r"(?:want|wanna|need|wish|request|demand|require|ask for|apply for)(?: you)?|"
    r"(?:i|we)(?:'m| am) "
    r"(?:requesting|asking for|applying for)|i (?:just )?wanted to|would like|want|wanna|need|"
    r"(?:can|could|will|would) (?:you|u)|(?:can|could|may) (?:i|we)|(?:need )?help(?: me)?"
    r"(?: with)?|go ahead and|you can)"
)
#: A verb between the cue and the write noun ("get a refund", "process my refund").
_GET_EN = (
    r"(?:get|have|receive|obtain|request|ask for|apply for|file(?: for)?|submit|make|start|"
    r"initiate|process|issue|put in|place|claim|arrange|go ahead with|proceed with|send|give|"
    r"be given|be issued|getting|receiving|obtaining|requesting)(?: me| us)?"
)
_OBJ_EN = r"(?:§|it|them|this|that|this one|that one)"
#: An amount, "only" before it ("refund only USD 2 of …": a part ask; cs13).
_AMT = r"(?: (?:only )?¤)?"
_FORMS_EN = (
    rf"(?:refund|reimburse)(?: me| us)?{_AMT}(?: (?:for|of|on|to))?(?: {_OBJ_EN})?{_AMT}",
    rf"(?:(?:a|an|my|the|your) )?(?:¤ )?(?:full |partial |complete )?(?:refund|reimbursement|"
    rf"chargeback|money back)(?: (?:of|for) ¤)?(?: (?:for|of|on|from|to) {_OBJ_EN})?{_AMT}",
    rf"(?:my )?money back(?: (?:for|on|from) {_OBJ_EN})?",
    rf"(?:return|send back) {_OBJ_EN}(?: back)? for (?:a |my )?(?:full )?refund",
    rf"{_OBJ_EN} (?:refunded|cancell?ed){_AMT}",
    rf"cancel(?: {_OBJ_EN})?",
    rf"(?:(?:a|the|my) )?cancell?ation(?: (?:of|for|on) {_OBJ_EN})?",
    rf"(?:change|update|correct) (?:the |my |its )?(?:(?:shipping|delivery) )?address"
    rf"(?: (?:of|for|on) {_OBJ_EN})?",
)
#: The plain ask clause, English (benign words already set aside).
_PLAIN_EN = re.compile(
    rf"(?:§ )?(?:{_CUE_EN} )*(?:to )?(?:only )?(?:{_GET_EN} )?(?:{'|'.join(_FORMS_EN)})"
    r"(?: for me)?"
)
_CUE_ZH = (
    r"(?:我们?|你)?(?:要|想|想要|需要|希望|申请|要求|想申请|要申请|请求|得|能|可以|能不能|可不可以|"
    r"可唔可以|能否|只要|只想要?|只需要?)?"
)
_HELP_ZH = r"(?:帮我|给我|替我|为我|帮)?"
_WRITE_ZH = (
    r"(?:(?:处理|办理|申请|安排)?(?:我的|一个|一笔)?(?:退货(?:并|和|及)?)?(?:退款|退钱|退全款|退货款)|"
    r"退掉|(?:改成|改为|换成)?(?:只|仅|就)?退¤|"
    r"把钱退(?:给我|回来|回)?|取消(?:掉)?|撤销(?:订单)?|"
    # 退 whose object is the order (把§退, §帮我退, 把§的款再退一次: a refund of it)
    r"(?<=§)的?(?:钱|款|货款)?(?:再|重新)?退(?:一次|掉|给我|回来)?$|(?<=帮我)退$|"
    r"退(?:一下|一次|掉)?§(?:的|那笔|这笔)?(?:款|钱|货款))"
)
#: The plain ask clause, Chinese (spaces and benign words already set aside).
_PLAIN_ZH = re.compile(
    rf"{_CUE_ZH}{_HELP_ZH}(?:把|给|将|为|对)?§?的?{_CUE_ZH}{_HELP_ZH}¤?{_WRITE_ZH}(?:§|¤)*"
    rf"(?:掉|的|这个订单)?"
)
_ZH_POLITE = r"(?:请|麻烦|帮我|帮忙|给我|我要|我想|要|需要|想)*"
#: A correction before a new address ("forget the previous address, …"): goes with the ask.
_ADDRESS_BEFORE = re.compile(
    r"\b(?:(?:forget|ignore|scrap|disregard)|(?:don't|do not) use) (?:the|my) "
    r"(?:previous|old|earlier|first) address\b|"
    r"(?:之前|原来|以前|旧)的?地址(?:不对|错了|不要了|作废|不用了)"
)
#: What is wrong with the delivery, in words the tail reader has not got ("I haven't received
#: my order", 我冇收到貨).
_NOT_RECEIVED = re.compile(
    r"^(?:i|we) (?:have not|haven't|did not|didn't|never) (?:received|got(?:ten)?) §$|^我?冇收到|"
    r"\b(?:crush\w*|squash\w*|a mistake on your (?:side|end|part)|it cost ¤)|"
    r"^(?:originally )?i (?:ordered|bought|paid for|asked for) [\w ]{1,30}$|"
    r"^(?:i )?(?:got|received) (?:a |an |the )?\w+(?: one)?$|"
    r"^(?:take back|pick up|collect|come and get) §$|^上门(?:收回|取回|取件)(?:商品|§)?$"
)
#: Something else called off, said as a reason ("the concert was cancelled, help me get a
#: refund"): a statement in the past, never an ask for that write.
_CALLED_OFF = re.compile(
    r"^(?:the|my|our) (?:\w+ ){0,2}(?:was|got|has been|had been|were|have been) "
    r"(?:cancell?ed|postponed|delayed|called off|rescheduled)$"
)
#: An address change up to its new address: what follows belongs to the address reader.
_ADDRESS_HEAD = re.compile(
    rf"(?:{_CUE_EN} )*(?:to )?(?:change|update|correct|modify|edit|fix) (?:the |my |its )?"
    rf"(?:(?:shipping|delivery|postal|mailing) )?address(?: (?:of|for|on) {_OBJ_EN})?"
    rf"(?: for me)? (?:to|into)(?:\b|(?=[\u4e00-\u9fff]))|(?:{_CUE_EN} )*(?:to )?"
    rf"(?:ship|send|deliver)(?: {_OBJ_EN})?(?: instead)? to\b|"
    rf"\bmy new address (?:for|of|on) {_OBJ_EN} is\b|"
    rf"{_ZH_POLITE}(?:把|将)?§?(?:的|嘅)?(?:收货|配送|送货|邮寄|寄送)?地址{_ZH_POLITE}"
    r"(?:改成|改为|换成|改到|更改为|修改为|更新为|更新成|改|换|更改|修改)|"
    rf"{_ZH_POLITE}(?:修改|更改|更新|改|换)§?的?(?:收货)?地址(?:为|成|到)?|新地址[:：]"
)


def unusual(text: str, mentions: Iterable[re.Pattern[str]]) -> bool:
    """Whether a sentence of ``text`` (normalised: Traditional Chinese folded) that mentions a
    write (one of ``mentions``) is no plain ask (see the module's docstring).

    Example:
        >>> from workflows.customer_service.asks import _WRITE_WORDS as words
        >>> unusual("Please refund ORD-100076, it arrived broken.", words.values())
        False
        >>> unusual("Please refund ORD-100076 tomorrow", words.values())
        True
    """
    patterns = list(mentions)
    low = fix_typos(text.lower())
    start = 0
    for end in [*(m for m in _SENTENCES.finditer(low)), None]:
        sentence = low[start : end.start() if end else len(low)]
        question = end is not None and end.group(0) in "?？"
        start = end.end() if end else len(low)
        if any(p.search(sentence) for p in patterns) and not _plain(sentence, patterns, question):
            return True
    return False


def _plain(sentence: str, patterns: list[re.Pattern[str]], question: bool = False) -> bool:
    """Whether ``sentence`` (lower-cased) is a plain ask: each clause an ask of the plain form
    or of a kind that goes with an ask, at least one an ask; an address change's new address
    (after "to"/改成) is not read here. ``question``: the sentence ended with a question mark."""
    text = _tokens(sentence)
    head = _ADDRESS_HEAD.search(text)
    if head is not None:
        return _clauses_plain(text[: head.start()], patterns, head=True, question=question)
    return _clauses_plain(text, patterns, head=False, question=question)


#: A question that asks the agent to act ("can you refund …?", 能帮我退款吗, "…, 可以吗?"),
#: unlike one about the customer's own wish ("I want a refund for …?", 我要退款…吗: tester11 C).
_ASKS_YOU = re.compile(
    r"^\W*(?:§ )?(?:(?:can|could|will|would) (?:you|u)|(?:can|could|may) (?:i|we))\b|"
    r"\b(?:please|pls|plz|kindly)\b|能|可以|可否|可不可以|可唔可以|麻烦|请|帮|替我|为我|给我|唔该"
)
#: A clause asked as a yes/no question in Chinese: a final 吗 (么, 嘛, 呢) after it.
_ZH_QUESTION = re.compile(r"(?:吗|么|麽|嘛|呢)\W*$")


def _asked_as_own_wish(raw: str, clause: str, question: bool) -> bool:
    """Whether the ask ``clause`` (``raw`` before the benign words went) is put as a question
    (``question``: its sentence's last clause and a question mark; or a final 吗) that is no
    request to act: a question about the customer's own wish is no ask."""
    asked = question or bool(_ZH_QUESTION.search(raw.strip()))
    return asked and not _ASKS_YOU.search(raw.strip())


def _clauses_plain(
    text: str, patterns: list[re.Pattern[str]], *, head: bool, question: bool = False
) -> bool:
    """Whether every clause of ``text`` is plain; ``head``: an address head followed it;
    ``question``: the sentence ended with a question mark (its last clause is the question)."""
    asked = head
    reason = _REASON.search(text)
    if reason is not None and not (
        _REASON_NOT.search(reason.group(1))
        or any(p.search(reason.group(1)) for p in patterns)
        or _mocking(reason.group(1))
    ):
        text = text[: reason.start()]
    raws = _CLAUSES.split(text)
    for index, raw in enumerate(raws):
        clause = _bare(raw)
        if not clause:
            continue
        zh = re.sub(r"\s+", "", clause)
        if _PLAIN_EN.fullmatch(clause) or _PLAIN_ZH.fullmatch(zh) or _ask_and_note(clause, zh):
            if _asked_as_own_wish(raw, clause, question and index == len(raws) - 1):
                return False
            asked = True
        elif clause in ("§", "¤") or _goes_with(clause, head=head):
            continue
        elif any(p.search(clause) for p in patterns) or unsure_tail(raw.strip()):
            return False
    return asked


#: A note that is a whole clause of its own ("the box was crushed"), not an object.
_FINITE = re.compile(
    r"(?:the|my|it|this|they|i)\b.*\b(?:was|is|are|were|has|have|had|arrived|came|broke)\b"
)


def _ask_and_note(clause: str, zh: str) -> bool:
    """A plain ask with its object (the order, an amount) and then, with no mark between, a
    note that goes with an ask ("refund ORD-… the box was crushed", 退款ORD-…谢谢东西是坏的);
    never a thing of the order's ("cancel ORD-…'s gift wrap", 取消ORD-…的加急)."""
    for pattern, text in ((_PLAIN_EN, clause), (_PLAIN_ZH, zh)):
        ask = pattern.match(text)
        rest = text[ask.end() :].strip() if ask is not None else ""
        if not ask or not (ask.group(0).endswith(("§", "¤")) or _FINITE.match(rest)):
            continue
        if rest and not re.match(r"'s|的|之|嘅", rest):
            return not unsure_tail(rest) or _goes_with(rest, head=False)
    return False


def _goes_with(clause: str, *, head: bool) -> bool:
    """A clause that goes with an ask in words the tail reader has not got."""
    if _NOT_RECEIVED.search(clause) or _CALLED_OFF.search(clause):
        return True
    return bool(head and _ADDRESS_BEFORE.search(clause))


def _tokens(sentence: str) -> str:
    """``sentence`` with the order written ``§`` and an amount ``¤``."""
    text = _ORDER_ID.sub(" § ", sentence)
    text = _AMOUNT.sub(" ¤ ", text)
    text = _ORDER_EN.sub(lambda m: " § " if m.group(0).strip() else m.group(0), text)
    text = re.sub(r"(?<=[\u4e00-\u9fff§])\s+(?=[\u4e00-\u9fff§])", "", text)
    text = _ORDER_ZH.sub("§", text)
    text = re.sub(r"(?<=[\u4e00-\u9fff])\s+|\s+(?=[\u4e00-\u9fff])", "", text)
    return re.sub(r"\s+", " ", re.sub(r"§(?:\s*§)+", "§", text)).strip()


def _bare(clause: str) -> str:
    """``clause`` without benign words and marks."""
    clause = re.sub(r"(?<=[a-z])(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])(?=[a-z])", " ", clause)
    clause = _BENIGN_EN.sub(" ", clause)  # "please 退款 …": English courtesy beside Chinese
    clause = re.sub(r"[^\w\s§¤'’-]|_", " ", clause)
    for _ in range(3):  # trailing particles go one at a time: 退款吧了
        clause = _BENIGN_ZH.sub("", re.sub(r"\s+", " ", clause).strip())
    return re.sub(r"§(?:\s*§)+", "§", re.sub(r"\s+", " ", clause)).strip(" '-")
