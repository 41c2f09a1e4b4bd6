"""The reply's prose: the model's sentences through the claim checker, or code's when none is
left (the ``draft_reply`` node, and ``benchmarks/truth.py`` on the same code).

Each model sentence is shown (a :class:`ReplyToken`) only once it is whole and checked; a
dropped one is a :class:`SentenceDropped` trace event and a reason on the model call's
telemetry row. A stream cut mid-answer (``TruncatedStreamError``) keeps the sentences already
shown and ends with code's "the answer was cut" sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from orchestrator.core.client import ModelCall, TruncatedStreamError
from orchestrator.core.events import ReplyToken, SentenceDropped
from orchestrator.core.gateway import ModelGateway
from skills import IssueTriage
from skills.reply import stream_reply
from workflows.customer_service.claims import (
    Lang,
    ReplyChecker,
    TurnFacts,
    code_reply,
    cut_reply,
    outcome_key,
)


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


def intent_answer(
    results: Sequence[Mapping[str, Any]], decision: str | None, intent: str | None, lang: Lang
) -> str | None:
    """Code's answer to a turn with no tool result and no decision whose intent is known
    (a fee question: what is needed to look into it), shown with the fact sentences before
    the model is called; None otherwise. The model's checked prose follows it."""
    if results or decision is not None or intent is None:
        return None
    return code_reply(None, intent, lang)


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
        TurnFacts.of(results, decision),
        lang,
        placeholders,
        intent=intent,
        require_topic=not results and decision is None,
        hold=not answered,
        on_drop=drop,
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
        show(code_reply(outcome_key(results, decision is not None), intent, lang))
    return prose
