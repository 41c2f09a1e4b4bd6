"""The built-in LangGraph workflows, one package per route; each registers itself through the
``moe_orchestrator.workflows`` entry points in ``pyproject.toml``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workflows.content_moderation import ContentModerationWorkflow
from workflows.customer_service import CustomerServiceWorkflow
from workflows.excel_report import ExcelReportWorkflow

if TYPE_CHECKING:
    from orchestrator.core.workflow import Workflow


def default_workflows() -> list[Workflow]:
    """The built-in three, in code (tests and examples). Applications get the installed
    workflows, these and any plugin's, from the ``moe_orchestrator.workflows`` entry points
    (:func:`orchestrator.core.registry.load_workflows`)."""
    return [CustomerServiceWorkflow(), ExcelReportWorkflow(), ContentModerationWorkflow()]


__all__ = [
    "ContentModerationWorkflow",
    "CustomerServiceWorkflow",
    "ExcelReportWorkflow",
    "default_workflows",
]
