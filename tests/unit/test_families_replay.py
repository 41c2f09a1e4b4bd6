"""The replay records each family's own routing, checked against references written here.

Each family's tiny random model (hidden 64, 2 to 3 layers, 8 to 16 experts) is built in the
test with random gates (and a random correction bias for ERNIE, a random router bias for
gpt-oss), saved, and replayed by :class:`ExpertRoutingReplayer`. The references are numpy on the
gate logits that transformers itself records (``output_router_logits=True``, not the replayer's
hooks), written per family from its router in transformers 5 (``modeling_<family>.py``); the
experts transformers' own router picked are compared too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from serving.architecture import MoEArchitecture
from serving.replay import ExpertRoutingReplayer, route

COMMON = {
    "vocab_size": 128,
    "hidden_size": 64,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "max_position_embeddings": 256,
    "tie_word_embeddings": True,
}

FAMILIES: dict[str, tuple[str, dict[str, Any]]] = {
    "ernie45": (
        "Ernie4_5_MoeConfig",
        {
            "num_hidden_layers": 3,
            "intermediate_size": 64,
            "moe_intermediate_size": 32,
            "moe_num_experts": 8,
            "moe_k": 2,
            "moe_num_shared_experts": 1,
            "moe_layer_start_index": 1,
        },
    ),
    "qwen3_moe": (
        "Qwen3MoeConfig",
        {
            "num_hidden_layers": 3,
            "intermediate_size": 64,
            "moe_intermediate_size": 32,
            "num_experts": 8,
            "num_experts_per_tok": 3,
            "norm_topk_prob": True,
            "mlp_only_layers": [1],
            "head_dim": 32,
        },
    ),
    "deepseek_v2": (
        "DeepseekV2Config",
        {
            "num_hidden_layers": 3,
            "num_key_value_heads": 2,
            "intermediate_size": 64,
            "moe_intermediate_size": 32,
            "n_routed_experts": 16,
            "num_experts_per_tok": 3,
            "n_shared_experts": 1,
            "first_k_dense_replace": 1,
            "q_lora_rank": None,
            "kv_lora_rank": 32,
            "qk_nope_head_dim": 16,
            "qk_rope_head_dim": 16,
            "v_head_dim": 16,
            "topk_method": "group_limited_greedy",
            "n_group": 4,
            "topk_group": 2,
            "routed_scaling_factor": 2.5,
        },
    ),
    "mixtral": (
        "MixtralConfig",
        {
            "num_hidden_layers": 2,
            "intermediate_size": 32,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "head_dim": 32,
        },
    ),
    "olmoe": (
        "OlmoeConfig",
        {
            "num_hidden_layers": 2,
            "intermediate_size": 32,
            "num_experts": 8,
            "num_experts_per_tok": 2,
        },
    ),
    "gpt_oss": (
        "GptOssConfig",
        {
            "num_hidden_layers": 2,
            "intermediate_size": 32,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "head_dim": 32,
        },
    ),
}


def _build(family: str, folder: Path) -> Any:
    """Save a tiny random model of ``family`` with random gates; return it (float32)."""
    import torch
    import transformers

    name, fields = FAMILIES[family]
    config = getattr(transformers, name)(**{**COMMON, **fields})
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config)
    with torch.no_grad():
        for layer in model.model.layers:
            router = getattr(layer.mlp, "router", None) or getattr(layer.mlp, "gate", None)
            if router is None:  # a dense layer (its MLP has gate_proj, no gate)
                continue
            router.weight.normal_(0.0, 1.5 / 8)
            if getattr(router, "bias", None) is not None:  # gpt-oss: the router's own bias
                router.bias.normal_(0.0, 0.5)
            statics = getattr(router, "moe_statics", None)
            if statics is not None:  # ERNIE: the correction bias steers the choice
                statics.e_score_correction_bias.normal_(0.0, 0.05)
    model.save_pretrained(folder)
    return model.train(False)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    return np.sort(np.argsort(-scores, axis=-1, kind="stable")[:, :k], axis=-1)


def _reference(family: str, z: np.ndarray, model: Any, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted chosen ids (T, k), confidence (T,)) from gate logits ``z`` (T, E), per family."""
    mlp = model.model.layers[layer].mlp
    if family == "gpt_oss":  # top-k of the logits, softmax over the chosen logits
        k = model.config.num_experts_per_tok
        chosen = _top(z, k)
        return chosen, np.take_along_axis(_softmax(z), chosen, axis=-1).sum(-1)
    p = _softmax(z)
    if family == "ernie45":  # softmax, then the top-k of p + e_score_correction_bias
        bias = mlp.gate.moe_statics.e_score_correction_bias.detach().numpy().reshape(-1)
        chosen = _top(p + bias, model.config.moe_k)
    elif family == "deepseek_v2":  # group_limited_greedy: best groups by their max
        cfg = model.config
        groups = p.reshape(len(p), cfg.n_group, -1)
        best = np.argsort(-groups.max(axis=-1), axis=-1, kind="stable")[:, : cfg.topk_group]
        keep = np.zeros(groups.shape[:2], dtype=bool)
        np.put_along_axis(keep, best, True, axis=-1)
        masked = np.where(np.repeat(keep, groups.shape[-1], axis=-1), p, -1.0)
        chosen = _top(masked, cfg.num_experts_per_tok)
    else:  # Qwen3-MoE, Mixtral, OLMoE: top-k of the softmax
        chosen = _top(p, model.config.num_experts_per_tok)
    return chosen, np.take_along_axis(p, chosen, axis=-1).sum(-1)


