"""MoEArchitecture.from_config per family: layers, experts, top-k, routing rule, errors.

The configs are transformers' own config classes at their defaults (the real models' shapes) and
hand-written ``config.json`` dicts for the interleavings the defaults do not show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from serving.architecture import FAMILIES, MoEArchitecture, family_of
from serving.errors import CheckpointError, UnsupportedArchitectureError


def _transformers_config(name: str, **overrides: Any) -> dict[str, Any]:
    import transformers

    return getattr(transformers, name)(**overrides).to_dict()


@pytest.mark.parametrize(
    ("config_class", "overrides", "family", "layers", "experts", "top_k", "shared"),
    [
        ("Ernie4_5_MoeConfig", {}, "ernie45", tuple(range(1, 28)), 64, 6, 2),
        ("Qwen3MoeConfig", {}, "qwen3_moe", tuple(range(24)), 128, 8, 0),
        (
            "DeepseekV2Config",
            {"num_experts_per_tok": 6, "first_k_dense_replace": 1, "num_hidden_layers": 27},
            "deepseek_v2",
            tuple(range(1, 27)),
            64,
            6,
            2,
        ),
        ("MixtralConfig", {}, "mixtral", tuple(range(32)), 8, 2, 0),
        ("OlmoeConfig", {}, "olmoe", tuple(range(16)), 64, 8, 0),
        ("GptOssConfig", {}, "gpt_oss", tuple(range(36)), 128, 4, 0),
    ],
)
def test_each_family_reads_its_shape(
    config_class: str,
    overrides: dict[str, Any],
    family: str,
    layers: tuple[int, ...],
    experts: int,
    top_k: int,
    shared: int,
) -> None:
    arch = MoEArchitecture.from_config(_transformers_config(config_class, **overrides))
    assert arch.family == family
    assert arch.moe_layers == layers
    assert (arch.num_experts, arch.top_k, arch.num_shared_experts) == (experts, top_k, shared)
    assert arch.dense_layers == tuple(i for i in range(arch.num_hidden_layers) if i not in layers)


def test_routing_rules_differ_as_the_routers_do() -> None:
    ernie = MoEArchitecture.from_config(_transformers_config("Ernie4_5_MoeConfig"))
    assert ernie.correction_bias and ernie.norm_topk_prob and ernie.gate_module == "mlp.gate"
    qwen = MoEArchitecture.from_config(_transformers_config("Qwen3MoeConfig", norm_topk_prob=True))
    assert qwen.norm_topk_prob and not qwen.correction_bias
    gpt = MoEArchitecture.from_config(_transformers_config("GptOssConfig"))
    assert gpt.gate_module == "mlp.router" and gpt.gate_bias and gpt.topk_before_softmax
    mixtral = MoEArchitecture.from_config(_transformers_config("MixtralConfig"))
    assert mixtral.norm_topk_prob and not mixtral.gate_bias


def test_deepseek_v2_group_limited_greedy_and_scaling() -> None:
    config = _transformers_config(
        "DeepseekV2Config",
        num_experts_per_tok=6,
        n_routed_experts=160,
        topk_method="group_limited_greedy",
        n_group=8,
        topk_group=3,
        routed_scaling_factor=16.0,
        norm_topk_prob=False,
    )
    arch = MoEArchitecture.from_config(config)
    assert arch.grouped and (arch.n_group, arch.topk_group) == (8, 3)
    assert arch.routed_scaling_factor == 16.0 and arch.scoring == "softmax"
    lite = MoEArchitecture.from_config(
        _transformers_config("DeepseekV2Config", num_experts_per_tok=6)
    )
    assert not lite.grouped


def test_deepseek_noaux_tc_uses_a_correction_bias_and_sigmoid() -> None:
    config = {
        "model_type": "deepseek_v2",
        "num_hidden_layers": 4,
        "n_routed_experts": 16,
        "num_experts_per_tok": 4,
        "topk_method": "noaux_tc",
        "scoring_func": "sigmoid",
        "n_group": 4,
        "topk_group": 2,
        "first_k_dense_replace": 1,
        "moe_layer_freq": 1,
    }
    arch = MoEArchitecture.from_config(config)
    assert arch.correction_bias and arch.scoring == "sigmoid" and arch.grouped
    assert arch.moe_layers == (1, 2, 3)


@pytest.mark.parametrize(
    ("config", "layers"),
    [
        # Qwen3-MoE: every second layer sparse, layer 3 forced dense
        (
            {
                "model_type": "qwen3_moe",
                "num_hidden_layers": 8,
                "num_experts": 8,
                "num_experts_per_tok": 2,
                "decoder_sparse_step": 2,
                "mlp_only_layers": [3],
            },
            (1, 5, 7),
        ),
        # DeepSeek-V2: two dense first layers, then every second layer index
        (
            {
                "model_type": "deepseek_v2",
                "num_hidden_layers": 8,
                "n_routed_experts": 8,
                "num_experts_per_tok": 2,
                "first_k_dense_replace": 2,
                "moe_layer_freq": 2,
            },
            (2, 4, 6),
        ),
        # ERNIE: from layer 2 to 6, (i + 1) % 2 == 0 (vLLM's and transformers' rule)
        (
            {
                "model_type": "ernie4_5_moe",
                "num_hidden_layers": 8,
                "moe_num_experts": 8,
                "moe_k": 2,
                "moe_layer_start_index": 2,
                "moe_layer_end_index": 6,
                "moe_layer_interval": 2,
            },
            (3, 5),
        ),
        # by architectures when model_type is absent
        (
            {
                "architectures": ["MixtralForCausalLM"],
                "num_hidden_layers": 3,
                "num_local_experts": 4,
                "num_experts_per_tok": 2,
            },
            (0, 1, 2),
        ),
    ],
)
def test_interleaved_layers(config: dict[str, Any], layers: tuple[int, ...]) -> None:
    assert MoEArchitecture.from_config(config).moe_layers == layers


def test_a_dense_model_is_dense_and_an_unknown_moe_is_refused_naming_fields() -> None:
    dense = MoEArchitecture.from_config({"model_type": "llama", "num_hidden_layers": 4})
    assert not dense.is_moe and dense.family == "dense"
    with pytest.raises(UnsupportedArchitectureError) as info:
        MoEArchitecture.from_config(
            {"model_type": "jamba", "num_hidden_layers": 4, "num_experts": 16}
        )
    message = str(info.value)
    assert "jamba" in message and "num_experts_per_tok" in message and "scoring_func" in message
    assert "\n" not in message
    assert info.value.missing and isinstance(info.value, CheckpointError)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_known_family_without_its_top_k_names_the_field(family: str) -> None:
    model_type = {"ernie45": "ernie4_5_moe"}.get(family, family)
    config = {"model_type": model_type, "num_hidden_layers": 4, "num_experts": 8}
    config.update({"moe_num_experts": 8, "n_routed_experts": 8, "num_local_experts": 8})
    with pytest.raises(UnsupportedArchitectureError, match="num_experts_per_tok"):
        MoEArchitecture.from_config(config)


def test_from_checkpoint_names_the_folder(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "dbrx", "num_hidden_layers": 2, "num_local_experts": 4})
    )
    with pytest.raises(UnsupportedArchitectureError, match=str(tmp_path)):
        MoEArchitecture.from_checkpoint(tmp_path)


def test_family_of_and_direct_construction_keep_working() -> None:
    assert family_of({"model_type": "olmoe"}) == "olmoe"
    assert family_of({"model_type": "llama"}) is None
    arch = MoEArchitecture(
        model_type="ernie4_5_moe",
        num_hidden_layers=4,
        moe_layers=(1, 2, 3),
        num_experts=16,
        top_k=2,
    )
    assert arch.family == "ernie45" and arch.scoring == "softmax"
    with pytest.raises(ValueError, match="top_k"):
        MoEArchitecture(
            model_type="mixtral", num_hidden_layers=2, moe_layers=(0, 1), num_experts=2, top_k=3
        )
