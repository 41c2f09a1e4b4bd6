"""Routing capture strategies: turn one server response into a :class:`ExpertRoutingTrace`.

The client calls :meth:`ExpertRoutingCapture.capture` after every model call:

* :class:`EngineCapture` decodes vLLM's ``routed_experts`` (GPU profile).
* :class:`ReplayCapture` replays the returned token ids in transformers (CPU profile). The
  forward pass runs in a worker thread so the event loop keeps serving other requests.
* :class:`NoCapture` records a dense model, or a deployment that opted out, honestly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from serving.architecture import MoEArchitecture
from serving.engine_capture import decode_routed_experts
from serving.errors import CheckpointError
from serving.expert_routing import ExpertRoutingTrace
from serving.replay import ExpertRoutingReplayer


class ExpertRoutingCapture(Protocol):
    """Produces the routing trace of one response choice."""

    arch: MoEArchitecture

    def verify_served_model(self, root: str | None) -> None:
        """Check that the server serves what this capture assumes (``/v1/models`` root)."""

    async def capture(
        self,
        *,
        response: Mapping[str, Any],
        choice: Mapping[str, Any],
        prompt_ids: Sequence[int],
        completion_ids: Sequence[int],
        prompt_tokens: int,
        completion_tokens: int,
    ) -> ExpertRoutingTrace: ...


class EngineCapture:
    """Reads the engine's own record (``routed_experts``); no confidence is available."""

    def __init__(self, arch: MoEArchitecture) -> None:
        self.arch = arch

    def verify_served_model(self, root: str | None) -> None:
        """Nothing to check: the engine reports its own routing."""

    async def capture(
        self,
        *,
        response: Mapping[str, Any],
        choice: Mapping[str, Any],
        prompt_ids: Sequence[int],
        completion_ids: Sequence[int],
        prompt_tokens: int,
        completion_tokens: int,
    ) -> ExpertRoutingTrace:
        return decode_routed_experts(
            choice,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            arch=self.arch,
            response=response,
        )


class ReplayCapture:
    """Replays the call's token ids through the served checkpoint (estimate, not record)."""

    def __init__(self, replayer: ExpertRoutingReplayer) -> None:
        self.replayer = replayer
        self.arch = replayer.arch

    @classmethod
    def from_checkpoint(cls, checkpoint_dir: Path | str) -> ReplayCapture:
        return cls(ExpertRoutingReplayer(checkpoint_dir))

    def verify_served_model(self, root: str | None) -> None:
        """Refuse to replay through a checkpoint other than the one the server serves.

        Raises:
            CheckpointError: ``root`` is a local folder other than the replay checkpoint.
        """
        if root and Path(root).is_dir():
            served = Path(root).resolve()
            if served != self.replayer.checkpoint_dir.resolve():
                raise CheckpointError(
                    self.replayer.checkpoint_dir,
                    f"the server serves {served}, so replaying through this checkpoint would "
                    f"record the wrong experts; set ORCH_CHECKPOINT_DIR={served}",
                )

    async def capture(
        self,
        *,
        response: Mapping[str, Any],
        choice: Mapping[str, Any],
        prompt_ids: Sequence[int],
        completion_ids: Sequence[int],
        prompt_tokens: int,
        completion_tokens: int,
    ) -> ExpertRoutingTrace:
        if len(prompt_ids) != prompt_tokens or len(completion_ids) != completion_tokens:
            return ExpertRoutingTrace.unavailable(
                "server returned no token ids to replay (it needs return_token_ids support)",
                prompt_tokens,
                completion_tokens,
                self.arch,
            )
        return await asyncio.to_thread(self.replayer.replay, prompt_ids, completion_ids)


class NoCapture:
    """For dense models (nothing to record) or when capture is switched off."""

    def __init__(self, arch: MoEArchitecture, reason: str = "routing capture disabled") -> None:
        self.arch = arch
        self.reason = reason

    def verify_served_model(self, root: str | None) -> None:
        """Nothing is captured, so nothing to check."""

    async def capture(
        self,
        *,
        response: Mapping[str, Any],
        choice: Mapping[str, Any],
        prompt_ids: Sequence[int],
        completion_ids: Sequence[int],
        prompt_tokens: int,
        completion_tokens: int,
    ) -> ExpertRoutingTrace:
        if not self.arch.is_moe:
            return ExpertRoutingTrace.dense(prompt_tokens, completion_tokens)
        return ExpertRoutingTrace.unavailable(
            self.reason, prompt_tokens, completion_tokens, self.arch
        )
