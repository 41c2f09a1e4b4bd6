"""Per-call expert counts (the vLLM plugin's ``counts`` mode) as a first-class routing trace.

A counts trace decoded from a plugin payload built from the routed-experts arrays recorded on an
H200 (``tests/fixtures/vllm_0_24``) must go through ``ModelCall`` (whose field is typed
:class:`ExpertRoutingTrace`), the telemetry store (SQLite in memory) and the skew report exactly
as the per-token ids trace of the same response does.
"""

from __future__ import annotations

import base64
import io
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pydantic
import pytest

from orchestrator import Request, RuleClassifier, TelemetryStore
from orchestrator.analysis.skew import ReportOptions, build_report
from orchestrator.core.client import ModelCall
from orchestrator.telemetry import decode_counts
from serving import vllm_plugin
from serving.architecture import MoEArchitecture
from serving.engine_capture import COUNTS_NOTE, EngineCountsTrace, decode_routed_experts
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace
from tests.fixtures.vllm_recorded import npy_b64, recorded, recorded_arch

ROUTED = ("chat_en_routed.json", "chat_zh_routed.json")
T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def arch() -> MoEArchitecture:
    return recorded_arch()


def _pair(name: str, arch: MoEArchitecture) -> tuple[ExpertRoutingTrace, ExpertRoutingTrace]:
    """(ids trace, counts trace) of one recorded response; the counts payload is what the
    plugin computes in the server from that response's routed-experts array."""
    body = recorded(name)
    usage = body["usage"]
    kwargs: dict[str, Any] = {
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "arch": arch,
    }
    choice = body["choices"][0]
    from_ids = decode_routed_experts(choice, response=body, **kwargs)
    raw = np.load(io.BytesIO(base64.b64decode(choice["routed_experts"])), allow_pickle=False)
    payload = {**choice, "routed_experts": npy_b64(vllm_plugin.expert_counts_from_ids(raw))}
    from_counts = decode_routed_experts(payload, response=body, **kwargs)
    return from_ids, from_counts


def _model_call(trace: ExpertRoutingTrace) -> ModelCall:
    return ModelCall(
        model="ernie-random-21b-a3b",
        text="recorded",
        finish_reason="stop",
        prompt_tokens=trace.prompt_tokens,
        completion_tokens=trace.completion_tokens,
        latency_ms=12.5,
        routing=trace,
    )


def _store_of(calls: list[ModelCall]) -> TelemetryStore:
    store = TelemetryStore("sqlite:///:memory:", clock=lambda: T0)
    classifier = RuleClassifier()
    for i, call in enumerate(calls):
        request = Request(id=f"req-{i}", text="Where is my parcel? Order 4711.")
        classification = classifier.classify(request)
        store.start_request(request, classification, "customer_service")
        store.record_call(
            request_id=request.id,
            classification=classification,
            workflow="customer_service",
            node=f"node_{i % 2}",
            model=call.model,
            latency_ms=call.latency_ms,
            finish_reason=call.finish_reason,
            routing=call.routing,
        )
        store.finish_request(request.id, "succeeded")
    return store


@pytest.mark.parametrize("name", ROUTED)
def test_counts_trace_is_accepted_by_model_call(name: str, arch: MoEArchitecture) -> None:
    from_ids, from_counts = _pair(name, arch)
    call = _model_call(from_counts)
    assert isinstance(call.routing, EngineCountsTrace)
    assert call.routing.source is ExpertRoutingSource.ENGINE
    assert call.routing.has_routing and not call.routing.has_token_ids
    assert call.routing.expert_ids is None  # per-token views: none
    assert np.array_equal(call.routing.expert_counts(), from_ids.expert_counts())
    assert from_ids.has_token_ids and _model_call(from_ids).routing.has_routing


def test_counts_trace_through_telemetry_and_skew_equals_the_ids_trace(
    arch: MoEArchitecture,
) -> None:
    pairs = [_pair(name, arch) for name in ROUTED]
    ids_store = _store_of([_model_call(i) for i, _ in pairs])
    counts_store = _store_of([_model_call(c) for _, c in pairs])

    ids_rows, counts_rows = ids_store.calls(), counts_store.calls()
    assert len(ids_rows) == len(counts_rows) == len(ROUTED)
    for (from_ids, _), a, b in zip(pairs, ids_rows, counts_rows, strict=True):
        assert a.expert_routing_source == b.expert_routing_source == "engine"
        assert b.routing_note == COUNTS_NOTE
        assert (a.routed_tokens, a.top_k, a.num_experts) == (b.routed_tokens, b.top_k, 64)
        assert b.expert_counts is not None
        stored = decode_counts(b)
        assert stored is not None and np.array_equal(stored, decode_counts(a))
        assert np.array_equal(stored, from_ids.expert_counts())

    options = ReportOptions(window="all", baseline="none")
    ids_report = build_report(ids_store, options)
    counts_report = build_report(counts_store, options)
    assert counts_report.overall.calls == len(ROUTED)
    assert counts_report.overall.sources == {"engine": len(ROUTED)}
    for part in ("overall", "workflows", "nodes", "fingerprints"):
        got = getattr(counts_report, part)
        want = getattr(ids_report, part)
        dump = pydantic.TypeAdapter(type(got)).dump_python
        assert dump(got) == dump(want), part
    # the skew figures are not trivially equal: the recorded routing is not uniform
    assert any(m.balancedness < 1 for m in counts_report.overall.layers)


def _counts_trace(counts: np.ndarray, **overrides: Any) -> ExpertRoutingTrace:
    fields: dict[str, Any] = {
        "source": ExpertRoutingSource.ENGINE,
        "moe_layers": (1, 2),
        "num_experts": 4,
        "top_k": 2,
        "prompt_tokens": 3,
        "completion_tokens": 1,  # 3 routed tokens x top-2 = 6 per layer
        "counts": counts,
    }
    return ExpertRoutingTrace(**(fields | overrides))


def test_base_trace_validates_counts() -> None:
    good = np.array([[4, 2, 0, 0], [1, 2, 3, 0]])
    trace = _counts_trace(good)
    assert trace.has_routing and not trace.has_token_ids
    counts = trace.expert_counts()
    assert counts.dtype == np.int64 and not counts.flags.writeable
    assert np.array_equal(counts, good)
    assert trace.top_experts(1) == [(1, 0, 4 / 6)]
    with pytest.raises(pydantic.ValidationError, match="shape"):
        _counts_trace(good[:1])
    with pytest.raises(pydantic.ValidationError, match="sum to routed tokens"):
        _counts_trace(good + 1)
    with pytest.raises(pydantic.ValidationError, match="negative"):
        _counts_trace(np.array([[7, -1, 0, 0], [6, 0, 0, 0]]))
    with pytest.raises(pydantic.ValidationError, match="integers"):
        _counts_trace(good.astype(np.float64))
    with pytest.raises(pydantic.ValidationError, match="not both"):
        _counts_trace(good, expert_ids=np.zeros((3, 2, 2), dtype=np.int16))
    with pytest.raises(pydantic.ValidationError, match="router_confidence"):
        _counts_trace(good, router_confidence=np.ones((3, 2), dtype=np.float32))
    with pytest.raises(pydantic.ValidationError, match="engine-only"):
        _counts_trace(good, source=ExpertRoutingSource.REPLAY)
    with pytest.raises(pydantic.ValidationError, match="no expert ids, counts"):
        _counts_trace(good, source=ExpertRoutingSource.UNAVAILABLE)
    with pytest.raises(pydantic.ValidationError, match=r"expert_ids \(per token\) or counts"):
        _counts_trace(None)
