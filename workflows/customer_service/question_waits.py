"""A message sent while a confirmation question waits that is neither a yes nor a no (cs14).

While "Refund USD 59.99 for order ORD-…? Reply yes to confirm." waits, the customer may

* shrug (:func:`shrug`: "fine", "whatever", "meh", 随便, "I suppose", or no word at all: 👍,
  "..."): an answer with nothing in it but assent that is no decision. The same question is
  asked again (:func:`asked_once_more`), nothing is written, and the offer still waits for a
  plain yes or no (before, the offer was dropped and the customer had to ask a third time);
* change the ask (:func:`reread`): a new amount alone for the waiting refund ("actually make
  it USD 25", 改成13美元), or a "no" to the question followed by another write of their own
  ("no wait, change its address to …", 不对，取消这个订单吧). That is read as the new ask and
  offered as a new question: nothing is written until it is confirmed (tester13 G2).

Allow-lists, so the safe default holds: an amount alone counts only when nothing else is said
beside it but the few words of a change (:data:`_CHANGE_WORDS`: "actually", "make it",
"instead", "I meant", 改成, 就, 吧) and the whole message passes the gate's second reading
(:func:`~workflows.customer_service.asks.doubt`: no negation, nobody else's words, no
hypothetical, no sarcasm) with no question mark; what follows a "no" is read by the gate itself
(:func:`~workflows.customer_service.asks.read_asks`), as any ask is. Anything else is handled as
before: the offer is dropped ("nothing was changed") and the message is a new turn.

The write policy re-reads an amended refund (:class:`~workflows.customer_service.policy.
WriteAction` ``amended``): the first ask names the refund and the order, the amendment the
amount, and both are the customer's own plain words.
"""

from __future__ import annotations

import re
from typing import Any

from workflows.customer_service.amounts import RefundAsk, named_amount, refund_ask
from workflows.customer_service.asks import Asks, doubt, is_yes, normalise, read_asks
from workflows.customer_service.confirm import is_no
from workflows.customer_service.not_own import asked_again, not_own_answer
from workflows.customer_service.plain_talk import CHECKED, WHO, unusual_reason
from workflows.customer_service.signals import ORDER_ID

#: The words that may stand beside a new amount and leave it an amount alone (lower-cased,
#: Chinese folded to Simplified): a change, courtesy, fillers. Anything else is not read.
_CHANGE_WORDS = re.compile(
    r"\b(?:actually|make|made|it|that|this|instead|only|just|please|pls|sorry|oops|i|i'?d|"
    r"meant|mean|change|to|the|amount|ok|okay|then|hmm+|um+|oh|wait|rather|thanks|thank|you|"
    r"of|for|back|so|well|let'?s|say|should|be|is|go|with|like|lower|reduce|a|an|up|yes|yeah|"
    r"but|though)\b|"
    r"改成|改为|换成|改|其实|那就|那|就|只要|只|仅|好了|好|吧|了|啊|呀|哦|嗯|我|是|说|的|意思|应该|"
    r"不好意思|抱歉|对不起|谢谢|麻烦|请|行|可以|够|金额|要|退"
)
#: A shrug is at most this many words (a CJK character counts as half a word).
_SHRUG_WORDS = 6
#: A sentence mark or a dash that ends a message's first clause ("no, …", "不对，…").
_FIRST_END = re.compile(r"[,，.。!！;；:：\n]|\s[-–—]+\s")
#: Courtesy that may stand in the first clause beside a no ("oh no", "sorry, no").
_COURTESY = re.compile(r"\b(?:oh|oops|sorry|hmm+|um+|ah|actually|wait)\b|哦|哎|啊|抱歉|不好意思")

#: A negation anywhere ("I don't want it any more", 不要了): no shrug, the offer is dropped.
_NO = re.compile(r"\b(?:no|not|never|nothing|nope|nah)\b|n'?t\b|[不没别甭勿]")

_ONCE_MORE = {
    "en": "I did not take that as a yes, so nothing was done yet. {question} Reply no to cancel.",
    "zh": "我没有把这条消息当作确认，所以还没有做任何更改。{question}回复“不”取消。",
}


