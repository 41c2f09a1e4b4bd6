import base64
import io

import numpy as np
import pytest

from orchestrator.testing import SCRIPTED_ARCH
from serving import (
    ExpertRoutingDecodeError,
    ExpertRoutingSource,
    ExpertRoutingTrace,
    MoEArchitecture,
)
from serving.engine_capture import decode_routed_experts, encode_routed_experts

#: The scripted test shape (4 layers, MoE layers 1-3, 8 experts, top-2), named as ERNIE.
ARCH = SCRIPTED_ARCH.model_copy(update={"model_type": "ernie4_5_moe"})


def _trace(ids: np.ndarray, prompt: int, completion: int) -> ExpertRoutingTrace:
    return ExpertRoutingTrace(
        source=ExpertRoutingSource.REPLAY,
        moe_layers=(1, 2, 3),
        num_experts=8,
        top_k=2,
        prompt_tokens=prompt,
        completion_tokens=completion,
        expert_ids=ids,
    )


def test_expert_counts_are_per_layer_and_sum_to_tokens_times_top_k() -> None:
    rng = np.random.default_rng(0)
    ids = np.stack(
        [np.stack([rng.choice(8, 2, replace=False) for _ in range(3)]) for _ in range(10)]
    ).astype(np.int16)
    trace = _trace(ids, prompt=7, completion=4)  # 7 + 4 - 1 routed tokens
    counts = trace.expert_counts()
    assert counts.shape == (3, 8)
    assert (counts.sum(axis=1) == 10 * 2).all()
    # compare with a naive per-token count
    naive = np.zeros((3, 8), dtype=int)
    for t in range(10):
        for layer in range(3):
            for e in ids[t, layer]:
                naive[layer, e] += 1
    assert (counts == naive).all()


def test_shape_mismatch_is_rejected() -> None:
    with pytest.raises(ValueError, match="expected"):
        _trace(np.zeros((5, 3, 2), dtype=np.int16), prompt=7, completion=4)


def test_out_of_range_expert_is_rejected() -> None:
    ids = np.full((10, 3, 2), 8, dtype=np.int16)
    with pytest.raises(ValueError, match="outside"):
        _trace(ids, prompt=7, completion=4)


def test_dense_and_unavailable_traces_carry_no_ids() -> None:
    dense = ExpertRoutingTrace.dense(5, 3)
    assert dense.source is ExpertRoutingSource.DENSE and not dense.has_routing
    assert dense.moe_layers == () and dense.expert_counts().shape == (0, 0)
    gone = ExpertRoutingTrace.unavailable("streaming", 5, 3, ARCH)
    assert gone.expert_counts().sum() == 0 and gone.reason == "streaming"


def _vllm_024_choice(prompt: int, completion: int, seed: int = 1) -> tuple[dict, np.ndarray]:
    """A choice as vLLM 0.24.0 returns it: all layers, dense layer 0 zeros, uint8."""
    rng = np.random.default_rng(seed)
    moe = np.stack(
        [
            [rng.choice(8, 2, replace=False) for _ in range(3)]
            for _ in range(prompt + completion - 1)
        ]
    ).astype(np.uint8)
    full = np.concatenate([np.zeros((moe.shape[0], 1, 2), np.uint8), moe], axis=1)
    return {"routed_experts": encode_routed_experts(full), "finish_reason": "length"}, moe


def test_vllm_0_24_payload_drops_the_dense_layer() -> None:
    choice, moe = _vllm_024_choice(6, 4)
    trace = decode_routed_experts(choice, prompt_tokens=6, completion_tokens=4, arch=ARCH)
    assert trace.source is ExpertRoutingSource.ENGINE
    assert trace.router_confidence is None  # vLLM returns no gate probabilities
    assert (trace.expert_ids == moe).all()
    assert trace.expert_counts()[:, :].sum() == 9 * 3 * 2


def test_split_prompt_and_completion_lists_are_concatenated() -> None:
    _, moe = _vllm_024_choice(6, 4)
    choice = {"prompt_routed_experts": moe[:6].tolist(), "routed_experts": moe[6:].tolist()}
    trace = decode_routed_experts(choice, prompt_tokens=6, completion_tokens=4, arch=ARCH)
    assert (trace.expert_ids == moe).all()


def test_missing_payload_is_unavailable_not_expert_zero() -> None:
    trace = decode_routed_experts(
        {"finish_reason": "stop"}, prompt_tokens=6, completion_tokens=4, arch=ARCH
    )
    assert trace.source is ExpertRoutingSource.UNAVAILABLE
    assert "routed_experts" in (trace.reason or "")
    assert trace.expert_counts().sum() == 0


def test_malformed_payloads_raise_decode_errors() -> None:
    with pytest.raises(ExpertRoutingDecodeError, match="base64"):
        decode_routed_experts(
            {"routed_experts": "@@not base64@@"}, prompt_tokens=2, completion_tokens=2, arch=ARCH
        )
    buffer = io.BytesIO()
    np.save(buffer, np.zeros((3, 4, 2), np.float32))
    with pytest.raises(ExpertRoutingDecodeError, match="integer"):
        decode_routed_experts(
            {"routed_experts": base64.b64encode(buffer.getvalue()).decode()},
            prompt_tokens=2,
            completion_tokens=2,
            arch=ARCH,
        )
    choice, _ = _vllm_024_choice(6, 4)
    with pytest.raises(ExpertRoutingDecodeError, match="token rows"):
        decode_routed_experts(choice, prompt_tokens=9, completion_tokens=4, arch=ARCH)


def test_dense_model_records_no_moe_layers() -> None:
    dense = MoEArchitecture.from_config(
        {
            "model_type": "ernie4_5",
            "num_hidden_layers": 18,
            "architectures": ["Ernie4_5ForCausalLM"],
        }
    )
    assert not dense.is_moe
    trace = decode_routed_experts({}, prompt_tokens=3, completion_tokens=2, arch=dense)
    assert trace.source is ExpertRoutingSource.DENSE


def test_21b_a3b_config_gives_27_moe_layers() -> None:
    from transformers import Ernie4_5_MoeConfig

    config = Ernie4_5_MoeConfig().to_dict()
    config["architectures"] = ["Ernie4_5_MoeForCausalLM"]
    arch = MoEArchitecture.from_config(config)
    assert arch.moe_layers == tuple(range(1, 28))
    assert (arch.num_experts, arch.top_k, arch.num_shared_experts) == (64, 6, 2)
