"""A customer's message on a thread that waits for a person (tester7 F20).

While a confirmed write (a refund over the automatic limit, …) waits for a person's decision
(the graph interrupted in ``handoff``), the customer may write again. :func:`withdraws` reads
whether that message takes the pending write back: then the handoff is claimed ``withdrawn``
(:meth:`~workflows.customer_service.store.threads.Coordination.withdraw_handoff`, the same
conditional UPDATE a person's decision takes, so of a withdrawal and an approval racing from two
processes exactly one wins), the graph is resumed with the withdrawal (nothing is written) and
the customer is told so (:func:`withdrawn_text`). Any other message keeps the handoff waiting
and is appended to its context, where the person deciding sees it.

The reading is code's, not the model's (it decides whether money moves): the customer's own
negated mention of the pending write (:func:`~workflows.customer_service.asks.read_asks`
``declined`` ``negated``, which also covers :func:`~workflows.customer_service.asks.doubt`'s
withdrawn / declined / settled forms), or, with no mention of it at all, a change of mind that
needs no object on a waiting thread (:data:`_NO_OBJECT`: "I changed my mind", "never mind,
I'll keep it", 算了, 不用了). A message that also asks for the write again is no withdrawal.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any

from langgraph.types import Command

from orchestrator.request import Request
from workflows.customer_service.asks import doubt, normalise, own_words, read_asks
from workflows.customer_service.language import reply_language
from workflows.customer_service.signals import read_signals
from workflows.customer_service.state import MAX_HISTORY, CustomerServiceState
from workflows.customer_service.store import OrderStore

#: The intent of each write tool (the ask a withdrawal negates).
INTENT_OF_TOOL = {
    "start_refund": "refund",
    "cancel_order": "cancel",
    "change_address": "change_address",
}

#: A change of mind that needs no object while a write waits: asks.py's retraction forms read
#: a retraction only next to an ask, so this short list covers the bare ones ("I changed my
#: mind", "forget it", "I'll keep it", 算了, 不用了, 不退了); only counted when
#: :func:`~workflows.customer_service.asks.doubt` reads the message as negated too.
_NO_OBJECT = re.compile(
    r"\b(?:changed? my mind|never ?mind|forget (?:it|that|about it)|scratch that|"
    r"(?:i'?ll|i will|i'?d rather|i want to|let me) keep (?:it|them|the \w+)|"
    r"don'?t (?:do (?:it|that)|bother|proceed|go ahead|process it|change (?:it|that|anything))|"
    r"keep (?:the|my) (?:old|current|original|same|existing) address|"
    r"(?:no longer|don'?t) need (?:it|that|this)|(?:no longer|not) needed|no need any ?more|"
    r"decided (?:not to|against)|(?:not|no longer) (?:going to |gonna )?return(?:ing)? it|"
    r"withdraw\w*|take (?:it|that) back)\b|"
    r"\bkeep (?:the|my) money\b|"
    r"算了|算啦|不用了|不需要了|不用退|不退了|不退啦|不想退|(?<!要)不要退|别退|撤回|收回|改主意|"
    r"留着|留下|不必了",
    re.I,
)
#: The pending write itself called off, in forms asks.py reads as no ask at all (取消退款,
#: 退款的事就算了, 不取消了, 地址不改了): by the intent withdrawn.
_CALLED_OFF = {
    "refund": re.compile(
        r"(?:取消|撤销|撤回|作废)(?:这个|那个|我的|这笔|该)?退款|"
        r"退款(?:申请)?(?:的事)?(?:就|也)?(?:取消|撤销|撤回|作废|算了|不必|不用|不要)|"
        r"\b(?:close|drop|scrap|call off|stop)\s+(?:the|my|that|this)\s+refund",
        re.I,
    ),
    "cancel": re.compile(r"(?:还是|就)?不(?:用|要|必)?取消了|取消(?:订单)?(?:的事)?(?:就)?算了"),
    "change_address": re.compile(
        r"地址(?:就|也)?不(?:用|要|必)?(?:改|换)了|不(?:用|要|必)?(?:改|换)地址了|"
        r"(?:取消|撤销|撤回)(?:修改|更改|改)地址"
    ),
}
#: A question about withdrawing is answered by the person, not taken as the withdrawal.
_QUESTION = re.compile(r"[?？]\s*$|吗\s*[?？]?\s*$")
#: Not decided yet ("not sure", 要不要): the person reads it; nothing is withdrawn.
_UNDECIDED = re.compile(
    r"\b(?:not sure|unsure|maybe|perhaps|thinking (?:about|of)|wondering)\b|"
    r"不确定|要不要|考虑|再想想|想一想|也许|可能",
    re.I,
)


def withdraws(message: str, action: dict[str, Any] | None) -> bool:
    """Whether ``message`` takes back the pending write ``action`` (the handoff's confirmed
    action: ``tool``, ``arguments.order_id``). Without an action (a handoff with nothing to
    write) nothing can be withdrawn: False.

    Example:
        >>> act = {"tool": "start_refund", "arguments": {"order_id": "ORD-100200"}}
        >>> withdraws("I changed my mind, don't refund it", act), withdraws("any news?", act)
        (True, False)
    """
    intent = INTENT_OF_TOOL.get(str((action or {}).get("tool")))
    if intent is None:
        return False
    order_id = str(((action or {}).get("arguments") or {}).get("order_id") or "").upper()
    named = read_signals(message).order_ids
    if named and order_id not in named:  # about another order
        return False
    asks = read_asks(message)
    if intent in asks.writes:  # asked for again
        return False
    own = own_words(normalise(message))
    if _UNDECIDED.search(own):  # not decided yet: the person reads it
        return False
    whys = {why for i, why in asks.declined if i == intent}
    if whys == {"negated"}:
        return True
    if _QUESTION.search(own):
        return False
    if _CALLED_OFF[intent].search(own):
        return doubt(message) != "quoted"  # not someone else's words ("我老公说取消退款")
    if whys or asks.writes or asks.declined:  # not plainly, or another write: the person reads it
        return False
    return bool(_NO_OBJECT.search(own)) and doubt(message) == "negated"


#: What each write is called in the replies below, per language.
_WRITE_NAMES = {
    "zh": {"start_refund": "退款", "cancel_order": "取消订单", "change_address": "修改地址"},
    "en": {
        "start_refund": "the refund of",
        "cancel_order": "the cancellation of",
        "change_address": "the address change of",
    },
}


def _subject(action: dict[str, Any], lang: str) -> tuple[str, str]:
    """The order id of ``action`` and what its write is called in ``lang``."""
    order_id = str((action.get("arguments") or {}).get("order_id") or "")
    names, other = (
        (_WRITE_NAMES["zh"], "操作") if lang == "zh" else (_WRITE_NAMES["en"], "the change to")
    )
    return order_id, names.get(str(action.get("tool")), other)


def withdrawn_text(action: dict[str, Any], lang: str) -> str:
    """The reply to a withdrawal that won: the write will not be made."""
    order_id, what = _subject(action, lang)
    if lang == "zh":
        return f"好的，已按您的要求撤回：订单 {order_id} 的{what}不会进行，没有做任何更改。"
    return (
        f"As you asked, your request is withdrawn: {what} {order_id} will not be made, and "
        "nothing was changed."
    )


def already_text(action: dict[str, Any], lang: str) -> str:
    """The reply to a withdrawal that came after a person approved the write and it was made."""
    order_id, what = _subject(action, lang)
    if lang == "zh":
        return (
            f"在您发这条消息之前，同事已经批准了订单 {order_id} 的{what}，"
            "并且已经办理，这里无法再撤回。如需进一步处理，请在这里告诉我们。"
        )
    return (
        f"A colleague had already approved {what} {order_id} before your message arrived, and "
        "it was made, so it can no longer be withdrawn here. Tell us here if you need anything "
        "else about it."
    )


async def waiting_input(
    graph: Any, store: OrderStore | None, request: Request, message: str
) -> Command[Any] | None:
    """The graph input of a customer's ``message`` on a thread where a person decides or just
    decided a write (``graph``: the compiled graph; its checkpoint says which), else None.

    * The thread waits in ``handoff``: a withdrawal (:func:`withdraws`) that wins the store's
      claim is a ``Command(resume=…)`` that resumes the handoff with it (nothing is written).
      Any other message, or a withdrawal that lost the claim to a person's decision, returns
      None (the dispatcher answers that the conversation waits for a person); the message is
      added to the handoff's context first, where the person deciding sees it.
    * A person approved it since the customer last wrote, and the write was made: a
      withdrawal is answered that it was approved already (:func:`already_text`).
    """
    if not request.thread_id:
        return None
    snapshot = await graph.aget_state({"configurable": {"thread_id": request.thread_id}})
    pending = next((dict(i.value) for t in snapshot.tasks for i in t.interrupts), None)
    if pending is None:
        return _already_decided(snapshot.values or {}, message)
    thread_id, turn = request.thread_id, int(pending.get("turn") or 0)
    customer = str(request.customer_id or "")
    withdrawal: Command[Any] = Command(
        resume={"withdrawn": True, "text": message, "by": f"customer:{customer}"}
    )
    if withdraws(message, pending.get("action")):
        won = (
            await asyncio.to_thread(
                store.coordination.withdraw_handoff, thread_id, turn, customer, message
            )
            if store is not None
            else True
        )
        if won:
            return withdrawal
    if store is not None:
        at = datetime.now(UTC).isoformat(timespec="seconds")
        status = await asyncio.to_thread(
            store.coordination.note_message, thread_id, turn, at, message
        )
        if status == "withdrawn":  # withdrawn before, but that run failed: it ends now
            return withdrawal
    return None


def _already_decided(values: dict[str, Any], message: str) -> Command[Any] | None:
    """A withdrawal of a write a person approved (and that was made) in the thread's last run:
    the answer that it was approved already, from ``clarify``; else None."""
    handoff = values.get("handoff") or {}
    action = dict(handoff.get("action") or {})
    made = [r for r in values.get("tool_results") or [] if r.get("tool") == action.get("tool")]
    if handoff.get("decision") != "approved" or not made or not made[-1].get("ok"):
        return None
    if not withdraws(message, action):
        return None
    lang = reply_language(message, str(values.get("locale") or "en_US"))
    history = [*(values.get("history") or []), {"role": "customer", "text": message[:2000]}]
    update = {
        "clarify": already_text(action, lang),
        "message": message,
        "turn": int(values.get("turn") or 0) + 1,
        "history": history[-MAX_HISTORY:],
        "handoff": None,
    }
    return Command(goto="clarify", update=update)


def withdrawn_update(
    state: CustomerServiceState, handoff: dict[str, Any], decision: dict[str, Any]
) -> dict[str, Any]:
    """The ``handoff`` node's update when the customer withdrew: no write, the handoff
    decided ``withdrawn`` with their words, and the reply (:func:`withdrawn_text`) to send
    from ``clarify``."""
    words = str(decision.get("text") or "")[:2000]
    lang = reply_language(words, str(state.get("locale") or "en_US"))
    text = withdrawn_text(dict(handoff.get("action") or {}), lang)
    history = [*(state.get("history") or []), {"role": "customer", "text": words}]
    return {
        "handoff": {
            **handoff,
            "decision": "withdrawn",
            "note": words,
            "by": str(decision.get("by") or "customer")[:120],
        },
        "message": words,
        "turn": int(state.get("turn") or 0) + 1,
        "history": history[-MAX_HISTORY:],
        "clarify": text,
    }


async def after_handoff(state: CustomerServiceState) -> str:
    """A withdrawn handoff is answered by code (``clarify``); a person's decision is drafted."""
    handoff = state.get("handoff") or {}
    return "clarify" if handoff.get("decision") == "withdrawn" else "draft_reply"
