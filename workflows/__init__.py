"""LangGraph workflows, one package per route."""

from orchestrator.workflow import Workflow
from workflows.customer_service import CustomerServiceWorkflow
from workflows.excel_report import ExcelReportWorkflow


def default_workflows() -> list[Workflow]:
    """Every workflow that exists so far (one per route)."""
    return [CustomerServiceWorkflow(), ExcelReportWorkflow()]


__all__ = ["CustomerServiceWorkflow", "ExcelReportWorkflow", "default_workflows"]
