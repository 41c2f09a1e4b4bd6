"""LangGraph workflows, one package per route."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workflows.content_moderation import ContentModerationWorkflow
from workflows.customer_service import CustomerServiceWorkflow
from workflows.excel_report import ExcelReportWorkflow

if TYPE_CHECKING:
    from orchestrator.core.workflow import Workflow


def default_workflows() -> list[Workflow]:
    """Every workflow that exists so far (one per route)."""
    return [CustomerServiceWorkflow(), ExcelReportWorkflow(), ContentModerationWorkflow()]


__all__ = [
    "ContentModerationWorkflow",
    "CustomerServiceWorkflow",
    "ExcelReportWorkflow",
    "default_workflows",
]
