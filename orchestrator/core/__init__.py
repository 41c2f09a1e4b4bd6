"""The runtime core: a request comes in, a workflow runs, every model call is made and recorded.

Modules:

* :mod:`~orchestrator.core.dispatcher`: :class:`Orchestrator` classifies a request, runs its
  workflow (``handle``, ``stream``, ``resume``) and records the request row.
* :mod:`~orchestrator.core.workflow`: the contract a workflow meets, :class:`Workflow`
  (generic over its state and result) and the :class:`WorkflowContext` its nodes receive.
* :mod:`~orchestrator.core.gateway`: :class:`ModelGateway`, how nodes call the model; one call,
  one telemetry row; ``structured`` parses typed answers once.
* :mod:`~orchestrator.core.structured`: :class:`StructuredAnswer`, a typed answer or the reason
  it could not be parsed.
* :mod:`~orchestrator.core.client`: the :class:`ModelClient` protocol and :class:`VLLMClient`
  (OpenAI-compatible HTTP, expert-routing capture per call).
* :mod:`~orchestrator.core.events`: the typed events of ``Orchestrator.stream``.
* :mod:`~orchestrator.core.runtime`: wiring from ``Settings`` to a serving profile, a capture
  and a client.
* :mod:`~orchestrator.core.batch`: ``run_batch``, many requests with bounded concurrency.
* :mod:`~orchestrator.core.registry`: workflows as plugins: found through the
  ``moe_orchestrator.workflows`` entry points and checked against the declared routes.
* :mod:`~orchestrator.core.fixed`: ``FixedRoute``, a classifier stand-in for an entry point whose
  caller chose the route.
"""

from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall, ModelClient, VLLMClient
from orchestrator.core.dispatcher import Orchestrator, RequestOutcome
from orchestrator.core.gateway import CallSummary, ModelGateway
from orchestrator.core.structured import StructuredAnswer
from orchestrator.core.workflow import Workflow, WorkflowContext

__all__ = [
    "CallSummary",
    "ChatMessage",
    "ChatOptions",
    "ModelCall",
    "ModelClient",
    "ModelGateway",
    "Orchestrator",
    "RequestOutcome",
    "StructuredAnswer",
    "VLLMClient",
    "Workflow",
    "WorkflowContext",
]
