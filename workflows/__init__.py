"""LangGraph workflows, one package per route."""

from orchestrator.core.workflow import Workflow
from workflows.content_moderation import ContentModerationWorkflow
from workflows.customer_service import CustomerServiceWorkflow
from workflows.excel_report import ExcelReportWorkflow


def default_workflows() -> list[Workflow]:
    """Every workflow that exists so far (one per route)."""
    return [CustomerServiceWorkflow(), ExcelReportWorkflow(), ContentModerationWorkflow()]


__all__ = [
    "ContentModerationWorkflow",
    "CustomerServiceWorkflow",
    "ExcelReportWorkflow",
    "default_workflows",
]
