"""Route requests into LangGraph workflows on a self-hosted ERNIE-4.5 MoE, recording experts.

The public API, re-exported from small private-by-convention modules::

    Request ─► RuleClassifier ─► Orchestrator ─► Workflow (LangGraph) ─► ModelGateway
                                     │                                        │
                                     ▼                                        ▼
                               TelemetryStore ◄──── one row per model call ◄─ VLLMClient
                                                                 + ExpertRoutingCapture

Example:
    >>> from orchestrator import Request, RuleClassifier
    >>> RuleClassifier().classify(Request(text="我的退款什么时候到账？")).route.value
    'customer_service'
"""

from orchestrator.analysis.load import ExpertLoad, LayerLoad, expert_load
from orchestrator.classifier import Classification, Rule, RuleClassifier, Signal
from orchestrator.config import Settings
from orchestrator.core.batch import BatchReport, run_batch
from orchestrator.core.client import ChatMessage, ModelCall, ModelClient, VLLMClient
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

__all__ = [
    "Attachment",
    "BatchReport",
    "CallSummary",
    "ChatMessage",
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
