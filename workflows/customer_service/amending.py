"""A customer who changes a write while it waits for a person (tester9 F4).

A confirmed write that waits for a person's decision (a refund over the automatic limit) was
asked in the customer's earlier words. When they write, before the decision, that they want
something else (another amount, another order, another address, or that the request was a
mistake), the waiting write is stale: approving it would move money the customer no longer
asks for. :func:`amends` reads such a message; the waiting handoff is then withdrawn through the
same store claim as a withdrawal (:mod:`workflows.customer_service.withdrawing`: of it and a
person's decision racing, exactly one wins), nothing is written, and the customer is asked to
send the request as they want it now (:func:`amended_text`), which is confirmed like any other.

A repeated or insisting ask ("please refund ORD-… asap", "I still want it"), a question, an
ask about another order alone ("cancel ORD-…", with no "instead"), or anything this module
does not read as a change keeps the handoff waiting; the person deciding reads it (cs12,
tester12 D: only the customer's own withdrawal or change ends it).
Hand-written patterns: this decides whether a confirmed write may still run, so code decides.
"""

from __future__ import annotations

import re
from typing import Any

from workflows.customer_service.amounts import refund_ask
from workflows.customer_service.asks import doubt, normalise, own_words, read_asks
from workflows.customer_service.signals import ORDER_ID

#: The words read, by kind, English then Chinese (normalised to Simplified): ``mistake``, the
#: customer says the request was wrong (enough on its own); ``denied``, a mistake denied ("I
#: didn't make a mistake", 没搞错); ``change``, a change of the request, which needs what
#: changes (an amount, an order, an address).
_WORDS = {
    "mistake": r"\b(?:(?:made|make) a mistake|my mistake|by mistake|mistakenly|my bad|i meant|"
    r"meant to (?:say|ask|write|type)|correction|wrong (?:order|one|amount|item|address|number)|"
    r"typo)\b|搞错|弄错|错了|写错|说错|打错|填错|选错|不是这[个单笔]|不是那[个单笔]",
    "denied": r"\b(?:didn'?t|did not|never|no|not) (?:make|made) a mistake\b|"
    r"没有?(?:搞|弄|写|说|填|选)?错|不是(?:我)?(?:搞|弄|写|说)错",
    "change": r"\b(?:instead|actually|rather|change (?:it|that|this|the (?:request|refund|amount|"
    r"order))|make it|only|just|partial|lower|reduce\w*|less)\b|改成|改为|换成|而是|其实|应该是|"
    r"只退|只要|就退|部分|一半|少退",
}
_MISTAKE, _NO_MISTAKE, _CHANGE = (
    re.compile(_WORDS[k], re.I) for k in ("mistake", "denied", "change")
)


def amends(message: str, action: dict[str, Any] | None) -> bool:
    """Whether ``message`` (the customer's, while ``action`` waits for a person) changes the
    request: says it was a mistake, or asks for another amount, order or address than
    ``action``'s (``{"tool", "arguments": {"order_id", "amount_cents", "new_address"}}``), or
    for another remedy, part or write of the order, or denies having asked
    (:func:`_changes_kind`).

    Example:
        >>> refund = {"tool": "start_refund", "arguments": {"order_id": "ORD-111189"}}
        >>> amends("please make it a partial refund of USD 100 only", refund)
        True
        >>> amends("please refund ORD-111189 asap, I still want it", refund)
        False
    """
    if not action or doubt(message) == "quoted":
        return False
    text = own_words(normalise(message[:4000]))
    args = dict(action.get("arguments") or {})
    others = {m.group(0).upper() for m in ORDER_ID.finditer(text)} - {args.get("order_id")}
    if _MISTAKE.search(text) and not _NO_MISTAKE.search(text):
        return True
    asks = read_asks(text)
    changed = bool(others) or _other_amount(text, action) or _other_address(asks, action)
    if asks.writes:
        if asks.writes[0] not in _BESIDE.get(str(action.get("tool")), set()):
            changed = True
        # another order's write alone is a new ask, no change of this one (tester12 D)
        return changed and not (others and not _CHANGE.search(text))
    if changed and _CHANGE.search(text) is not None:
        return True
    return not others and _changes_kind(text.lower(), asks, str(action.get("tool")))


