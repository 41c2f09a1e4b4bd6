"""Structured (JSON) model output: the schema sent, the one parse, and the typed answer.

A skill names a pydantic *output model*; :meth:`ModelGateway.structured
<orchestrator.core.gateway.ModelGateway.structured>` sends that model's JSON schema (or an
explicit, tighter one), then :func:`parse_output` parses the answer once, as data and never
code, into a :class:`StructuredAnswer`: ``value`` holds the validated output model, or it is
None and ``error`` says why the text could not be used. The idea follows pydantic-ai's output
types (``pydantic_ai/_output.py``); nothing here raises on a bad answer.

With ``ORCH_STRUCTURED_OUTPUT=false`` the client does not send the schema; the model's plain
text goes through the same parse, so the outcome is the same kind of answer either way.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

OutputT = TypeVar("OutputT", bound=BaseModel)

#: Characters of a validation error kept in :attr:`StructuredAnswer.error`.
ERROR_MAX_CHARS = 300


@dataclass(frozen=True)
class StructuredAnswer(Generic[OutputT]):
    """The model's answer to a structured-output call (model output: data, never code).

    Attributes:
        value: The validated output model, or None when the answer could not be used.
        raw: The answer text, whole (skills keep a bounded prefix of it when unparsed).
        model: Served model name.
        finish_reason: ``stop``, ``length`` (cut at ``max_tokens``)...
        error: Why ``value`` is None: invalid JSON, or the rule of the output model it broke
            (at most 300 characters); None when parsed.
    """

    value: OutputT | None
    raw: str
    model: str
    finish_reason: str | None
    error: str | None = None

    @property
    def parsed(self) -> bool:
        """True when :attr:`value` holds a validated output."""
        return self.value is not None

    @classmethod
    def parse(
        cls,
        text: str,
        output: type[OutputT],
        *,
        model: str = "",
        finish_reason: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> StructuredAnswer[OutputT]:
        """Parse ``text`` (see :func:`parse_output`) into an answer; never raises on bad text.

        When the text is unusable and ``finish_reason`` is ``length``, :attr:`error` says the
        answer was cut at the token limit.
        """
        value, error = parse_output(text, output, context=context)
        if error is not None and finish_reason == "length":
            error = f"cut at the token limit (finish_reason=length); {error}"[:ERROR_MAX_CHARS]
        return cls(value=value, raw=text, model=model, finish_reason=finish_reason, error=error)


def output_schema(output: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``output`` as pydantic writes it (``model_json_schema()``).

    The server constrains the answer to it (vLLM: xgrammar), so every string in it should be
    bounded (an enum or a ``maxLength``) for a random-weight model to terminate; pass an
    explicit schema to :meth:`~orchestrator.core.gateway.ModelGateway.structured` when the
    model's own schema is not bounded enough.

    Built once per model class (pydantic rebuilds it on every ``model_json_schema()`` call,
    about 2-10 ms, which a batch paid on every structured call); each caller gets its own
    copy, so changing the returned dict never changes another call's schema.
    """
    return copy.deepcopy(_cached_schema(output))


@functools.cache
def _cached_schema(output: type[BaseModel]) -> dict[str, Any]:
    return output.model_json_schema()


def parse_output(
    text: str, output: type[OutputT], *, context: Mapping[str, Any] | None = None
) -> tuple[OutputT | None, str | None]:
    """Parse ``text`` as JSON and validate it against ``output``; never raises on bad text.

    Args:
        text: The model's answer.
        output: The pydantic model the answer must satisfy (validated in Python mode on the
            decoded JSON, so ``json.loads`` decides what JSON is).
        context: Passed to validators as ``info.context`` (for example the allowed category
            names of a per-call taxonomy).

    Returns:
        ``(value, None)`` when valid, else ``(None, reason)``.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"not JSON: {exc}"[:ERROR_MAX_CHARS]
    try:
        return output.model_validate(data, context=dict(context) if context else None), None
    except (ValidationError, ValueError, TypeError) as exc:
        return None, f"does not fit {output.__name__}: {exc}"[:ERROR_MAX_CHARS]
