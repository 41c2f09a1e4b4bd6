"""Issue 52: the MoE families whose capture cost is measured on the GPU, as model folders that
vLLM serves with random weights (``--load-format dummy``): ``config.json`` in the family's real
shape plus a synthetic tokenizer, no weight files (a 30B bf16 checkpoint would fill most of the
device's 64 GB disk and take minutes to write).

The configs are the published ``config.json`` of each model, the keys vLLM and transformers read:

* ``ernie45``: ``baidu/ERNIE-4.5-21B-A3B-PT``, which is what ``transformers.Ernie4_5_MoeConfig()``
  builds with no arguments (``shared/FACTS.md``; checked in transformers 5.19): 28 layers, hidden
  2560, 20 heads / 4 KV heads, 64 routed experts, top-6, 2 shared, MoE on layers 1..27, vocab
  103424.
* ``qwen3_moe``: ``Qwen/Qwen3-30B-A3B`` (https://huggingface.co/Qwen/Qwen3-30B-A3B, config.json;
  the same values in https://huggingface.co/Qwen/Qwen3-30B-A3B-Instruct-2507/blob/0d7cf23991f4
  7feeb3a57ecb4c9cee8ea4a17bfe/config.json): 48 layers, hidden 2048, 32 heads / 4 KV heads of
  128, 128 experts, top-8, ``moe_intermediate_size`` 768, ``norm_topk_prob`` true, every layer
  MoE (``decoder_sparse_step`` 1, ``mlp_only_layers`` []), vocab 151936.
* ``deepseek_v2``: ``deepseek-ai/DeepSeek-V2-Lite`` (https://huggingface.co/deepseek-ai/
  DeepSeek-V2-Lite, config.json; copied unchanged in https://huggingface.co/ModelCloud/
  DeepSeek-V2-Lite-gptq-4bit/blob/main/config.json and deepseek-ai/DeepSeek-Coder-V2-Lite-Base):
  27 layers, hidden 2048, 16 heads, MLA (``kv_lora_rank`` 512, no query LoRA, ``qk_nope_head_dim``
  128, ``qk_rope_head_dim`` 64, ``v_head_dim`` 128), 64 routed + 2 shared experts of 1408, top-6,
  greedy softmax routing, layer 0 dense (``first_k_dense_replace`` 1), vocab 102400.

The expected capture shape of each (MoE layers, top-k) is read from the config by the project's
own reader, :class:`serving.architecture.MoEArchitecture`, so the check that counts equal
``tokens x top_k`` per MoE layer tests what the client will assume.

Only the standard library at import time; ``tokenizers`` (shipped with transformers) when a
folder is written.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Family name -> the model's published ``config.json`` (the keys the servers read).
CONFIGS: dict[str, dict[str, Any]] = {
    "ernie45": {
        "architectures": ["Ernie4_5_MoeForCausalLM"],
        "model_type": "ernie4_5_moe",
        "vocab_size": 103424,
        "hidden_size": 2560,
        "intermediate_size": 12288,
        "num_hidden_layers": 28,
        "num_attention_heads": 20,
        "num_key_value_heads": 4,
        "hidden_act": "silu",
        "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05,
        "tie_word_embeddings": True,
        "rope_theta": 500000.0,
        "use_bias": False,
        "moe_intermediate_size": 1536,
        "moe_k": 6,
        "moe_num_experts": 64,
        "moe_num_shared_experts": 2,
        "moe_layer_start_index": 1,
        "moe_layer_end_index": 27,
        "moe_layer_interval": 1,
        "moe_norm_min": 1e-12,
        "pad_token_id": 0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "bfloat16",
    },
    "qwen3_moe": {
        "architectures": ["Qwen3MoeForCausalLM"],
        "model_type": "qwen3_moe",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "decoder_sparse_step": 1,
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 2048,
        "initializer_range": 0.02,
        "intermediate_size": 6144,
        "max_position_embeddings": 40960,
        "max_window_layers": 48,
        "mlp_only_layers": [],
        "moe_intermediate_size": 768,
        "norm_topk_prob": True,
        "num_attention_heads": 32,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "num_hidden_layers": 48,
        "num_key_value_heads": 4,
        "output_router_logits": False,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.001,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    },
    "deepseek_v2": {
        "architectures": ["DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v2",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "aux_loss_alpha": 0.001,
        "bos_token_id": 100000,
        "eos_token_id": 100001,
        "first_k_dense_replace": 1,
        "hidden_act": "silu",
        "hidden_size": 2048,
        "initializer_range": 0.02,
        "intermediate_size": 10944,
        "kv_lora_rank": 512,
        "max_position_embeddings": 163840,
        "moe_intermediate_size": 1408,
        "moe_layer_freq": 1,
        "n_group": 1,
        "n_routed_experts": 64,
        "n_shared_experts": 2,
        "norm_topk_prob": False,
        "num_attention_heads": 16,
        "num_experts_per_tok": 6,
        "num_hidden_layers": 27,
        "num_key_value_heads": 16,
        "pretraining_tp": 1,
        "q_lora_rank": None,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "rms_norm_eps": 1e-06,
        "rope_scaling": {
            "beta_fast": 32,
            "beta_slow": 1,
            "factor": 40,
            "mscale": 0.707,
            "mscale_all_dim": 0.707,
            "original_max_position_embeddings": 4096,
            "type": "yarn",
        },
        "rope_theta": 10000,
        "routed_scaling_factor": 1.0,
        "scoring_func": "softmax",
        "seq_aux": True,
        "tie_word_embeddings": False,
        "topk_group": 1,
        "topk_method": "greedy",
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "v_head_dim": 128,
        "vocab_size": 102400,
    },
}
#: Keys a ``--shrink`` copy (the CPU dry run) overrides: same family and routing, tiny shape.
SHRINK = {
    "ernie45": {
        "num_hidden_layers": 3,
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "moe_intermediate_size": 64,
        "moe_layer_end_index": 2,
        "vocab_size": 4096,
        "max_position_embeddings": 4096,
    },
    "qwen3_moe": {
        "num_hidden_layers": 2,
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 64,
        "moe_intermediate_size": 64,
        "max_window_layers": 2,
        "vocab_size": 4096,
    },
    "deepseek_v2": {
        "num_hidden_layers": 3,
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "moe_intermediate_size": 64,
        "kv_lora_rank": 64,
        "qk_nope_head_dim": 32,
        "qk_rope_head_dim": 32,
        "v_head_dim": 32,
        "vocab_size": 4096,
    },
}


def config_for(family: str, *, shrink: bool = False) -> dict[str, Any]:
    """The ``config.json`` of ``family`` (a key of :data:`CONFIGS`); ``shrink``: the tiny copy of
    the CPU dry run (:data:`SHRINK`).

    Raises:
        KeyError: Unknown family (the message lists the known ones).
    """
    if family not in CONFIGS:
        raise KeyError(f"unknown family {family!r}; choose from {', '.join(CONFIGS)}")
    config = dict(CONFIGS[family])
    if shrink:
        config.update(SHRINK[family], bos_token_id=1, eos_token_id=2)
    return config


def expected_capture(config: dict[str, Any]) -> dict[str, Any]:
    """What a captured call's counts must look like, from the project's reader
    (:meth:`serving.architecture.MoEArchitecture.from_config`): ``moe_layers`` (count),
    ``moe_layer_index`` (their model-layer indices), ``top_k``, ``num_experts``,
    ``num_hidden_layers``."""
    from serving.architecture import MoEArchitecture

    arch = MoEArchitecture.from_config(config)
    return {
        "family": arch.family,
        "num_hidden_layers": arch.num_hidden_layers,
        "moe_layers": len(arch.moe_layers),
        "moe_layer_index": list(arch.moe_layers),
        "top_k": arch.top_k,
        "num_experts": arch.num_experts,
    }


#: The synthetic tokenizer's chat template: the messages' text as it is, so that a chat call's
#: prompt is exactly its words (:mod:`benchmarks.gpu.tokdiag` compares chat with completions).
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


def write_tokenizer(folder: Path, vocab_size: int) -> None:
    """A word-level tokenizer of exactly ``vocab_size`` tokens (``<t0>`` ... ``<tN-1>``), so that
    every id a random model samples detokenises as in a real deployment (the benchmark sends
    token-id prompts; the tokenizer only decodes). Written as ``tokenizer.json`` and
    ``tokenizer_config.json`` with ``tokenizers`` alone (no transformers import)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {f"<t{i}>": i for i in range(vocab_size)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<t0>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(folder / "tokenizer.json"))
    special = {"unk_token": "<t0>", "bos_token": "<t1>", "eos_token": "<t2>", "pad_token": "<t0>"}
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                **special,
                "chat_template": CHAT_TEMPLATE,
            },
            indent=1,
        )
    )


def write_model_dir(family: str, folder: Path, *, shrink: bool = False) -> dict[str, Any]:
    """Write ``folder/config.json`` and the tokenizer of ``family``; return the config.

    Raises:
        KeyError: Unknown family.
        OSError: ``folder`` cannot be written.
    """
    config = config_for(family, shrink=shrink)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    write_tokenizer(folder, int(config["vocab_size"]))
    return config
