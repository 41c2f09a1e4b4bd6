"""The framework's own Prometheus metrics: what the dispatcher and the gateway report, read
back through prometheus_client's own exposition and parser (what a scraper sees)."""

from __future__ import annotations

import asyncio
import urllib.request

import numpy as np
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from orchestrator.core.dispatcher import Orchestrator
from orchestrator.observability import REGISTRY, ExpertLoadWindow, start_metrics_server
from orchestrator.observability import metrics as m
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows import default_workflows


def _value(name: str, **labels: str) -> float:
    """A sample's value as a scraper reads it (0 when the series does not exist yet)."""
    text = generate_latest(REGISTRY).decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def test_requests_confidence_latency_and_tokens_are_counted_through_the_dispatcher(
    tmp_path,
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path}/t.db")
    orch = Orchestrator(ScriptedModel(), store, default_workflows())
    texts = ["I was charged twice for my order 12345, please refund", "你好，我的订单还没到，退款"]
    before = {
        "req": _value("orchestrator_requests_total", route="customer_service", status="succeeded"),
        "conf": _value("orchestrator_classifier_confidence_count", route="customer_service"),
        "lat": _value("orchestrator_workflow_latency_seconds_count", workflow="customer_service"),
    }

    outcomes = [asyncio.run(orch.handle(Request(text=t))) for t in texts]
    store.close()
    cs = [o for o in outcomes if o.classification.route == "customer_service"]
    ok = [o for o in cs if o.status == "succeeded"]
    assert cs, "the texts should route to customer service"
    assert _value(
        "orchestrator_requests_total", route="customer_service", status="succeeded"
    ) - before["req"] == len(ok)
    assert _value("orchestrator_classifier_confidence_count", route="customer_service") - before[
        "conf"
    ] == len(cs)
    assert _value(
        "orchestrator_workflow_latency_seconds_count", workflow="customer_service"
    ) - before["lat"] == len(cs)
    calls = [c for o in outcomes for c in o.calls]
    assert calls
    node = calls[0].node
    assert _value("orchestrator_tokens_total", node=node, kind="prompt") >= sum(
        c.prompt_tokens for c in calls if c.node == node
    )
    assert _value("orchestrator_model_call_latency_seconds_count", node=node) >= sum(
        1 for c in calls if c.node == node
    )


def test_a_stream_is_counted_once(tmp_path) -> None:

    store = TelemetryStore(f"sqlite:///{tmp_path}/t.db")
    orch = Orchestrator(ScriptedModel(), store, default_workflows())
    text = "hello"  # too vague: the fallback route, which stream() hands to handle()
    total = sum(
        s.value
        for f in text_string_to_metric_families(generate_latest(REGISTRY).decode())
        for s in f.samples
        if s.name == "orchestrator_requests_total"
    )

    async def run() -> list[object]:
        return [event async for event in orch.stream(Request(text=text))]

    events = asyncio.run(run())
    store.close()
    done = events[-1]
    after = sum(
        s.value
        for f in text_string_to_metric_families(generate_latest(REGISTRY).decode())
        for s in f.samples
        if s.name == "orchestrator_requests_total"
    )
    assert after - total == 1
    route = events[0].route  # type: ignore[attr-defined]
    assert _value("orchestrator_requests_total", route=route, status=done.status) >= 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_expert_window_publishes_per_layer_shares_and_forgets_old_calls(seed: int) -> None:
    rng = np.random.default_rng(seed)
    now = [0.0]
    window = ExpertLoadWindow(window_s=60, clock=lambda: now[0])
    layers = (1, 2, 3)
    old = rng.integers(0, 50, size=(3, 8))
    window.add(layers, old)
    now[0] = 30.0
    recent = rng.integers(0, 50, size=(3, 8))
    window.add(layers, recent)
    both = old + recent
    for i, layer in enumerate(layers):
        np.testing.assert_allclose(window.shares()[layer], both[i] / both[i].sum())
    now[0] = 61.0  # the first call is now older than the window
    window.refresh()
    for i, layer in enumerate(layers):
        want = recent[i] / recent[i].sum()
        np.testing.assert_allclose(window.shares()[layer], want)
        for expert in (0, 7):
            assert _value(
                "orchestrator_expert_load_share", layer=str(layer), expert=str(expert)
            ) == pytest.approx(want[expert])
    assert _value("orchestrator_expert_window_calls") == 1


def test_the_window_refuses_counts_of_the_wrong_shape() -> None:
    window = ExpertLoadWindow(window_s=1)
    with pytest.raises(ValueError, match="2 rows"):
        window.add((1, 2), np.zeros((3, 4)))
    with pytest.raises(ValueError, match="negative"):
        window.add((1,), np.array([[1, -1]]))
    with pytest.raises(ValueError, match="window_s"):
        ExpertLoadWindow(window_s=0)


def test_handoffs_waiting_reads_its_source_at_each_scrape() -> None:
    waiting = [3]
    m.set_handoffs_waiting(lambda: waiting[0])
    assert _value("orchestrator_handoffs_waiting") == 3
    waiting[0] = 1
    assert _value("orchestrator_handoffs_waiting") == 1
    m.set_handoffs_waiting(0)


def test_the_metrics_endpoint_serves_the_registry(unused_tcp_port: int) -> None:
    start_metrics_server(unused_tcp_port)
    body = urllib.request.urlopen(f"http://127.0.0.1:{unused_tcp_port}/metrics", timeout=5)
    text = body.read().decode()
    names = {f.name for f in text_string_to_metric_families(text)}
    assert {"orchestrator_requests", "orchestrator_expert_load_share"} <= names
    with pytest.raises(ValueError, match=r"1\.\.65535"):
        start_metrics_server(0)
