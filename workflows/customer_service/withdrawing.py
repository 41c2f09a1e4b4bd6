"""A customer's message on a thread that waits for a person (tester7 F20).

While a confirmed write (a refund over the automatic limit, …) waits for a person's decision
(the graph interrupted in ``handoff``), the customer may write again. :func:`withdraws` reads
whether that message takes the pending write back: then the handoff is claimed ``withdrawn``
(:meth:`~workflows.customer_service.store.threads.Coordination.withdraw_handoff`, the same
conditional UPDATE a person's decision takes, so of a withdrawal and an approval racing from two
processes exactly one wins), the graph is resumed with the withdrawal (nothing is written) and
the customer is told so (:func:`withdrawn_text`). Any other message keeps the handoff waiting
and is appended to its context, where the person deciding sees it.

The reading is code's, not the model's (it decides whether money moves), and positive (tester8
F3): a negation alone withdraws nothing. The customer's own words must withdraw the write by
name (:data:`_NAMED`: "please stop the refund", "I don't want the refund any more", 不用退了,
撤回退款申请) or, with no other write named and no hurry or complaint, by a change of mind
(:data:`_SETTLED`: "I changed my mind", "I'll keep it", 算了), in a form not negated itself
("don't drop my refund", 不要忘了我的退款, 不要不退 are insistence) and not a question ("did
you cancel my refund?"). An insistence ("I still want it", "no rush", 还在等), an ask for the
write again, another order, someone else's words, an undecided or conditional message: no
withdrawal. Anything unclear keeps the handoff waiting; the person deciding reads it.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any

from langgraph.types import Command

from orchestrator.request import Request
from workflows.customer_service.amending import amended_text, amends
from workflows.customer_service.asks import (
    UNSURE_EN,
    UNSURE_ZH,
    doubt,
    normalise,
    own_words,
    read_asks,
)
from workflows.customer_service.language import reply_language
from workflows.customer_service.not_own import not_own_answer
from workflows.customer_service.plain_talk import CHECKED, WHO, noted_marks, unusual_reason
from workflows.customer_service.signals import read_signals
from workflows.customer_service.state import MAX_HISTORY, CustomerServiceState
from workflows.customer_service.store import OrderStore

#: The intent of each write tool (the ask a withdrawal negates).
INTENT_OF_TOOL = {
    "start_refund": "refund",
    "cancel_order": "cancel",
    "change_address": "change_address",
}

#: Determiners between a verb and the write it acts on ("stop THE refund", "drop MY whole …").
_DET = r"(?:(?:the|my|that|this|our|a|an|whole|entire|earlier|pending|refund)\s+){0,2}"
#: An English withdrawal verb ("cancel", "withdraw", "drop", "forget about", "call off", …).
_VERB_EN = (
    r"(?:cancel\w*|withdr[ae]w\w*|drop\w*|stop\w*|scrap\w*|forg[eo]t\w*(?: about)?|"
    r"never ?mind|call\w* off|pull\w*|retract\w*|revok\w*|abandon\w*|clos(?:e|ed|ing)|kill\w*|"
    r"void\w*|undo\w*|halt\w*|abort\w*|ditch\w*|nix\w*|give up(?: on)?|back out of|take back)"
)
#: What a withdrawal verb acts on when it is no particular write.
_REQUEST_EN = r"(?:request|claim|application)"
#: A Chinese withdrawal verb (normalised to Simplified) and the determiners after it.
_VERB_ZH = r"(?:取消|撤回|撤销|撤掉|收回|作废|放弃|停止|停掉|叫停|忘了|忘记|忘掉)"
_DET_ZH = r"(?:我的|这个|那个|这笔|那笔|该|这次|那次)?"
#: The write called off or not wanted ("不用了", "算了", "作废"): ends a topic ("退款就算了").
_OFF_ZH = (
    r"(?:就|也|还是|那就)?(?:取消|撤回|撤销|作废|算了|不用了|不要了|不必了|免了|不需要了|"
    # 退款的事就别办了, 这笔退款不用处理了 (tester14 B14)
    r"(?:别|不用|不要|不必|无需|甭)(?:再)?(?:办|处理|办理|弄|搞|管|进行)了?)"
)
#: An English clause end, or a word that starts a new part of it.
_END_EN = r"(?=\s*(?:$|[,.;:!?)]|(?:thanks|thank|please|i|as|because|since|so|and|but|though)\b))"
#: "… any more / after all / now", then a clause end (:data:`_END_EN`).
_TAIL_EN = r"(?:\s+(?:any ?more|any longer|after all|now|either|at all|then))?" + _END_EN


def _object_forms(en_nouns: str, zh_nouns: str) -> str:
    """A withdrawal verb acting on the write (``en_nouns`` / ``zh_nouns``) or on the request,
    actively ("stop the refund", 撤回退款申请, 把退款申请撤回, 退款就算了) or passively ("the
    refund request cancelled")."""
    # a bare "request" is this one, never "my request for a callback" (tester13 D)
    objects = (
        rf"(?:{en_nouns})(?:\s+{_REQUEST_EN})?|{_REQUEST_EN}"
        rf"(?!\s+(?:for|about|regarding|of|to|on)\s+(?!(?:a |an |the |my )?(?:{en_nouns})))"
    )
    zh_objects = rf"(?:{zh_nouns})(?:的)?(?:申请|请求|要求)?|(?:申请|请求)"
    return (
        rf"\b{_VERB_EN}\s+{_DET}(?:{objects})\b"
        r"(?!\s+(?:delay|status|process|timeline|update|department|team|page|form|issue)s?\b)|"
        r"\b(?:withdraw(?:ing)?|drop(?:ping)?|scrap(?:ping)?|forget(?:ting)?|call(?:ing)? off|"
        r"tak(?:e|ing) back)\s+(?:it|that)\b|\bcall(?:ing)? (?:it|that|the \w+) off\b|"
        rf"\b(?:{objects})\s+(?:to be |be |being )?(?:cancell?ed|dropped|withdrawn|stopped|"
        r"called off|scrapped|voided|closed|revoked|retracted|abandoned)\b|"
        rf"{_VERB_ZH}{_DET_ZH}(?:{zh_objects})|"
        rf"把{_DET_ZH}(?:{zh_objects})(?:给)?(?:{_VERB_ZH}|停了|丢了)|"
        rf"(?:{zh_nouns})(?:申请|请求|的事|这事|的事情)?{_OFF_ZH}"
    )


#: "Don't" / "no need to" / "you don't have to" / "don't bother" before a verb of the refund.
_NOT_TO = (
    r"(?:(?:do not|don'?t|dont|does not|doesn'?t)(?:\s+(?:have|need)\s+to|\s+bother(?:\s+with)?)?|"
    r"not have to|no need to|needn'?t|not necessary to)"
)
#: A verb of the refund after :data:`_NOT_TO` (its -ing form after "don't bother").
_PAY_VERB = (
    r"(?:refund(?:ing)?|reimburs(?:e|ing)|process(?:ing)?|issu(?:e|ing)|send(?:ing)?|"
    r"pay(?:ing)?|giv(?:e|ing)|return(?:ing)?)"
)

#: The customer's own withdrawal of each kind of pending write, in words that name it: a
#: withdrawal verb on it (:func:`_object_forms`), or the write itself negated ("I don't want
#: the refund any more", "no need to refund", 不用退了, 别退款, 不取消了, 地址不改了). Each is
#: counted only where it is not negated itself (:func:`_negated_before`: "don't drop my
#: refund", 不要不退) and not in a question (:func:`_question`).
_NAMED = {
    "refund": re.compile(
        _object_forms(r"refund\w*|reimbursement|money back", r"退款|退钱")
        + r"|\b(?:(?:(?:do not|don'?t|dont|no longer|not|never)\s+(?:really\s+)?(?:want|need)|"
        r"(?:rather|prefer(?: to)?) not)(?:\s+to)?"
        r"(?:\s+(?:get|have|receive|take|go through with))?|"
        rf"no need (?:for|of))\s+{_DET}(?:refund\w*|money back|reimbursement|it|this|that|them)"
        r"(?:\s+back)?" + _TAIL_EN +
        # "refund", "process", "issue" and "send" name the refund only with it (or the order,
        # or the money) as their object, or none ("don't send it", "don't send me the money";
        # "don't send a technician", "don't refund the shipping fee separately" withdraw
        # nothing: tester13 D, tester14 A14)
        rf"|\b{_NOT_TO}\s+{_PAY_VERB}(?:\s+(?:me|us))?"
        rf"(?:\s+(?:it|that|this|them|ord-\d{{6}}|{_DET}(?:refund\w*|money|reimbursement|"
        r"payment|order|purchase)))?(?:(?<=\bme|\bus)\s+back|(?<=money)\s+back)?"
        + _TAIL_EN
        + r"|^\s*(?:(?:so|then|ok|okay|fine|actually|and)\s+)?no (?:more )?"
        r"refunds?\b|(?<!退)(?:不用|不要|不想|不需要|不必|无需|毋须|别|甭|唔使|唔要|唔好|不)(?:再)?(?:要)?"
        r"(?:给我|帮我|帮)?(?:处理|办理|进行|发起|安排)?(?:我的|这个|那个|这笔|那笔|该|这次)?"
        # a bare 退 of the order or of nothing ("不用退了"), not of a fee or a part (不要退运费)
        r"(?:退款|退钱|退(?=\s*(?:[了吧啦呀啊喇咯]|$|\W|给我|这[个笔单]|订单|ord-)))"
        r"(?!不行|不可|是不行)|"
        # the money not to be paid back to me: 不用退我钱了, 不用把钱退给我, 钱就不用还我了 (cs15)
        r"(?:不用|不要|不必|不需要|无需|别|甭)(?:再)?(?:把)?(?:我的|这笔|那笔)?(?:钱|款)?(?:退|还)"
        r"(?:给)?我(?:的)?(?:钱|款)?(?=\s*(?:[了吧啦呀啊喇咯]|$|\W))|"
        r"(?:钱|款)(?:就|也)?(?:不用|不要|不必|不需要|无需|别|甭)(?:再)?(?:退|还)(?:给)?(?:我)?"
        r"(?=\s*(?:[了吧啦呀啊喇咯]|$|\W))",
        re.I,
    ),
    "cancel": re.compile(
        _object_forms(r"cancel(?:lation)?", r"取消(?:订单)?")
        + r"|\b(?:do not|don'?t|dont|no need to|needn'?t)\s+cancel\w*(?:\s+(?:it|that|this|"
        r"(?:the |my )?order))?"
        + _TAIL_EN
        + r"|\bkeep (?:it|the order|my order) (?:going|open|active)\b|"
        r"(?:不用|不要|不想|不需要|不必|别|不)(?:再)?取消|(?:还是|就)?保留(?:订单|它)",
        re.I,
    ),
    "change_address": re.compile(
        _object_forms(r"address change|change of address", r"(?:修改|更改|改)地址")
        + r"|\b(?:do not|don'?t|dont|no need to)\s+change (?:it|anything|(?:the |my )?address)\b|"
        r"\bkeep (?:the|my) (?:old|current|original|same|existing) address\b|"
        r"地址(?:就|也|还是)?不(?:用|要|必)?(?:改|换)了|不(?:用|要|必)?(?:改|换)地址了",
        re.I,
    ),
}
#: A change of mind that needs no object ("I changed my mind", "never mind", "forget it",
#: "I'll keep it", "don't bother", 算了, 不用了, 留着): counted only where the message names
#: no other write, and no insistence or complaint comes with it (:data:`_UNEASY`).
_SETTLED = re.compile(
    r"\b(?:changed? my mind|change of heart|never ?mind(?=\s*(?:$|[,.;:!?]|i\b))|"
    r"forget (?:it|that|about it)|scratch that|"
    r"(?:i'?ll|i will|i'?d rather|i want to|let me|i'?m going to|i am going to|decided to) "
    r"(?:just )?keep (?:it|them|the \w+)|(?:i'?m|i am) (?:just )?keeping (?:it|them|the \w+)|"
    r"(?:it'?s|it is|all|everything'?s?) (?:fine|ok|okay|"
    r"sorted|resolved) now|problem solved|decided (?:not to|against)|take (?:it|that) back|"
    r"keep (?:the|my) money|(?:do not|don'?t|dont) (?:bother|proceed|go ahead|do (?:it|that|"
    r"anything)|process it)|(?:no longer|don'?t|do not) need (?:it|that|this)" + _END_EN + r"|"
    r"(?:not|no longer) (?:needed|necessary)|no need any ?more)\b|"
    r"算了|算啦|不用了|不需要了|不必了|不要了|不想要了|没必要了|改(?:变)?主意|留[着著]|留下|撤[回销掉]|"
    r"作罢|当我没说|拉倒",
    re.I,
)
#: The customer still wants the write, or waits for it calmly ("I still want it", "no rush",
#: "any news", 还在等, 不急): no withdrawal, whatever else the message says.
_INSISTS = {
    "refund": r"\bstill (?:want|need|expect)|\bwant (?:my|the) money back|"
    r"\b(?:i|we) (?:really )?(?:want|need) (?:my|the|a) (?:refund|money)\b|还(?:是)?要退|还要$|"
    r"不退不行|非退不可|(?:必须|一定要)退",
    "cancel": r"\bstill want (?:it |the order |my order )?cancel|还(?:是)?要取消",
    "change_address": r"\bstill want (?:the |my )?address chang|还(?:是)?要改",
}
_CALM = (
    r"|\b(?:i'?ll|i will|i can|happy to) wait\b|\bwaiting (?:for|on) (?:it|the|my)\b|"
    r"\bno (?:rush|hurry)\b|\btake your time\b|\bkeep me (?:posted|updated|informed)\b|"
    r"\bany (?:news|updates?|progress|word)\b|还在等|等着|我等|不急|不着急|慢慢来|进展|进度|消息|"
    r"\bapprove (?:it|this|that|my)\b|批了|批准|通过吧"  # "don't bother replying, just approve it"
)
_INSIST = {intent: re.compile(words + _CALM, re.I) for intent, words in _INSISTS.items()}
#: Hurry or a complaint about waiting ("please hurry", "this is taking forever", 快点, 等太久了):
#: no withdrawal by a change of mind alone (:data:`_SETTLED`); a named one still counts.
_UNEASY = re.compile(
    r"\b(?:hurry|asap|as soon as possible|taking (?:so long|forever|ages|too long)|"
    r"(?:so|too) (?:long|slow)|fed up|ridiculous|unacceptable|still no|not yet|\w+ yet|"
    r"been waiting|waiting|can'?t wait|wait (?:any|much|so) ?longer)\b|"
    r"快点|快一点|尽快|赶紧|抓紧|催|等了|太久|太慢|还没|怎么还|再不|投诉|多久",
    re.I,
)
#: A negation before a form, English words (within the same part of a clause) or Chinese.
_NEG_EN = re.compile(
    r"\b(?:not|never|no|nobody|neither|nor|cannot|dont|doesnt|didnt|wont|cant|havent|hasnt|"
    r"isnt|arent|shouldnt|wouldnt)\b|n't\b"
)
_SCOPE_END_EN = re.compile(r".*\b(?:but|just|so|because|since|then|and|instead|only|if)\b")
_NEG_ZH = re.compile(r"不|没|别|勿|莫|甭|唔好|咪|未")
#: Chinese words with 不 / 没 that negate nothing that follows (不好意思, 没问题).
_NOT_NEG_ZH = re.compile(r"不好意思|不错|不过|不然|不客气|没问题|没事|没关系|不知道")
#: Clauses and sentences of a message (normalised, lower case).
_CLAUSE = re.compile(r"[^,.;:!?\n，。；：！？、]+")
_SENTENCE = re.compile(r"[^.!?\n。！？]+[.!?。！？]*")
#: A question ("did you cancel my refund?", 退款会被取消吗); :data:`_POLITE` asks instead.
_QUESTION = re.compile(
    r"[?？]|[吗么呢]\s*$|^\s*(?:did|does|do(?! not|n'?t)|is|are|was|were|will|would|why|how|"
    r"when|what|where|has|have|can i|could i|should i|may i|shall)\b|会不会|是不是|有没有|为什么|"
    r"怎么|什么时候",
    re.I,
)
_POLITE = re.compile(
    r"^\s*(?:(?:can|could|would|will) you (?:please |kindly )?|please )|"
    r"(?:能不能|可不可以|可以|能|麻烦(?:你|您)?|请)(?:帮我|帮忙|给我)",
    re.I,
)
#: Not decided yet ("not sure", "I don't know if I should", 要不要) or only on a condition
#: ("if it arrives tomorrow …", 如果…; not "if possible", 可以的话): the person reads it.
_UNDECIDED = re.compile(
    r"\b(?:" + UNSURE_EN + r"|(?:don'?t|do not) know|(?:if|unless|in case)\b(?! (?:possible|"
    r"you can(?!'?t|not)|you could(?!n)|that'?s (?:ok|okay|fine|possible)|it'?s not too "
    r"late)))\b|" + UNSURE_ZH + r"|再想想|不知道|如果|要是|假如|万一|(?<!可以)(?<!方便)(?<!能)的话",
    re.I,
)


def _negated_before(clause: str, start: int) -> bool:
    """Whether the words of ``clause`` just before ``start`` negate what follows ("don't
    [want you to] drop …", 千万别把…, 我没有改主意, 不要不退)."""
    before = clause[:start]
    cut = _SCOPE_END_EN.match(before)
    words = before[cut.end() if cut else 0 :].split()[-6:]
    if _NEG_EN.search(" ".join(words)):
        return True
    ba = before.rfind("把")  # 别把我的退款申请撤回: the negation stands before 把 and its object
    window = before[max(0, ba - 4) :] if ba >= 0 else before[-6:]
    return bool(_NEG_ZH.search(_NOT_NEG_ZH.sub("  ", window)))


def _found(pattern: re.Pattern[str], text: str, *, asked: bool = False) -> list[tuple[int, int]]:
    """The spans of ``pattern``'s matches in ``text`` that are not negated
    (:func:`_negated_before`) and, unless ``asked``, not in a question (a request put as one
    counts)."""
    found: list[tuple[int, int]] = []
    for s in _SENTENCE.finditer(text):
        sentence = s.group(0)
        if not asked and _QUESTION.search(sentence) and not _POLITE.search(sentence):
            continue
        for c in _CLAUSE.finditer(sentence):
            at, clause = s.start() + c.start(), c.group(0)
            found += [
                (at + m.start(), at + m.end())
                for m in pattern.finditer(clause)
                if not _negated_before(clause, m.start())
            ]
    return found


def withdraws(message: str, action: dict[str, Any] | None) -> bool:
    """Whether ``message`` takes back the pending write ``action`` (the handoff's confirmed
    action: ``tool``, ``arguments.order_id``). Without an action (a handoff with nothing to
    write) nothing can be withdrawn: False.

    Positive, never by a negation alone (tester8 F3): the customer's own words must withdraw
    the write by name (:data:`_NAMED`), or by a change of mind with no other write named and
    no hurry or complaint (:data:`_SETTLED`), in a form not negated itself and not a
    question; and nothing may insist on the write (:data:`_INSIST`), ask for it or another
    write again, name another order, quote someone else or be undecided. Anything unclear
    keeps the handoff waiting, where the person deciding reads the message.

    Example:
        >>> act = {"tool": "start_refund", "arguments": {"order_id": "ORD-100200"}}
        >>> withdraws("I changed my mind, don't refund it", act), withdraws("any news?", act)
        (True, False)
        >>> withdraws("Please don't forget about my refund", act), withdraws("不用退了", act)
        (False, True)
    """
    intent = INTENT_OF_TOOL.get(str((action or {}).get("tool")))
    if intent is None:
        return False
    order_id = str(((action or {}).get("arguments") or {}).get("order_id") or "").upper()
    named = read_signals(message).order_ids
    if named and order_id not in named:  # about another order
        return False
    own = own_words(normalise(message)).lower()
    if doubt(message) == "quoted" or _UNDECIDED.search(own):
        return False
    spans = _found(_NAMED[intent], own)
    if _insists(own, intent, spans):
        return False
    if spans and all(_IT.fullmatch(own[a:b]) for a, b in spans):  # "forget it": no name
        return _only(own, spans) and not _vague(own, spans)
    if spans:  # another write asked for besides (outside the withdrawal): the person reads it
        rest = "".join(" " if any(a <= i < b for a, b in spans) else c for i, c in enumerate(own))
        return not read_asks(rest).writes
    asks = read_asks(message)
    if asks.writes or {i for i, _ in asks.declined} - {intent} or _uneasy(own):
        return False  # asked again, another write named, or in a hurry: not a change of mind
    settled = _found(_SETTLED, own)
    return bool(settled) and _only(own, settled) and not _vague(own, settled)


#: A change of mind that may be of anything ("never mind", "forget it", 算了, 不用了): alone, a
#: person reads it (tester13 D: "never mind", 不用了，谢谢, 算了算了，等吧 had withdrawn refunds).
_VAGUE = re.compile(
    r"never ?mind|forget (?:it|that|about it)|scratch that|算了|算啦|不用了|不需要了|不必了|拉倒|"
    r"(?:do not|don'?t|dont) (?:bother|do (?:it|that|anything))|no need any ?more|"
    r"(?:forget|drop|scrap)\w*\s+(?:it|that)"
)


def _vague(own: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every change of mind at ``spans`` of ``own`` is :data:`_VAGUE` and ``own``
    names no write or request ("don't bother with the refund" names it)."""
    named = re.search(
        r"refund|money back|request|cancel|address|second thoughts?|changed? my mind|退款|退钱|"
        r"申请|取消|地址|改主意|想了想",
        own,
    )
    return named is None and all(_VAGUE.fullmatch(own[a:b].strip()) for a, b in spans)


#: What may stand beside a change of mind with no object and still leave it one: courtesy,
#: fillers, the write and the order named (tester13 D: "forget it, I'll just wait", "scratch
#: that last message about the delivery", 算了，不说了 each say something more, so a person reads
#: them; the write keeps waiting).
_BESIDE_SETTLED = re.compile(
    r"\b(?:please|pls|thanks?|thank you|thx|sorry|ok|okay|so|well|actually|hi|hello|hey|oh|"
    r"anyway|i|i've|have|you|the|my|a|it|this|that|about|on|for|of|regarding|refund|request|"
    r"order|ord-\d+|then|now|after all|yes|yeah|and|really|just|again|all|guys|team|with|is|"
    r"was|be|item|items|stuff|product|them|one|hmm|second|thoughts?|decided)\b|谢谢|谢了|多谢|不好意思|抱歉|退款|订单|申请|这个|"
    r"那个|这笔|还是|那就|好的|东西|商品|自己|[吧了啦呀啊哦嘛嗯哈的我你好那就货]"
)


#: A withdrawal verb on "it" or "that" ("forget it", "drop that"): no write named, so read as a
#: change of mind with no object (:func:`_only`).
_IT = re.compile(
    r"(?:withdraw\w*|drop\w*|scrap\w*|forget\w*|call\w* off|tak(?:e|ing) back)\s+(?:it|that)|"
    r"call\w* (?:it|that|the \w+) off"
)


def _only(own: str, spans: list[tuple[int, int]]) -> bool:
    """Whether ``own`` holds nothing but the change of mind at ``spans`` and the words of
    :data:`_BESIDE_SETTLED`."""
    rest = "".join(" " if any(a <= i < b for a, b in spans) else c for i, c in enumerate(own))
    rest = re.sub(r"['’](?:ve|ll|m|d|s|re)\b", " ", rest)  # i've, i'll: their "i" is courtesy's
    return not re.search(r"[^\W_]", _BESIDE_SETTLED.sub(" ", rest))


def _insists(own: str, intent: str, withdrawn: list[tuple[int, int]]) -> bool:
    """Whether the customer's own words (not negated) still want the write, or wait calmly,
    outside the ``withdrawn`` spans ("I want the refund" in "I want the refund cancelled")."""
    found = _found(_INSIST[intent], own, asked=True)
    return any(all(b <= a2 or a >= b2 for a2, b2 in withdrawn) for a, b in found)


def _uneasy(own: str) -> bool:
    """Whether the customer's own words hurry the write or complain about the wait."""
    return bool(_found(_UNEASY, own, asked=True))


#: What each write is called in the replies below, per language.
_WRITE_NAMES = {
    "zh": {"start_refund": "退款", "cancel_order": "取消订单", "change_address": "修改地址"},
    "en": {
        "start_refund": "the refund of",
        "cancel_order": "the cancellation of",
        "change_address": "the address change of",
    },
}


def _subject(action: dict[str, Any], lang: str) -> tuple[str, str]:
    """The order id of ``action`` and what its write is called in ``lang``."""
    order_id = str((action.get("arguments") or {}).get("order_id") or "")
    names, other = (
        (_WRITE_NAMES["zh"], "操作") if lang == "zh" else (_WRITE_NAMES["en"], "the change to")
    )
    return order_id, names.get(str(action.get("tool")), other)


def withdrawn_text(action: dict[str, Any], lang: str) -> str:
    """The reply to a withdrawal that won: the write will not be made."""
    order_id, what = _subject(action, lang)
    if lang == "zh":
        return f"好的，已按您的要求撤回：订单 {order_id} 的{what}不会进行，没有做任何更改。"
    return (
        f"As you asked, your request is withdrawn: {what} {order_id} will not be made, and "
        "nothing was changed."
    )


def already_text(action: dict[str, Any], lang: str) -> str:
    """The reply to a withdrawal that came after a person approved the write and it was made."""
    order_id, what = _subject(action, lang)
    if lang == "zh":
        return (
            f"在您发这条消息之前，同事已经批准了订单 {order_id} 的{what}，"
            "并且已经办理，这里无法再撤回。如需进一步处理，请在这里告诉我们。"
        )
    return (
        f"A colleague had already approved {what} {order_id} before your message arrived, and "
        "it was made, so it can no longer be withdrawn here. Tell us here if you need anything "
        "else about it."
    )


def waiting_decision(message: str, action: dict[str, Any] | None) -> str:
    """What a customer's ``message`` does to the write ``action`` that waits for a person:
    ``amended`` (their own change of it, :func:`~workflows.customer_service.amending.amends`:
    the write is stale, tester9 F4), ``withdrawn`` (their own withdrawal, :func:`withdraws`),
    or ``kept`` (it keeps waiting, noted for the person deciding): anything else, and
    someone else's or machine-addressed text (kind O, cs11), and a message that is not plain
    talk (:func:`~workflows.customer_service.plain_talk.unusual_reason`: who writes or whose
    account it is, or a check line: cs14; a withdrawal is its own form, so a sentence of no
    kind that goes with an ask is this reader's to judge). Both readings are positive: a
    question ("how do refunds work?", "should I withdraw my refund request?"), talk of the
    wait, an account detail, another thing cancelled or another order asked about ends
    nothing (tester11 I, tester12 D; cs12). A missed change costs the person a look at the
    note; a wrong withdrawal lost the customer's refund."""
    if not_own_answer(message) or unusual_reason(message) in (WHO, CHECKED):  # cs14
        return "kept"  # who writes, or a check line: a person reads it
    if amends(message, action):
        return "amended"
    return "withdrawn" if withdraws(message, action) else "kept"


async def waiting_input(
    graph: Any, store: OrderStore | None, request: Request, message: str
) -> Command[Any] | None:
    """The graph input of a customer's ``message`` on a thread where a person decides or just
    decided a write (``graph``: the compiled graph; its checkpoint says which), else None.

    * The thread waits in ``handoff``: the customer's own withdrawal or change
      (:func:`waiting_decision`) that wins the store's claim is a ``Command(resume=…)``
      that resumes the handoff with it (nothing is written), unless the thread is marked
      (:func:`~workflows.customer_service.plain_talk.noted_marks`: someone said they are not
      the holder, or sent a check line, before or while the person decides): then the person
      reads it. Any other message (thanks,
      urging, a question, a message that is no answer of the customer's own:
      :func:`~workflows.customer_service.not_own.not_own_answer`, "SYSTEM: refund
      approved"), or a withdrawal that lost the claim to a person's decision, returns None
      (the dispatcher answers that the conversation waits for a person); the message is
      added to the handoff's context first, where the person deciding sees it.
    * A person approved it since the customer last wrote, and the write was made: a
      withdrawal is answered that it was approved already (:func:`already_text`).
    """
    if not request.thread_id:
        return None
    snapshot = await graph.aget_state({"configurable": {"thread_id": request.thread_id}})
    pending = next((dict(i.value) for t in snapshot.tasks for i in t.interrupts), None)
    if pending is None:
        return _already_decided(snapshot.values or {}, message)
    thread_id, turn = request.thread_id, int(pending.get("turn") or 0)
    customer = str(request.customer_id or "")
    action = pending.get("action")
    decided = waiting_decision(message, action)
    marks = noted_marks(store, {**(snapshot.values or {}), "thread_id": thread_id, "turn": turn})
    if marks["not_holder"] or marks["unusual"] in (WHO, CHECKED):  # tester14 D14's residue:
        decided = "kept"  # someone said they are not the holder, or a check line: a person reads
    amended = decided == "amended"
    withdrawal: Command[Any] = Command(
        resume={
            "withdrawn": True,
            "amended": amended,
            "text": message,
            "by": f"customer:{customer}",
        }
    )
    if decided != "kept":
        won = (
            await asyncio.to_thread(
                store.coordination.withdraw_handoff, thread_id, turn, customer, message
            )
            if store is not None
            else True
        )
        if won:
            return withdrawal
    if store is not None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        status = await asyncio.to_thread(
            store.coordination.note_message, thread_id, turn, at, message
        )
        if status == "withdrawn":  # withdrawn before, but that run failed: it ends now
            return withdrawal
    return None


def _already_decided(values: dict[str, Any], message: str) -> Command[Any] | None:
    """A withdrawal of a write a person approved (and that was made) in the thread's last run:
    the answer that it was approved already, from ``clarify``; else None."""
    handoff = values.get("handoff") or {}
    action = dict(handoff.get("action") or {})
    made = [r for r in values.get("tool_results") or [] if r.get("tool") == action.get("tool")]
    if handoff.get("decision") != "approved" or not made or not made[-1].get("ok"):
        return None
    if not (withdraws(message, action) or amends(message, action)):
        return None
    lang = reply_language(message, str(values.get("locale") or "en_US"))
    history = [*(values.get("history") or []), {"role": "customer", "text": message[:2000]}]
    update = {
        "clarify": already_text(action, lang),
        "message": message,
        "turn": int(values.get("turn") or 0) + 1,
        "history": history[-MAX_HISTORY:],
        "handoff": None,
    }
    return Command(goto="clarify", update=update)


def withdrawn_update(
    state: CustomerServiceState, handoff: dict[str, Any], decision: dict[str, Any]
) -> dict[str, Any]:
    """The ``handoff`` node's update when the customer withdrew: no write, the handoff
    decided ``withdrawn`` with their words, and the reply (:func:`withdrawn_text`) to send
    from ``clarify``."""
    words = str(decision.get("text") or "")[:2000]
    lang = reply_language(words, str(state.get("locale") or "en_US"))
    action = dict(handoff.get("action") or {})
    text = (
        amended_text(*_subject(action, lang), lang)
        if decision.get("amended")
        else withdrawn_text(action, lang)
    )
    history = [*(state.get("history") or []), {"role": "customer", "text": words}]
    return {
        "handoff": {
            **handoff,
            "decision": "withdrawn",
            "note": words,
            "by": str(decision.get("by") or "customer")[:120],
        },
        "message": words,
        "turn": int(state.get("turn") or 0) + 1,
        "history": history[-MAX_HISTORY:],
        "clarify": text,
    }


async def after_handoff(state: CustomerServiceState) -> str:
    """A withdrawn handoff is answered by code (``clarify``); a person's decision is drafted."""
    handoff = state.get("handoff") or {}
    return "clarify" if handoff.get("decision") == "withdrawn" else "draft_reply"
