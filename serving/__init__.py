"""The model side: offline checkpoints, the co-hosted vLLM server, and routing capture.

Heavy dependencies (torch, transformers) are imported only by the functions that need them.
"""

from serving.architecture import MoEArchitecture
from serving.capture import (
    PENDING_REASON,
    DeferredReplayCapture,
    EngineCapture,
    ExpertRoutingCapture,
    NoCapture,
    PendingReplayTrace,
    ReplayCapture,
)
from serving.checkpoint import CheckpointSpec, PlantedExpert, build_checkpoint
from serving.engine_capture import decode_routed_experts, encode_routed_experts
from serving.errors import CheckpointError, ExpertRoutingDecodeError, ServerStartError, ServingError
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
