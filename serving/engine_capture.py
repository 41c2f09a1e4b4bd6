"""Decode vLLM's routed-experts payload into a :class:`ExpertRoutingTrace` (``source="engine"``).

This is the one place that knows how vLLM versions differ:

* **0.24.0** (verified on an H200, see ``shared/FACTS.md``): each non-streaming choice has
  ``routed_experts``, a base64 string of ``.npy`` bytes, shape
  ``(prompt_tokens + completion_tokens - 1, num_hidden_layers, top_k)``, uint8 (uint16 past
  256 experts). The layer axis covers **all** layers; ERNIE's dense layer 0 reads zeros that are
  not expert 0, so every non-MoE layer is dropped here.
* **Later documentation** describes a separate ``prompt_routed_experts`` (prompt rows) beside
  ``routed_experts`` (completion rows), possibly as nested lists, possibly with the MoE layers
  only. Both are accepted: the prompt part is concatenated first, and a layer axis whose length
  equals the number of MoE layers is taken as MoE-only.

A response without the field (a streaming response, a server started without
``--enable-return-routed-experts``) gives an ``unavailable`` trace with the reason; it is never
read as zeros. Decoding is vectorised: no Python loop per token.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Mapping
from typing import Any

import numpy as np
import pybase64

from serving.architecture import MoEArchitecture
from serving.errors import ExpertRoutingDecodeError
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace, routed_token_count


def _to_array(value: Any, field: str) -> np.ndarray:
    if isinstance(value, str):
        try:
            raw = pybase64.b64decode(value, validate=True)
            array = np.load(io.BytesIO(raw), allow_pickle=False)
        except (binascii.Error, ValueError, OSError) as exc:
            raise ExpertRoutingDecodeError(f"{field}: not base64 of .npy bytes ({exc})") from exc
    elif isinstance(value, list):
        array = np.asarray(value)
    else:
        raise ExpertRoutingDecodeError(
            f"{field}: expected a base64 string or a list, got {type(value)}"
        )
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ExpertRoutingDecodeError(
            f"{field}: expected integer expert ids, got dtype {array.dtype}"
        )
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
    ids = np.ascontiguousarray(
        ids.reshape(expected, len(arch.moe_layers), arch.top_k), dtype=np.int16
    )
    return ExpertRoutingTrace(
        source=ExpertRoutingSource.ENGINE,
        moe_layers=arch.moe_layers,
        num_experts=arch.num_experts,
        top_k=arch.top_k,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        expert_ids=ids,
    )


def encode_routed_experts(ids: np.ndarray) -> str:
    """Encode ids the way vLLM 0.24.0 does (base64 ``.npy``); used to record test fixtures."""
    buffer = io.BytesIO()
    np.save(buffer, ids, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")
