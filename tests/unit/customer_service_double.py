"""A tool-calling test double for the customer-service unit tests (ScriptedModel + tools)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall, ToolCall
from orchestrator.core.events import StreamDone, StreamEvent
from orchestrator.core.fixed import FixedRoute
from orchestrator.routes import Route
from orchestrator.testing import SCRIPTED_ARCH, ScriptedModel
from serving.capture import CallTokens
from serving.expert_routing import ExpertRoutingTrace
from workflows.customer_service import CustomerServiceWorkflow

#: Picks the arguments of a tool call from the tool spec (and the attempt number, from 1).
ArgumentPicker = Callable[[dict[str, Any], int], str]


def first_enum(spec: dict[str, Any], attempt: int) -> str:
    """The first allowed value of each argument (what a schema-constrained model may give)."""
    props = spec["function"]["parameters"]["properties"]
    return json.dumps({k: (v.get("enum") or ["ORD-000000"])[0] for k, v in props.items()})


class ScriptedToolModel(ScriptedModel):
    """ScriptedModel that also answers ``tools`` requests with a scripted tool call.

    Attributes:
        tool_requests: ``(tools, tool_choice)`` of every tool call request.
    """

    def __init__(self, *args: Any, arguments: ArgumentPicker = first_enum, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.arguments = arguments
        self.tool_requests: list[tuple[list[dict[str, Any]], Any]] = []

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        """ScriptedModel's answer, or with ``options.tools`` a call of the first tool (or the
        one ``options.tool_choice`` names), its arguments from :attr:`arguments`."""
        call = await super().chat(messages, options)
        tools, tool_choice = options.tools, options.tool_choice
        if not tools:
            return call
        self.tool_requests.append((list(tools), tool_choice))
        spec = tools[0]
        if isinstance(tool_choice, dict):
            spec = next(
                t for t in tools if t["function"]["name"] == tool_choice["function"]["name"]
            )
        args = self.arguments(spec, len(self.tool_requests))
        return call.model_copy(
            update={
                "text": "",
                "tool_calls": (ToolCall(id="t", name=spec["function"]["name"], arguments=args),),
            }
        )


def customer_service_only(
    model: ScriptedModel,
    telemetry: TelemetryStore,
    workflow: CustomerServiceWorkflow | None = None,
) -> Orchestrator:
    """An orchestrator that runs every request through ``workflow`` (a stateless
    :class:`CustomerServiceWorkflow` when None), whatever the rule classifier would say."""
    workflow = workflow or CustomerServiceWorkflow()
    route = FixedRoute(Route("customer_service"), reason="test")
    return Orchestrator(model, telemetry, [workflow], classifier=route)


async def stream_turn(
    orch: Orchestrator,
    text: str,
    customer: str | None = None,
    thread: str | None = "t",
    **request: Any,
) -> tuple[list[StreamEvent], StreamDone]:
    """One streamed turn of ``customer`` on ``thread`` (None: stateless): every event of
    ``orch.stream``, and the last one, which must be the turn's :class:`StreamDone`
    (``request``: more :class:`Request` fields)."""
    turn = Request(text=text, thread_id=thread, customer_id=customer, **request)
    events = [e async for e in orch.stream(turn)]
    done = events[-1]
    assert isinstance(done, StreamDone)
    return events, done


class RecordingCapture:
    """Records the ids it is given; returns an honest 'unavailable' trace."""

    arch = SCRIPTED_ARCH

    def __init__(self) -> None:
        self.seen: list[tuple[list[int], list[int]]] = []

    def verify_served_model(self, root: str | None) -> None:
        return None

    async def capture(self, call: CallTokens) -> ExpertRoutingTrace:
        """Record the ids; the response and its choice are not read."""
        self.seen.append((list(call.prompt_ids), list(call.completion_ids)))
        return ExpertRoutingTrace.unavailable(
            "test", call.prompt_tokens, call.completion_tokens, self.arch
        )
