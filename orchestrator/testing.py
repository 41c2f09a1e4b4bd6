"""Test doubles. :class:`ScriptedModel` stands in for the vLLM server in unit tests.

It is **not** a model: it returns scripted text and made-up routing labelled
``source="scripted"``, so nothing it produces can be mistaken for real telemetry. Like
pydantic-ai's ``TestModel`` it records what it was asked (:attr:`ScriptedModel.requests`), so a
test can check the prompt, schema and limits a skill sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall
from serving.architecture import MoEArchitecture
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace, routed_token_count

#: A small MoE shape for scripted traces: 3 MoE layers, 8 experts, top-2.
SCRIPTED_ARCH = MoEArchitecture(
    model_type="scripted",
    num_hidden_layers=4,
    moe_layers=(1, 2, 3),
    num_experts=8,
    top_k=2,
    num_shared_experts=1,
)


def _first_valid(schema: dict[str, Any]) -> Any:
    """The simplest instance of a JSON schema made of objects and enums (what skills use)."""
    defs = schema.get("$defs", {})

    def build(node: dict[str, Any]) -> Any:
        if "$ref" in node:
            return build(defs[node["$ref"].split("/")[-1]])
        if "enum" in node:
            return node["enum"][0]
        if "const" in node:
            return node["const"]
        kind = str(node.get("type"))
        if kind == "object":
            return {k: build(v) for k, v in node.get("properties", {}).items()}
        return {"string": "", "integer": 0, "number": 0.0, "boolean": False}.get(kind)

    return build(schema)


@dataclass(frozen=True)
class ScriptedRequest:
    """One call :class:`ScriptedModel` received, as the caller made it.

    Attributes:
        messages: The chat turns.
        max_tokens: The completion limit.
        json_schema: The schema asked for, or None for free text.
        temperature: The temperature asked for, or None for the client's default.
    """

    messages: tuple[ChatMessage, ...]
    max_tokens: int
    json_schema: dict[str, Any] | None
    temperature: float | None


class ScriptedModel:
    """A scripted stand-in for :class:`~orchestrator.core.client.VLLMClient` (unit tests only).

    Args:
        replies: Text returned for free-text calls, in turn (cycled). Schema-constrained calls
            return the schema's first valid instance unless ``json_reply`` is given.
        json_reply: Override for schema-constrained calls.
        fail_on_call: Raise this exception on the call with this 1-based index.
        arch: Shape of the made-up routing.
        seed: Seed of the made-up routing.
        model_name: The name reported as served.

    Attributes:
        calls: The messages of every call, in order (kept for older tests).
        requests: Every call in full (:class:`ScriptedRequest`), in order.
        closed: True once :meth:`aclose` ran.

    Example:
        >>> model = ScriptedModel(replies=["Sorry to hear that."])
        >>> import asyncio
        >>> hi = [ChatMessage(role="user", content="hi")]
        >>> call = asyncio.run(model.chat(hi, ChatOptions(max_tokens=8)))
        >>> call.text, call.routing.source.value
        ('Sorry to hear that.', 'scripted')
    """

    base_url = "scripted://"

    def __init__(
        self,
        replies: Sequence[str] = ("Thank you for reaching out.",),
        *,
        json_reply: str | None = None,
        fail_on_call: tuple[int, Callable[[], Exception]] | None = None,
        arch: MoEArchitecture = SCRIPTED_ARCH,
        seed: int = 0,
        model_name: str = "scripted-model",
    ) -> None:
        self.replies = list(replies)
        self.json_reply = json_reply
        self.fail_on_call = fail_on_call
        self.arch = arch
        self.model_name = model_name
        self.calls: list[list[ChatMessage]] = []
        self.requests: list[ScriptedRequest] = []
        self.closed = False
        self._rng = np.random.default_rng(seed)

    @property
    def last_request(self) -> ScriptedRequest:
        """The most recent call.

        Raises:
            IndexError: No call was made yet.
        """
        if not self.requests:
            raise IndexError("ScriptedModel has received no request yet")
        return self.requests[-1]

    async def check(self) -> list[dict[str, Any]]:
        """The one served model, as ``GET /v1/models`` would list it."""
        return [{"id": self.model_name, "object": "model", "root": None}]

    async def aclose(self) -> None:
        """Nothing to release; records that the caller closed it."""
        self.closed = True

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        """A scripted answer (see the class) with made-up ``scripted`` routing.

        Raises:
            Exception: The one ``fail_on_call`` makes, on that call.
        """
        self.calls.append(list(messages))
        self.requests.append(
            ScriptedRequest(
                messages=tuple(messages),
                max_tokens=options.max_tokens,
                json_schema=options.json_schema,
                temperature=options.temperature,
            )
        )
        if self.fail_on_call and len(self.calls) == self.fail_on_call[0]:
            raise self.fail_on_call[1]()
        if options.json_schema is not None:
            text = (
                self.json_reply
                if self.json_reply is not None
                else json.dumps(_first_valid(options.json_schema))
            )
        else:
            text = self.replies[(len(self.calls) - 1) % len(self.replies)]
        prompt_tokens = sum(len(m.content.split()) + 4 for m in messages)
        completion_tokens = min(max(len(text.split()), 1), options.max_tokens)
        tokens = routed_token_count(prompt_tokens, completion_tokens)
        layers, k, experts = len(self.arch.moe_layers), self.arch.top_k, self.arch.num_experts
        ids = np.argsort(self._rng.random((tokens, layers, experts)), axis=-1)[..., :k]
        routing = ExpertRoutingTrace(
            source=ExpertRoutingSource.SCRIPTED,
            moe_layers=self.arch.moe_layers,
            num_experts=experts,
            top_k=k,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            expert_ids=ids.astype(np.int16),
            router_confidence=self._rng.uniform(0.3, 0.9, (tokens, layers)).astype(np.float32),
        )
        return ModelCall(
            model=self.model_name,
            text=text,
            finish_reason="stop",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=1.0,
            routing=routing,
        )
