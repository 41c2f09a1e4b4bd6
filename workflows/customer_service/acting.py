"""Tool calls of the customer-service graph: the tool spec offered to the model, the
validation of its arguments, the refusal result, and a person's decision on a handed-off
write. Split out of :mod:`workflows.customer_service.graph` (issue 48).
"""

from __future__ import annotations

import json
from typing import Any

from workflows.customer_service.policy import WriteAction, execute_write
from workflows.customer_service.store import (
    TOOL_DESCRIPTIONS,
    OrderTools,
    ToolArgumentsError,
    ToolError,
    ToolResult,
)


def tool_spec(tool: str, order_ids: list[str] | None) -> dict[str, Any]:
    """The OpenAI function tool for ``tool``, its order id an ``enum`` of ``order_ids``
    (None: only a bounded string, as a server without constrained decoding would see it)."""
    order_id: dict[str, Any] = (
        {"type": "string", "enum": order_ids}
        if order_ids is not None
        else {"type": "string", "maxLength": 10}
    )
    # the model chooses the order only: a new address is read by code from the customer's
    # own words (asks.extract_address), an amount from the store
    properties: dict[str, Any] = {"order_id": order_id}
    return {
        "type": "function",
        "function": {
            "name": tool,
            "description": TOOL_DESCRIPTIONS[tool],
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


def validate(tool: str, arguments: str, offered: list[str], address: str = "") -> dict[str, Any]:
    """The model's arguments, validated: JSON with ``order_id`` only, one of ``offered``; a
    new ``address`` (read by code from the customer's words) is added for an address change.

    Raises:
        ToolArgumentsError: Any rule broken.
    """
    try:  # the model chooses the order only; code sets amount, reason and new address
        data = json.loads(arguments)
    except ValueError:
        raise ToolArgumentsError(tool, "arguments are not JSON") from None
    if not isinstance(data, dict) or set(data) != {"order_id"}:
        raise ToolArgumentsError(tool, "only order_id may be given")
    if tool == "change_address":
        data["new_address"] = address or "-" * 5  # validated below; never empty here
    args = OrderTools.validate(tool, data).model_dump(exclude_none=True)
    if args.get("order_id") not in offered:
        raise ToolArgumentsError(tool, "order_id: not one of the orders this turn may touch")
    if tool == "change_address" and not address:
        raise ToolArgumentsError(tool, "new_address: the customer gave none")
    return args


def refusal(tool: str, args: dict[str, Any], exc: ToolError) -> ToolResult:
    """The failed :class:`ToolResult` of a tool the store or the policy refused."""
    facts = {"order_id": str(args.get("order_id", ""))}
    if exc.code == "policy":
        facts["reason"] = str(exc).split(": ", 1)[-1][:200]
    return ToolResult(tool=tool, ok=False, facts=facts, error_code=exc.code, message=str(exc))


def action_fields(action: dict[str, Any]) -> dict[str, Any]:
    """The :class:`WriteAction` fields of a pending or confirmed action dict."""
    names = WriteAction.model_fields
    return {k: v for k, v in action.items() if k in names}


def decided_write(
    tools: OrderTools, action: dict[str, Any], *, approve: bool, by: str, note: str
) -> ToolResult:
    """A handed-off write once a person decided: run through the write policy when
    approved (``approved_by="person:<by>"``), else a ``policy`` refusal."""
    if not approve:
        return ToolResult(
            tool=action["tool"],
            ok=False,
            error_code="policy",
            facts={
                "order_id": str(action["arguments"].get("order_id", "")),
                "reason": "declined after review",
            },
        )
    try:
        return execute_write(
            tools, WriteAction(**action_fields(action)), approved_by=f"person:{by}", note=note
        )
    except ToolError as exc:
        return refusal(action["tool"], action["arguments"], exc)
