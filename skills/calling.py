"""How a skill calls the model: the caller's :class:`CallOptions` over the skill's defaults.

Every skill takes the same optional ``options`` (telemetry node, completion limit,
temperature). Each skill states its own defaults once, as a :class:`SkillCall`, and
:meth:`SkillCall.settings` merges the two in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.core.client import ChatMessage
from orchestrator.core.gateway import ModelGateway, TemperatureKind
from orchestrator.core.structured import OutputT, StructuredAnswer


class CallOptions(BaseModel):
    """What a caller may set on any skill's model call; a field left None keeps the skill's
    own default (named in each skill's docstring).

    Attributes:
        node: The workflow node recorded in telemetry (non-empty).
        max_tokens: Completion limit in tokens (>= 1).
        temperature: Sampling temperature; overrides the skill's preset. The gateway checks
            it (0..2, ``UserError`` otherwise).
    """

    model_config = ConfigDict(frozen=True)

    node: str | None = Field(None, min_length=1)
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = None


class CallSettings(NamedTuple):
    """What one skill call sends: ``node``, ``max_tokens`` (None: the gateway's limit,
    ``ORCH_MAX_COMPLETION_TOKENS``) and the resolved ``temperature``."""

    node: str
    max_tokens: int | None
    temperature: float


class SkillCall(BaseModel):
    """A skill's own defaults for its model call.

    Attributes:
        node: The telemetry node when the caller names none.
        kind: The temperature preset (``judging``, ``factual`` or ``free_text``).
        max_tokens: The completion limit when the caller gives none; None for the gateway's.
    """

    model_config = ConfigDict(frozen=True)

    node: str
    kind: TemperatureKind
    max_tokens: int | None = None

    def settings(self, llm: ModelGateway, options: CallOptions | None) -> CallSettings:
        """``options`` over these defaults, with the temperature resolved by ``llm``.

        Raises:
            UserError: The temperature is outside 0..2, or ``llm`` has no preset for ``kind``.
        """
        options = options or CallOptions()
        return CallSettings(
            node=self.node if options.node is None else options.node,
            max_tokens=self.max_tokens if options.max_tokens is None else options.max_tokens,
            temperature=llm.temperature(self.kind, options.temperature),
        )

    async def structured(
        self,
        llm: ModelGateway,
        options: CallOptions | None,
        messages: Sequence[ChatMessage],
        *,
        output: type[OutputT],
        schema: dict[str, Any] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> StructuredAnswer[OutputT]:
        """:meth:`ModelGateway.structured <orchestrator.core.gateway.ModelGateway.structured>`
        with :meth:`settings`.

        Raises:
            UserError: As :meth:`settings`.
            ServerUnavailableError, ModelCallError, TelemetryError: From the gateway.
        """
        node, max_tokens, temperature = self.settings(llm, options)
        return await llm.structured(
            node,
            messages,
            output=output,
            schema=schema,
            context=context,
            max_tokens=max_tokens,
            temperature=temperature,
        )
