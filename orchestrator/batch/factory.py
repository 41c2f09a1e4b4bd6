"""What a batch needs in the process that runs it, built from :class:`~orchestrator.config.
Settings`: the telemetry store, the expert-routing capture (the CPU replay model is loaded once
per process) and one :class:`~orchestrator.core.dispatcher.Orchestrator` per endpoint URL.

:class:`SettingsFactory` is picklable (it holds only the settings), so Ray Data workers build
their own copies (:mod:`orchestrator.batch.ray_engine`).
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.config import Settings
from orchestrator.core.client import VLLMClient
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.runtime import expert_routing_capture, make_client
from orchestrator.telemetry import TelemetryStore
from serving.capture import ExpertRoutingCapture
from workflows import default_workflows


class SettingsFactory:
    """Builds the store, the routing capture and the orchestrators from ``settings``.

    Args:
        settings: Database URL, model name, profile, timeouts...; ``server_url`` is replaced
            by each URL given to :meth:`orchestrators`.
        check: Call each server's ``/v1/models`` first (fails fast on a wrong URL or model).
    """

    def __init__(self, settings: Settings, *, check: bool = True) -> None:
        self.settings = settings
        self.check = check
        self._store: TelemetryStore | None = None
        self._capture: ExpertRoutingCapture | None = None
        self._clients: list[VLLMClient] = []

    def __getstate__(self) -> dict[str, object]:
        return {"settings": self.settings, "check": self.check}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["settings"], check=bool(state["check"]))  # type: ignore[misc, arg-type]

    def store(self) -> TelemetryStore:
        """The telemetry store at ``settings.database_url`` (opened once, upgraded on open).

        Raises:
            UserError: The URL cannot be opened.
        """
        if self._store is None:
            self._store = TelemetryStore(self.settings.database_url)
        return self._store

    async def orchestrators(self, urls: Sequence[str]) -> list[Orchestrator]:
        """One orchestrator per URL, sharing this process's store and routing capture.

        Raises:
            ServerUnavailableError: A server does not answer (when ``check``).
            ModelCallError: A server does not serve ``settings.served_model_name``.
            CheckpointError: The replay checkpoint cannot be read (CPU profile).
        """
        if self._capture is None:
            self._capture = expert_routing_capture(self.settings)
        workflows = default_workflows()
        result = []
        for url in urls:
            client = make_client(
                self.settings.model_copy(update={"server_url": url}), self._capture
            )
            self._clients.append(client)
            if self.check:
                await client.check()
            result.append(
                Orchestrator(
                    client,
                    self.store(),
                    workflows,
                    max_tokens=self.settings.max_completion_tokens,
                )
            )
        return result

    async def aclose(self) -> None:
        """Close the model clients."""
        for client in self._clients:
            await client.aclose()
        self._clients.clear()
