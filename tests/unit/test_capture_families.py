"""Engine capture for every supported MoE family (issue 50 item 5), on generated bodies.

vLLM returns ``routed_experts`` as base64 ``.npy`` of shape ``(routed tokens,
num_hidden_layers, top_k)``, uint8 (uint16 past 256 experts), every hidden layer included and
a dense layer reading zeros (``shared/gpu/README.md``). Here each family's body is generated
the same way from its own config: the dense layers that its shape description names (ERNIE's
layer 0, DeepSeek-V2's ``first_k_dense_replace`` layers, Qwen3-MoE's ``mlp_only_layers`` and
``decoder_sparse_step``) read zeros, the MoE layers hold top-k distinct ids. The decode must
keep exactly the MoE layers, for ids and for the plugin's per-call counts, and the expected
counts are written here independently (a loop per token).
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from serving import vllm_plugin
from serving.architecture import MoEArchitecture
from serving.capture import CallTokens, EngineCapture
from serving.engine_capture import EngineCountsTrace, decode_routed_experts, encode_routed_experts
from serving.errors import ExpertRoutingDecodeError
from serving.expert_routing import ExpertRoutingSource

#: One small config per family, in each family's own field names, and its MoE layers as the
#: family's documentation defines them (written out here, not computed).
FAMILY_CONFIGS: dict[str, tuple[dict[str, Any], tuple[int, ...]]] = {
    "ernie45": (
        {
            "model_type": "ernie4_5_moe",
            "architectures": ["Ernie4_5_MoeForCausalLM"],
            "num_hidden_layers": 4,
            "moe_num_experts": 8,
            "moe_k": 2,
            "moe_layer_start_index": 1,
            "moe_num_shared_experts": 1,
        },
        (1, 2, 3),
    ),
    "qwen3_moe": (
        {
            "model_type": "qwen3_moe",
            "architectures": ["Qwen3MoeForCausalLM"],
            "num_hidden_layers": 6,
            "num_experts": 16,
            "num_experts_per_tok": 8,
            "mlp_only_layers": [0, 3],
            "decoder_sparse_step": 1,
            "norm_topk_prob": True,
        },
        (1, 2, 4, 5),
    ),
    "qwen3_moe_step2": (
        {
            "model_type": "qwen3_moe",
            "architectures": ["Qwen3MoeForCausalLM"],
            "num_hidden_layers": 6,
            "num_experts": 12,
            "num_experts_per_tok": 1,
            "mlp_only_layers": [],
            "decoder_sparse_step": 2,
        },
        (1, 3, 5),
    ),
    "deepseek_v2": (
        {
            "model_type": "deepseek_v2",
            "architectures": ["DeepseekV2ForCausalLM"],
            "num_hidden_layers": 5,
            "n_routed_experts": 300,  # past 256: vLLM sends uint16
            "num_experts_per_tok": 6,
            "n_shared_experts": 2,
            "first_k_dense_replace": 2,
            "moe_layer_freq": 1,
            "topk_method": "greedy",
        },
        (2, 3, 4),
    ),
    "mixtral": (
        {
            "model_type": "mixtral",
            "architectures": ["MixtralForCausalLM"],
            "num_hidden_layers": 3,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
        },
        (0, 1, 2),
    ),
    "olmoe": (
        {
            "model_type": "olmoe",
            "architectures": ["OlmoeForCausalLM"],
            "num_hidden_layers": 2,
            "num_experts": 64,
            "num_experts_per_tok": 8,
        },
        (0, 1),
    ),
    "gpt_oss": (
        {
            "model_type": "gpt_oss",
            "architectures": ["GptOssForCausalLM"],
            "num_hidden_layers": 3,
            "num_local_experts": 32,
            "num_experts_per_tok": 4,
        },
        (0, 1, 2),
    ),
}


def _arch(name: str) -> MoEArchitecture:
    config, want_layers = FAMILY_CONFIGS[name]
    arch = MoEArchitecture.from_config(config)
    assert arch.moe_layers == want_layers  # the description names the layers we expect
    return arch


def _vllm_ids(arch: MoEArchitecture, tokens: int, seed: int) -> np.ndarray:
    """What vLLM returns: ``(tokens, num_hidden_layers, top_k)``, zeros on the dense layers,
    ``top_k`` distinct ids per token on the MoE layers; uint8, or uint16 past 256 experts."""
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if arch.num_experts <= 256 else np.uint16
    ids = np.zeros((tokens, arch.num_hidden_layers, arch.top_k), dtype=dtype)
    for layer in arch.moe_layers:
        keys = rng.random((tokens, arch.num_experts))
        ids[:, layer, :] = np.argsort(keys, axis=-1)[:, : arch.top_k]
    return ids


def _counts_by_hand(arch: MoEArchitecture, ids: np.ndarray) -> np.ndarray:
    """``(MoE layers, experts)`` counts, one token and one pick at a time."""
    counts = np.zeros((len(arch.moe_layers), arch.num_experts), dtype=np.int64)
    for row, layer in enumerate(arch.moe_layers):
        for token in range(ids.shape[0]):
            for pick in ids[token, layer]:
                counts[row, int(pick)] += 1
    return counts


FAMILIES = sorted(FAMILY_CONFIGS)


@pytest.mark.parametrize("name", FAMILIES)
def test_ids_keep_exactly_the_moe_layers_of_each_family(name: str) -> None:
    arch = _arch(name)
    prompt, completion = 11, 6
    ids = _vllm_ids(arch, prompt + completion - 1, seed=len(name))
    assert ids.dtype == (np.uint16 if arch.num_experts > 256 else np.uint8)
    body = {"routed_experts": encode_routed_experts(ids)}
    trace = decode_routed_experts(
        body, prompt_tokens=prompt, completion_tokens=completion, arch=arch
    )
    assert trace.source is ExpertRoutingSource.ENGINE
    assert trace.family == arch.family == name.removesuffix("_step2")
    assert trace.moe_layers == arch.moe_layers
    assert trace.expert_ids is not None
    assert trace.expert_ids.shape == (prompt + completion - 1, len(arch.moe_layers), arch.top_k)
    assert np.array_equal(trace.expert_ids, ids[:, list(arch.moe_layers), :])
    assert np.array_equal(trace.expert_counts(), _counts_by_hand(arch, ids))
    # a dense layer's zeros never become expert 0
    assert int(trace.expert_counts()[:, 0].max()) < (prompt + completion - 1)


@pytest.mark.parametrize("name", FAMILIES)
def test_plugin_counts_decode_to_the_same_counts_for_each_family(name: str) -> None:
    arch = _arch(name)
    prompt, completion = 9, 4
    ids = _vllm_ids(arch, prompt + completion - 1, seed=3 + len(name))
    payload = vllm_plugin.compact_expert_counts(ids)
    assert payload.shape[0] == arch.num_hidden_layers  # the server drops no layer
    want = _counts_by_hand(arch, ids)
    for raw in (payload, payload[list(arch.moe_layers)]):  # all layers, or MoE layers only
        body = {"routed_experts": encode_routed_experts(raw)}
        trace = decode_routed_experts(
            body, prompt_tokens=prompt, completion_tokens=completion, arch=arch
        )
        assert isinstance(trace, EngineCountsTrace)
        assert trace.family == arch.family
        assert np.array_equal(trace.expert_counts(), want)
        assert (trace.expert_counts().sum(axis=1) == (prompt + completion - 1) * arch.top_k).all()


def test_a_top1_moe_layer_routing_every_token_to_expert_0_is_kept() -> None:
    """The old server-side guess ("all ids 0 = dense") would drop such a layer; the
    description keeps it, and drops the dense layers whatever they hold."""
    arch = _arch("qwen3_moe_step2")  # top-1, MoE layers 1, 3, 5
    ids = _vllm_ids(arch, 8, seed=1)
    ids[:, 3, :] = 0  # MoE layer 3: every token chose expert 0
    ids[:, 0, :] = 5  # a dense layer holding non-zero junk is dropped all the same
    body = {"routed_experts": encode_routed_experts(vllm_plugin.compact_expert_counts(ids))}
    trace = decode_routed_experts(body, prompt_tokens=8, completion_tokens=1, arch=arch)
    counts = trace.expert_counts()
    assert counts.shape == (3, 12)
    assert counts[1, 0] == 8 and counts[1].sum() == 8
    assert np.array_equal(counts, _counts_by_hand(arch, ids))


@pytest.mark.parametrize("name", ["ernie45", "deepseek_v2", "qwen3_moe"])
def test_a_layer_axis_of_neither_length_is_refused(name: str) -> None:
    arch = _arch(name)
    ids = _vllm_ids(arch, 5, seed=2)
    # one dense layer dropped and one kept: no description says which rows these are
    partial = np.delete(ids, arch.dense_layers[0], axis=1)
    if partial.shape[1] == len(arch.moe_layers):
        partial = partial[:, :-1, :]
    for raw in (partial, vllm_plugin.compact_expert_counts(partial)):
        body = {"routed_experts": encode_routed_experts(raw)}
        with pytest.raises(ExpertRoutingDecodeError, match="layers"):
            decode_routed_experts(body, prompt_tokens=5, completion_tokens=1, arch=arch)


def test_uint16_ids_beyond_the_model_and_a_wrong_top_k_are_refused() -> None:
    arch = _arch("deepseek_v2")  # 300 experts, top-6
    ids = _vllm_ids(arch, 4, seed=5)
    ids[2, 3, 1] = 300
    body = {"routed_experts": encode_routed_experts(ids)}
    with pytest.raises(ExpertRoutingDecodeError, match=r"\[0, 300\)"):
        decode_routed_experts(body, prompt_tokens=4, completion_tokens=1, arch=arch)
    body = {"routed_experts": encode_routed_experts(_vllm_ids(arch, 4, seed=5)[..., :5])}
    with pytest.raises(ExpertRoutingDecodeError, match="top_k 5, model has 6"):
        decode_routed_experts(body, prompt_tokens=4, completion_tokens=1, arch=arch)


@pytest.mark.parametrize("top_k", range(1, 9))
def test_every_top_k_from_1_to_8_decodes(top_k: int) -> None:
    config = {**FAMILY_CONFIGS["olmoe"][0], "num_experts_per_tok": top_k}
    arch = MoEArchitecture.from_config(config)
    ids = _vllm_ids(arch, 7, seed=top_k)
    body = {"routed_experts": encode_routed_experts(ids)}
    trace = decode_routed_experts(body, prompt_tokens=5, completion_tokens=3, arch=arch)
    assert trace.top_k == top_k
    assert np.array_equal(trace.expert_counts(), _counts_by_hand(arch, ids))


@pytest.mark.parametrize("name", ["mixtral", "deepseek_v2"])
def test_engine_capture_is_opt_in_per_request_and_sampled_for_any_family(name: str) -> None:
    arch = _arch(name)
    capture = EngineCapture(arch, sample_rate=0.5, seed=4)
    ids = _vllm_ids(arch, 6, seed=6)
    payload = encode_routed_experts(vllm_plugin.phase_expert_counts(ids, 5))

    async def one_call() -> tuple[str, Any]:
        mode = capture.request_fields()["vllm_xargs"]["routed_experts"]
        choice = {"routed_experts": payload} if mode == "phase_counts" else {}
        trace = await capture.capture(
            CallTokens(
                response={},
                choice=choice,
                prompt_ids=[],
                completion_ids=[],
                prompt_tokens=5,
                completion_tokens=2,
            )
        )
        return mode, trace

    async def calls() -> list[tuple[str, Any]]:
        return [await asyncio.create_task(one_call()) for _ in range(40)]

    results = asyncio.run(calls())
    modes = {mode for mode, _ in results}
    assert modes == {"phase_counts", "none"}  # the default: prefill and decode apart
    for mode, trace in results:
        assert trace.family == name and trace.capture_sampling_rate == 0.5
        if mode == "none":
            assert trace.source is ExpertRoutingSource.UNAVAILABLE and not trace.has_routing
        else:
            assert np.array_equal(trace.expert_counts(), _counts_by_hand(arch, ids))
            prefill, decode = trace.phase_counts()
            assert np.array_equal(prefill, _counts_by_hand(arch, ids[:5]))
            assert (decode.sum(axis=1) == arch.top_k).all()  # C - 1 = 1 routed token