def shrug(message: str) -> bool:
    """Whether ``message`` is a shrug: not a plain yes or no, and it says nothing else (no write,
    read, order id, amount, question, address or negation: "not now", 不要了 drop the offer as
    before), in at most :data:`_SHRUG_WORDS` words, and plain talk (who writes or whose account
    it is goes to a new turn, which marks the thread).

    Example:
        >>> shrug("whatever"), shrug("fine"), shrug("yes"), shrug("not now"), shrug("where is it?")
        (True, True, False, False, False)
        >>> shrug("👍"), shrug("..."), shrug("?")
        (True, True, False)
    """
    if is_yes(message) or is_no(message) or re.search(r"[?？]", message):
        return False
    text = normalise(message).lower()
    size = len(re.findall(r"[a-z0-9']+", text)) + len(re.findall(r"[\u3400-\u9fff]", text)) / 2
    if size == 0:  # no word at all (👍, 🙂, "..."): no decision either; the question waits
        return bool(message.strip())  # (before, it was dropped for "no question found")
    if size > _SHRUG_WORDS or ORDER_ID.search(text):
        return False
    if named_amount(message)[0] is not None or doubt(message) == "negated" or _NO.search(text):
        return False
    if unusual_reason(message) in (WHO, CHECKED):  # "whatever, my wife's account": a new turn
        return False  # reads it, and the thread is marked
    asks = read_asks(message)
    return not (asks.writes or asks.declined or asks.reads or asks.refund_status)


def asked_once_more(
    said: str, action: dict[str, Any], unusual: str, language: str
) -> dict[str, Any] | None:
    """The update that asks ``action``'s question (the waiting write, with its ``question``)
    again for ``said``, or None: a message that is no answer of the customer's own
    (:func:`~workflows.customer_service.not_own.not_own_answer`: the thread is not plain any
    more, ``unusual``), or a :func:`shrug`. Keys: ``clarify``, ``unusual``, ``pending``."""
    if not_own_answer(said):
        text, unusual = asked_again(action, language), unusual or CHECKED
    elif shrug(said):
        question = str(action.get("question") or "").strip()
        text = _ONCE_MORE["zh" if language == "zh" else "en"].format(question=question)
    else:
        return None
    return {"clarify": text, "unusual": unusual, "pending": {**action, "unusual": unusual}}


def after_no(message: str) -> str | None:
    """The rest of ``message`` when its first clause is a plain no to the waiting question
    ("no wait, change its address to …", "nope, cancel it instead", 不对，取消吧), else None."""
    found = _FIRST_END.search(message)
    if found is None:
        return None
    head = _COURTESY.sub(" ", normalise(message[: found.start()]).lower())
    rest = message[found.end() :].strip()
    return rest if head.strip() and is_no(head) and re.search(r"[^\W_]", rest) else None


def new_amount(message: str) -> RefundAsk | None:
    """The new amount of a message that says only that ("actually make it USD 25", "I meant
    14 dollars", 改成13美元吧): one clear positive amount, nothing beside it but
    :data:`_CHANGE_WORDS`, no question mark, no order id, and no doubt of the gate
    (:func:`~workflows.customer_service.asks.doubt`). Else None."""
    asked, rest = named_amount(message)
    if asked is None or asked.cents is None or re.search(r"[?？]", message):
        return None
    if ORDER_ID.search(normalise(message)) or doubt(message) is not None:
        return None
    return None if re.search(r"[^\W\d_]", _CHANGE_WORDS.sub(" ", rest)) else asked


def reread(message: str, declined: dict[str, Any] | None, asks: Asks) -> tuple[Asks, str]:
    """``message``'s asks, read against the question it declined (``declined``: the waiting
    write, ``tool``, ``arguments``, ``ask``), and the amendment of a refund's amount ("" when
    none). A message with an ask of its own, or sent with no question waiting, is read as it
    is. Else: after a plain no (:func:`after_no`), what follows is read as the ask; a new amount
    alone (:func:`new_amount`) for a waiting refund is the refund's first ask (``ask_text``)
    with that amount (the amendment returned)."""
    if asks.writes or not declined:
        return asks, ""
    rest = after_no(message)
    again = read_asks(rest) if rest else None
    if again is not None and again.writes:
        return again, ""
    first = str(declined.get("ask") or "")
    if declined.get("tool") == "start_refund" and "refund" in read_asks(first).writes:
        text = rest or message
        if new_amount(text) is not None:
            return Asks(writes=("refund",), ask_text=first), text
    return asks, ""


def offered_amount(message: str, amended: str) -> RefundAsk | None:
    """The refund amount asked for: the amendment's (:func:`new_amount`) when there is one,
    else ``message``'s (:func:`~workflows.customer_service.amounts.refund_ask`)."""
    return new_amount(amended) if amended else refund_ask(message)
