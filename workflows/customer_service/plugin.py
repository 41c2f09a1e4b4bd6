"""The customer-service workflow as the ``moe_orchestrator.workflows`` entry point installs it:
an application that stays up (the UI service) opens it on the configured order store and
conversation checkpointer (:func:`~workflows.customer_service.opening.open_workflow`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from orchestrator.config import Settings
from workflows.customer_service.graph import CustomerServiceWorkflow
from workflows.customer_service.opening import open_workflow


class InstalledCustomerServiceWorkflow(CustomerServiceWorkflow):
    """:class:`CustomerServiceWorkflow` (in memory until opened) whose
    :meth:`~orchestrator.core.workflow.Workflow.opened` opens the configured stores."""

    @asynccontextmanager
    async def opened(self, settings: Settings) -> AsyncIterator[CustomerServiceWorkflow]:
        """The workflow on the order store and checkpointer of ``settings``, for the block.

        Raises:
            UserError: A URL is malformed or a database cannot be opened.
        """
        async with open_workflow(settings) as opened:
            yield opened
