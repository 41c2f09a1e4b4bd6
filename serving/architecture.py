"""What a checkpoint's MoE layers look like, read from its ``config.json``.

Sources: the ERNIE-4.5 model card and ``config.json`` of ``baidu/ERNIE-4.5-21B-A3B-PT``
(``moe_num_experts``, ``moe_k``, ``moe_num_shared_experts``, ``moe_layer_start_index``,
``moe_layer_end_index``, ``moe_layer_interval``), and transformers' ``Ernie4_5_MoeConfig``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from serving.errors import CheckpointError

MOE_ARCHITECTURES = frozenset({"Ernie4_5_MoeForCausalLM"})


class MoEArchitecture(BaseModel):
    """The routing-relevant shape of a model.

    Attributes:
        model_type: ``config.json``'s ``model_type``.
        num_hidden_layers: Decoder layers, dense and MoE together.
        moe_layers: Model-layer index of every MoE layer, ascending; empty for a dense model.
        num_experts: Routed experts per MoE layer (shared experts not counted).
        top_k: Routed experts chosen per token and MoE layer.
        num_shared_experts: Always-on shared experts per MoE layer (never in routing traces).
    """

    model_config = ConfigDict(frozen=True)

    model_type: str
    num_hidden_layers: int = Field(ge=1)
    moe_layers: tuple[int, ...] = ()
    num_experts: int = Field(0, ge=0)
    top_k: int = Field(0, ge=0)
    num_shared_experts: int = Field(0, ge=0)

    @property
    def is_moe(self) -> bool:
        """True when the model has at least one routed MoE layer."""
        return bool(self.moe_layers)

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> MoEArchitecture:
        """Build from a parsed ``config.json``. A model without MoE fields is dense."""
        layers = int(config["num_hidden_layers"])
        archs = set(config.get("architectures") or [])
        experts = int(config.get("moe_num_experts") or 0)
        if (
            not (archs & MOE_ARCHITECTURES or config.get("model_type") == "ernie4_5_moe")
            or not experts
        ):
            return cls(
                model_type=str(config.get("model_type", "unknown")), num_hidden_layers=layers
            )
        start = int(config.get("moe_layer_start_index", 1))
        end = config.get("moe_layer_end_index")
        end = layers - 1 if end in (None, -1) else int(end)
        interval = int(config.get("moe_layer_interval", 1))
        moe_layers = tuple(i for i in range(start, end + 1) if (i - start) % interval == 0)
        return cls(
            model_type=str(config["model_type"]),
            num_hidden_layers=layers,
            moe_layers=moe_layers,
            num_experts=experts,
            top_k=int(config.get("moe_k", 0)),
            num_shared_experts=int(config.get("moe_num_shared_experts") or 0),
        )

    @classmethod
    def from_checkpoint(cls, path: Path | str) -> MoEArchitecture:
        """Read ``path/config.json``.

        Raises:
            CheckpointError: The folder or its ``config.json`` is missing or unreadable.
        """
        config_file = Path(path) / "config.json"
        if not config_file.is_file():
            raise CheckpointError(
                path, "no config.json; build one with `orchestrator build-checkpoint`"
            )
        try:
            return cls.from_config(json.loads(config_file.read_text(encoding="utf-8")))
        except (ValueError, KeyError) as exc:
            raise CheckpointError(path, f"config.json is not a usable model config: {exc}") from exc
