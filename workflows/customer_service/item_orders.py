"""Which of the customer's orders a message means by the goods it names (tester14 I14).

"Has my desk lamp been delivered?" names no order id. Before this module the read was offered
the customer's newest orders and the model picked one, so the reply could state another
order's facts as the lamp's. The order is a fact: code reads it from the customer's words.

A product of one of the customer's orders is named when the message holds its head noun (the
last word of an English name, singular or plural: "lamp", "lamps" for "Desk lamp") or, in
Chinese, the whole name or its last two characters (耳机 for 无线耳机), the message folded to
Simplified first. Goods of no order of theirs name nothing here; the caller then does what it
did before.
"""

from __future__ import annotations

import re

from workflows.customer_service.ask_marks import normalise

_WORD = re.compile(r"[a-z0-9]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")


def _heads(name: str) -> set[str]:
    """The words of a message that name an English product: its last word, singular or
    plural (``"Running shoes"`` → ``{"shoe", "shoes", "shoees"}``; the odd form is harmless)."""
    words = _WORD.findall(name.lower())
    if not words:
        return set()
    head = words[-1]
    stem = head[:-1] if head.endswith("s") and len(head) > 3 else head
    return {stem, f"{stem}s", f"{stem}es"}


def names_product(message: str, product: str) -> bool:
    """Whether ``message`` names ``product`` (a product name as the order store holds it).

    Example:
        >>> names_product("has my desk lamp been delivered?", "Desk lamp")
        True
        >>> names_product("我的無線耳機到哪了？", "无线耳机")
        True
        >>> names_product("where is it?", "Desk lamp")
        False
    """
    text = normalise(message[:4000]).lower()
    if _HAN.search(product):
        name = normalise(product)
        return name in text or (len(name) >= 3 and name[-2:] in text)
    return bool(_heads(product) & set(_WORD.findall(text)))


def item_orders(message: str, products: dict[str, list[str]]) -> list[str]:
    """The orders (of ``products``: order id → its product names, newest first) one of whose
    products ``message`` names, in that order; [] when it names none of them."""
    return [
        order for order, names in products.items() if any(names_product(message, n) for n in names)
    ]
