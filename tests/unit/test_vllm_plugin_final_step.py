"""The plugin's engine-core side keeps the last step's routing of a request that finishes.

vLLM 0.24.0's ``Scheduler.update_from_output`` frees a request that stops in this step
(``_free_request`` -> ``_free_blocks`` deletes it from ``self.requests``) before it builds that
request's last ``EngineCoreOutput``. Found on the H100 (benchmarks/results/gpu_2026-12-05b.md):
with the server default ``none`` (per-request opt-in), every ``counts`` call came back one step
short, ``P + C - 2`` routed tokens instead of ``P + C - 1``, and a call of one output token
came back with no routing at all. The stand-in below builds its outputs in that order.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from serving import vllm_plugin
from serving.engine_capture import counts_trace
from tests.unit.vllm_standins import EngineCoreOutput as _EngineCoreOutput
from tests.unit.vllm_standins import Params as _Params


@dataclass
class _Request:
    request_id: str
    sampling_params: _Params
    max_tokens: int
    output: list[int] = field(default_factory=list)


def _module() -> types.ModuleType:
    module = types.ModuleType("fake_vllm_scheduler_final_step")

    class Scheduler:
        def __init__(self) -> None:
            self.requests: dict[str, _Request] = {}

        def update_from_output(self, rows: dict[str, np.ndarray]) -> list[Any]:
            outputs = []
            for rid, step_rows in rows.items():
                request = self.requests[rid]
                request.output.append(7)
                stopped = len(request.output) >= request.max_tokens
                if stopped:  # as vLLM 0.24.0: freed before its output is built
                    del self.requests[rid]
                outputs.append(
                    module.EngineCoreOutput(
                        request_id=rid,
                        new_token_ids=[7],
                        routed_experts=step_rows,
                        finish_reason="length" if stopped else None,
                    )
                )
            return outputs

    module.Scheduler = Scheduler
    module.EngineCoreOutput = _EngineCoreOutput
    return module


LAYERS, TOP_K, EXPERTS = 4, 2, 8


def _serve(mode: str, prompt: int, max_tokens: int, default: str) -> list[np.ndarray]:
    """The routing chunks one request's outputs carry: its prefill step (``prompt`` rows),
    then one row per decode step, as the scheduler hands them to the API process."""
    module = _module()
    assert vllm_plugin.patch_scheduler(module, default=default)
    sched = module.Scheduler()
    sched.requests["r"] = _Request("r", _Params({"routed_experts": mode}), max_tokens)
    rng = np.random.default_rng(0)
    chunks = []
    for step in range(max_tokens):
        n = prompt if step == 0 else 1
        ids = np.argsort(rng.random((n, LAYERS, EXPERTS)), axis=2)[:, :, :TOP_K]
        (out,) = sched.update_from_output({"r": ids.astype(np.uint8)})
        if out.routed_experts is not None:
            chunks.append(out.routed_experts)
    return chunks


@pytest.mark.parametrize("default", ["none", "counts", "ids"])
@pytest.mark.parametrize("max_tokens", [1, 2, 32])
def test_a_counts_request_keeps_every_step_whatever_the_server_default(
    default: str, max_tokens: int
) -> None:
    chunks = _serve("counts", prompt=12, max_tokens=max_tokens, default=default)
    routed = sum(len(c) for c in chunks)
    assert routed == 12 + max_tokens - 1  # every token but the last sampled one


def test_the_counts_sum_to_prompt_plus_completion_minus_one_for_the_client() -> None:
    """End to end with the client's strict check (serving.engine_capture.counts_trace)."""
    from serving.architecture import MoEArchitecture

    arch = MoEArchitecture.from_config(
        {
            "model_type": "mixtral",
            "architectures": ["MixtralForCausalLM"],
            "num_hidden_layers": LAYERS,
            "num_local_experts": EXPERTS,
            "num_experts_per_tok": TOP_K,
        }
    )
    ids = np.concatenate(_serve("counts", prompt=12, max_tokens=5, default="none"))
    trace = counts_trace(
        vllm_plugin.compact_expert_counts(ids), prompt_tokens=12, completion_tokens=5, arch=arch
    )
    assert trace.counts.sum(axis=1).tolist() == [(12 + 5 - 1) * TOP_K] * LAYERS


def test_a_none_request_still_loses_its_rows_while_it_runs() -> None:
    chunks = _serve("none", prompt=12, max_tokens=32, default="counts")
    # only the step it finishes in is sent on (its mode is unknown once freed); the API-side
    # wrapper drops that too
    assert sum(len(c) for c in chunks) == 1
