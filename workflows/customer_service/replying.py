"""The reply's prose: the model's sentences through the claim checker, or code's when none is
left (the ``draft_reply`` node, and ``benchmarks/truth.py`` on the same code).

Each model sentence is shown (a :class:`ReplyToken`) only once it is whole and checked; a
dropped one is a :class:`SentenceDropped` trace event and a reason on the model call's
telemetry row. A stream cut mid-answer (``TruncatedStreamError``) keeps the sentences already
shown and ends with code's "the answer was cut" sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from orchestrator.core.client import ModelCall, TruncatedStreamError
from orchestrator.core.events import ReplyToken, SentenceDropped
from orchestrator.core.gateway import ModelGateway
from skills import IssueTriage
from skills.reply import stream_reply
from workflows.customer_service.amounts import refund_ask
from workflows.customer_service.asks import doubt, normalise, read_asks
from workflows.customer_service.claims import (
    Lang,
    ReplyChecker,
    TurnFacts,
    code_reply,
    cut_reply,
    message_topic,
    outcome_key,
)
from workflows.customer_service.refund_status import waives_refund


@dataclass
class Prose:
    """The prose part of one reply.

    Attributes:
        sentences: What the customer read, in order (model sentences that passed, or code's).
        code_written: True when no model sentence was left and code wrote the prose.
        cut: True when the model's stream was cut mid-answer (a failed, ``truncated`` call).
        dropped: ``{"reason", "sentence"}`` per model sentence the checker dropped.
        call: The finished model call (None when it was cut).
    """

    sentences: list[str] = field(default_factory=list)
    code_written: bool = False
    cut: bool = False
    dropped: list[dict[str, str]] = field(default_factory=list)
    call: ModelCall | None = None

    def text(self, lang: Lang) -> str:
        """The sentences joined (a space between English ones, none between Chinese)."""
        return ("" if lang == "zh" else " ").join(self.sentences)


#: Code's answer when the customer refused the action ("no refund for ORD-100076"): an
#: acknowledgement, never an offer of what was refused.
_REFUSED = {
    "refund": ("Understood: no refund{for_id}.", "好的，{id_zh}不办理退款。"),
    "cancel": (
        "Understood: {id_en} stays as it is, nothing is cancelled.",
        "好的，{id_zh}不取消。",
    ),
    "change_address": ("Understood: the address{of_id} stays as it is.", "好的，{id_zh}地址不变。"),
}
#: Code's answer when the order id is already given: never asked for again. No tool ran, so
#: the order store is not reachable from this turn (the main job, or nobody signed in): a
#: write or a look-up is never offered here, and the customer is told that nothing changed.
_NOT_HERE = (
    "I cannot see your orders here, so nothing was changed: ",
    "我在这里无法查看您的订单，因此没有做任何更改：",
)
_WITH_ID = {
    "refund": (_NOT_HERE[0] + "a refund for {id} is made in a chat where you are signed in, "
               "once you confirm it.",
               _NOT_HERE[1] + "{id}的退款需要在您登录后的对话中确认后办理。"),
    "cancel": (_NOT_HERE[0] + "{id} is cancelled in a chat where you are signed in, once you "
               "confirm it.", _NOT_HERE[1] + "取消{id}需要在您登录后的对话中确认后办理。"),
    "change_address": (_NOT_HERE[0] + "the address of {id} is changed in a chat where you are "
                       "signed in, once you confirm it.",
                       _NOT_HERE[1] + "修改{id}的地址需要在您登录后的对话中确认后办理。"),
    "track": ("I cannot see your orders here, so I cannot tell where {id} is; please ask in a "
              "chat where you are signed in.",
              "我在这里无法查看您的订单，无法告诉您{id}在哪里；请在登录后的对话中询问。"),
    "status": ("I cannot see your orders here, so I cannot tell the status of {id}; please ask "
               "in a chat where you are signed in.",
               "我在这里无法查看您的订单，无法告诉您{id}的状态；请在登录后的对话中询问。"),
    "billing": ("I see you have a question about a fee or a charge on {id}. Please send the "
                "date of the charge.", "我了解您对{id}的费用或扣款有疑问。请发送扣款日期。"),
    "payment": ("I see you have a question about a payment for {id}. Please send the date of "
                "the payment.", "我了解您对{id}的付款有疑问。请发送付款日期。"),
    "eligibility": ("I cannot see your orders here, so I cannot tell where the refund for {id} "
                    "stands; please ask in a chat where you are signed in.",
                    "我在这里无法查看您的订单，无法告诉您{id}的退款进度；请在登录后的对话中询问。"),
    "other": ("I have {id}. Please tell me what you would like me to do with it.",
              "我已收到订单号{id}。请告诉我需要为您做什么。"),
}  # fmt: skip
_WRITES = ("refund", "cancel", "change_address")
_WRITE_TOOLS = ("start_refund", "cancel_order", "change_address")
#: The intents whose answer asks for the order id (not asked again when the message has it).
_ASKS_ID = (*_WRITES, "eligibility", "track", "status", "billing", "payment")
_ORDER_ID = re.compile(r"(?<![A-Za-z0-9])ORD-\d{6}(?!\d)", re.I)  # also inside Chinese text


#: Code's answer to a write the message mentions but does not ask for now (a question, a
#: statement, a condition: :attr:`Asks.declined`): what code can do, and how to ask.
_HOW_TO_ASK = {
    "refund": ('If you want me to start a refund, say "refund {id}".',
               "如需办理退款，请直接说“退款{id}”。"),
    "cancel": ('If you want me to cancel it, say "cancel {id}".', "如需取消，请直接说“取消{id}”。"),
    "part": ("If you want me to refund part of it, write the exact amount with its currency and "
             "the order id ({id}); I will ask you to confirm it.",
             "如需退部分款项，请写明确切金额（含币种）和订单号（{id}），我会再请您确认。"),
    "change_address": ('If you want me to change the address, say "change the address of {id} '
                       'to" and the new address.',
                       "如需修改地址，请说“把{id}的地址改成”加上新地址。"),
}  # fmt: skip
_CAN_READ = {
    "refund": ("I can check whether {id} can be refunded.", "我可以帮您查询{id}能否退款。"),
    "cancel": ("I can check the status of {id}.", "我可以帮您查询{id}的状态。"),
    "change_address": ("I can check the status of {id}.", "我可以帮您查询{id}的状态。"),
}
#: Code's answer to a write mentioned with sarcasm or irony (``doubt``: ``unclear``): what the
#: customer wants is asked back; nothing is offered (cs12).
_UNCLEAR = (
    "I could not tell what you would like me to do about {id}. Please tell me in plain words.",
    "我不太确定您希望我怎么处理{id}，请直接告诉我您的需要。",
)
#: Code's answer to a cancel of one item of an order: only whole orders are cancelled here.
_PART_CANCEL = (
    "I can cancel only a whole order here, so nothing was changed: to cancel one item of {id}, "
    "ask for a colleague.",
    "这里只能取消整个订单，因此没有做任何更改：如需取消{id}中的单件商品，请要求转人工。",
)
#: Why-nots whose mention gets the how-to-ask sentence (not a refusal, a past event, doubt).
_HINTED = ("not_asked", "conditional", "question", "unsure", "unusual")
#: Why-nots of a form that says nothing plain ("Nobody here wants a refund for …", "Refund …?
#: in another life", 退款…，我信你個鬼): what the customer wants is asked back, never the
#: words that would ask for a write, which read as if they had asked (cs13).
_ASKED_BACK = ("unsure", "unusual")
#: A question about where an existing refund or order is: no hint to ask for another.
_WHERE_IS = re.compile(
    r"\b(?:where(?:'s| is| are)|when (?:will|does|do|did|is|can)|status|how long|track\w*|"
    r"still waiting)\b|到哪|什么时候|进度|到账|状态|多久|还没|什麼時候|進度|到帳|狀態|還沒",
    re.I,
)


def how_to_ask(message: str, lang: Lang, *, with_read: bool = True) -> str | None:
    """Code's sentence for the first write ``message`` mentions without asking for it now
    (:attr:`Asks.declined`: ``not_asked``, ``conditional``, ``question``): what code can read
    (``with_read``) and the words that ask for it, in the customer's language; None when no
    such mention, when one was asked, or when the message asks where something is. A
    mention with sarcasm or irony (``doubt``: ``unclear``) is asked back, with no offer.

    Example:
        >>> how_to_ask("Is ORD-100216 refundable?", "en")
        'I can check whether ORD-100216 can be refunded. If you want me to start a refund, say "refund ORD-100216".'
    """  # noqa: E501
    asks = read_asks(message)
    ids = [m.upper() for m in _ORDER_ID.findall(message)]
    zh = lang == "zh"
    order = ids[0] if ids else ("订单号" if zh else "ORD-…")
    first = asks.declined[0][1] if asks.declined else ""
    unclear = doubt(message) == "unclear" or first in _ASKED_BACK
    if asks.declined and not asks.writes and unclear:  # sarcasm, an unusual form: ask back
        return _UNCLEAR[zh].format(id=ids[0] if ids else ("您的订单" if zh else "your order"))
    if ("cancel", "part") in asks.declined and "cancel" not in asks.writes:
        return _PART_CANCEL[zh].format(id=ids[0] if ids else ("订单" if zh else "an order"))
    hinted = [i for i, why in asks.declined if why in _HINTED and i not in asks.writes]
    if waives_refund(normalise(message).lower()):  # "I don't want my money back": no offer
        hinted = [i for i in hinted if i != "refund"]
    if not hinted or asks.writes or _WHERE_IS.search(message):
        return None
    read = _CAN_READ[hinted[0]][zh].format(id=ids[0] if ids else ("订单" if zh else "your order"))
    say = _HOW_TO_ASK[hinted[0]][zh].format(id=order)
    if hinted[0] == "refund" and refund_ask(message) is not None:  # a part, an amount, a cap:
        say = _HOW_TO_ASK["part"][zh].format(id=order)  # never the whole order's words (cs9 c)
    return ("" if zh else " ").join((read, say)) if with_read else say


#: Where one clause of a message ends and a contrasting one begins.
_CONTRAST = re.compile(r"\b(?:but|however|though|although|yet)\b|但是|可是|不过|然而|但", re.I)


def _asked_in_a_clause(message: str, intent: str) -> bool:
    """Whether one contrasting clause of ``message``, read alone, asks for ``intent``."""
    parts = [part for part in _CONTRAST.split(message) if part.strip()]
    return len(parts) > 1 and any(intent in read_asks(part).writes for part in parts)


def intent_answer(
    results: Sequence[Mapping[str, Any]],
    decision: str | None,
    intent: str | None,
    lang: Lang,
    message: str = "",
) -> str | None:
    """Code's answer to a turn with no tool result and no decision whose intent is known
    (a fee question: what is needed to look into it), shown with the fact sentences before
    the model is called; after reads only, how to ask for a write the message mentions
    (:func:`how_to_ask`); None otherwise. The model's checked prose follows it.

    An action the customer refused in ``message`` (:func:`read_asks`: ``negated``) is
    acknowledged, not offered; a write the message does not ask for is not offered either
    ("keep ORD-102091" triaged as a cancellation): a mention that is no ask of the customer's
    now ("Is ORD-100216 refundable?") gets what code can read and how to ask
    (:func:`how_to_ask`; after a read, only how to ask), never a question to confirm; an order
    id already in ``message`` is not asked for again."""
    if results or decision is not None or intent is None:
        wrote = any(r.get("tool") in _WRITE_TOOLS for r in results)
        read_only = bool(results) and decision is None and not wrote
        # no "say 'refund ORD-…'" after a read that says it cannot be done (not refundable)
        # or that nothing more can be refunded (an ok read of a refunded order's refunds)
        possible = all(
            r.get("ok", True) and (r.get("facts") or {}).get("eligible") != "no" for r in results
        )
        return how_to_ask(message, lang, with_read=False) if read_only and possible else None
    asks = read_asks(message)
    ids = list(dict.fromkeys(m.upper() for m in _ORDER_ID.findall(message)))
    zh = lang == "zh"
    topic = message_topic(message)
    if intent not in _WRITES and topic in _WRITES and (topic, "negated") in asks.declined:
        intent = topic  # a read planned for a refused write ("don't cancel ORD-…"): acknowledged
    hinted = any(i == intent and why in _HINTED for i, why in asks.declined)
    refused = (
        (intent, "negated") in asks.declined
        or (intent not in asks.writes and topic == intent and doubt(message) == "negated")
    ) and not (hinted or _asked_in_a_clause(message, intent))
    # "地址不用改": a negation the ask reader finds no write word in. A negation in another
    # clause ("I don't know the order number, but I need a refund") is no refusal: nothing is
    # written on such a message (read_asks declines it), but the reply must not say "no refund".
    if intent in _WRITES and refused:
        order = ids[0] if ids else ""
        en, cn = _REFUSED[intent]
        return (cn if zh else en).format(
            for_id=f" for {order}" if order else "",
            of_id=f" of {order}" if order else "",
            id_en=order or "your order",
            id_zh=order or "订单",
        )
    if intent in _WRITES and intent not in asks.writes:  # a read, never an offer to confirm
        hint = how_to_ask(message, lang)
        if hint is not None:
            return hint
        intent = (
            ("eligibility" if intent == "refund" else "status")
            if ids or topic == intent
            else "other"
        )
    if ids and intent in _ASKS_ID:
        en, cn = _WITH_ID.get(intent, _WITH_ID["other"])
        return (cn if zh else en).format(id=", ".join(ids[:3]))
    return code_reply(None, intent, lang)


def _turn_facts(
    results: Sequence[Mapping[str, Any]], decision: str | None, handoff: bool, message: str
) -> TurnFacts:
    """The turn's facts, with what the customer asked for and refused in ``message``."""
    asks = read_asks(message)
    refused = {intent for intent, why in asks.declined if why == "negated"}
    wants = {*asks.writes, *("refund" if r == "eligibility" else r for r in asks.reads)}
    topic = message_topic(message)
    if topic is not None and topic not in refused:
        wants.add(topic)
    return TurnFacts.of(results, decision, handoff=handoff, wants=wants, unwanted=refused)


async def write_prose(
    llm: ModelGateway,
    *,
    message: str,
    triage: IssueTriage,
    results: Sequence[Mapping[str, Any]],
    decision: str | None,
    lang: Lang,
    intent: str | None,
    emit: Callable[[BaseModel], None],
    answered: bool = False,
    handoff: bool = False,
    said: str = "",
) -> Prose:
    """Stream the model's prose through a :class:`ReplyChecker`, emitting each sentence that
    passes; code's template when none does.

    Args:
        llm: The request's gateway.
        message: The customer's message (data).
        triage: The triage of the message.
        results: This turn's tool results (``{"tool", "ok", "facts", "error_code"}``).
        decision: A person's decision on the thread (``approved`` / ``rejected``) or None.
        lang: The customer's language.
        intent: The intent the reply answers; with no tool result the prose must fit it.
        emit: Sends a trace event (``ReplyToken``, ``SentenceDropped``).
        answered: Code already answered the intent (:func:`intent_answer`): the prose need
            not be on its topic (a sentence of another kind is still dropped), and nothing is
            added when no model sentence is left.
        handoff: A handoff was recorded for the thread this turn: a sentence promising a
            colleague's follow-up may stand (without one it is dropped).
        said: The facts code already wrote above the prose: a model sentence that only
            repeats them is dropped (the reply after an approved refund said it twice).

    Raises:
        ServerUnavailableError, ModelCallError: The model server was lost (not a cut stream,
            which is answered here).
    """
    placeholders: dict[str, str] = {}
    for result in results:
        placeholders.update({str(k): str(v) for k, v in (result.get("facts") or {}).items()})
    prose = Prose()

    def drop(reason: str, sentence: str) -> None:
        emit(SentenceDropped(reason=reason, sentence=sentence[:300]))

    def show(sentence: str) -> None:
        lead = "" if not prose.sentences or lang == "zh" else " "
        emit(ReplyToken(text=lead + sentence))
        prose.sentences.append(sentence)

    checker = ReplyChecker(
        _turn_facts(results, decision, handoff, message),
        lang,
        placeholders,
        intent=intent,
        require_topic=not results and decision is None,
        hold=not answered,
        on_drop=drop,
        said=said,
    )
    try:
        async for item in stream_reply(llm, message, triage, placeholders, check=checker):
            if isinstance(item, str):
                show(item)
            else:
                prose.call = item
    except TruncatedStreamError:
        prose.cut = True
        show(cut_reply(lang))
    prose.dropped = list(checker.dropped)
    if not prose.sentences and not answered:
        prose.code_written = True
        show(code_reply(offer_key(results, decision is not None, message), intent, lang))
    return prose


def offer_key(results: Sequence[Mapping[str, Any]], decided: bool, message: str) -> str | None:
    """:func:`~workflows.customer_service.claims.outcome_key`, except that a refund the
    customer refused or mocked in this message ("Refund ORD-…? No.", 退款？不要) is not offered
    back after the eligibility read (tester11 F4): the order's answer, no offer."""
    key = outcome_key(results, decided)
    if key == "tool:check_refund_eligibility" and doubt(message) in ("negated", "unclear"):
        return "tool:lookup_order"
    return key
