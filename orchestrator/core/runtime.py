"""Wiring from :class:`~orchestrator.config.Settings` to live objects (profile, capture, client)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from orchestrator.config import Settings
from orchestrator.core.client import ModelClient, VLLMClient
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.workflow import Workflow
from orchestrator.telemetry import TelemetryStore
from serving.architecture import MoEArchitecture
from serving.capture import (
    EngineCapture,
    ExpertRoutingCapture,
    ReplayCapture,
    unsupported_capture,
)
from serving.errors import UnsupportedArchitectureError
from serving.profiles import ServingProfile, cpu_profile, gpu_profile


def serving_profile(settings: Settings) -> ServingProfile:
    """The profile ``settings.profile`` names, filled from the settings."""
    if settings.profile == "gpu":
        return gpu_profile(settings.gpu_model, served_model_name=settings.served_model_name)
    return cpu_profile(
        settings.checkpoint_dir,
        served_model_name=settings.served_model_name,
        kv_cache_gib=settings.kv_cache_gib,
        colocate_engine_core=settings.colocate_engine_core,
    )


def expert_routing_capture(settings: Settings) -> ExpertRoutingCapture:
    """Replay on the CPU profile; the engine's routed_experts on the GPU profile, for every
    call or for the sample ``settings.capture_sample_rate`` draws.

    An MoE of no supported family gets an :class:`~serving.capture.UnsupportedCapture`
    (its calls recorded ``unsupported``, one warning line now).

    Raises:
        CheckpointError: The checkpoint (CPU) or the model config (GPU) cannot be read.
    """
    if settings.profile == "cpu":
        return ReplayCapture.from_checkpoint(settings.checkpoint_dir)
    model = Path(settings.gpu_model)
    try:
        if model.is_dir():
            arch = MoEArchitecture.from_checkpoint(model)
        else:
            from transformers import AutoConfig

            config = AutoConfig.from_pretrained(settings.gpu_model).to_dict()
            arch = MoEArchitecture.from_config(config)
    except UnsupportedArchitectureError as exc:  # recorded 'unsupported', said once at start
        return unsupported_capture(exc, model if model.is_dir() else None)
    return EngineCapture(arch, sample_rate=settings.capture_sample_rate)


def make_client(
    settings: Settings, capture: ExpertRoutingCapture | None = None, *, stream_interval: int = 1
) -> VLLMClient:
    """A :class:`VLLMClient` for ``settings.server_url`` with the profile's routing capture
    (``stream_interval``: tokens per streamed chunk, see :class:`VLLMClient`)."""
    return VLLMClient(
        settings.server_url,
        settings.served_model_name,
        capture or expert_routing_capture(settings),
        timeout_s=settings.request_timeout_s,
        max_retries=settings.max_retries,
        temperature=settings.temperature,
        structured_output=settings.structured_output,
        stream_interval=stream_interval,
    )


def configured_orchestrator(
    settings: Settings,
    client: ModelClient,
    store: TelemetryStore,
    workflows: Iterable[Workflow[Any, Any]] | None = None,
    **options: Any,
) -> Orchestrator:
    """An :class:`~orchestrator.core.dispatcher.Orchestrator` with the settings' completion
    limit (``ORCH_MAX_COMPLETION_TOKENS``) and temperature presets (``ORCH_TEMPERATURE_*``),
    so that every command honours both; ``options`` (``classifier``, ``routes``, or a
    ``temperatures`` preset of the UI's side panel) are passed on and win over the settings.
    """
    options.setdefault("max_tokens", settings.max_completion_tokens)
    options.setdefault("temperatures", settings.temperatures)
    return Orchestrator(client, store, workflows, **options)
