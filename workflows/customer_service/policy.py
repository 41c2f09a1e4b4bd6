"""The one path every write of the customer-service workflow runs through.

:func:`execute_write` checks a :class:`WriteAction` and only then runs it, with a one-use
:class:`~workflows.customer_service.store.tools.WriteGrant` that the store's write methods
demand (a write called any other way raises ``ToolError("unauthorised")``). It checks:

* **the ask**: the customer's own words asked for this write (re-read here with
  :func:`~workflows.customer_service.asks.read_asks`, not taken on trust from the graph),
  and a second, conservative reading of the whole message
  (:func:`~workflows.customer_service.asks.doubt`: no clauses, no negation scopes) finds no
  negation, retraction, pasted, quoted or attributed content, or sarcasm anywhere in it;
* **the confirmation**: the same customer answered the confirmation question with a plain yes;
* **customer scoping**: the action's customer is the one the tools are bound to;
* **the facts confirmed**: a refund has the exact amount the customer was shown, and that
  is the amount the ask names, re-read from it (an ask with a money word whose amount
  cannot be read is refused); a new address is the one read from the customer's own words;
  an order id written malformed (``ORD-100200b``) refuses the write;
* **limits**: a refund over the automatic limit needs a person (``approved_by``), which the
  store enforces (``needs_approval``);
* **plain talk**: a write asked in a conversation that is not plain
  (:mod:`~workflows.customer_service.plain_talk`: the ask re-read here, and the thread's
  earlier messages as the graph remembers them in ``unusual``) needs a person too
  (``needs_approval``, :func:`person_needed`): only a plain conversation is self-served;
  so does any write on an account one of whose conversations said, in the last
  ``mark_days`` days, that its writer is not the holder (a new conversation does not clear
  it);
* **idempotency**: a key is required; the store turns the same key into the same row.

The approved-handoff path (a person approves a refund over the limit) calls it too.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from workflows.customer_service.asks import (
    doubt,
    extract_address,
    is_yes,
    normalise,
    own_words,
    read_asks,
)
from workflows.customer_service.plain_talk import unusual_reason
from workflows.customer_service.question_waits import new_amount, offered_amount
from workflows.customer_service.store.tools import (
    WRITE_TOOLS,
    OrderTools,
    ToolError,
    ToolResult,
    _mint_grant,
)

#: The intent a write tool needs the customer to have asked for.
TOOL_INTENT = {
    "start_refund": "refund",
    "cancel_order": "cancel",
    "change_address": "change_address",
}


class WriteAction(BaseModel):
    """One write the customer asked for and confirmed.

    Attributes:
        tool: A write tool (``start_refund``, ``cancel_order``, ``change_address``,
            ``open_ticket``).
        customer_id: The customer it is for (the thread's).
        arguments: The tool's arguments (a refund's ``amount_cents`` is the amount shown).
        key: Idempotency scope (``thread:turn``); required.
        ask: The customer's words that asked for it.
        confirmation: The customer's answer to the confirmation question.
        confirmed_by: Who answered it (must be ``customer_id``).
        amended: The customer's later words that changed only the amount of the refund ``ask``
            asked for, while its question waited ("actually make it USD 25"); "" when none.
            Re-read here (:func:`~workflows.customer_service.question_waits.new_amount`).
        unusual: Why an earlier customer message of the conversation was not plain talk
            (the graph's thread state; "" when every one was): a person must approve it.
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    customer_id: str
    arguments: dict[str, Any]
    key: str = Field(min_length=1, max_length=200)
    ask: str = ""
    confirmation: str = ""
    confirmed_by: str = ""
    amended: str = ""
    unusual: str = ""


def person_needed(action: WriteAction, tools: OrderTools | None = None) -> str | None:
    """Why ``action`` may run only once a person approved it, or None: an earlier message of
    its conversation (``action.unusual``) or its ask, re-read here
    (:func:`~workflows.customer_service.plain_talk.unusual_reason`), is not plain talk; or,
    with ``tools``, another conversation of the account was not
    (:meth:`~workflows.customer_service.store.tools.OrderTools.account_mark`)."""
    held = action.unusual or unusual_reason(action.ask)  # an amendment: new_amount's own
    return held or (tools.account_mark() if tools is not None else None)


def denial(action: WriteAction, tools: OrderTools, approved_by: str | None) -> str | None:
    """Why ``action`` may not run, or None when it may."""
    if action.tool not in WRITE_TOOLS:
        return f"{action.tool} is not a write this policy knows"
    if not action.customer_id or action.customer_id != tools.customer_id:
        return "the action is for another customer than the conversation's"
    intent = TOOL_INTENT.get(action.tool)
    unsure = doubt(action.ask) if intent is not None else None
    if unsure is not None:  # the second, conservative reading: one marker anywhere refuses
        return f"the customer did not ask for it in their own words ({unsure})"
    asks = read_asks(action.ask)
    if intent is not None and intent not in asks.writes:
        return "the customer did not ask for it in their own words"
    if intent is None and not own_words(normalise(action.ask)).strip():
        return "the customer did not ask for it in their own words"
    if action.amended and (action.tool != "start_refund" or new_amount(action.amended) is None):
        return "the change of the amount is not a plain one of the customer's own"
    if asks.malformed_id:
        return "the order id the customer wrote is not a valid one"
    if action.confirmed_by != action.customer_id or not is_yes(action.confirmation):
        return "the customer did not confirm it"
    if action.tool == "start_refund":
        why = _amount_denial(action)
        if why is not None:
            return why
    if action.tool == "change_address":
        address, _ = extract_address(action.ask)
        if not address or address != action.arguments.get("new_address"):
            return "the new address is not the one the customer wrote"
    if approved_by is not None and not approved_by.startswith("person:"):
        return "only a person approves a refund over the automatic limit"
    return None


#: A money sign or word: a refund ask that holds one names an amount.
_MONEY_WORD = re.compile(
    r"[$¥€£]|\b(?:dollars?|bucks?|cents?|usd|eur|euros?|gbp|pounds?|quid|cny|rmb|yuan|cad|"
    r"aud)\b|元|美元|块钱|毛钱",
    re.I,
)


def _amount_denial(action: WriteAction) -> str | None:
    """Why a refund's amount is not the one the customer asked for (re-read from the ask
    with :func:`~workflows.customer_service.amounts.refund_ask`), or None."""
    cents = action.arguments.get("amount_cents")
    if not cents:
        return "the refund has no confirmed amount"
    asked = offered_amount(action.ask, action.amended)
    if asked is None:  # the whole order, unless a money word names an amount not read
        if _MONEY_WORD.search(own_words(normalise(action.ask))):
            return "the ask names an amount that could not be read"
        return None
    if asked.cents is None:
        return "the amount the customer asked for is unclear"
    if asked.cents != cents:
        return "the amount is not the one the customer asked for"
    return None


def execute_write(
    tools: OrderTools, action: WriteAction, *, approved_by: str | None = None, note: str = ""
) -> ToolResult:
    """Check ``action`` and run it once (idempotent by its key).

    Args:
        tools: The store's tools, bound to the conversation's customer.
        action: The write, its ask and its confirmation.
        approved_by: ``person:<name>`` when a person approved a refund over the limit.
        note: The person's note (refunds only).

    Returns:
        The tool's result.

    Raises:
        ToolError: ``policy`` when the policy refuses (the message says why; nothing is
            written), ``needs_approval`` when the conversation is not plain
            (:func:`person_needed`; nothing is written), or what the tool raises
            (``not_found``, ``policy``, ``needs_approval``).
    """
    why = denial(action, tools, approved_by)
    if why is not None:
        raise ToolError("policy", f"{action.tool} refused: {why}")
    held = person_needed(action, tools) if approved_by is None else None
    if held is not None:  # only a plain conversation is self-served (tester13 A, I, C)
        raise ToolError("needs_approval", f"{action.tool} needs a person: {held}")
    grant = _mint_grant(action.tool, tools.customer_id, action.key)
    extra: dict[str, Any] = {}
    if action.tool == "start_refund":
        extra = {"approved_by": approved_by, "note": note}
    return tools.run(action.tool, action.arguments, key=action.key, grant=grant, **extra)
