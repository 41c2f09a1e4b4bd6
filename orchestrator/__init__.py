"""Route requests into LangGraph workflows on a self-hosted ERNIE-4.5 MoE, recording experts.

The public API. Names are imported on first use (PEP 562), so ``import orchestrator.spreadsheet``
or ``import orchestrator.exceptions`` does not load the runtime (SQLAlchemy, openai, LangGraph)::

    Request ─► RuleClassifier ─► Orchestrator ─► Workflow (LangGraph) ─► ModelGateway
                                     │                                        │
                                     ▼                                        ▼
                               TelemetryStore ◄──── one row per model call ◄─ VLLMClient
                                                                 + ExpertRoutingCapture

Packages, from the application down (each imports only the ones below it; ``import-linter``
contracts in ``pyproject.toml`` enforce the order):

==============================  ==============================================================
``orchestrator.cli``            the ``orchestrator`` command (application layer)
``workflows``                   LangGraph graphs, one package per route
``skills``                      reusable model-calling steps (prompt + typed output)
``orchestrator.core``           request dispatch, model gateway, vLLM client, workflow contract
``orchestrator.analysis``       expert load and skew analysis over the telemetry read API
``orchestrator.telemetry``      schema, count codec, rollups, store, read API, migrations
``orchestrator.classifier``     the rule classifier, its calibration and labelled set
``orchestrator.spreadsheet``    the spreadsheet reader (a leaf: no runtime imports)
``serving``                     offline checkpoint, vLLM launcher, expert-routing capture
``orchestrator.exceptions``     the one error tree
==============================  ==============================================================

Example:
    >>> from orchestrator import Request, RuleClassifier
    >>> RuleClassifier().classify(Request(text="我的退款什么时候到账？")).route
    'customer_service'
"""

from __future__ import annotations

import typing

from orchestrator._lazy import lazy_dir as _lazy_dir
from orchestrator._lazy import lazy_getattr as _lazy_getattr

#: The release (the same as ``version`` in ``pyproject.toml``; see ``CHANGELOG.md``).
__version__ = "0.2.0"

if typing.TYPE_CHECKING:
    from orchestrator.analysis.load import ExpertLoad, LayerLoad, expert_load
    from orchestrator.classifier import Classification, Rule, RuleClassifier, Signal
    from orchestrator.config import Settings
    from orchestrator.core.batch import BatchReport, run_batch
    from orchestrator.core.client import (
        ChatMessage,
        ChatOptions,
        ModelCall,
        ModelClient,
        VLLMClient,
    )
    from orchestrator.core.dispatcher import Orchestrator, RequestOutcome
    from orchestrator.core.gateway import CallSummary, ModelGateway
    from orchestrator.core.workflow import Workflow, WorkflowContext
    from orchestrator.exceptions import (
        ModelCallError,
        OrchestratorError,
        ServerUnavailableError,
        TelemetryError,
        UnknownRouteError,
        UserError,
    )
    from orchestrator.request import Attachment, Request
    from orchestrator.routes import Route
    from orchestrator.telemetry import TelemetryStore

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "Attachment": "orchestrator.request",
    "BatchReport": "orchestrator.core.batch",
    "CallSummary": "orchestrator.core.gateway",
    "ChatMessage": "orchestrator.core.client",
    "ChatOptions": "orchestrator.core.client",
    "Classification": "orchestrator.classifier",
    "ExpertLoad": "orchestrator.analysis.load",
    "LayerLoad": "orchestrator.analysis.load",
    "ModelCall": "orchestrator.core.client",
    "ModelCallError": "orchestrator.exceptions",
    "ModelClient": "orchestrator.core.client",
    "ModelGateway": "orchestrator.core.gateway",
    "Orchestrator": "orchestrator.core.dispatcher",
    "OrchestratorError": "orchestrator.exceptions",
    "Request": "orchestrator.request",
    "RequestOutcome": "orchestrator.core.dispatcher",
    "Route": "orchestrator.routes",
    "RouteSpec": "orchestrator.routes",
    "FALLBACK": "orchestrator.routes",
    "Rule": "orchestrator.classifier",
    "RuleClassifier": "orchestrator.classifier",
    "ServerUnavailableError": "orchestrator.exceptions",
    "Settings": "orchestrator.config",
    "Signal": "orchestrator.classifier",
    "TelemetryError": "orchestrator.exceptions",
    "TelemetryStore": "orchestrator.telemetry",
    "UnknownRouteError": "orchestrator.exceptions",
    "UserError": "orchestrator.exceptions",
    "VLLMClient": "orchestrator.core.client",
    "Workflow": "orchestrator.core.workflow",
    "WorkflowContext": "orchestrator.core.workflow",
    "expert_load": "orchestrator.analysis.load",
    "run_batch": "orchestrator.core.batch",
}

__all__ = [
    "FALLBACK",
    "Attachment",
    "BatchReport",
    "CallSummary",
    "ChatMessage",
    "ChatOptions",
    "Classification",
    "ExpertLoad",
    "LayerLoad",
    "ModelCall",
    "ModelCallError",
    "ModelClient",
    "ModelGateway",
    "Orchestrator",
    "OrchestratorError",
    "Request",
    "RequestOutcome",
    "Route",
    "RouteSpec",
    "Rule",
    "RuleClassifier",
    "ServerUnavailableError",
    "Settings",
    "Signal",
    "TelemetryError",
    "TelemetryStore",
    "UnknownRouteError",
    "UserError",
    "VLLMClient",
    "Workflow",
    "WorkflowContext",
    "expert_load",
    "run_batch",
]


# A public name is imported on first use (PEP 562); AttributeError for any other name.
__getattr__ = _lazy_getattr(__name__, _EXPORTS, globals())
__dir__ = _lazy_dir(globals(), __all__)
