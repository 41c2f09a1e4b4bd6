"""What a batch needs in the process that runs it, built from :class:`~orchestrator.config.
Settings`: the telemetry store, the expert-routing capture (the CPU replay model is loaded once
per process) and one :class:`~orchestrator.core.dispatcher.Orchestrator` per endpoint URL.

On the CPU profile a batch **defers** the expert-routing replay by default
(``expert_routing="deferred"``): the request path keeps the call's token ids and records its
routing ``pending`` (:class:`serving.capture.DeferredReplayCapture`, no model loaded), and
:meth:`SettingsFactory.replayer` loads the replay model once, for the worker that fills the
routing after the rows (:mod:`orchestrator.telemetry.fill`). The CPU replay shared the two
cores with the server on the request path and took more time than the HTTP calls
(benchmarks/batch_throughput.py). ``expert_routing="inline"`` replays on the request path as
interactive commands do.

:class:`SettingsFactory` is picklable (it holds only the settings), so Ray Data workers build
their own copies (:mod:`orchestrator.batch.ray_engine`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal

from orchestrator.classifier import RuleClassifier
from orchestrator.config import Settings
from orchestrator.core.client import VLLMClient
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.registry import declared_routes, file_routes, load_workflows
from orchestrator.core.runtime import configured_orchestrator, expert_routing_capture, make_client
from orchestrator.core.workflow import Workflow
from orchestrator.exceptions import UserError
from orchestrator.telemetry import TelemetryStore
from serving.capture import DeferredReplayCapture, ExpertRoutingCapture
from serving.replay import ExpertRoutingReplayer

logger = logging.getLogger(__name__)


def warm_workflows(workflows: Sequence[Workflow[Any, Any]]) -> None:
    """Load what the workflows would otherwise load on their first request, before the first
    row: each workflow's ``warm()`` (the content-moderation risk scorer, for one: its first
    post took seconds of CPU that stalled the batch's event loop, and every row in progress).

    A failure here is logged and left for the rows (which then report it as they would have).
    """
    for workflow in workflows:
        try:
            workflow.warm()
        except Exception:
            logger.warning("could not warm workflow %s", workflow.name, exc_info=True)


#: When a batch's CPU expert-routing replay runs: ``deferred`` (after the rows, in bulk) or
#: ``inline`` (on each request's path).
ExpertRoutingMode = Literal["deferred", "inline"]


class SettingsFactory:
    """Builds the store, the routing capture and the orchestrators from ``settings``.

    Args:
        settings: Database URL, model name, profile, timeouts...; ``server_url`` is replaced
            by each URL given to :meth:`orchestrators`.
        check: Call each server's ``/v1/models`` first (fails fast on a wrong URL or model).
        expert_routing: ``deferred`` (default) or ``inline`` CPU replay; see the module doc.
            The GPU profile reads the engine's record either way.
        attachment_dirs: The batch's attachments folder(s): the excel report reads attachments
            from them besides its defaults (working, data and temporary folders,
            ``ORCH_ATTACHMENT_DIRS``), so a batch whose attachments live elsewhere is reported;
            any path outside every allowed folder is still refused.

    Raises:
        UserError: ``expert_routing`` is neither ``deferred`` nor ``inline``.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        check: bool = True,
        expert_routing: ExpertRoutingMode = "deferred",
        attachment_dirs: Sequence[Path | str] = (),
    ) -> None:
        if expert_routing not in ("deferred", "inline"):
            raise UserError(f"expert_routing must be deferred or inline, got {expert_routing!r}")
        self.settings = settings
        self.check = check
        self.expert_routing = expert_routing
        self.attachment_dirs = tuple(Path(d) for d in attachment_dirs)
        self._store: TelemetryStore | None = None
        self._capture: ExpertRoutingCapture | None = None
        self._replayer: ExpertRoutingReplayer | None = None
        self._clients: list[VLLMClient] = []
        self._workflows: list[Workflow] | None = None

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        # pickled as its constructor call: a copy builds its own store, capture and clients
        return (
            partial(
                type(self),
                self.settings,
                check=self.check,
                expert_routing=self.expert_routing,
                attachment_dirs=self.attachment_dirs,
            ),
            (),
        )

    @property
    def defers_routing(self) -> bool:
        """True when calls are recorded ``pending`` and filled after the rows (CPU profile)."""
        return self.settings.profile == "cpu" and self.expert_routing == "deferred"

    def capture(self) -> ExpertRoutingCapture:
        """The routing capture of this process (built once).

        Raises:
            CheckpointError: The checkpoint (CPU) or model config (GPU) cannot be read.
        """
        if self._capture is None:
            if self.defers_routing:
                self._capture = DeferredReplayCapture(self.settings.checkpoint_dir)
            else:
                self._capture = expert_routing_capture(self.settings)
        return self._capture

    def workflows(self) -> list[Workflow]:
        """The batch's workflows: the installed ones (entry points, checked against the
        declared routes: :func:`~orchestrator.core.registry.load_workflows`), each
        :meth:`~orchestrator.core.workflow.Workflow.configured` with :attr:`attachment_dirs`
        added to the settings' attachment folders (when given). Built once per process.

        Raises:
            UserError: A plugin fails to load, or the routes and workflows do not match.
        """
        if self._workflows is None:
            workflows = load_workflows()
            if self.attachment_dirs:
                dirs = (*self.settings.attachment_dirs, *self.attachment_dirs)
                settings = self.settings.model_copy(update={"attachment_dirs": dirs})
                workflows = [w.configured(settings) for w in workflows]
            self._workflows = workflows
        return self._workflows

    def replayer(self) -> ExpertRoutingReplayer:
        """The replay model that fills pending routing (loaded once, on first use).

        Raises:
            CheckpointError: The checkpoint cannot be loaded.
        """
        if self._replayer is None:
            self._replayer = ExpertRoutingReplayer(self.settings.checkpoint_dir)
        return self._replayer

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
        capture = self.capture()
        workflows = self.workflows()
        # one classifier for every endpoint: building it loads the rules, the learned tier and
        # the calibration (about 0.5 s of CPU here), and it holds no per-endpoint state
        classifier = RuleClassifier(routes=[w.route_spec for w in workflows if w.route_spec])
        routes = declared_routes(workflows, file_routes())  # read once for every endpoint
        await asyncio.to_thread(warm_workflows, workflows)
        result = []
        for url in urls:
            client = make_client(
                self.settings.model_copy(update={"server_url": url}),
                capture,
                stream_interval=self.settings.batch_stream_interval,
            )
            self._clients.append(client)
            if self.check:
                await client.check()
            result.append(
                configured_orchestrator(
                    self.settings,
                    client,
                    self.store(),
                    workflows,
                    classifier=classifier,
                    routes=routes,
                )
            )
        return result

    async def aclose(self) -> None:
        """Close the model clients."""
        for client in self._clients:
            await client.aclose()
        self._clients.clear()
