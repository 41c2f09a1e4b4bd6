"""A message that names a refund id or a tracking number instead of an order id (tester9 F5).

"What is the status of my refund RF-000132?" and "where is my parcel 1Z0000056525?" are about
the order that refund or parcel belongs to, never about the customer's newest order. Each such
id is looked up among the customer's OWN refunds and shipments
(:meth:`~workflows.customer_service.store.tools.OrderTools.order_of`); its order is the order
the message names. One that is not on their account (another customer's reads like a missing
one) is answered "I could not find … on your account", with no order's facts. Hand-written
patterns: the shop's own id formats (``RF-`` and digits, short ones too, or "refund"/退款 and a
number: cs10; ``1Z``/``TRK``/``SF`` and digits as the seed writes them, or a token after
"tracking number"/运单号).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workflows.customer_service.ask_marks import normalise
from workflows.customer_service.language import reply_language
from workflows.customer_service.store import OrderStore

#: A refund id: ``RF-000132``, ``rf000132``, ``RF 132``, ``RF-19`` (normalised text); or the
#: word "refund" (a typo of it, 退款) with a label (``refund number 000019``, ``refund #19``,
#: 退款编号 19) or, bare (``refund 19``, 退款19到账了吗), only where what follows is the end, a
#: mark or a question's word (an allow-list: ``refund 19 dollars``, ``refund 2 items``,
#: 退款19元 are amounts and counts, never ids).
_RF = r"(?<![A-Za-z0-9])RF[-_\s#]?(?P<rf>\d{1,9})(?![0-9])"
_REFUND_WORD = r"(?:\b(?:refunds?|refnd|refund?|rufund|reimbursement)|退款|退钱)"
_REFUND_LABEL = (
    r"\s*(?:(?:(?P<hash>#)|number|num|nr\.?|no\.?|id|ref(?:erence)?)\s*(?:is|:|#)?|号码|单号|编号|号|"
    r"id|ID)"
    r"\s*[:：#]?\s*(?P<labelled>\d{1,9})(?![0-9.,]\d)(?![0-9])"
)
_BARE_NEXT = (
    r"(?=\s*(?:$|[?？!！,，。;；:：)）\-—]|\.(?!\d)|(?:is|was|has|have|had|been|status|yet|"
    r"already|still|go|gone|went|get|got|come|came|arrived|approved|processed|paid|done|through|"
    r"update|news|now|and|any)\b|[到处怎的呢吗有已还是进状批成现好了没]))"
)
_REFUND = re.compile(
    rf"{_RF}|{_REFUND_WORD}(?:{_REFUND_LABEL}|[\s\-]*(?P<bare>\d{{1,9}})(?![0-9]){_BARE_NEXT})",
    re.I,
)
#: A tracking number: a carrier's prefix and digits, or a token after a tracking-number word.
_PREFIXED = r"(?<![A-Za-z0-9])(1Z[0-9A-Z]{8,16}|(?:TRK|SF|JD|YT|ZTO|EMS)\d{8,16})(?![A-Za-z0-9])"
_WORD = r"(?:tracking|waybill|parcel|package|shipment|运单|快递|物流|包裹|追踪|跟踪|货运|快件)"
_LABEL = r"\s*(?:number|no\.?|code|id|#|号|号码|单号|单|编号)?\s*(?:is|:|：|#)?\s*"
_TOKEN = r"(?P<worded>(?=[A-Za-z0-9]*\d{6})[A-Za-z0-9]{8,30})(?![A-Za-z0-9])"
_TRACKING = re.compile(f"{_PREFIXED}|{_WORD}{_LABEL}{_TOKEN}", re.I)
_NOT_FOUND = {
    "en": "I could not find {refs} on your account, so I cannot tell you anything about it. "
    "Please check it, or give the order id (ORD- and six digits). Nothing was changed.",
    "zh": "您的账户里找不到 {refs}，所以无法告诉您它的情况。"
    "请核对一下，或提供订单号（ORD- 加六位数字）。没有做任何更改。",
}


@dataclass
class RefOrders:
    """What a message's refund ids and tracking numbers name.

    Attributes:
        orders: The customer's order ids they belong to, in order of appearance.
        missing: The ids written that are on no order of the customer's, as written (upper).
        refund: A refund id was named (a read of it answers the order's refunds).
        rest: The message with these ids blanked (so their digits are never read as an
            order id).
    """

    orders: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    refund: bool = False
    rest: str = ""

    def intent(self, read: str | None) -> str | None:
        """The read intent for ``read`` (the one found, or None): a message naming a refund
        id is a refund read, one naming only a tracking number a tracking read, unless its
        words asked for another read."""
        if not self.orders or read not in (None, "status"):
            return read
        return "eligibility" if self.refund else "track"

    def question(self, state: Mapping[str, Any]) -> str | None:
        """The reply "I could not find RF-… on your account" in the language of ``state``'s
        ``message`` (and ``locale``), or None when every id was found."""
        if not self.missing:
            return None
        lang = reply_language(str(state["message"]), str(state.get("locale") or "en_US"))
        return _NOT_FOUND["zh" if lang == "zh" else "en"].format(refs=", ".join(self.missing))


def ref_orders(message: str, store: OrderStore | None, customer_id: str | None) -> RefOrders:
    """The orders ``message``'s refund ids and tracking numbers belong to, among
    ``customer_id``'s own (:class:`RefOrders`). Without a store or a customer: nothing found
    and nothing missing (``rest`` is ``message``)."""
    if store is None or not customer_id:
        return RefOrders(rest=message)
    tools = store.tools(customer_id)
    found = RefOrders()
    text = normalise(message)
    spans: list[tuple[int, int, str, str | None]] = []
    for m in _REFUND.finditer(text):
        digits = m.group("rf") or m.group("labelled") or m.group("bare")
        if (m.group("bare") or m.group("hash")) and len(digits) == 6 and digits[0] != "0":
            continue  # "refund #100200": an order id's six digits, read as one (read_ids)
        start = m.start("rf") if m.group("rf") else m.start()
        spans.append((start, m.end(), f"RF-{int(digits):06d}", tools.order_of(int(digits))))
        found.refund = True
    for m in _TRACKING.finditer(text):
        number = (m.group(1) or m.group("worded")).upper()
        if number.startswith("ORD") or any(s <= m.start() < e for s, e, _, _ in spans):
            continue
        spans.append((m.start(), m.end(), number, tools.order_of(tracking=number)))
    for start, end, written, order in sorted(spans):
        if order is None:
            found.missing.append(written)
        elif order not in found.orders:
            found.orders.append(order)
        text = text[:start] + " " * (end - start) + text[end:]
    found.rest = text if spans else message
    return found
