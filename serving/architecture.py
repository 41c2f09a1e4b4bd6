"""What a checkpoint's MoE layers look like and how they route, read from its ``config.json``.

One :class:`MoEArchitecture` describes every supported family; the replay, the engine decode, the
count codec and the analysis take the shape and the routing rule from it. Each family's reader
follows the config class and the router of transformers 5 (the venv's
``transformers/models/<family>/configuration_*.py`` and ``modeling_*.py``) and the layer rule of
vLLM 0.32 (``vllm/model_executor/models/<family>.py``), which is what serves the model:

============  ====================  ========================================================
family        model_type            routing rule (gate logits ``z = gate(h)``, per token)
============  ====================  ========================================================
ernie45       ``ernie4_5_moe``      ``p = softmax(z)``; top-k of ``p + e_score_correction_bias``
                                    (the bias steers the choice only); weights ``p[chosen]``
                                    renormalised. ``Ernie4_5_MoeTopKRouter``. MoE layers:
                                    ``start <= i <= end`` and ``(i + 1) % interval == 0``.
qwen3_moe     ``qwen3_moe``         ``p = softmax(z)``; top-k of ``p``; renormalised when
                                    ``norm_topk_prob``. ``Qwen3MoeTopKRouter``. MoE layers: ``i``
                                    not in ``mlp_only_layers`` and
                                    ``(i + 1) % decoder_sparse_step == 0``.
deepseek_v2   ``deepseek_v2``       ``p = softmax(z)`` (``scoring_func``, vLLM); ``greedy``: top-k
                                    of ``p``; ``group_limited_greedy``: keep the ``topk_group``
                                    of ``n_group`` groups with the largest max, then top-k;
                                    weights times ``routed_scaling_factor``, renormalised when
                                    ``norm_topk_prob`` (vLLM). ``DeepseekV2TopkRouter``. MoE
                                    layers: ``i >= first_k_dense_replace`` and
                                    ``i % moe_layer_freq == 0`` (vLLM ``deepseek_v2.py``).
mixtral       ``mixtral``           ``p = softmax(z)``; top-k of ``p``, always renormalised.
                                    ``MixtralTopKRouter``. Every layer is MoE.
olmoe         ``olmoe``             ``p = softmax(z)``; top-k of ``p``; renormalised when
                                    ``norm_topk_prob``. ``OlmoeTopKRouter``. Every layer is MoE.
gpt_oss       ``gpt_oss``           ``z = W h + b`` (the router has a bias); top-k of ``z``, then
                                    softmax over the chosen logits, which is the same choice and
                                    the same weights as softmax-then-top-k-renormalised.
                                    ``GptOssTopKRouter`` at ``mlp.router``. Every layer is MoE.
============  ====================  ========================================================

A model without routed experts (no expert-count field, or 0 experts) is dense. A config that
has routed experts but is of no family above raises :class:`UnsupportedArchitectureError`, which
names the fields a description needs and which of them the config lacks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from serving.errors import CheckpointError, UnsupportedArchitectureError

#: ``config.json`` keys that hold the routed-expert count, across families.
EXPERT_COUNT_KEYS = ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")
#: ``config.json`` keys that hold the top-k, across families.
TOP_K_KEYS = ("num_experts_per_tok", "moe_k", "experts_per_token")

Scoring = Literal["softmax", "sigmoid"]
TopKMethod = Literal["greedy", "group_limited_greedy", "noaux_tc"]


class MoEArchitecture(BaseModel):
    """The routing-relevant shape of a model, and its router's rule.

    Attributes:
        model_type: ``config.json``'s ``model_type``.
        num_hidden_layers: Decoder layers, dense and MoE together.
        moe_layers: Model-layer index of every MoE layer, ascending; empty for a dense model.
        num_experts: Routed experts per MoE layer (shared experts not counted).
        top_k: Routed experts chosen per token and MoE layer.
        num_shared_experts: Always-on shared experts per MoE layer (never in routing traces).
        family: The family's name (``ernie45``, ``qwen3_moe``, ``deepseek_v2``, ``mixtral``,
            ``olmoe``, ``gpt_oss``; :data:`FAMILIES`); ``dense`` for a dense model. Left empty,
            it is taken from ``model_type`` (a known one), else ``model_type`` itself.
        scoring: ``softmax`` or ``sigmoid`` of the gate logits: the scores the top-k is taken
            on and the router confidence is measured in.
        topk_method: ``greedy`` (plain top-k), ``group_limited_greedy`` (DeepSeek-V2: the
            experts of the ``topk_group`` groups with the largest max score) or ``noaux_tc``
            (DeepSeek-V3: groups ranked by the sum of their two best biased scores).
        n_group: Expert groups of grouped top-k (1: no grouping).
        topk_group: Groups kept by grouped top-k.
        correction_bias: The choice is the top-k of ``score + e_score_correction_bias`` (ERNIE,
            DeepSeek ``noaux_tc``); the bias never enters the confidence or the weights.
        norm_topk_prob: The chosen experts' weights are renormalised to sum to 1.
        routed_scaling_factor: Factor on the routed weights (DeepSeek); 1 elsewhere.
        topk_before_softmax: The router takes the top-k of the logits and a softmax over the
            chosen ones (gpt-oss); the same choice as top-k of the softmax.
        gate_module: Path of the router module under a decoder layer (``mlp.gate``,
            ``mlp.router``): a ``Linear``-like module whose output (or first output) is the
            ``(tokens, num_experts)`` gate logits.
        gate_bias: The router's linear map has a bias (gpt-oss).

    Router confidence, as the replay records it, is the score mass of the chosen experts before
    any renormalisation: ``sum(p[chosen])`` with ``p = softmax(z)`` over all experts for softmax
    scoring (gpt-oss included), ``sum(s[chosen]) / sum(s)`` with ``s = sigmoid(z)`` for sigmoid.
    """

    model_config = ConfigDict(frozen=True)

    model_type: str
    num_hidden_layers: int = Field(ge=1)
    moe_layers: tuple[int, ...] = ()
    num_experts: int = Field(0, ge=0)
    top_k: int = Field(0, ge=0)
    num_shared_experts: int = Field(0, ge=0)
    family: str = ""
    scoring: Scoring = "softmax"
    topk_method: TopKMethod = "greedy"
    n_group: int = Field(1, ge=1)
    topk_group: int = Field(1, ge=1)
    correction_bias: bool = False
    norm_topk_prob: bool = False
    routed_scaling_factor: float = 1.0
    topk_before_softmax: bool = False
    gate_module: str = "mlp.gate"
    gate_bias: bool = False

    @model_validator(mode="before")
    @classmethod
    def _default_family(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("family"):
            model_type = str(data.get("model_type", ""))
            moe = bool(data.get("moe_layers"))
            family = _FAMILY_OF_MODEL_TYPE.get(model_type, model_type) if moe else "dense"
            data = {**data, "family": family}
        return data

    @model_validator(mode="after")
    def _check(self) -> MoEArchitecture:
        if self.moe_layers and not 0 < self.top_k <= self.num_experts:
            raise ValueError(
                f"top_k {self.top_k} must be between 1 and num_experts {self.num_experts}"
            )
        if any(not 0 <= i < self.num_hidden_layers for i in self.moe_layers):
            raise ValueError(f"moe_layers {self.moe_layers} name layers outside the model")
        if self.grouped and (
            self.num_experts % self.n_group or not self.topk_group <= self.n_group
        ):
            raise ValueError(
                f"grouped top-k needs num_experts ({self.num_experts}) divisible by n_group "
                f"({self.n_group}) and topk_group ({self.topk_group}) <= n_group"
            )
        return self

    @property
    def is_moe(self) -> bool:
        """True when the model has at least one routed MoE layer."""
        return bool(self.moe_layers)

    @property
    def grouped(self) -> bool:
        """True when the top-k is taken within the best expert groups (DeepSeek)."""
        return self.topk_method != "greedy" and self.n_group > 1

    @property
    def dense_layers(self) -> tuple[int, ...]:
        """Model-layer index of every layer that is not MoE, ascending."""
        moe = set(self.moe_layers)
        return tuple(i for i in range(self.num_hidden_layers) if i not in moe)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> MoEArchitecture:
        """Build from a parsed ``config.json`` (or ``PretrainedConfig.to_dict()``).

        Args:
            config: The model config; ``num_hidden_layers`` is required.

        Returns:
            The description; a dense one (no MoE layers) when the config has no routed experts.

        Raises:
            UnsupportedArchitectureError: The config has routed experts but is of no supported
                family, or is of a supported family and lacks a field it needs (both name the
                missing fields).
            KeyError: ``num_hidden_layers`` is missing.
        """
        layers = int(config["num_hidden_layers"])
        model_type = str(config.get("model_type", "unknown"))
        family = family_of(config)
        if family is None:
            if not _first(config, EXPERT_COUNT_KEYS):
                return cls(model_type=model_type, num_hidden_layers=layers)
            raise _unsupported(config)
        reader = _Reader(config, family)
        fields = FAMILIES[family](reader, layers)
        reader.raise_if_missing()
        if not fields["num_experts"] or not fields["moe_layers"]:
            return cls(model_type=model_type, num_hidden_layers=layers)
        return cls(model_type=model_type, num_hidden_layers=layers, family=family, **fields)

    @classmethod
    def from_checkpoint(cls, path: Path | str) -> MoEArchitecture:
        """Read ``path/config.json``.

        Raises:
            UnsupportedArchitectureError: The model is an MoE of no supported family (a
                :class:`CheckpointError` naming the folder and the missing fields).
            CheckpointError: The folder or its ``config.json`` is missing or unreadable.
        """
        config_file = Path(path) / "config.json"
        if not config_file.is_file():
            raise CheckpointError(
                path, "no config.json; build one with `orchestrator build-checkpoint`"
            )
        try:
            return cls.from_config(json.loads(config_file.read_text(encoding="utf-8")))
        except UnsupportedArchitectureError as exc:
            raise exc.at(path) from None
        except (ValueError, KeyError) as exc:
            raise CheckpointError(path, f"config.json is not a usable model config: {exc}") from exc


class _Reader:
    """Reads a family's fields from a config and remembers the ones it lacks."""

    def __init__(self, config: dict[str, Any], family: str) -> None:
        self.config = config
        self.family = family
        self.missing: list[str] = []

    def need(self, *keys: str) -> Any:
        """The first of ``keys`` the config sets (not None); recorded as missing otherwise."""
        value = _first(self.config, keys)
        if value is None:
            self.missing.append(" or ".join(keys))
        return value

    def get(self, key: str, default: Any) -> Any:
        """``config[key]``, or ``default`` when absent or None."""
        value = self.config.get(key)
        return default if value is None else value

    def raise_if_missing(self) -> None:
        if self.missing:
            raise UnsupportedArchitectureError(
                str(self.config.get("model_type", "unknown")),
                self.config.get("architectures") or [],
                missing=tuple(self.missing),
                reason=f"its config lacks what the {self.family} routing needs",
            )