#: What changes a waiting write without naming an amount, order or address, read on the
#: customer's own words, lower-cased (:func:`_changes_kind`): ``remedy``, another remedy than
#: the waiting write ("store credit", "an exchange", 换货, 退到余额); ``part``, a change of its
#: part or target ("only for the lamp", "change it to …", 改成…); ``denied``, a denial of
#: having asked ("I never asked for a refund", 我没说要取消); ``not_off``, a complaint that the
#: write was not called off ("why hasn't my refund been cancelled?", as cs10 read it);
#: ``asked``, a question or a condition ("will you send a replacement?", 退款不会被取消吧？),
#: unless ``polite`` (a request put as one: "could you give me store credit instead?");
#: ``cancel``, a cancel of the order itself (not "my newsletter subscription", 我的会员), and
#: ``negation`` just before it.
_CHANGE_KINDS = {
    "remedy": r"\b(?:store credit|credit note|exchange|replacement|swap|voucher|coupon|gift ?card|"
    r"(?:take|give me|get|want|prefer|rather have) a discount|(?:send|give|ship)(?: me)? "
    r"(?:a|another) new one)\b|换货|换一个|补发|余额|代金券|优惠券|积分",
    "part": r"\b(?:only|just) (?:for )?(?:the|my) (?!refund|money|order\b)\w+|\b(?:change|switch|"
    r"update) (?:it|that|this|the (?:request|refund|amount|order)) to\b|\bleave the rest\b|"
    r"\ba (?:fiver|tenner)\b|\b\w+ (?:quid|bucks?) back\b|"
    # 改成 of the write, not of an account detail (手机号/电话/邮箱/密码/用户名/昵称/头像改成:
    # tester12 D, an account change beside a waiting refund keeps it waiting)
    r"(?<![号话箱码名称像])(?:改成|改为|换成)|只退|只要退|"
    r"退(?:个|一下|一部分|部分)?运费",
    "denied": r"\bi (?:never|didn'?t|did not) (?:ask|say|want|request)\w*(?! (?:not|no)\b)|"
    r"我没(?:有)?(?:说|申请)(?:过)?要(?!不)",
    "not_off": r"\bwhy (?:has|have|is|was|did|does)n'?t\b.*\b(?:cancel|withdr|stop|drop)\w*|"
    r"为什么(?:还)?(?:没|不)(?:有)?(?:取消|撤回|撤销|停)",
    "asked": r"[?？]\W*$|(?:吗|呢)\W*$|\b(?:if|unless|whether)\b|如果|要是|假如|万一",
    "polite": r"^\s*(?:(?:can|could|would|will) you\b|please\b)|能不能|可不可以|麻烦|请",
    "cancel": r"\bcancel\w*(?: (?:it|this|that|the order|my order|the whole (?:thing|order)|"
    r"everything))?(?=\s*(?:$|[,.!?;]|instead|please|and|then|now))|"
    r"取消(?:订单|它|这个订单|掉|吧|了|$)",
    "negation": r"\b(?:not|no|never|don'?t|n't)\b[\w\s]{0,12}$|[不没别]\S{0,2}$",
    # a remedy refused, not asked for ("I'm not interested in store credit", 我不需要换货:
    # tester13 D): the clause before it negates
    "refused": r"\b(?:not|no|never|no longer|don'?t|n't)\b[\w\s']{0,30}$|"
    r"[不没别甭无][\u4e00-\u9fff]{0,3}$",
}
_KIND = {name: re.compile(pattern) for name, pattern in _CHANGE_KINDS.items()}


def _changes_kind(low: str, asks: Any, tool: str) -> bool:
    """Whether ``low`` (the customer's own words, normalised, lower-cased) changes the waiting
    write ``tool`` in a way that names no amount, order or address: another remedy, a part or
    target, a denial of the ask, or another write of the order named (a refund while a
    cancel waits; a cancel of the order itself while a refund waits). Anything else (another
    thing cancelled, an account detail, a complaint about the wait) is no change (cs12;
    tester12 D): the write keeps waiting, noted for the person deciding."""
    if tool != "cancel_order" and _KIND["not_off"].search(low):  # of a cancel: a chase
        return True
    if _KIND["asked"].search(low) and not _KIND["polite"].search(low):
        return False
    remedy = _KIND["remedy"].search(low)  # "not interested in store credit", 不需要换货: none
    if remedy is not None and not _KIND["refused"].search(low[: remedy.start()]):
        return True
    part = _KIND["part"].search(low)  # "不要退运费", "don't refund only the lamp": refused
    if (part is not None and not _KIND["refused"].search(low[: part.start()])) or _KIND[
        "denied"
    ].search(low):
        return True
    named = {*asks.writes, *(i for i, _ in asks.declined)} - _BESIDE.get(tool, set())
    cancel = _KIND["cancel"].search(low) if "cancel" in named else None
    return bool(named - {"cancel"}) or (
        cancel is not None and not _KIND["negation"].search(low[: cancel.start()])
    )


#: The asks that change nothing of a waiting write of each tool: its own, and an address change
#: beside a refund (or a refund beside an address change): a new request of its own, no
#: other remedy for the same order (tester12 D: "update my address to …" ended a refund).
_BESIDE: dict[str, set[str]] = {
    "start_refund": {"refund", "change_address"},
    "cancel_order": {"cancel"},
    "change_address": {"change_address", "refund"},
}


def _other_amount(text: str, action: dict[str, Any]) -> bool:
    """A refund amount or part named that is not the waiting refund's."""
    if action.get("tool") != "start_refund":
        return False
    asked = refund_ask(text)
    if asked is None:
        return False
    waiting = (action.get("arguments") or {}).get("amount_cents")
    return asked.unclear or asked.cents != waiting


def _other_address(asks: Any, action: dict[str, Any]) -> bool:
    """A new address asked for that is not the waiting address change's (beside a refund or a
    cancel, a new address is a request of its own: no change of it)."""
    if action.get("tool") != "change_address":
        return False
    new = str(asks.new_address or "")
    return bool(new) and new != str((action.get("arguments") or {}).get("new_address") or "")


def amended_text(order_id: str, what: str, lang: str) -> str:
    """The reply when the customer changed a waiting request: it is withdrawn, nothing was
    done, and they are asked for the request as they want it now (``what``: the write's name
    in ``lang``, as :mod:`~workflows.customer_service.withdrawing` says it)."""
    if lang == "zh":
        return (
            f"您修改了正在等待同事处理的请求，所以原来的请求（订单 {order_id} 的{what}）已撤回，"
            "没有做任何更改。请把您现在想要的请求完整地发给我（订单号和金额或新地址），我会再请您确认。"
        )
    return (
        f"You changed your request while it waited for a colleague, so the earlier one ({what} "
        f"{order_id}) is withdrawn and nothing was changed. Please send the request as you want "
        "it now (the order id, and the amount or the new address), and I will ask you to "
        "confirm it."
    )