def _transformers_choice(model: Any, arch: MoEArchitecture, ids: Any) -> tuple[list, list]:
    """The gate logits transformers records and the experts its routers picked, per MoE
    layer."""
    import torch

    picked: list[np.ndarray] = []
    hooks = [
        model.model.layers[i]
        .get_submodule(arch.gate_module)
        .register_forward_hook(lambda _m, _i, out: picked.append(out[2].numpy()))
        for i in arch.moe_layers
    ]
    with torch.inference_mode():
        out = model(input_ids=ids, output_router_logits=True, use_cache=False)
    for hook in hooks:
        hook.remove()
    logits = [z.float().numpy().reshape(-1, arch.num_experts) for z in out.router_logits]
    return logits, [np.sort(p.reshape(-1, arch.top_k), axis=-1) for p in picked]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_replay_matches_the_family_reference(family: str, tmp_path: Path) -> None:
    import torch

    model = _build(family, tmp_path)
    replayer = ExpertRoutingReplayer(tmp_path)
    arch = replayer.arch
    assert arch.family == family
    rng = np.random.default_rng(7)
    prompt, completion = rng.integers(6, 128, 23).tolist(), rng.integers(6, 128, 6).tolist()
    trace = replayer.replay(prompt, completion)
    ids, mass = trace.expert_ids, trace.router_confidence
    assert ids is not None and mass is not None
    tokens = torch.tensor([prompt + completion[:-1]])
    logits, picked = _transformers_choice(model, arch, tokens)
    assert ids.shape == (28, len(arch.moe_layers), arch.top_k)
    for position, layer in enumerate(arch.moe_layers):
        chosen, confidence = _reference(family, logits[position], model, layer)
        np.testing.assert_array_equal(np.sort(ids[:, position], axis=-1), chosen)
        np.testing.assert_array_equal(picked[position], chosen)  # transformers' own router
        np.testing.assert_allclose(mass[:, position], confidence, atol=1e-5)
    assert bool(np.all(mass > 0)) and bool(np.all(mass <= 1 + 1e-6))


def test_deepseek_grouping_changes_the_choice(tmp_path: Path) -> None:
    """The grouped rule is exercised: on these logits plain top-k would pick differently."""
    model = _build("deepseek_v2", tmp_path)
    arch = ExpertRoutingReplayer(tmp_path).arch
    import torch

    logits, _ = _transformers_choice(model, arch, torch.arange(6, 70)[None, :])
    plain = _top(_softmax(logits[0]), arch.top_k)
    grouped, _ = _reference("deepseek_v2", logits[0], model, arch.moe_layers[0])
    assert (plain != grouped).any(axis=-1).sum() >= 5


def _sigmoid_reference(z: np.ndarray, bias: np.ndarray, k: int, groups: int, keep: int):
    """DeepSeek-V3 style (vLLM ``grouped_topk`` with ``noaux_tc``): sigmoid scores, a group's
    score is the sum of its two best biased scores, top-k of the biased scores in the kept
    groups; confidence is the chosen share of the sigmoid mass."""
    s = 1.0 / (1.0 + np.exp(-z))
    biased = (s + bias).reshape(len(z), groups, -1)
    group_score = np.sort(biased, axis=-1)[..., -2:].sum(-1)
    best = np.argsort(-group_score, axis=-1, kind="stable")[:, :keep]
    allowed = np.zeros((len(z), groups), dtype=bool)
    np.put_along_axis(allowed, best, True, axis=-1)
    masked = np.where(np.repeat(allowed, biased.shape[-1], axis=-1), s + bias, -np.inf)
    chosen = _top(masked, k)
    return chosen, np.take_along_axis(s, chosen, axis=-1).sum(-1) / s.sum(-1)


def test_sigmoid_noaux_tc_rule() -> None:
    import torch

    arch = MoEArchitecture.from_config(
        {
            "model_type": "deepseek_v2",
            "num_hidden_layers": 2,
            "n_routed_experts": 32,
            "num_experts_per_tok": 4,
            "scoring_func": "sigmoid",
            "topk_method": "noaux_tc",
            "n_group": 8,
            "topk_group": 3,
        }
    )
    rng = np.random.default_rng(3)
    z = rng.normal(0, 2, (200, 32)).astype(np.float32)
    bias = rng.normal(0, 0.3, 32).astype(np.float32)
    chosen, confidence = route(torch.from_numpy(z), arch, torch.from_numpy(bias))
    want_ids, want_conf = _sigmoid_reference(z, bias, 4, 8, 3)
    np.testing.assert_array_equal(np.sort(chosen.numpy(), axis=-1), want_ids)
    np.testing.assert_allclose(confidence.numpy(), want_conf, atol=1e-5)


def test_concurrent_replays_keep_their_own_routing(tmp_path: Path) -> None:
    """Calls replayed from several threads at once (the client replays with asyncio.to_thread)
    get the routing of their own tokens: the gate hooks of one pass never see another's."""
    from concurrent.futures import ThreadPoolExecutor

    _build("mixtral", tmp_path)
    replayer = ExpertRoutingReplayer(tmp_path)
    rng = np.random.default_rng(11)
    calls = [
        (rng.integers(6, 128, n).tolist(), rng.integers(6, 128, 3).tolist())
        for n in (5, 17, 40, 9, 23, 31)
    ]
    alone = [replayer.replay(*call) for call in calls]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(lambda call: replayer.replay(*call), calls * 3))
    for i, trace in enumerate(together):
        want = alone[i % len(calls)]
        assert trace.expert_ids is not None and want.expert_ids is not None
        np.testing.assert_array_equal(trace.expert_ids, want.expert_ids)
