"""Deterministic signals read from a customer message by code (English and Chinese).

The model on the CPU default picks at random, so what code can decide, code decides: the
intent words, the order ids (``ORD-`` + 6 digits, after NFKC so full-width forms match), a
request for a person and signs of anger. The triage skill's answer is used only when no
signal decides.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel, ConfigDict

from orchestrator.textnorm import to_simplified

#: Intents in priority order, each with its words (word-bounded English; Chinese substrings).
INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "human",
        re.compile(
            r"\b(human|real person|a person|agent|representative|supervisor|manager|someone "
            r"real)\b|人工|真人|转接|客服人员",
            re.I,
        ),
    ),
    ("refund", re.compile(r"\b(refund|money back|reimburse)\w*|退款|退钱|退货款", re.I)),
    ("cancel", re.compile(r"\bcancel\w*|取消订单|取消", re.I)),
    ("change_address", re.compile(r"\b(address|ship it to|deliver it to)\b|地址", re.I)),
    (
        "track",
        re.compile(
            r"\b(track\w*|where is|where's|shipment|shipping|delivery|delivered|arrive\w*|"
            r"courier|carrier|package|parcel)\b|物流|快递|运单|到哪|没收到|还没到|包裹|发货|"
            r"追踪|跟踪|货运|快件|派送|查件",  # cs10: 追蹤號碼 / 追踪号码 read as tracking
            re.I,
        ),
    ),
    ("status", re.compile(r"\b(status|order)\b|订单状态|订单", re.I)),
)

ANGER = re.compile(
    r"!{2,}|\b(angry|furious|ridiculous|unacceptable|terrible|worst|scam|useless|disgusting|"
    r"outrageous|fed up)\b|生气|太差|垃圾|骗子|投诉|气死|愤怒",
    re.I,
)
#: An order id; not ``\b``: a Chinese character is a word character, so "订单ORD-100042不要了"
#: has no word boundary around the id.
ORDER_ID = re.compile(r"(?<![A-Za-z0-9])ORD-\d{6}(?!\d)", re.I)

#: The triage skill's issue types mapped to intents (used when no word decides).
TRIAGE_INTENT: dict[str, str] = {
    "refund": "refund",
    "delivery": "track",
    "order_status": "status",
    "cancellation": "cancel",
}

#: The tool each intent needs.
INTENT_TOOL: dict[str, str] = {
    "refund": "start_refund",
    "cancel": "cancel_order",
    "change_address": "change_address",
    "track": "track_shipment",
    "status": "lookup_order",
}


class Signals(BaseModel):
    """What code read from one message.

    Attributes:
        intents: Every intent whose words occur, in priority order.
        order_ids: Well-formed order ids, upper-cased, in order of appearance, unique.
        angry: Anger words or repeated exclamation marks.
    """

    model_config = ConfigDict(frozen=True)

    intents: tuple[str, ...]
    order_ids: tuple[str, ...]
    angry: bool


def read_signals(message: str, *, max_chars: int = 20_000) -> Signals:
    """Read :class:`Signals` from ``message`` (the first ``max_chars`` characters).

    Example:
        >>> s = read_signals("Where is ORD-100042?? I want a REFUND")
        >>> s.intents, s.order_ids, s.angry
        (('refund', 'track'), ('ORD-100042',), False)
    """
    text = to_simplified(unicodedata.normalize("NFKC", message[:max_chars]))
    intents = tuple(name for name, pattern in INTENTS if pattern.search(text))
    ids = tuple(dict.fromkeys(m.group(0).upper() for m in ORDER_ID.finditer(text)))
    return Signals(intents=intents, order_ids=ids, angry=bool(ANGER.search(text)))
