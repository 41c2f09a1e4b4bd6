"""Routing capture strategies: turn one server response into a :class:`ExpertRoutingTrace`.

The client calls :meth:`ExpertRoutingCapture.capture` after every model call:

* :class:`EngineCapture` decodes vLLM's ``routed_experts`` (GPU profile).
* :class:`ReplayCapture` replays the returned token ids in transformers (CPU profile). The
  forward pass runs in a worker thread so the event loop keeps serving other requests.
* :class:`DeferredReplayCapture` (CPU profile, batch jobs) does no replay on the request
  path: it returns a :class:`PendingReplayTrace` holding the token ids, the telemetry store
  records the call's expert routing as ``pending`` with those ids, and a replay worker
  (:mod:`orchestrator.telemetry.fill`, ``orchestrator telemetry fill-routing``) replays many
  calls per forward pass later and fills it in (then labelled ``replay``).
* :class:`NoCapture` records a dense model, or a deployment that opted out, honestly.
* :class:`UnsupportedCapture` records every call of an MoE of no supported family as
  ``unsupported``, with no experts (its layer layout and router are unknown); it says so in
  one line when it is made (at start). :meth:`ReplayCapture.from_checkpoint` and
  :class:`DeferredReplayCapture` fall back to it by themselves; :func:`unsupported_capture`
  gives it for a config read elsewhere.

Every trace carries the model's family and shape (:func:`serving.expert_routing.shape_fields`),
so the telemetry records which family each call belongs to.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field, model_validator

from serving.architecture import MoEArchitecture
from serving.engine_capture import decode_routed_experts
from serving.errors import CheckpointError, UnsupportedArchitectureError
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace, shape_fields
from serving.replay import ExpertRoutingReplayer

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallTokens:
    """What the client hands a capture about one finished call: the response body and its
    choice, the token ids the server returned and the usage counts."""

    response: Mapping[str, Any]
    choice: Mapping[str, Any]
    prompt_ids: Sequence[int]
    completion_ids: Sequence[int]
    prompt_tokens: int
    completion_tokens: int


class ExpertRoutingCapture(Protocol):
    """Produces the routing trace of one response choice."""

    arch: MoEArchitecture

    def verify_served_model(self, root: str | None) -> None:
        """Check that the server serves what this capture assumes (``/v1/models`` root)."""

    async def capture(self, call: CallTokens) -> ExpertRoutingTrace:
        """The routing trace of one finished call."""


def _ids_missing(call: CallTokens, arch: MoEArchitecture) -> ExpertRoutingTrace | None:
    """The ``unavailable`` trace of a call whose token ids did not all come back (a replay
    needs every one), or None when they did."""
    if len(call.prompt_ids) == call.prompt_tokens and len(call.completion_ids) == (
        call.completion_tokens
    ):
        return None
    return ExpertRoutingTrace.unavailable(
        "server returned no token ids to replay (it needs return_token_ids support)",
        call.prompt_tokens,
        call.completion_tokens,
        arch,
    )


#: What an :class:`EngineCapture` asks the server for (``vllm_xargs.routed_experts``, read by
#: the project's vLLM plugin :mod:`serving.vllm_plugin`).
ENGINE_ENCODINGS = ("phase_counts", "counts", "ids")


class EngineCapture:
    """Reads the engine's own record (``routed_experts``); no confidence is available.

    Args:
        arch: The served model's architecture.
        encoding: What each call asks the server for, sent by the client as
            ``vllm_xargs: {"routed_experts": encoding}``: ``phase_counts`` (default; per-call
            ``(layer, expert)`` counts computed in the server by the project's plugin, the
            prompt's (prefill) and the completion's (decode) apart, all the telemetry and the
            skew analysis use), ``counts`` (the same, summed over both phases: the plugin's
            first form) or ``ids`` (vLLM's per-token
            ``(tokens, layers, top_k)`` ids, for per-token views; larger, and costlier to
            capture: ``benchmarks/gpu/run19.sh``, ``benchmarks/results/gpu_2026-11-30.md``).
            A server without the plugin ignores the field and sends ids,
            which decode the same way.
        sample_rate: Fraction of calls whose experts are captured, in ``(0, 1]`` (1.0: every
            call). Below 1 each call is drawn independently of its content
            (:meth:`request_fields`, one draw per call); a drawn call asks for ``encoding``,
            the others for ``none``, which the project's plugin answers without routing and
            without carrying the rows from the engine core (the throughput cost of each
            rate is measured by ``benchmarks/gpu/run19.sh``: see
            ``benchmarks/results/gpu_2026-12-01c.md``). Every
            trace carries the rate (``capture_sampling_rate``), so the telemetry and the
            analysis weigh a captured call by ``1 / rate``. **The client must call
            :meth:`request_fields` once per call** (and :meth:`capture` for that call in the
            same task): the draw is remembered in a context variable.
        seed: Seed of the draws (None: from the OS).

    Raises:
        ValueError: ``encoding`` is not one of :data:`ENGINE_ENCODINGS`, or ``sample_rate``
            is not in ``(0, 1]``.
    """

    def __init__(
        self,
        arch: MoEArchitecture,
        encoding: str = "phase_counts",
        *,
        sample_rate: float = 1.0,
        seed: int | None = None,
    ) -> None:
        if encoding not in ENGINE_ENCODINGS:
            raise ValueError(
                f"EngineCapture encoding must be one of {ENGINE_ENCODINGS}, got {encoding!r}: "
                "'phase_counts' for per-call expert counts apart for prefill and decode, "
                "'counts' for them summed, 'ids' for per-token expert ids"
            )
        rate = float(sample_rate)
        if not 0.0 < rate <= 1.0:  # NaN fails too
            raise ValueError(
                f"EngineCapture sample_rate must be in (0, 1] (the fraction of calls whose "
                f"experts are captured; 1.0 for every call), got {sample_rate!r}"
            )
        self.arch = arch
        self.encoding = encoding
        self.sample_rate = rate
        self._rng = random.Random(seed)
        #: What the current call asked for (set by request_fields, read by capture).
        self._asked: ContextVar[str | None] = ContextVar(f"engine_capture_{id(self)}", default=None)

    @property
    def per_call(self) -> bool:
        """Whether :meth:`request_fields` differs between calls (sampled capture): the client
        must then ask for the fields of every call instead of reusing one dict."""
        return self.sample_rate < 1.0

    def request_fields(self) -> dict[str, Any]:
        """The request body fields of one call: this capture's encoding, or ``none`` for a
        call left out of the sample (one draw per call when ``sample_rate < 1``)."""
        mode = self.encoding
        if self.sample_rate < 1.0 and self._rng.random() >= self.sample_rate:
            mode = "none"
        self._asked.set(mode)
        return {"vllm_xargs": {"routed_experts": mode}}

    def verify_served_model(self, root: str | None) -> None:
        """Nothing to check: the engine reports its own routing."""

    async def capture(self, call: CallTokens) -> ExpertRoutingTrace:
        if self._asked.get() == "none":  # left out of the sample: no routing, by design
            trace = ExpertRoutingTrace.unavailable(
                f"not in the expert-capture sample (capture sampling rate {self.sample_rate:g})",
                call.prompt_tokens,
                call.completion_tokens,
                self.arch,
            )
        else:
            trace = decode_routed_experts(
                call.choice,
                prompt_tokens=call.prompt_tokens,
                completion_tokens=call.completion_tokens,
                arch=self.arch,
                response=call.response,
            )
        if self.sample_rate < 1.0:
            trace = trace.model_copy(update={"capture_sampling_rate": self.sample_rate})
        return trace


def _verify_same_checkpoint(root: str | None, checkpoint_dir: Path) -> None:
    """Raise when the server's ``/v1/models`` root is a local folder other than
    ``checkpoint_dir`` (replaying through another checkpoint records the wrong experts)."""
    if root and Path(root).is_dir():
        served = Path(root).resolve()
        if served != checkpoint_dir.resolve():
            raise CheckpointError(
                checkpoint_dir,
                f"the server serves {served}, so replaying through this checkpoint would "
                f"record the wrong experts; set ORCH_CHECKPOINT_DIR={served}",
            )


#: The ``reason`` of a :class:`PendingReplayTrace` (and the telemetry row's ``routing_note``
#: until the replay worker fills it).
PENDING_REASON = (
    "expert routing pending: the CPU replay was deferred off the request path; "
    "`orchestrator telemetry fill-routing` fills it"
)


class PendingReplayTrace(ExpertRoutingTrace):
    """A call whose expert routing will be filled later by a replay of its token ids.

    As an :class:`ExpertRoutingTrace` it has no expert ids (``source`` is ``pending``,
    ``reason`` :data:`PENDING_REASON`), so nothing reads zero experts into it; the telemetry
    store recognises it and records the call as ``pending`` together with the ids below,
    which the replay worker needs.

    Attributes:
        prompt_ids: The prompt's token ids as the server tokenised them.
        completion_ids: The completion's token ids.
        checkpoint: The resolved folder the replay must go through (the served checkpoint).
    """

    source: ExpertRoutingSource = ExpertRoutingSource.PENDING
    prompt_ids: tuple[int, ...] = ()
    completion_ids: tuple[int, ...] = ()
    checkpoint: str = Field("", min_length=1)

    @model_validator(mode="after")
    def _check_pending(self) -> PendingReplayTrace:
        if self.source is not ExpertRoutingSource.PENDING or self.expert_ids is not None:
            raise ValueError(
                f"a pending trace has source pending and no expert ids (got source {self.source})"
            )
        if (len(self.prompt_ids), len(self.completion_ids)) != (
            self.prompt_tokens,
            self.completion_tokens,
        ):
            raise ValueError(
                f"a pending trace needs every token id: {len(self.prompt_ids)} prompt and "
                f"{len(self.completion_ids)} completion ids for {self.prompt_tokens} and "
                f"{self.completion_tokens} tokens"
            )
        return self


class DeferredReplayCapture:
    """CPU profile without replay on the request path: each call's token ids are kept, and
    its expert routing is filled later (see :class:`PendingReplayTrace`).

    Loads no model (only the checkpoint's ``config.json``), so a batch process or a Ray
    worker spends no core on the replay while requests are in flight.

    Args:
        checkpoint_dir: The folder the server serves.

    Raises:
        CheckpointError: The folder holds no readable ``config.json``.
    """

    def __init__(self, checkpoint_dir: Path | str) -> None:
        self.checkpoint_dir = Path(checkpoint_dir)
        #: Set when the checkpoint is an MoE of no supported family: its calls are recorded
        #: ``unsupported`` (nothing is kept to replay).
        self.unsupported: UnsupportedCapture | None = None
        try:
            self.arch = MoEArchitecture.from_checkpoint(self.checkpoint_dir)
        except UnsupportedArchitectureError as exc:
            self.unsupported = unsupported_capture(exc, self.checkpoint_dir)
            self.arch = self.unsupported.arch

    def verify_served_model(self, root: str | None) -> None:
        """As :meth:`ReplayCapture.verify_served_model`.

        Raises:
            CheckpointError: ``root`` is a local folder other than the replay checkpoint.
        """
        _verify_same_checkpoint(root, self.checkpoint_dir)

    async def capture(self, call: CallTokens) -> ExpertRoutingTrace:
        if self.unsupported is not None:
            return await self.unsupported.capture(call)
        if not self.arch.is_moe:
            return ExpertRoutingTrace.dense(call.prompt_tokens, call.completion_tokens)
        missing = _ids_missing(call, self.arch)
        if missing is not None:
            return missing
        return PendingReplayTrace(
            source=ExpertRoutingSource.PENDING,
            **shape_fields(self.arch),
            prompt_tokens=call.prompt_tokens,
            completion_tokens=call.completion_tokens,
            reason=PENDING_REASON,
            prompt_ids=tuple(int(t) for t in call.prompt_ids),
            completion_ids=tuple(int(t) for t in call.completion_ids),
            checkpoint=str(self.checkpoint_dir.resolve()),
        )


class ReplayCapture:
    """Replays the call's token ids through the served checkpoint (estimate, not record)."""

    def __init__(self, replayer: ExpertRoutingReplayer) -> None:
        self.replayer = replayer
        self.arch = replayer.arch

    @classmethod
    def from_checkpoint(cls, checkpoint_dir: Path | str) -> ReplayCapture | UnsupportedCapture:
        """The replay capture of the checkpoint in ``checkpoint_dir``; an
        :class:`UnsupportedCapture` when it is an MoE of no supported family.

        Raises:
            CheckpointError: The folder holds no readable checkpoint.
        """
        try:
            MoEArchitecture.from_checkpoint(checkpoint_dir)
        except UnsupportedArchitectureError as exc:
            return unsupported_capture(exc, checkpoint_dir)
        return cls(ExpertRoutingReplayer(checkpoint_dir))

    def verify_served_model(self, root: str | None) -> None:
        """Refuse to replay through a checkpoint other than the one the server serves.

        Raises:
            CheckpointError: ``root`` is a local folder other than the replay checkpoint.
        """
        _verify_same_checkpoint(root, self.replayer.checkpoint_dir)

    async def capture(self, call: CallTokens) -> ExpertRoutingTrace:
        missing = _ids_missing(call, self.arch)
        if missing is not None:
            return missing
        trace = await asyncio.to_thread(self.replayer.replay, call.prompt_ids, call.completion_ids)
        if not trace.family:  # the call's family is recorded whichever path made the trace
            trace = trace.model_copy(update={"family": self.arch.family})
        return trace


class NoCapture:
    """For dense models (nothing to record) or when capture is switched off."""

    def __init__(self, arch: MoEArchitecture, reason: str = "routing capture disabled") -> None:
        self.arch = arch
        self.reason = reason

    def verify_served_model(self, root: str | None) -> None:
        """Nothing is captured, so nothing to check."""

    async def capture(self, call: CallTokens) -> ExpertRoutingTrace:
        if not self.arch.is_moe:
            return ExpertRoutingTrace.dense(call.prompt_tokens, call.completion_tokens)
        return ExpertRoutingTrace.unavailable(
            self.reason, call.prompt_tokens, call.completion_tokens, self.arch
        )


#: ``MoEArchitecture.family`` of the description an :class:`UnsupportedCapture` holds.
UNSUPPORTED_FAMILY = "unsupported"
#: Unsupported models already announced in this process (one line each, at start).
_ANNOUNCED: set[str] = set()


class UnsupportedCapture:
    """For a served MoE of no supported family: every call is recorded with source
    ``unsupported`` and no experts, layers or top-k (nothing about its routing is known, so
    nothing is invented). Made once at start; its construction logs one warning line naming the
    model and why (once per model and process).

    Args:
        error: Why the model's config describes no supported family.
        num_hidden_layers: The config's layer count, when known (1 otherwise; the description
            names no MoE layer, so nothing reads it).

    Attributes:
        arch: A description without MoE layers, family ``unsupported``.
        reason: The routing note every call is recorded with.
    """

    def __init__(self, error: UnsupportedArchitectureError, num_hidden_layers: int = 1) -> None:
        self.error = error
        self.arch = MoEArchitecture(
            model_type=error.model_type,
            num_hidden_layers=max(1, num_hidden_layers),
            family=UNSUPPORTED_FAMILY,
        )
        self.reason = (
            f"unsupported model family: model_type {error.model_type!r} "
            f"(architectures {list(error.architectures)}); expert routing not recorded"
        )
        if str(error) not in _ANNOUNCED:
            _ANNOUNCED.add(str(error))
            logger.warning(
                "expert telemetry off for this model: %s. Its calls are recorded with source "
                "'unsupported', without experts",
                error,
            )

    def verify_served_model(self, root: str | None) -> None:
        """Nothing is captured, so nothing to check."""

    async def capture(self, call: CallTokens) -> ExpertRoutingTrace:
        return ExpertRoutingTrace.unsupported(
            self.reason, call.prompt_tokens, call.completion_tokens
        )


def unsupported_capture(
    error: UnsupportedArchitectureError, checkpoint_dir: Path | str | None = None
) -> UnsupportedCapture:
    """The :class:`UnsupportedCapture` of ``error``, with the layer count of
    ``checkpoint_dir/config.json`` when it can be read."""
    layers = 1
    if checkpoint_dir is not None:
        try:
            config = json.loads((Path(checkpoint_dir) / "config.json").read_text("utf-8"))
            layers = int(config.get("num_hidden_layers") or 1)
        except (OSError, ValueError, TypeError, AttributeError):
            pass  # the description names no MoE layer; the count is only informative
    return UnsupportedCapture(error, layers)
