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


def balance_without_correction_bias(
    model: Any, batch: Any, spec: CheckpointSpec, arch: MoEArchitecture
) -> None:
    """Even out the unplanted experts' load, one MoE layer at a time, as ERNIE's correction
    bias does (``serving.checkpoint._balance_router``), through what each family has instead.

    The balancing bias ``b`` (:func:`serving.families.balancing.balanced_bias` on the gate logits of
    ``batch``, a step of 5% of their spread) goes into gpt-oss's router bias, where it is exact.
    The other families get it along the shared direction: a row gains ``b_e / mean(h . u) x
    u``, which adds about ``b_e`` to that expert's logit for every token, since ``h . u`` varies
    little between tokens. Without it, a random gate leaves some experts unused by the tests'
    requests (a tiny DeepSeek-V2 left expert 28 of 32 unchosen on 16 served calls).
    Planted experts keep their planting.

    Args:
        model: The model, planted (:func:`plant_without_correction_bias`).
        batch: ``(rows, width)`` token ids to balance on.
        spec: Planted experts and top-k.
        arch: MoE layers, gate module, whether the gate has a bias.
    """
    import numpy as np
    import torch

    from serving.families.balancing import balanced_bias

    u = _direction(spec)
    experts = arch.num_experts
    for index in arch.moe_layers:
        gate = model.model.layers[index].get_submodule(arch.gate_module)
        seen: dict[str, Any] = {}

        def keep(_module: Any, inputs: Any, output: Any, seen: dict[str, Any] = seen) -> None:
            seen["h"] = inputs[0]
            seen["z"] = output[0] if isinstance(output, tuple) else output

        hook = gate.register_forward_hook(keep)
        try:
            with torch.inference_mode():
                model.model(input_ids=batch, use_cache=False)
        finally:
            hook.remove()
        z = seen["z"].float().reshape(-1, experts).cpu().numpy()
        free = np.ones(experts, dtype=bool)
        free[[p.expert for p in spec.planted if p.layer == index]] = False
        if not free.any():
            continue
        step = 0.05 * float(z[:, free].std())
        b = torch.from_numpy(balanced_bias(z, np.zeros(experts), free, arch.top_k, step=step))
        with torch.no_grad():
            if arch.gate_bias:
                gate.bias.add_(b.to(gate.bias.dtype))
                continue
            h = seen["h"].float().reshape(-1, spec.hidden_size).cpu()
            along = (b / (h @ u).mean())[:, None] * u[None, :]
            gate.weight.add_(along.to(gate.weight.dtype))


def _direction(spec: CheckpointSpec) -> Any:  # -> torch.Tensor (hidden,)
    """The shared direction ``u``: a seeded random unit vector."""
    import torch

    generator = torch.Generator().manual_seed(spec.seed + 2)
    u = torch.randn(spec.hidden_size, generator=generator)
    return u / u.norm()


def _shared_direction(model: Any, spec: CheckpointSpec) -> Any:  # -> torch.Tensor (hidden,)
    """Add ``c u`` to every token embedding (``u`` from :func:`_direction`, ``c`` the mean
    embedding norm) and return ``u``."""
    u = _direction(spec)
    embed = model.get_input_embeddings().weight
    c = embed.float().norm(dim=-1).mean()
    embed.add_((c * u).to(embed.dtype)[None, :])
    return u
