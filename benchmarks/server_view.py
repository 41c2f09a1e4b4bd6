"""The server's own view of a benchmark phase: vLLM's ``/metrics`` counters read before and
after it (:func:`server_counters`), and what they say the server did in between
(:func:`server_view`): its time per request, the engine steps and the tokens each carried, and
how many requests it worked on at once."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

from orchestrator.observability.health import metrics_url

#: vLLM's counters that say what the server did in a phase (Prometheus names, summed over
#: engines): its time per request, engine steps and the tokens they carried.
SERVER_COUNTERS = (
    "vllm:e2e_request_latency_seconds_sum",
    "vllm:e2e_request_latency_seconds_count",
    "vllm:iteration_tokens_total_sum",
    "vllm:iteration_tokens_total_count",
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:prefix_cache_hits_total",
)


def server_counters(server_url: str) -> dict[str, float] | None:
    """The :data:`SERVER_COUNTERS` now, from the server's ``/metrics`` (parsed with
    ``prometheus_client``); None when it cannot be read (the phase then has no server view)."""
    try:
        text = httpx.get(metrics_url(server_url), timeout=5).text
        found: dict[str, float] = dict.fromkeys(SERVER_COUNTERS, 0.0)
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name in found:
                    found[sample.name] += sample.value
    except (httpx.HTTPError, ValueError):
        return None
    return found


def server_view(
    before: dict[str, float] | None, after: dict[str, float] | None, wall_s: float
) -> dict[str, float] | None:
    """What the server did between two :func:`server_counters` readings over ``wall_s``:
    ``requests``, ``e2e_s_per_request`` (its time per request, s), ``concurrency`` (the sum
    of its request times over the wall time: requests it worked on at once), ``steps`` and
    ``tokens_per_step`` (engine iterations and the tokens each carried), generated and
    prompt tokens, prefix-cache hits. None without both readings or with no request."""
    if before is None or after is None or wall_s <= 0:
        return None
    d = {k: after[k] - before[k] for k in SERVER_COUNTERS}
    requests = d["vllm:e2e_request_latency_seconds_count"]
    if requests <= 0:
        return None
    steps = d["vllm:iteration_tokens_total_count"]
    return {
        "requests": int(requests),
        "e2e_s_per_request": round(d["vllm:e2e_request_latency_seconds_sum"] / requests, 3),
        "concurrency": round(d["vllm:e2e_request_latency_seconds_sum"] / wall_s, 2),
        "steps": int(steps),
        "tokens_per_step": round(d["vllm:iteration_tokens_total_sum"] / steps, 1) if steps else 0,
        "generation_tokens": int(d["vllm:generation_tokens_total"]),
        "prompt_tokens": int(d["vllm:prompt_tokens_total"]),
        "prefix_cache_hits": int(d["vllm:prefix_cache_hits_total"]),
    }
