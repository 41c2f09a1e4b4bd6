"""LangGraph workflows, one package per route."""

from orchestrator.workflow import Workflow
from workflows.customer_service import CustomerServiceWorkflow


def default_workflows() -> list[Workflow]:
    """Every workflow that exists so far (one per route)."""
    return [CustomerServiceWorkflow()]


__all__ = ["CustomerServiceWorkflow", "default_workflows"]
