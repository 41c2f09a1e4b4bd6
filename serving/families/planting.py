"""Planted hot and dead experts for routers without ERNIE's correction bias.

ERNIE picks its top-k on ``softmax(z) + e_score_correction_bias``, so a bias of +1 or -1 plants
an expert (:mod:`serving.checkpoint`). The other families have no such bias:

* **gpt-oss**'s router is a linear map with a bias (``GptOssTopKRouter``: ``z = W h + b``), and
  the choice is the top-k of ``z``. A planted expert gets ``b_e = bias x ROUTER_BIAS_LOGITS``:
  ``+10`` logits is far above the other logits (standard deviation about ``gate_scale`` = 1), so
  the expert is always chosen; ``-10`` never.
* **Qwen3-MoE, DeepSeek-V2, Mixtral, OLMoE** have a bias-free gate ``z = W h``. An expert is
  planted through its gate row, along a direction ``u`` that every token's hidden state shares:
  the builder adds ``c u`` to every token embedding (``c`` is the mean embedding norm, so each
  embedding is about 45 degrees from ``u``; trained LM embeddings share such a common direction
  too, Ethayarajh 2019, "How contextual are contextualized word representations?", and the
  tied output projection is unchanged up to a per-token constant, which softmax ignores). The
  gate input is RMS-normalised, so ``h . u`` is about ``0.7 sqrt(hidden)`` for every token.
  Every gate row is made orthogonal to ``u`` (so ``u`` favours no unplanted expert), then a
  planted row gets ``bias x PLANTED_LOGITS / (0.5 sqrt(hidden)) x u``: a logit of more than
  ``+10`` (hot, always chosen) or below ``-10`` (dead, never chosen) for every token, whatever
  the other experts score. Checked per family in ``tests/unit/test_families_checkpoint.py`` on
  the tokenizer corpus.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from serving.architecture import MoEArchitecture
    from serving.checkpoint import CheckpointSpec

#: Router-bias logits of a planted gpt-oss expert per unit of ``PlantedExpert.bias``.
ROUTER_BIAS_LOGITS = 10.0
#: Gate logit of a planted expert per unit of ``PlantedExpert.bias`` (at the least ``h . u``).
PLANTED_LOGITS = 10.0


def plant_without_correction_bias(model: Any, spec: CheckpointSpec, arch: MoEArchitecture) -> None:
    """Plant ``spec.planted`` in ``model`` (module docstring), in place.

    Args:
        model: A transformers ``*ForCausalLM`` of ``arch``'s family, gates already drawn.
        spec: The planted experts (``bias`` +1 hot, -1 dead) and the seed.
        arch: The model's description (MoE layers, gate module, gate bias).
    """
    import torch

    planted: dict[int, list[tuple[int, float]]] = {}
    for p in spec.planted:
        planted.setdefault(p.layer, []).append((p.expert, p.bias))
    layers = model.model.layers
    with torch.no_grad():
        if arch.gate_bias:
            for index in arch.moe_layers:
                bias = layers[index].get_submodule(arch.gate_module).bias
                bias.zero_()
                for expert, value in planted.get(index, []):
                    bias[expert] += value * ROUTER_BIAS_LOGITS
            return
        u = _shared_direction(model, spec)
        scale = PLANTED_LOGITS / (0.5 * math.sqrt(spec.hidden_size))
        for index in arch.moe_layers:
            weight = layers[index].get_submodule(arch.gate_module).weight
            rows = weight.float()
            rows -= (rows @ u)[:, None] * u[None, :]  # no unplanted expert is favoured by u
            for expert, value in planted.get(index, []):
                rows[expert] += value * scale * u
            weight.copy_(rows.to(weight.dtype))


def _shared_direction(model: Any, spec: CheckpointSpec) -> Any:  # -> torch.Tensor (hidden,)
    """Add ``c u`` to every token embedding (``u`` a seeded random unit vector, ``c`` the mean
    embedding norm) and return ``u``."""
    import torch

    generator = torch.Generator().manual_seed(spec.seed + 2)
    u = torch.randn(spec.hidden_size, generator=generator)
    u /= u.norm()
    embed = model.get_input_embeddings().weight
    c = embed.float().norm(dim=-1).mean()
    embed.add_((c * u).to(embed.dtype)[None, :])
    return u
