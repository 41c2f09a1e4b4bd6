"""The orders a read question is about (tester8 F6): an id written loosely, and several ids.

A read never answers another order's facts as the one asked about. An id-like token that is
not a well-formed id (``ord 101957``, ``ORD101957``, ``#101957``, ``order 101957``,
``订单101957``, ``訂單號 101957``) is read as ``ORD-101957`` only when that is one of the
customer's own orders; otherwise (``ORD-12``, ``ORD-100200b``, a loose id of no order of
theirs) the read is asked back. A read naming several orders runs for each of them
(:func:`other_reads`), so none is silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from workflows.customer_service.acting import refusal
from workflows.customer_service.ask_marks import malformed_id, normalise
from workflows.customer_service.signals import ORDER_ID
from workflows.customer_service.store import OrderTools, ToolError, ToolResult
from workflows.customer_service.store.tools import WRITE_TOOLS, status_answer

#: An order id written loosely: ``ord``/``ORD`` and digits (any glue), ``order``/``#``/
#: ``订单``/``单号`` and five or more digits, or six bare digits. Read on normalised text
#: (full-width forms folded, Traditional → Simplified).
_LOOSE = re.compile(
    r"(?<![A-Za-z0-9])(?:(?P<ord>ord)[\s\-_#:.]*(?P<d1>\d+)|"
    r"(?:(?:order|ord)\s*(?:(?:no\.?|number|num|id)\s*)?[#:]?\s*|#\s*|"
    r"(?:订单|单)\s*(?:号|编号)?\s*[:：#]?\s*)(?P<d2>\d{5,})|(?P<d3>\d{6}))(?![A-Za-z0-9])",
    re.I,
)


#: Six bare digits that are an amount of money (``$120000``, ``120000元``), not an id.
_MONEY_BEFORE = re.compile(r"[$¥€£]\s*$")
_MONEY_AFTER = re.compile(
    r"\s*(?:[.,]\d|元|块|美元|usd|cny|rmb|eur|gbp|hkd|dollars?|bucks?|yuan|euros?|pounds?)",
    re.I,
)


def read_targets(
    message: str, own: Collection[str], *, write: bool = False
) -> tuple[list[str], bool]:
    """The order ids ``message`` names, well-formed or loose, in order of appearance, and
    whether something written as an order id could not be read as one.

    ``own``: the customer's order ids. A loose id counts only when ``ORD-`` and its six digits
    is one of ``own``; six bare digits count only then too, and for a read are never an
    error (a number). For a ``write`` they are: a write never falls back to another order
    when the one it names is not the customer's (``cancel 101957``), unless they are an
    amount of money (``$120000``).

    Example:
        >>> read_targets("ord 101957 status?", {"ORD-101957"})
        (['ORD-101957'], False)
        >>> read_targets("where is ORD101958", {"ORD-101957"})
        ([], True)
    """
    text = normalise(message)
    bad = False

    def canonical(m: re.Match[str]) -> str:
        nonlocal bad
        if ORDER_ID.fullmatch(m.group(0)):
            return m.group(0)
        digits = m.group("d1") or m.group("d2") or m.group("d3")
        if len(digits) == 6 and f"ORD-{digits}" in own:
            return f" ORD-{digits} "
        money = bool(_MONEY_BEFORE.search(text, 0, m.start()) or _MONEY_AFTER.match(text, m.end()))
        bad = bad or not m.group("d3") or (write and not money)  # for a read, a bare number
        return m.group(0)

    text = _LOOSE.sub(canonical, text)
    ids = list(dict.fromkeys(m.group(0).upper() for m in ORDER_ID.finditer(text)))
    return ids, bad or malformed_id(text)


def other_reads(tools: OrderTools, plan: dict[str, Any], done: str) -> list[dict[str, Any]]:
    """The read ``plan["tool"]`` run for each order ``plan["each"]`` names other than
    ``done`` (the one the model chose): each result dict (a ``not_found`` or refused one
    included, so the reply says which order it could not answer). Empty for a write or when
    the message named one order."""
    tool = str(plan.get("tool") or "")
    results: list[dict[str, Any]] = []
    if tool in WRITE_TOOLS:  # a write touches its one confirmed order only
        return results
    for order_id in plan.get("each") or []:
        if order_id == done:
            continue
        args = {"order_id": order_id}
        try:
            result = read_answer(tools, plan, tools.run(tool, args))
        except ToolError as exc:
            result = refusal(tool, args, exc)
        results.append(result.model_dump())
    return results


def read_answer(tools: OrderTools, plan: dict[str, Any], result: ToolResult) -> ToolResult:
    """A read's ``result`` as the answer to what the turn asked: a refund-status question's
    (:func:`~workflows.customer_service.store.tools.status_answer`), or, for a question about
    the delivery address (``plan["intent"] == "address"``), the order's facts with the
    store's ``shipping_address`` (the customer's own order only: the read found it)."""
    if plan.get("refund_status"):
        return status_answer(result)
    if plan.get("intent") == "address" and result.ok and result.tool == "lookup_order":
        order_id = str(result.facts.get("order_id"))
        facts = {**result.facts, "shipping_address": tools.shipping_address(order_id)}
        return result.model_copy(update={"facts": facts})
    return result
