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
