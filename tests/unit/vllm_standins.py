"""Stand-ins for the vLLM 0.24.0 records the plugin's engine-core side reads and builds
(``SamplingParams.extra_args``, ``EngineCoreOutput``), shared by the plugin's scheduler tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Params:
    """A request's sampling parameters: only ``extra_args`` (``vllm_xargs``) is read."""

    extra_args: dict[str, Any] | None = None


@dataclass
class EngineCoreOutput:
    """One request's output of a step, with that step's routing rows when capture is on."""

    request_id: str
    new_token_ids: list[int]
    routed_experts: np.ndarray | None = None
    finish_reason: str | None = None
