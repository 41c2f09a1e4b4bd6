"""The GPU benchmarks' sampled capture (per-request routed-experts encoding) and the orch
phase's split of a load over client processes."""

from __future__ import annotations

from benchmarks.gpu.capture19 import MODES, SAMPLE_RATE
from benchmarks.gpu.load import SAMPLE_KEY, request_extra
from benchmarks.gpu.orch import _merge, _shares, default_procs


def test_sampled_extra_draws_counts_on_the_rate_and_none_elsewhere() -> None:
    extra = MODES["sampled"][1]
    assert extra is not None and SAMPLE_KEY in extra
    modes = [request_extra(extra, i)["vllm_xargs"]["routed_experts"] for i in range(8000)]
    assert set(modes) == {"counts", "none"}
    share = modes.count("counts") / len(modes)
    assert abs(share - SAMPLE_RATE) < 0.02
    # the same request gets the same draw in every repetition and process
    assert modes[:50] == [
        request_extra(extra, i)["vllm_xargs"]["routed_experts"] for i in range(50)
    ]
    # independent of position parity (a content-independent draw, not every 4th request)
    evens = modes[0::2].count("counts") / len(modes[0::2])
    assert abs(evens - SAMPLE_RATE) < 0.03
    plain = {"vllm_xargs": {"routed_experts": "counts"}}
    assert request_extra(plain, 3) is plain
    assert request_extra(None, 3) is None


def test_orch_split_over_processes() -> None:
    assert default_procs(128) == 8 and default_procs(16) == 1 and default_procs(17) == 2
    assert _shares(128, 8) == [16] * 8
    assert _shares(10, 3) == [4, 3, 3] and sum(_shares(130, 8)) == 130
    parts = [
        {
            "t_start": 10.0,
            "t_end": 14.0,
            "requests": 4,
            "output_tokens": 40,
            "cpu_s": 0.2,
            "model_calls": 9,
            "statuses": {"succeeded": 3, "needs_human": 1},
        },
        {
            "t_start": 11.0,
            "t_end": 15.0,
            "requests": 4,
            "output_tokens": 60,
            "cpu_s": 0.6,
            "model_calls": 10,
            "statuses": {"succeeded": 4},
        },
    ]
    merged = _merge(parts, 2)
    assert merged["wall_s"] == 5.0  # first start to last finish
    assert merged["requests"] == 8 and merged["requests_s"] == 1.6
    assert merged["output_tok_s"] == 20.0 and merged["model_calls"] == 19
    assert merged["client_cpu_ms_per_request"] == 100.0  # (0.2 + 0.6) s / 8 requests
    assert merged["statuses"] == {"succeeded": 7, "needs_human": 1}
    assert merged["client_processes"] == 2
