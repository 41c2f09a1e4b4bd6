"""Shared fixtures (the real data folder, the offline checkpoints) and how the tests are spread
over pytest-xdist's workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

from orchestrator.config import DEFAULT_DATA_DIR

# A pytest-xdist worker starts with COLUMNS=80 in its environment, where one pytest process
# has none. The CLI's rich consoles, made at import, would then keep 80 columns for good and
# wrap the lines that tests compare (a table, a line with a long temporary path); without it
# they follow each test's own COLUMNS, as in one process.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)

#: ``../shared/data`` beside the checkout (see its SOURCES.md).
DATA_DIR = Path(DEFAULT_DATA_DIR)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.fail(f"real input data not found at {DATA_DIR}; set ORCH_DATA_DIR")
    return DATA_DIR


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3-layer offline checkpoint (layer 0 dense, 1-2 MoE), built once per session."""
    from serving.checkpoint import CheckpointSpec, build_checkpoint

    out = tmp_path_factory.mktemp("ckpt") / "tiny"
    return build_checkpoint(out, CheckpointSpec(num_hidden_layers=3, tokenizer_vocab_size=512))


@pytest.fixture(scope="session")
def offline_checkpoint(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    """The default offline checkpoint (4 layers, 64 experts, top-6), as the main job builds it;
    built once per session (8 to 25 s of CPU) for the integration servers and the unit tests
    that read it (never write to it)."""
    from serving.checkpoint import CheckpointSpec, build_checkpoint, corpus_from_data_dir

    out = tmp_path_factory.mktemp("serving") / "ernie45-moe-offline"
    return build_checkpoint(out, CheckpointSpec(), corpus_from_data_dir(data_dir))


class IntegrationOnOneWorker(LoadScopeScheduling):
    """pytest-xdist's module-at-a-time scheduling, with ``tests/integration`` as one unit.

    The integration tests share their session's vLLM servers, start the next module's server
    while this one's are tested, and end with the fault tests that kill the shared server
    (tests/integration/conftest.py): they stay on one worker, in their order. The other worker
    takes unit modules and doctests meanwhile, and both share what is left. On CI's two cores
    the unit part, one process before, was about 16 of the 26 minutes.
    """

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.startswith("tests/integration/"):
            return "tests/integration"
        return super()._split_scope(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> LoadScopeScheduling:
    """With workers (``-n``, on by default in pyproject.toml): :class:`IntegrationOnOneWorker`.
    ``--dist loadgroup`` would need a marker on every integration test, and pytest-xdist 3.8
    ignored it with pytest 9.2 here (ci9)."""
    return IntegrationOnOneWorker(config, log)
