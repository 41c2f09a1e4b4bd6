"""Shared fixtures: the real data folder and a tiny offline checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config import DEFAULT_DATA_DIR

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
