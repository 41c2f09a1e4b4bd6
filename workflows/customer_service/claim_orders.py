"""Doubt about an order the tools found: part of the claim checker (:mod:`workflows.
customer_service.claims`), English and Chinese (Traditional is folded by OpenCC first).

A model sentence that asks the customer to check, confirm or send an order number ("Could you
check the order number?", 请核对订单号), or that says the order could not be found, does not
exist or that its number is wrong ("I couldn't find that order", 订单号有误, 查不到该订单),
tells the customer their order id is in doubt. That is true only when a tool answered
``not_found``; after a tool found the order (a look-up, a tracking answer, a write or a
policy refusal of it) it contradicts the turn's facts. The same holds for a sentence asking
for something else a tool result already holds this turn (the tracking number, the new
address): :func:`asked_or_doubted` names what a sentence asks for or doubts, the checker
judges it against the turn's facts.

Home-made rather than a library: a few phrase patterns over the project's own fact names,
read in microseconds (the checker's budget, ``benchmarks/truth.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: An order id as the store writes it (also inside Chinese text).
ORDER_ID = re.compile(r"(?<![A-Za-z0-9])ORD-\d{6}(?!\d)", re.I)

# --- English ----------------------------------------------------------------------------------

_EN_NUMBER = (
    r"(?:order|purchase)\s*(?:number|no\.?|#|id|reference|ref|code)s?|"
    r"(?:number|id|reference) (?:of|for) (?:the|your|this|that) order"
)
#: What a sentence may ask for, by the fact name that holds it.
_EN_THING = {
    "order_id": _EN_NUMBER,
    "tracking_number": r"tracking (?:number|no\.?|code|id|reference)s?",
    "shipping_address": r"(?:new |delivery |shipping |postal )?address(?:es)?",
}
#: Verbs that ask the customer to give a fact, and (for the order number) to check it.
_EN_GIVE = (
    r"(?:provide|send|share|give|tell|re-?send|re-?enter|re-?type|type|include|supply|quote|"
    r"need|have|know)(?:s|ing)?|let me know|what(?:'s| is| was)"
)
_EN_CHECK = (
    r"(?:check|confirm|verify|double[- ]?check|re-?check|re-?confirm|look (?:at|over)|"
    r"make sure)(?:s|ing)?|is"
)
#: A request or a question: the sentence is a question, or opens with please / an imperative
#: / a need of ours.
_EN_REQUEST = re.compile(
    r"\?\s*$|^\W*(?:please|kindly|just|can you|could you|would you|will you|"
    r"(?:i|we)(?:'ll| will| would|'d)?\s+(?:still\s+|just\s+)?need|"
    r"(?:double[- ]?check|check|confirm|verify|send|provide|share|give|re-?send|re-?enter|"
    r"make sure|tell me|let me know)\b)",
    re.I,
)
_EN_ASK = {
    # the thing asked for within four words of the verb ("check the order number", not "tell
    # me more about the trouble with order number …")
    name: re.compile(
        rf"\b(?:{_EN_GIVE}{'|' + _EN_CHECK if name == 'order_id' else ''})\b"
        rf"(?:\s+[\w'-]+){{0,4}}?\s+(?:{thing})(?![a-z])",
        re.I,
    )
    for name, thing in _EN_THING.items()
}
#: An offer of ours ("Would you like me to check the address?"): no ask of the customer.
_EN_OFFER = re.compile(
    r"\b(?:like|want|wish) (?:me|us) to\b|\bshall (?:i|we)\b|"
    r"\b(?:i|we) (?:can|could|will|'ll|would be happy to|am happy to|'m happy to)\b",
    re.I,
)
#: Another order than the ones in hand: asking for its number is no doubt.
_EN_OTHER = re.compile(
    r"\b(?:another|other|different|second|further|more|next|new order|future|any more|"
    r"for (?:your )?reference|keep|save|note down|if you (?:have|meant|want|would like|'d like))\b",
    re.I,
)
_EN_ORDER = (
    r"(?:(?:the|your|this|that|any|an|a|such an?|such|my)\s+)?(?:order|purchase)\b(?!'s)|ORD-\d{6}"
)
_EN_CANNOT = (
    r"could not|couldn't|can't|cannot|can not|(?:was|were|am|are|'m|'re) (?:unable|not able) to|"
    r"(?:wasn't|weren't|am not|aren't) able to|unable to|not able to|did not|didn't|failed to|"
    r"(?:have not|haven't|has not|hasn't) been able to"
)
#: The order's number, or the order itself, as the subject of a doubt.
_EN_ID = rf"\b(?:{_EN_NUMBER}|ORD-\d{{6}})\b[^.!?]{{0,40}}?"
_EN_ANY = rf"\b(?:{_EN_NUMBER}|ORD-\d{{6}}|order|purchase)\b[^.!?]{{0,40}}?"
_EN_DOUBT = re.compile(
    # "I couldn't find that order", "we were unable to locate ORD-…"
    rf"\b(?:{_EN_CANNOT})\s+(?:\w+ly\s+)?(?:find|locate|see|match|verify|identify|recogni[sz]e|"
    r"pull up|look up|retrieve|access|trace)\s+(?:(?:the|your|this|that|any|an|a)\s+)?"
    rf"(?:record of\s+)?(?:{_EN_ORDER}|{_EN_NUMBER})|"
    # "there is no order with that number", "no record of your order"
    rf"\bno (?:record|trace|sign|match)s? (?:of|for) (?:{_EN_ORDER}|{_EN_NUMBER})|"
    r"\bno (?:such )?(?:order|purchase)s? (?:with|under|matching|numbered|called|on|in)\b|"
    # "ORD-… does not exist", "the order number seems to be wrong", "… is not on your account"
    rf"{_EN_ANY}\b(?:does not|doesn't|did not|didn't)\s+(?:seem to |appear to )?"
    r"(?:exist|show up|come up)|"
    rf"{_EN_ID}\b(?:does not|doesn't|did not|didn't)\s+(?:seem to |appear to )?"
    r"(?:match|look right)|"
    rf"{_EN_ID}\b(?:is|was|seems|appears|looks|might be|may be|could be)\s+(?:to be\s+)?"
    r"(?:invalid|incorrect|wrong|mistyped|a typo|not (?:valid|correct|right|recogni[sz]ed))|"
    rf"{_EN_ANY}\b(?:(?:is|was|are|were)\s+not|isn't|wasn't|aren't|weren't)\s+(?:found|on|in|under|"
    r"associated with|linked to|listed (?:on|in|under))\s+(?:your|our|the|this)\s+(?:account|"
    r"system|records?|database)|"
    rf"{_EN_ANY}\b(?:could not|couldn't|cannot|can't|was not|wasn't|were not) (?:be )?"
    r"(?:found|located|matched|verified)|"
    r"\b(?:wrong|invalid|incorrect|mistyped) (?:order|purchase) (?:number|no|id|reference)",
    re.I,
)

# --- Chinese (Simplified; Traditional folded first) -----------------------------------------

_ZH_NUMBER = r"订单号码?|订单编号|订单号|单号|订单的?编号|ORD-\d{6}"
_ZH_THING = {
    "order_id": _ZH_NUMBER,
    "tracking_number": r"运单号|快递单号|物流单号|追踪号|跟踪号",
    "shipping_address": r"(?:新的?|收货|配送|送货)?地址",
}
_ZH_GIVE = r"提供|发送|发给|发一下|告诉|告知|重新发|再发|输入|填写|给我"
_ZH_CHECK = r"核对|核实|确认|检查|查看一下|看一下|再看"
_ZH_ASK = {
    name: re.compile(
        rf"(?:请|麻烦|烦请|劳烦|能否|可否|能不能|可不可以|是否可以|您能|您可以|您再|再次|重新)"
        rf"[^。！？]*?(?:{_ZH_GIVE}{'|' + _ZH_CHECK if name == 'order_id' else ''})"
        rf"[^。！？]*?(?:{thing})|"
        rf"(?:需要|还需|要)(?:您|你)(?:的)?[^。！？]{{0,6}}?(?:{thing})|"
        rf"(?:{thing})[^。！？]{{0,6}}?(?:是多少|是什么|多少|是否正确|是不是正确|对吗|对不对|"
        r"正确吗|有没有写错|是否有误)",
    )
    for name, thing in _ZH_THING.items()
}
_ZH_OFFER = re.compile(r"需要我|要我|我(?:可以|来|能|帮|会|将)")
_ZH_OTHER = re.compile(r"其他|其它|另一|另外|别的|新的订单|以后|下次|如果您(?:有|想|要|还)")
_ZH_ORDER = r"(?:该|这个|这笔|此|您的|你的|您这个|相关|此笔|这一)?(?:订单|ORD-\d{6})(?!的(?!编号))"
_ZH_DOUBT = re.compile(
    # 没有找到该订单, 查不到您的订单, 未能查询到这个订单
    rf"(?:没有|没|未能?|无法|不能|未曾)(?:能)?(?:为您)?(?:找到|查到|查询到|查找到|检索到|搜到|搜索到|"
    rf"核实|查找|查询|找|查)(?:到)?[^。！？，,]{{0,4}}?(?:{_ZH_ORDER}|{_ZH_NUMBER})|"
    rf"(?:找不到|查不到|查无|搜不到)[^。！？，,]{{0,4}}?(?:{_ZH_ORDER}|{_ZH_NUMBER})|"
    rf"(?:{_ZH_NUMBER})[^。！？，,]{{0,8}}?(?:不存在|有误|错误|不正确|无效|不对|有问题|填错|写错|"
    r"输错|查不到|找不到|查询不到|不在您的账户)|"
    r"订单[^。！？，,]{0,8}?(?:不存在|无效|查不到|找不到|查询不到|不在您的账户)|"
    r"(?:不存在|没有)(?:该|这个|此|这笔|您的|相关)(?:订单|单号)|(?:系统|账户)(?:中|里)没有(?:该|这个|此)?订单|"
    r"(?:错误|无效|不正确)的(?:订单号|单号|订单)",
)


def asked_or_doubted(text: str, zh: bool) -> tuple[str, str] | None:
    """What ``text`` asks the customer for, or doubts, and how.

    Args:
        text: One sentence, NFKC-normalised (Chinese folded to Simplified).
        zh: The sentence is Chinese.

    Returns:
        ``("doubt", "order_id")`` for a sentence that says the order could not be found, does
        not exist or has a wrong number, or asks to check or confirm it; ``("ask", NAME)`` for
        a request for a fact (``order_id``, ``tracking_number``, ``shipping_address``); None
        otherwise, and for a sentence about another order ("send the number of any other
        order"). The order ids the sentence names are read by the caller (:data:`ORDER_ID`).
    """
    doubt, other, offer, request, asks = (
        (_ZH_DOUBT, _ZH_OTHER, _ZH_OFFER, None, _ZH_ASK)
        if zh
        else (_EN_DOUBT, _EN_OTHER, _EN_OFFER, _EN_REQUEST, _EN_ASK)
    )
    if doubt.search(text):
        return "doubt", "order_id"
    if other.search(text) or (request is not None and not request.search(text)):
        return None
    for name, pattern in asks.items():
        match = pattern.search(text)
        if match and not offer.search(text[: match.start()]):  # "would you like me to check"
            return ("doubt" if name == "order_id" else "ask"), name
    return None


def add_orders(
    orders: dict[str, set[str]], result: Mapping[str, Any], facts: dict[str, str]
) -> None:
    """Add what one tool result (``{"tool", "ok", "facts", "error_code"}``; ``facts`` its
    facts as text) says of its order to ``orders``: ``found`` (an ok result, or a ``policy``
    / ``needs_approval`` refusal of an existing order), ``missing`` (``not_found``; ``"?"``
    when it named no id), ``held`` (the fact names an ok result holds a value for)."""
    order = facts.get("order_id", "").strip().upper()
    code = result.get("error_code")
    if code == "not_found":
        orders["missing"].add(order or "?")
    elif order and (result.get("ok") or code in ("policy", "needs_approval")):
        orders["found"].add(order)
    if result.get("ok"):
        orders["held"] |= {name for name, value in facts.items() if value.strip()}
