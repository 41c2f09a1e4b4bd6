"""Sampled engine capture: one draw per call, ``none`` for calls left out, the rate on every
trace, and what the telemetry stores for each kind of call."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import numpy as np
import pytest

from orchestrator import TelemetryStore
from serving import ExpertRoutingSource, MoEArchitecture
from serving.capture import CallTokens, EngineCapture
from serving.engine_capture import encode_routed_experts
from serving.vllm_plugin import phase_expert_counts
from tests.fixtures.vllm_recorded import recorded_arch
from tests.unit.skew_data import add_request


@pytest.fixture(scope="module")
def arch() -> MoEArchitecture:
    return recorded_arch()


def _ids(arch: MoEArchitecture, tokens: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ids = np.argsort(rng.random((tokens, arch.num_hidden_layers, arch.num_experts)), axis=2)
    ids = ids[:, :, : arch.top_k].astype(np.uint8)
    ids[:, [i for i in range(arch.num_hidden_layers) if i not in arch.moe_layers], :] = 0
    return ids


async def _call(
    capture: EngineCapture, arch: MoEArchitecture, seed: int
) -> tuple[str, object, np.ndarray]:
    """One call as the client makes it: fields, then the server's answer, then the capture."""
    mode = capture.request_fields()["vllm_xargs"]["routed_experts"]
    await asyncio.sleep(0)  # other calls run in between
    ids = _ids(arch, 12, seed)
    payload = None if mode == "none" else encode_routed_experts(phase_expert_counts(ids, 8))
    trace = await capture.capture(
        CallTokens(
            response={},
            choice={"routed_experts": payload},
            prompt_ids=[],
            completion_ids=[],
            prompt_tokens=8,
            completion_tokens=5,
        )
    )
    return mode, trace, ids


def test_every_call_is_captured_at_rate_1(arch: MoEArchitecture) -> None:
    capture = EngineCapture(arch)
    assert not capture.per_call
    mode, trace, _ = asyncio.run(_call(capture, arch, 0))
    assert mode == "phase_counts" and trace.source is ExpertRoutingSource.ENGINE
    assert trace.capture_sampling_rate == 1.0
    assert trace.expert_counts().sum() == 12 * arch.top_k * len(arch.moe_layers)
    prefill, decode = trace.phase_counts()  # the default keeps prefill and decode apart
    assert prefill.sum() == 8 * arch.top_k * len(arch.moe_layers)
    assert decode.sum() == 4 * arch.top_k * len(arch.moe_layers)


@pytest.mark.parametrize("rate", [0.25, 0.6])
def test_draws_follow_the_rate_and_each_call_keeps_its_own_draw(
    arch: MoEArchitecture, rate: float
) -> None:
    capture = EngineCapture(arch, sample_rate=rate, seed=7)
    assert capture.per_call

    async def many() -> list[tuple[str, object, np.ndarray]]:
        return await asyncio.gather(*(_call(capture, arch, i) for i in range(400)))

    results = asyncio.run(many())
    sampled = [r for r in results if r[0] == "phase_counts"]
    # binomial(400, rate): 5 standard deviations
    assert abs(len(sampled) - 400 * rate) < 5 * math.sqrt(400 * rate * (1 - rate))
    for mode, trace, _ in results:
        assert trace.capture_sampling_rate == rate
        if mode == "none":
            assert trace.source is ExpertRoutingSource.UNAVAILABLE
            assert "not in the expert-capture sample" in (trace.reason or "")
            assert not trace.has_routing
        else:
            assert trace.source is ExpertRoutingSource.ENGINE and trace.has_routing


def test_the_same_seed_gives_the_same_sample(arch: MoEArchitecture) -> None:
    draws = []
    for _ in range(2):
        capture = EngineCapture(arch, sample_rate=0.3, seed=11)
        draws.append([capture.request_fields()["vllm_xargs"]["routed_experts"] for _ in range(50)])
    assert draws[0] == draws[1] and {"phase_counts", "none"} == set(draws[0])


@pytest.mark.parametrize("rate", [0.0, -0.1, 1.01, math.nan])
def test_a_rate_outside_0_1_is_refused(arch: MoEArchitecture, rate: float) -> None:
    with pytest.raises(ValueError, match=r"sample_rate must be in \(0, 1\]"):
        EngineCapture(arch, sample_rate=rate)


def test_the_store_keeps_the_rate_of_sampled_and_unsampled_calls(
    arch: MoEArchitecture, tmp_path: Path
) -> None:
    capture = EngineCapture(arch, sample_rate=0.5, seed=3)

    async def both() -> list[tuple[str, object, np.ndarray]]:
        out: list[tuple[str, object, np.ndarray]] = []
        seed = 0
        while {m for m, _, _ in out} != {"phase_counts", "none"}:
            out.append(await _call(capture, arch, seed))
            seed += 1
        return out

    results = asyncio.run(both())
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    calls = [("n", trace) for _, trace, _ in results]
    add_request(store, "where is my parcel", "cs", calls)  # type: ignore[arg-type]
    rows = store.calls()
    assert {r.capture_sampling_rate for r in rows} == {0.5}
    kept = [r for r in rows if r.expert_routing_source == "engine"]
    left = [r for r in rows if r.expert_routing_source == "unavailable"]
    assert kept and left and all(r.expert_counts is None for r in left)
    assert {r.capture_sampling_rate for r in store.iter_rollups()} == {0.5}
    store.close()
