"""The customer's language and script: which language a reply is written in, and whether
what the customer reads is converted to Traditional characters.

One reading serves the whole turn, so that the confirmation question, the facts and the
prose of one reply are in one language (:func:`reply_language`). Replies are composed and
checked in Simplified Chinese (the claim checker, the templates and the model's prompt all
use it); a customer who writes in Traditional characters reads them in Traditional
(:func:`for_customer`), converted by OpenCC after every check, so no fact can change on the
way: OpenCC maps Chinese characters only, never digits, ids or Latin letters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from orchestrator.core.events import ReplyFacts, ReplyToken
from orchestrator.textnorm import is_traditional, to_traditional

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Lang", "customer_emit", "for_customer", "reply_language"]

Lang = Literal["en", "zh"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: Identifiers (ORD-100042, RF-000131, SKU codes) say nothing about the customer's language.
_IDENTIFIER = re.compile(r"\b[A-Za-z]{1,5}-?\d[\w-]*")
_LATIN = re.compile(r"[A-Za-z]")


def reply_language(message: str, locale: str = "en_US") -> Lang:
    """The customer's language for this turn's reply.

    Chinese when the message holds two Chinese characters or more; English when it holds Latin
    letters outside identifiers (``ORD-100042``); Chinese when it holds one Chinese character
    and nothing English (嗯？, 好); else the customer's ``locale`` (``zh_*`` is Chinese).

    Example:
        >>> reply_language("嗯？")
        'zh'
        >>> reply_language("ORD-100042", "zh_CN"), reply_language("ORD-100042")
        ('zh', 'en')
    """
    head = message[:2000]
    han = len(_CJK.findall(head))
    if han >= 2:
        return "zh"
    if _LATIN.search(_IDENTIFIER.sub(" ", head)):
        return "en"
    if han:
        return "zh"
    return "zh" if locale.startswith("zh") else "en"


def for_customer(text: str, message: str, locale: str = "en_US") -> str:
    """``text`` (a reply composed in Simplified) as the customer reads it: converted to
    Traditional (:func:`~orchestrator.textnorm.to_traditional`: Hong Kong's standard for
    ``zh_HK``, else Taiwan's) when ``message`` was written in Traditional characters, else
    unchanged. A run of Chinese characters that the customer wrote (an address they gave) is
    kept exactly as written.

    Example:
        >>> for_customer("退款已处理。", "我要退款，謝謝")
        '退款已處理。'
        >>> for_customer("退款已处理。", "我要退款，谢谢")
        '退款已处理。'
    """
    if not text or not is_traditional(message[:2000]):
        return text
    said = message[:4000]

    def convert(run: re.Match[str]) -> str:
        words = run.group(0)  # the customer's own words (an address) are kept as written
        return words if len(words) > 1 and words in said else to_traditional(words, locale)

    return _HAN_RUN.sub(convert, text)


def customer_emit(
    emit: Callable[[BaseModel], None], message: str, locale: str = "en_US"
) -> Callable[[BaseModel], None]:
    """``emit`` with the reply's text events (:class:`ReplyFacts`, :class:`ReplyToken`) in
    the customer's script (:func:`for_customer`); other events pass unchanged."""
    if not is_traditional(message[:2000]):
        return emit

    def send(event: BaseModel) -> None:
        if isinstance(event, ReplyFacts | ReplyToken):
            event = event.model_copy(update={"text": for_customer(event.text, message, locale)})
        emit(event)

    return send
