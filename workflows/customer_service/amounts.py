"""How much of an order the customer asks to have refunded, read from their own words.

A refund is offered for the whole amount left only when the customer asks for no part of it.
An ask for part of it is offered for exactly the amount written, or asked back when the amount
cannot be read, so a "yes" never moves more money than was asked for (tester5: "refund USD 10
of ORD-…" was offered, and written, as the whole USD 139.97):

* one amount with its currency ("USD 10", "$10.50", "10 dollars", "10 元", "¥ 8.5") is the ask;
* a part named without a readable amount ("half", "the shipping fee", "one of the items", "20%",
  一半, 运费, 差价, 退十块) or two different amounts ("I paid $100, refund the $20 difference")
  is asked back (:attr:`RefundAsk.unclear`).

Hand-written patterns, like :mod:`workflows.customer_service.asks`: this decides an amount of
money, so code that a test can pin decides it, never the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from orchestrator.textnorm import to_simplified

#: Currency words and signs, and the order currencies each may name. ``$`` and "dollar" fit
#: every dollar currency; ``¥`` fits the yuan and the yen.
_CURRENCIES: tuple[tuple[str, frozenset[str]], ...] = (
    (r"US\$|USD|usd|美元|美金", frozenset({"USD"})),
    (r"HK\$|HKD|港币|港元", frozenset({"HKD"})),
    (r"C\$|CAD|加元", frozenset({"CAD"})),
    (r"A\$|AUD|澳元", frozenset({"AUD"})),
    (r"\$|dollars?|bucks?", frozenset({"USD", "CAD", "AUD", "HKD", "SGD", "NZD", "TWD"})),
    (r"CNY|RMB|rmb|yuan|人民币|元|块钱|块", frozenset({"CNY"})),
    (r"[¥￥]|JPY|yen|日元", frozenset({"CNY", "JPY"})),
    (r"EUR|€|euros?|欧元", frozenset({"EUR"})),
    (r"GBP|£|pounds?|英镑", frozenset({"GBP"})),
)
_SIGN = "|".join(f"(?:{pattern})" for pattern, _ in _CURRENCIES)
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?"
_MONEY = re.compile(
    rf"(?P<before>{_SIGN})\s?(?P<n1>{_NUMBER})(?!\d)|"
    rf"(?<![\d.])(?P<n2>{_NUMBER})\s?(?P<after>{_SIGN})(?![A-Za-z])",
    re.I,
)
#: A part of the order named in words, or a money word with no amount that can be read.
_PART = re.compile(
    r"\b(?:half|partial(?:ly)?|part of|portion|some of (?:it|the)|"
    r"(?:one|two|three|some) of (?:the|my|these|those) (?:items?|things?|products?|pieces?)|"
    r"one item|the (?:broken|damaged|missing|wrong|faulty) (?:one|item|part|piece)|"
    r"(?:shipping|delivery) (?:fees?|costs?|charges?)|postage|the difference|price difference|"
    r"the tax(?:es)?|(?:refund|reimburse)\w*\s+(?:me\s+)?\d+(?:\.\d+)?\b(?!-)|\d+\s?%|per ?cent)\b|"
    r"一半|部分|其中|一件|运费|邮费|差价|税费|只退|退一点|退\s?\d|"
    r"[零一二两三四五六七八九十百千万]+\s?(?:元|块|美元|欧元)|\d+\s?%|百分之",
    re.I,
)


@dataclass(frozen=True)
class RefundAsk:
    """The refund amount a message asks for.

    Attributes:
        cents: The amount in minor units (cents), when one amount was written.
        currencies: The order currencies that amount may be in (``{"USD", "CAD", …}`` for
            ``$``); empty with no amount.
        unclear: A part of the order was asked for, but no single amount can be read: ask back.
    """

    cents: int | None = None
    currencies: frozenset[str] = frozenset()
    unclear: bool = False

    def fits(self, currency: str) -> bool:
        """Whether the amount can be in the order's ``currency`` (``USD``)."""
        return currency.upper() in self.currencies


def _cents(number: str) -> int:
    whole, _, fraction = number.replace(",", "").partition(".")
    return int(whole) * 100 + int((fraction + "00")[:2])


def _currencies(sign: str) -> frozenset[str]:
    return next(c for pattern, c in _CURRENCIES if re.fullmatch(pattern, sign, re.I))


def refund_ask(message: str) -> RefundAsk | None:
    """The part of the order ``message`` asks to have refunded, or None for the whole of it.

    Example:
        >>> refund_ask("Please refund ORD-100042, it arrived broken") is None
        True
        >>> refund_ask("refund USD 10 of ORD-100042").cents
        1000
        >>> refund_ask("ORD-100042 退一半就行").unclear
        True
    """
    text = to_simplified(message)
    text = re.sub(r"ORD[-\s_]?\d+", " ", text, flags=re.I)  # an order id is not an amount
    amounts = {
        (_cents(m["n1"] or m["n2"]), _currencies(m["before"] or m["after"]))
        for m in _MONEY.finditer(text)
    }
    if amounts:
        cents = {c for c, _ in amounts}
        currencies = frozenset.intersection(*(cur for _, cur in amounts))
        if len(cents) > 1 or not currencies or 0 in cents:  # two sums, or "$10 (10 €)"
            return RefundAsk(unclear=True)
        return RefundAsk(cents=cents.pop(), currencies=currencies)
    if _PART.search(text):
        return RefundAsk(unclear=True)
    return None
