"""Decode vLLM's routed-experts payload into a :class:`ExpertRoutingTrace` (``source="engine"``).

This is the one place that knows how vLLM versions differ:

* **0.24.0** (verified on an H200, see ``shared/FACTS.md``): each non-streaming choice has
  ``routed_experts``, a base64 string of ``.npy`` bytes, shape
  ``(prompt_tokens + completion_tokens - 1, num_hidden_layers, top_k)``, uint8 (uint16 past
  256 experts). The layer axis covers **all** layers, and a non-MoE layer reads zeros that are
  not expert 0. Exactly the layers that the shape description
  (:class:`~serving.architecture.MoEArchitecture`, ``moe_layers``) does not list are dropped
  here, for every family's layout: ERNIE-4.5's layer 0 (``moe_layer_start_index``),
  DeepSeek-V2's first ``first_k_dense_replace`` layers (and ``moe_layer_freq``), Qwen3-MoE's
  ``mlp_only_layers`` and ``decoder_sparse_step``; none for Mixtral, OLMoE and gpt-oss, whose
  every layer is MoE. Nothing is guessed from the ids (a top-1 MoE layer may well route every
  token to expert 0).
* **Later documentation** describes a separate ``prompt_routed_experts`` (prompt rows) beside
  ``routed_experts`` (completion rows), possibly as nested lists, possibly with the MoE layers
  only. Both are accepted: the prompt part is concatenated first, and a layer axis whose length
  equals the number of MoE layers is taken as MoE-only.

* **Per-call counts** (the project's vLLM plugin, :mod:`serving.vllm_plugin`, mode
  ``counts``): the same field holds a **2-D** ``.npy`` array ``(num_hidden_layers, E)`` of
  activations per layer and expert, summed over every routed token, computed in the server
  (the dense layers' zeros counted as expert 0; they are dropped here as above, and an
  array of the MoE layers only is accepted too); ``E`` may be smaller than the model's expert
  count (the plugin stops at the highest id it saw) and is padded here. It gives an
  :class:`EngineCountsTrace`: the engine's record at the granularity of one call (no per-token
  ids), which is all the telemetry and the skew analysis keep.
* **Per-call counts, prefill and decode apart** (plugin mode ``phase_counts``): the same 2-D
  array with the structured dtype ``[("prefill", u), ("decode", u)]``: the prompt's ``P`` rows
  and the completion's ``C - 1`` rows counted apart. The trace then carries
  ``prefill_counts`` too, each part checked against its own tokens x top-k.

A response without the field (a streaming response, a server started without
``--enable-return-routed-experts``, a call the plugin was asked not to return routing for)
gives an ``unavailable`` trace with the reason; it is never read as zeros. Decoding is
vectorised: no Python loop per token.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Mapping
from typing import Any

import numpy as np
import pybase64
from pydantic import model_validator

from serving.architecture import MoEArchitecture
from serving.errors import ExpertRoutingDecodeError
from serving.expert_routing import (
    ExpertRoutingSource,
    ExpertRoutingTrace,
    routed_token_count,
    shape_fields,
)

#: Field names of the plugin's ``phase_counts`` payload (prompt rows, then completion rows).
PHASE_FIELDS = ("prefill", "decode")


def _to_array(value: Any, field: str) -> np.ndarray:
    if isinstance(value, str):
        try:
            raw = pybase64.b64decode(value, validate=True)
            array = np.load(io.BytesIO(raw), allow_pickle=False)
        except (binascii.Error, ValueError, OSError, EOFError) as exc:
            # EOFError: np.load on zero bytes (``routed_experts: ""``)
            raise ExpertRoutingDecodeError(
                f"{field}: not base64 of .npy bytes ({type(exc).__name__}: {exc or 'no data'})"
            ) from exc
    elif isinstance(value, list):
        try:
            array = np.asarray(value)
        except (ValueError, TypeError, OverflowError) as exc:
            # a ragged list ("inhomogeneous shape"), or ints too large for any numpy dtype
            raise ExpertRoutingDecodeError(
                f"{field}: a nested list must be rectangular (tokens, layers, top_k) of "
                f"integer expert ids ({exc})"
            ) from exc
    else:
        raise ExpertRoutingDecodeError(
            f"{field}: expected a base64 string or a list, got {type(value)}"
        )
    if array.dtype.names == PHASE_FIELDS and array.ndim == 2 and field == "routed_experts":
        return array  # per-call counts apart for prefill and decode (mode phase_counts)
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ExpertRoutingDecodeError(
            f"{field}: expected integer expert ids, got dtype {array.dtype}"
        )
    if array.ndim == 2 and field == "routed_experts":
        return array  # per-call counts (the project's vLLM plugin); checked by the caller
    if array.ndim != 3:
        if array.size == 0:
            return np.zeros((0, 0, 0), dtype=np.int16)
        raise ExpertRoutingDecodeError(
            f"{field}: expected (tokens, layers, top_k), got {array.shape}"
        )
    return array


def decode_routed_experts(
    choice: Mapping[str, Any],
    *,
    prompt_tokens: int,
    completion_tokens: int,
    arch: MoEArchitecture,
    response: Mapping[str, Any] | None = None,
) -> ExpertRoutingTrace:
    """Turn one response choice's routed-experts fields into an engine trace.

    Args:
        choice: The choice object of a non-streaming chat or completion response (a dict).
        prompt_tokens: ``usage.prompt_tokens`` of the response.
        completion_tokens: Completion tokens of this choice.
        arch: The served model's architecture (which layers are MoE, experts, top-k).
        response: The whole response, searched for ``prompt_routed_experts`` when the choice
            lacks it (versions differ on where it sits).

    Returns:
        An ``engine`` trace with ``expert_ids`` of shape
        ``(prompt_tokens + completion_tokens - 1, len(arch.moe_layers), arch.top_k)`` and no
        router confidence (vLLM does not return gate probabilities); a ``dense`` trace for a
        dense model; an ``unavailable`` trace when the payload is absent.

    Raises:
        ExpertRoutingDecodeError: The payload is present but its encoding, dtype or shape is wrong.
    """
    if not arch.is_moe:
        return ExpertRoutingTrace.dense(prompt_tokens, completion_tokens)
    completion = choice.get("routed_experts")
    prompt = choice.get("prompt_routed_experts")
    if prompt is None and response is not None:
        prompt = response.get("prompt_routed_experts")
    if completion is None and prompt is None:
        return ExpertRoutingTrace.unavailable(
            "response has no routed_experts (streaming response, or server started without "
            "--enable-return-routed-experts)",
            prompt_tokens,
            completion_tokens,
            arch,
        )
    parts = [
        _to_array(v, name)
        for v, name in ((prompt, "prompt_routed_experts"), (completion, "routed_experts"))
        if v is not None
    ]
    if any(p.ndim == 2 for p in parts):
        if len(parts) != 1:
            raise ExpertRoutingDecodeError(
                "routed_experts holds per-call counts but prompt_routed_experts is also present"
            )
        return counts_trace(
            parts[0], prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, arch=arch
        )
    parts = [p for p in parts if p.size]
    ids = (
        np.concatenate(parts, axis=0) if parts else np.zeros((0, len(arch.moe_layers), arch.top_k))
    )

    if ids.shape[1:] and ids.shape[1] == arch.num_hidden_layers:
        first, last = arch.moe_layers[0], arch.moe_layers[-1]
        contiguous = arch.moe_layers == tuple(range(first, last + 1))
        # a slice is a view; a list index would copy the whole array once more
        ids = ids[:, first : last + 1, :] if contiguous else ids[:, list(arch.moe_layers), :]
    elif ids.shape[0] and ids.shape[1] != len(arch.moe_layers):
        raise ExpertRoutingDecodeError(
            f"routed_experts has {ids.shape[1]} layers; the model has {arch.num_hidden_layers} "
            f"layers of which {len(arch.moe_layers)} are MoE"
        )
    if ids.shape[0] and ids.shape[2] != arch.top_k:
        raise ExpertRoutingDecodeError(
            f"routed_experts has top_k {ids.shape[2]}, model has {arch.top_k}"
        )
    expected = routed_token_count(prompt_tokens, completion_tokens)
    if ids.shape[0] != expected:
        raise ExpertRoutingDecodeError(
            f"routed_experts has {ids.shape[0]} token rows; prompt {prompt_tokens} + completion "
            f"{completion_tokens} - 1 = {expected} expected"
        )
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= arch.num_experts):
        # checked before the int16 cast, which would wrap large uint16 ids into range
        raise ExpertRoutingDecodeError(
            f"routed_experts has expert ids in [{int(ids.min())}, {int(ids.max())}]; the model "
            f"has {arch.num_experts} routed experts, ids must lie in [0, {arch.num_experts})"
        )
    ids = np.ascontiguousarray(
        ids.reshape(expected, len(arch.moe_layers), arch.top_k), dtype=np.int16
    )
    return ExpertRoutingTrace(
        source=ExpertRoutingSource.ENGINE,
        **shape_fields(arch),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        expert_ids=ids,
    )


#: ``reason`` of an :class:`EngineCountsTrace`, stored as the telemetry row's routing note.
COUNTS_NOTE = (
    "engine counts: per-call expert counts computed in the vLLM server (moe-orchestrator "
    "plugin, mode counts); no per-token ids"
)


#: ``reason`` of an :class:`EngineCountsTrace` whose counts keep prefill and decode apart.
PHASE_COUNTS_NOTE = (
    "engine counts: per-call expert counts computed in the vLLM server, prefill and decode "
    "apart (moe-orchestrator plugin, mode phase_counts); no per-token ids"
)


class EngineCountsTrace(ExpertRoutingTrace):
    """An ``engine`` trace that holds per-call expert counts instead of per-token ids.

    The server (the project's vLLM plugin, mode ``counts``) summed the engine's own routing of
    every routed token of the call; nothing is estimated. What is lost against
    :func:`decode_routed_experts` on per-token ids: which token chose which expert (per-token
    and per-position views, the replay agreement measurement; the prompt vs completion split
    too, unless the server sent the phases apart: ``prefill_counts``, mode ``phase_counts``).
    What the telemetry and the skew analysis use, :meth:`expert_counts`, is exact.

    The base class validates the counts (shape, integer dtype, non-negative, each row summing
    to ``routed_tokens * top_k``), so this trace is accepted wherever an
    :class:`ExpertRoutingTrace` is, e.g. ``ModelCall.routing``, and the telemetry store records its
    counts like any other trace's.

    Attributes:
        counts: ``(len(moe_layers), num_experts)`` int64, read-only; each row sums to
            ``routed_tokens * top_k``.
    """

    counts: np.ndarray

    @model_validator(mode="after")
    def _check_engine_counts(self) -> EngineCountsTrace:
        if self.source is not ExpertRoutingSource.ENGINE:
            raise ValueError("an EngineCountsTrace is an engine record")
        return self


def counts_trace(
    raw: np.ndarray, *, prompt_tokens: int, completion_tokens: int, arch: MoEArchitecture
) -> EngineCountsTrace:
    """Turn the plugin's ``(num_hidden_layers, E)`` counts into an :class:`EngineCountsTrace`.

    ``raw`` covers every hidden layer (the plugin's payload) or the MoE layers only. Of all
    hidden layers, exactly those ``arch.moe_layers`` names are kept (the dense layers' zeros
    were counted as expert 0); the expert axis is padded to ``arch.num_experts``. A ``raw`` of
    the structured dtype ``[("prefill", u), ("decode", u)]`` (mode ``phase_counts``) gives a
    trace with ``prefill_counts`` too.

    Raises:
        ExpertRoutingDecodeError: Wrong dtype, layer count, more experts than the model has,
            or a layer whose counts do not sum to ``(prompt + completion - 1) * top_k`` (with
            phases: prefill to ``prompt * top_k``, decode to ``(completion - 1) * top_k``).
    """
    prefill_raw = None
    if raw.dtype.names == PHASE_FIELDS:
        if not all(np.issubdtype(raw.dtype[f], np.integer) for f in PHASE_FIELDS):
            raise ExpertRoutingDecodeError(
                f"routed_experts phase counts: integer fields expected, got {raw.dtype}"
            )
        prefill_raw = raw["prefill"].astype(np.int64)
        raw = prefill_raw + raw["decode"].astype(np.int64)
    if not np.issubdtype(raw.dtype, np.integer):
        raise ExpertRoutingDecodeError(
            f"routed_experts counts: integer dtype expected, got {raw.dtype}"
        )
    layers, experts = raw.shape
    if layers == arch.num_hidden_layers:
        raw = raw[list(arch.moe_layers), :]
        if prefill_raw is not None:
            prefill_raw = prefill_raw[list(arch.moe_layers), :]
    elif layers != len(arch.moe_layers):
        raise ExpertRoutingDecodeError(
            f"routed_experts counts have {layers} layers; the model ({arch.family}) has "
            f"{arch.num_hidden_layers} layers of which {len(arch.moe_layers)} are MoE: expected "
            "one row per hidden layer or per MoE layer"
        )
    if experts > arch.num_experts:
        raise ExpertRoutingDecodeError(
            f"routed_experts counts cover {experts} experts; the model has {arch.num_experts}"
        )
    padded = []
    for part in (raw, prefill_raw):
        if part is not None:
            full = np.zeros((len(arch.moe_layers), arch.num_experts), dtype=np.int64)
            full[:, :experts] = part
            full.flags.writeable = False
            padded.append(full)
    try:
        return EngineCountsTrace(
            source=ExpertRoutingSource.ENGINE,
            **shape_fields(arch),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            counts=padded[0],
            prefill_counts=padded[1] if len(padded) > 1 else None,
            reason=PHASE_COUNTS_NOTE if prefill_raw is not None else COUNTS_NOTE,
        )
    except ValueError as exc:
        raise ExpertRoutingDecodeError(f"routed_experts counts: {exc}") from exc


def encode_routed_experts(ids: np.ndarray) -> str:
    """Encode ids the way vLLM 0.24.0 does (base64 ``.npy``); used to record test fixtures."""
    buffer = io.BytesIO()
    np.save(buffer, ids, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
