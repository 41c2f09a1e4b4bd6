"""decode_routed_experts on responses recorded from vLLM 0.24.0 on an H200.

The fixtures under ``tests/fixtures/vllm_0_24/`` are real response bodies, kept verbatim, from
the server ``benchmarks/gpu_run.py`` starts: the project's random-weight checkpoint in the full
ERNIE-4.5-21B-A3B shape (28 layers, layer 0 dense, 64 experts, top-6), served by vLLM 0.24.0
with ``--enable-return-routed-experts`` (and once without it). The calls are short so that each
file stays a few KB. ``config.json`` holds the routing-relevant fields of that checkpoint's
model config, as the run recorded them (its tokenizer gave a vocabulary of 15,872, smaller than
the real model's 103,424; routing does not depend on it).
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest

from serving.architecture import MoEArchitecture
from serving.engine_capture import decode_routed_experts
from serving.errors import ExpertRoutingDecodeError
from serving.expert_routing import ExpertRoutingSource
from tests.fixtures.vllm_recorded import decode_body, recorded, recorded_arch

ROUTED = ["chat_en_routed.json", "chat_zh_routed.json"]


@pytest.fixture(scope="module")
def arch() -> MoEArchitecture:
    return recorded_arch()


def _raw(choice) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(choice["routed_experts"])), allow_pickle=False)


def test_recorded_architecture_is_the_21b_a3b_shape(arch: MoEArchitecture) -> None:
    assert arch.num_hidden_layers == 28
    assert arch.moe_layers == tuple(range(1, 28))
    assert (arch.num_experts, arch.top_k, arch.num_shared_experts) == (64, 6, 2)


@pytest.mark.parametrize("name", ROUTED)
def test_recorded_payload_is_what_0_24_sends(name: str, arch: MoEArchitecture) -> None:
    body = recorded(name)
    choice = body["choices"][0]
    assert isinstance(choice["routed_experts"], str)  # base64 of .npy bytes
    assert "prompt_routed_experts" not in choice and "prompt_routed_experts" not in body
    raw = _raw(choice)
    usage = body["usage"]
    # prompt and completion in one array, all 28 layers, the last sampled token has no row
    assert raw.shape == (usage["prompt_tokens"] + usage["completion_tokens"] - 1, 28, 6)
    assert raw.dtype == np.uint8
    assert (raw[:, 0, :] == 0).all()  # dense layer 0: zeros that are not expert 0
    assert len(body["prompt_token_ids"]) == usage["prompt_tokens"]
    assert len(choice["token_ids"]) == usage["completion_tokens"]


@pytest.mark.parametrize("name", ROUTED)
def test_decode_recorded_response(name: str, arch: MoEArchitecture) -> None:
    body = recorded(name)
    choice = body["choices"][0]
    trace = decode_body(body, arch)
    assert trace.source is ExpertRoutingSource.ENGINE
    assert trace.moe_layers == tuple(range(1, 28))
    assert trace.router_confidence is None  # vLLM returns ids only
    ids = trace.expert_ids
    assert ids is not None and ids.dtype == np.int16
    assert ids.shape == (trace.routed_tokens, 27, 6)
    np.testing.assert_array_equal(ids, _raw(choice)[:, 1:, :].astype(np.int16))
    # a router picks six distinct experts per token and layer
    assert (np.diff(np.sort(ids, axis=-1), axis=-1) > 0).all()
    counts = trace.expert_counts()
    assert counts.shape == (27, 64)
    assert (counts.sum(axis=1) == trace.routed_tokens * 6).all()


def _merge_stream(chunks: list[dict]) -> tuple[dict, dict]:
    """The choice and usage a streaming client ends up with."""
    choice: dict = {"index": 0, "message": {"role": "assistant", "content": ""}}
    usage: dict = {}
    for chunk in chunks:
        for c in chunk.get("choices") or []:
            choice["message"]["content"] += (c.get("delta") or {}).get("content") or ""
            for key, value in c.items():
                if key not in ("delta", "index") and value is not None:
                    choice[key] = value
        usage = chunk.get("usage") or usage
    return choice, usage


def test_streamed_response_has_no_routing_and_says_why(arch: MoEArchitecture) -> None:
    chunks = recorded("chat_streamed_chunks.json")
    assert not any("routed_experts" in json.dumps(c) for c in chunks)
    choice, usage = _merge_stream(chunks)
    trace = decode_routed_experts(
        choice,
        prompt_tokens=usage["prompt_tokens"],
        completion_tokens=usage["completion_tokens"],
        arch=arch,
    )
    assert trace.source is ExpertRoutingSource.UNAVAILABLE
    assert trace.expert_ids is None and not trace.has_routing
    assert "streaming" in (trace.reason or "")
    assert trace.moe_layers == arch.moe_layers
    assert trace.expert_counts().sum() == 0  # nothing counted as expert 0


def test_server_without_the_flag_gives_unavailable(arch: MoEArchitecture) -> None:
    body = recorded("chat_no_flag.json")
    choice = body["choices"][0]
    assert choice.get("routed_experts") is None
    trace = decode_body(body, arch)
    assert trace.source is ExpertRoutingSource.UNAVAILABLE
    assert "--enable-return-routed-experts" in (trace.reason or "")


def test_recorded_payload_with_wrong_token_count_is_rejected(arch: MoEArchitecture) -> None:
    body = recorded(ROUTED[0])
    usage = body["usage"]
    with pytest.raises(ExpertRoutingDecodeError, match="token rows"):
        decode_routed_experts(
            body["choices"][0],
            prompt_tokens=usage["prompt_tokens"] + 1,
            completion_tokens=usage["completion_tokens"],
            arch=arch,
        )


def test_truncated_payload_is_rejected(arch: MoEArchitecture) -> None:
    body = recorded(ROUTED[0])
    choice = dict(body["choices"][0])
    choice["routed_experts"] = choice["routed_experts"][:-40]
    with pytest.raises(ExpertRoutingDecodeError):
        decode_routed_experts(
            choice,
            prompt_tokens=body["usage"]["prompt_tokens"],
            completion_tokens=body["usage"]["completion_tokens"],
            arch=arch,
        )


# ---- malformed payloads of the fuzz findings' kinds (F1 ids out of range, F2 ragged lists,
# F4 empty strings): every one is an ExpertRoutingDecodeError, never pydantic/numpy/EOF errors


def _ids_payload(arch: MoEArchitecture, value: int, dtype: str) -> str:
    body = recorded(ROUTED[0])
    ids = _raw(body["choices"][0]).astype(dtype)
    ids[-1, 5, 0] = value  # one id of one MoE layer
    buffer = io.BytesIO()
    np.save(buffer, ids)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(64, "u1"), (255, "u1"), (40000, "u2"), (65535, "u2"), (-1, "i2"), (1 << 40, "i8")],
)
def test_recorded_payload_with_expert_id_out_of_range_is_a_decode_error(
    arch: MoEArchitecture, value: int, dtype: str
) -> None:
    body = recorded(ROUTED[0])
    choice = {"routed_experts": _ids_payload(arch, value, dtype)}
    with pytest.raises(ExpertRoutingDecodeError, match=r"ids must lie in \[0, 64\)"):
        decode_routed_experts(
            choice,
            prompt_tokens=body["usage"]["prompt_tokens"],
            completion_tokens=body["usage"]["completion_tokens"],
            arch=arch,
        )


@pytest.mark.parametrize(
    "payload",
    [
        "",
        [[[0, 1], [2, 3]], [0]],
        [[[0, 1]], [[2, 3], [4]]],
        [[[0, 1, 2, 3, 4, 5]] * 27, [[0, 1]] * 27],
        [[[None, 1]]],
        [[["a", "b"]]],
        [[[1 << 70]]],
    ],
)
@pytest.mark.parametrize("field", ["routed_experts", "prompt_routed_experts"])
def test_malformed_payload_is_a_decode_error(
    arch: MoEArchitecture, payload: object, field: str
) -> None:
    with pytest.raises(ExpertRoutingDecodeError, match=field):
        decode_routed_experts({field: payload}, prompt_tokens=2, completion_tokens=1, arch=arch)