def _first(config: dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    return None


def _ernie45(r: _Reader, layers: int) -> dict[str, Any]:
    """``Ernie4_5_MoeConfig`` / ``Ernie4_5_MoeTopKRouter`` (``modeling_ernie4_5_moe.py``)."""
    start = int(r.get("moe_layer_start_index", 1))
    end = r.get("moe_layer_end_index", -1)
    end = layers - 1 if int(end) == -1 else int(end)
    interval = int(r.get("moe_layer_interval", 1))
    return {
        "num_experts": int(r.need("moe_num_experts", "num_experts") or 0),
        "top_k": int(r.need("moe_k", "num_experts_per_tok") or 0),
        "num_shared_experts": int(r.get("moe_num_shared_experts", 0)),
        "moe_layers": tuple(
            i for i in range(layers) if start <= i <= end and (i + 1) % interval == 0
        ),
        "correction_bias": True,
        "norm_topk_prob": True,
    }


def _qwen3_moe(r: _Reader, layers: int) -> dict[str, Any]:
    """``Qwen3MoeConfig`` / ``Qwen3MoeTopKRouter`` / ``Qwen3MoeDecoderLayer``."""
    step = int(r.get("decoder_sparse_step", 1))
    dense = set(r.get("mlp_only_layers", []))
    return {
        "num_experts": int(r.need("num_experts", "num_local_experts") or 0),
        "top_k": int(r.need("num_experts_per_tok") or 0),
        "moe_layers": tuple(i for i in range(layers) if i not in dense and (i + 1) % step == 0),
        "norm_topk_prob": bool(r.get("norm_topk_prob", False)),
    }


def _deepseek_v2(r: _Reader, layers: int) -> dict[str, Any]:
    """``DeepseekV2Config`` / ``DeepseekV2TopkRouter``; layers and ``scoring_func`` as vLLM's
    ``deepseek_v2.py`` reads them."""
    first_dense = int(r.get("first_k_dense_replace", 0))
    freq = int(r.get("moe_layer_freq", 1))
    method = str(r.get("topk_method", "greedy"))
    return {
        "num_experts": int(r.need("n_routed_experts", "num_experts") or 0),
        "top_k": int(r.need("num_experts_per_tok") or 0),
        "num_shared_experts": int(r.get("n_shared_experts", 0)),
        "moe_layers": tuple(i for i in range(layers) if i >= first_dense and i % freq == 0),
        "scoring": str(r.get("scoring_func", "softmax")),
        "topk_method": method,
        "n_group": int(r.get("n_group", 1)),
        "topk_group": int(r.get("topk_group", 1)),
        "correction_bias": method == "noaux_tc",
        "norm_topk_prob": bool(r.get("norm_topk_prob", False)),
        "routed_scaling_factor": float(r.get("routed_scaling_factor", 1.0)),
    }


def _mixtral(r: _Reader, layers: int) -> dict[str, Any]:
    """``MixtralConfig`` / ``MixtralTopKRouter``: softmax, top-k, always renormalised."""
    return {
        "num_experts": int(r.need("num_local_experts", "num_experts") or 0),
        "top_k": int(r.need("num_experts_per_tok") or 0),
        "moe_layers": tuple(range(layers)),
        "norm_topk_prob": True,
    }


def _olmoe(r: _Reader, layers: int) -> dict[str, Any]:
    """``OlmoeConfig`` / ``OlmoeTopKRouter``."""
    return {
        "num_experts": int(r.need("num_experts", "num_local_experts") or 0),
        "top_k": int(r.need("num_experts_per_tok") or 0),
        "moe_layers": tuple(range(layers)),
        "norm_topk_prob": bool(r.get("norm_topk_prob", False)),
    }


def _gpt_oss(r: _Reader, layers: int) -> dict[str, Any]:
    """``GptOssConfig`` / ``GptOssTopKRouter`` (``mlp.router``, a linear map with bias)."""
    return {
        "num_experts": int(r.need("num_local_experts", "num_experts") or 0),
        "top_k": int(r.need("num_experts_per_tok", "experts_per_token") or 0),
        "moe_layers": tuple(range(layers)),
        "norm_topk_prob": True,
        "topk_before_softmax": True,
        "gate_module": "mlp.router",
        "gate_bias": True,
    }


#: Each supported family's reader: ``(reader, num_hidden_layers) -> MoEArchitecture fields``.
FAMILIES: dict[str, Callable[[_Reader, int], dict[str, Any]]] = {
    "ernie45": _ernie45,
    "qwen3_moe": _qwen3_moe,
    "deepseek_v2": _deepseek_v2,
    "mixtral": _mixtral,
    "olmoe": _olmoe,
    "gpt_oss": _gpt_oss,
}
_FAMILY_OF_MODEL_TYPE = {
    "ernie4_5_moe": "ernie45",
    "qwen3_moe": "qwen3_moe",
    "deepseek_v2": "deepseek_v2",
    "mixtral": "mixtral",
    "olmoe": "olmoe",
    "gpt_oss": "gpt_oss",
}
_FAMILY_OF_ARCHITECTURE = {
    "Ernie4_5_MoeForCausalLM": "ernie45",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "DeepseekV2ForCausalLM": "deepseek_v2",
    "MixtralForCausalLM": "mixtral",
    "OlmoeForCausalLM": "olmoe",
    "GptOssForCausalLM": "gpt_oss",
}


def family_of(config: dict[str, Any]) -> str | None:
    """The supported family of a config (by ``model_type``, else by ``architectures``), or
    None."""
    family = _FAMILY_OF_MODEL_TYPE.get(str(config.get("model_type", "")))
    if family is not None:
        return family
    for arch in config.get("architectures") or []:
        if arch in _FAMILY_OF_ARCHITECTURE:
            return _FAMILY_OF_ARCHITECTURE[arch]
    return None


def _unsupported(config: dict[str, Any]) -> UnsupportedArchitectureError:
    """The error for an MoE config of no known family: names the generic fields it lacks."""
    wanted = {
        "routed experts": EXPERT_COUNT_KEYS,
        "top-k": TOP_K_KEYS,
        "scoring function": ("scoring_func",),
        "MoE layer layout": ("mlp_only_layers", "first_k_dense_replace", "moe_layer_start_index"),
    }
    missing = tuple(
        f"{what} ({' or '.join(keys)})"
        for what, keys in wanted.items()
        if _first(config, keys) is None
    )
    return UnsupportedArchitectureError(
        str(config.get("model_type", "unknown")),
        config.get("architectures") or [],
        missing=missing,
        reason=(
            f"not a supported MoE family ({', '.join(FAMILIES)}); its routing rule cannot be "
            "read from the config (docs/moe_families.md says how to add a family)"
        ),
    )
