"""A customer who changes a write while it waits for a person (tester9 F4).

A confirmed write that waits for a person's decision (a refund over the automatic limit) was
asked in the customer's earlier words. When they write, before the decision, that they want
something else (another amount, another order, another address, or that the request was a
mistake), the waiting write is stale: approving it would move money the customer no longer
asks for. :func:`amends` reads such a message; the waiting handoff is then withdrawn through the
same store claim as a withdrawal (:mod:`workflows.customer_service.withdrawing`: of it and a
person's decision racing, exactly one wins), nothing is written, and the customer is asked to
send the request as they want it now (:func:`amended_text`), which is confirmed like any other.

A repeated or insisting ask ("please refund ORD-… asap", "I still want it"), a question, or
another order mentioned "too" keeps the handoff waiting; the person deciding reads it.
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
#: changes (an amount, an order, an address); ``also``, another order named in addition.
_WORDS = {
    "mistake": r"\b(?:(?:made|make) a mistake|my mistake|by mistake|mistakenly|my bad|i meant|"
    r"meant to (?:say|ask|write|type)|correction|wrong (?:order|one|amount|item|address|number)|"
    r"typo)\b|搞错|弄错|错了|写错|说错|打错|填错|选错|不是这[个单笔]|不是那[个单笔]",
    "denied": r"\b(?:didn'?t|did not|never|no|not) (?:make|made) a mistake\b|"
    r"没有?(?:搞|弄|写|说|填|选)?错|不是(?:我)?(?:搞|弄|写|说)错",
    "change": r"\b(?:instead|actually|rather|change (?:it|that|this|the (?:request|refund|amount|"
    r"order))|make it|only|just|partial|lower|reduce\w*|less)\b|改成|改为|换成|而是|其实|应该是|"
    r"只退|只要|就退|部分|一半|少退",
    "also": r"\b(?:also|too|as well|in addition|additionally)\b|也|另外|还有|顺便",
}
_MISTAKE, _NO_MISTAKE, _CHANGE, _ALSO = (
    re.compile(_WORDS[k], re.I) for k in ("mistake", "denied", "change", "also")
)


def amends(message: str, action: dict[str, Any] | None) -> bool:
    """Whether ``message`` (the customer's, while ``action`` waits for a person) changes the
    request: says it was a mistake, or asks for another amount, order or address than
    ``action``'s (``{"tool", "arguments": {"order_id", "amount_cents", "new_address"}}``).

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
    changed = bool(others) or _other_amount(text, action) or _other_address(asks, args)
    if asks.writes:
        if asks.writes[0] != _INTENT.get(str(action.get("tool"))):
            changed = True
        return changed and not (others and _ALSO.search(text) and not _CHANGE.search(text))
    return changed and _CHANGE.search(text) is not None


_INTENT = {"start_refund": "refund", "cancel_order": "cancel", "change_address": "change_address"}


def _other_amount(text: str, action: dict[str, Any]) -> bool:
    """A refund amount or part named that is not the waiting refund's."""
    if action.get("tool") != "start_refund":
        return False
    asked = refund_ask(text)
    if asked is None:
        return False
    waiting = (action.get("arguments") or {}).get("amount_cents")
    return asked.unclear or asked.cents != waiting


def _other_address(asks: Any, args: dict[str, Any]) -> bool:
    """A new address asked for that is not the waiting change's."""
    new = str(asks.new_address or "")
    return bool(new) and new != str(args.get("new_address") or "")


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
