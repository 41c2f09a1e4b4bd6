"""The model side: offline checkpoints, the co-hosted vLLM server, and routing capture.

Names are imported on first use (PEP 562 ``__getattr__``), so loading one submodule (the vLLM
plugin, :mod:`serving.vllm_plugin`, runs inside every vLLM server process) does not load the
rest: pydantic, httpx, tenacity and ``orchestrator`` come only with the names that need them.
Heavy dependencies (torch, transformers) are imported only by the functions that need them.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from serving.architecture import MoEArchitecture
    from serving.capture import (
        PENDING_REASON,
        DeferredReplayCapture,
        EngineCapture,
        ExpertRoutingCapture,
        NoCapture,
        PendingReplayTrace,
        ReplayCapture,
        UnsupportedCapture,
    )
    from serving.checkpoint import CheckpointSpec, PlantedExpert, build_checkpoint
    from serving.engine_capture import decode_routed_experts, encode_routed_experts
    from serving.errors import (
        CheckpointError,
        ExpertRoutingDecodeError,
        ServerStartError,
        ServingError,
    )
    from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace
    from serving.launcher import VLLMServer, server_is_healthy
    from serving.placement import (
        EngineCorePlacement,
        Placement,
        colocate_engine_core,
        keep_off_server_cpus,
        server_cpus,
    )
    from serving.profiles import ServingProfile, cpu_profile, gpu_profile
    from serving.replay import ExpertRoutingReplayer

# the submodule that defines each public name
_NAMES: dict[str, tuple[str, ...]] = {
    "architecture": ("MoEArchitecture",),
    "capture": (
        "PENDING_REASON",
        "DeferredReplayCapture",
        "EngineCapture",
        "ExpertRoutingCapture",
        "NoCapture",
        "PendingReplayTrace",
        "ReplayCapture",
        "UnsupportedCapture",
    ),
    "checkpoint": ("CheckpointSpec", "PlantedExpert", "build_checkpoint"),
    "engine_capture": ("decode_routed_experts", "encode_routed_experts"),
    "errors": ("CheckpointError", "ExpertRoutingDecodeError", "ServerStartError", "ServingError"),
    "expert_routing": ("ExpertRoutingSource", "ExpertRoutingTrace"),
    "launcher": ("VLLMServer", "server_is_healthy"),
    "placement": (
        "EngineCorePlacement",
        "Placement",
        "colocate_engine_core",
        "keep_off_server_cpus",
        "server_cpus",
    ),
    "profiles": ("ServingProfile", "cpu_profile", "gpu_profile"),
    "replay": ("ExpertRoutingReplayer",),
}
_SOURCES = {name: module for module, names in _NAMES.items() for name in names}

__all__ = [
    "PENDING_REASON",
    "CheckpointError",
    "CheckpointSpec",
    "DeferredReplayCapture",
    "EngineCapture",
    "EngineCorePlacement",
    "ExpertRoutingCapture",
    "ExpertRoutingDecodeError",
    "ExpertRoutingReplayer",
    "ExpertRoutingSource",
    "ExpertRoutingTrace",
    "MoEArchitecture",
    "NoCapture",
    "PendingReplayTrace",
    "Placement",
    "PlantedExpert",
    "ReplayCapture",
    "ServerStartError",
    "ServingError",
    "ServingProfile",
    "UnsupportedCapture",
    "VLLMServer",
    "build_checkpoint",
    "colocate_engine_core",
    "cpu_profile",
    "decode_routed_experts",
    "encode_routed_experts",
    "gpu_profile",
    "keep_off_server_cpus",
    "server_cpus",
    "server_is_healthy",
]


def __getattr__(name: str) -> typing.Any:
    """Import ``name`` from its submodule on first use and cache it in this module.

    Raises:
        AttributeError: ``name`` is neither a public name nor a submodule of ``serving``.
    """
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'serving' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"serving.{source}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
