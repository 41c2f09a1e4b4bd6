"""VLLMClient against recorded vLLM 0.24 response bodies, replayed through httpx.MockTransport.

No server and no patched SDK internals: the client is built with an injected
``httpx.AsyncClient`` whose transport answers from ``tests/fixtures/vllm_0_24/*.json`` (real
bodies, see ``test_engine_capture_recorded.py``) and records every request it is sent.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from orchestrator.core import client as client_module
from orchestrator.core.client import (
    ChatMessage,
    ChatOptions,
    ModelClient,
    ModelRequestsBlockedError,
    VLLMClient,
)
from orchestrator.exceptions import ModelCallError, ServerUnavailableError
from orchestrator.testing import ScriptedModel
from serving.architecture import MoEArchitecture
from serving.capture import EngineCapture, NoCapture
from serving.expert_routing import ExpertRoutingSource
from tests.fixtures.vllm_recorded import decode_body, recorded, recorded_arch

BASE_URL = "http://vllm.test/v1"
SCHEMA = {"type": "object", "properties": {"a": {"enum": ["x"]}}, "required": ["a"]}
HI = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]


@pytest.fixture(scope="module")
def arch() -> MoEArchitecture:
    """The recorded server's checkpoint shape (28 layers, 64 experts, top-6)."""
    return recorded_arch()


Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler that answers with ``respond`` and keeps every request."""

    def __init__(self, respond: Handler) -> None:
        self.respond = respond
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.respond(request)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.content]


def _client(
    respond: Handler, capture: Any, **options: Any
) -> tuple[VLLMClient, Recorder, httpx.AsyncClient]:
    recorder = Recorder(respond)
    http = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    options.setdefault("max_retries", 0)
    client = VLLMClient(BASE_URL, "ernie", capture, http_client=http, **options)
    return client, recorder, http


def _answer(body: dict[str, Any]) -> Handler:
    return lambda request: httpx.Response(200, json=body)


async def test_routed_experts_body_is_decoded_into_an_engine_trace(arch) -> None:
    body = recorded("chat_en_routed.json")
    client, recorder, _ = _client(_answer(body), EngineCapture(arch))

    call = await client.chat(HI, ChatOptions(max_tokens=4))

    choice, usage = body["choices"][0], body["usage"]
    assert call.text == choice["message"]["content"]
    assert call.finish_reason == choice["finish_reason"] == "length"
    assert (call.prompt_tokens, call.completion_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    )
    assert call.model == "ernie" and call.latency_ms >= 0
    trace = call.routing
    assert trace.source is ExpertRoutingSource.ENGINE
    assert trace.moe_layers == arch.moe_layers
    expected = decode_body(body, arch)
    assert trace.expert_ids is not None and expected.expert_ids is not None
    np.testing.assert_array_equal(trace.expert_ids, expected.expert_ids)
    counts = trace.expert_counts()
    assert counts.shape == (len(arch.moe_layers), arch.num_experts)
    routed = usage["prompt_tokens"] + usage["completion_tokens"] - 1
    assert (counts.sum(axis=1) == routed * arch.top_k).all()
    assert [r.url.path for r in recorder.requests] == ["/v1/chat/completions"]


async def test_a_body_without_routed_experts_is_not_passed_off_as_engine_routing(arch) -> None:
    client, _, _ = _client(_answer(recorded("chat_no_flag.json")), NoCapture(arch))
    call = await client.chat(HI, ChatOptions(max_tokens=4))
    assert call.routing.source is ExpertRoutingSource.UNAVAILABLE
    assert call.routing.expert_ids is None


async def test_request_body_carries_messages_limits_schema_and_token_ids(arch) -> None:
    client, recorder, _ = _client(
        _answer(recorded("chat_no_flag.json")), NoCapture(arch), temperature=0.3
    )
    await client.chat(HI, ChatOptions(max_tokens=7, json_schema=SCHEMA))
    await client.chat(HI, ChatOptions(max_tokens=5, temperature=0.0))

    schema_call, free_call = recorder.bodies
    assert schema_call == {
        "model": "ernie",
        "messages": [m.model_dump() for m in HI],
        "max_tokens": 7,
        "temperature": 0.3,  # the client's default
        "return_token_ids": True,  # the CPU replay needs the server's token ids
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": SCHEMA, "strict": True},
        },
    }
    assert free_call["temperature"] == 0.0 and free_call["max_tokens"] == 5
    assert "response_format" not in free_call
    assert all(r.method == "POST" for r in recorder.requests)


def _empty_500(request: httpx.Request) -> httpx.Response:
    """What a vLLM 0.24.0 GPU build answered to every structured-output request."""
    return httpx.Response(500, json={"error": {"message": ""}})


async def test_a_500_on_a_schema_request_names_the_structured_output_switch(arch) -> None:
    client, recorder, _ = _client(_empty_500, NoCapture(arch))
    with pytest.raises(ModelCallError, match="ORCH_STRUCTURED_OUTPUT=false") as info:
        await client.chat(HI, ChatOptions(max_tokens=4, json_schema=SCHEMA))
    assert "HTTP 500" in str(info.value) and BASE_URL in str(info.value)
    assert recorder.bodies[0]["response_format"]["json_schema"]["schema"] == SCHEMA


async def test_structured_output_off_sends_no_response_format(arch) -> None:
    client, recorder, _ = _client(_empty_500, NoCapture(arch), structured_output=False)
    with pytest.raises(ModelCallError) as info:
        await client.chat(HI, ChatOptions(max_tokens=4, json_schema=SCHEMA))
    assert "response_format" not in recorder.bodies[0]
    assert "ORCH_STRUCTURED_OUTPUT" not in str(info.value)  # no schema was asked for


async def test_structured_output_off_still_returns_the_text(arch) -> None:
    body = recorded("chat_no_flag.json")
    client, recorder, _ = _client(_answer(body), NoCapture(arch), structured_output=False)
    call = await client.chat(HI, ChatOptions(max_tokens=4, json_schema=SCHEMA))
    assert call.text == body["choices"][0]["message"]["content"]
    assert "response_format" not in recorder.bodies[0]


async def test_connection_refused_is_server_unavailable(arch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    client, recorder, _ = _client(refuse, NoCapture(arch))
    with pytest.raises(ServerUnavailableError, match="Connection refused") as info:
        await client.chat(HI, ChatOptions(max_tokens=4))
    assert info.value.url == BASE_URL
    assert "ORCH_SERVER_URL" in str(info.value)
    with pytest.raises(ServerUnavailableError):
        await client.check()
    assert len(recorder.requests) == 2  # max_retries=0: one attempt each


async def test_retries_follow_max_retries(arch) -> None:
    client, recorder, _ = _client(_empty_500, NoCapture(arch), max_retries=1)
    with pytest.raises(ModelCallError):
        await client.chat(HI, ChatOptions(max_tokens=4))
    assert len(recorder.requests) == 2


async def test_a_malformed_body_is_a_model_call_error(arch) -> None:
    body = recorded("chat_no_flag.json")
    body["choices"] = []
    client, _, _ = _client(_answer(body), NoCapture(arch))
    with pytest.raises(ModelCallError, match="malformed response"):
        await client.chat(HI, ChatOptions(max_tokens=4))


def _models(*ids: str) -> Handler:
    data = [{"id": i, "object": "model", "owned_by": "vllm", "root": i} for i in ids]
    return lambda request: httpx.Response(200, json={"object": "list", "data": data})


async def test_check_lists_the_served_models(arch) -> None:
    client, recorder, _ = _client(_models("ernie", "other"), NoCapture(arch))
    models = await client.check()
    assert [m["id"] for m in models] == ["ernie", "other"]
    assert [(r.method, r.url.path) for r in recorder.requests] == [("GET", "/v1/models")]


async def test_check_names_the_model_the_server_does_not_serve(arch) -> None:
    client, _, _ = _client(_models("qwen"), NoCapture(arch))
    with pytest.raises(ModelCallError, match="ORCH_SERVED_MODEL_NAME") as info:
        await client.check()
    assert "qwen" in str(info.value) and "'ernie'" in str(info.value)


async def test_aclose_closes_the_injected_http_client(arch) -> None:
    client, _, http = _client(_models("ernie"), NoCapture(arch))
    assert not http.is_closed
    await client.aclose()
    assert http.is_closed


def test_vllm_client_and_scripted_model_satisfy_the_model_client_protocol(arch) -> None:
    real = VLLMClient(BASE_URL, "ernie", NoCapture(arch))
    scripted = ScriptedModel()
    assert isinstance(real, ModelClient)
    assert isinstance(scripted, ModelClient)
    assert not isinstance(object(), ModelClient)
    # static checks too: a type checker rejects these lines if either stops fitting
    as_protocol: list[ModelClient] = [real, scripted]
    assert len(as_protocol) == 2


# ---- real requests are blocked in the unit suite (tests/unit/conftest.py) --------------------


@pytest.fixture
def listening_port() -> Iterator[tuple[int, socket.socket]]:
    """A local TCP port that accepts connections, to prove none is ever made."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        yield server.getsockname()[1], server


def _accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def test_the_unit_suite_switches_real_requests_off() -> None:
    assert client_module.ALLOW_MODEL_REQUESTS is False


def _unanswered_client(port: int, arch: MoEArchitecture) -> VLLMClient:
    """A client of the loopback ``port`` (which accepts but never answers): no retry, 0.5 s."""
    return VLLMClient(
        f"http://127.0.0.1:{port}/v1", "ernie", NoCapture(arch), max_retries=0, timeout_s=0.5
    )


async def test_a_real_request_from_a_unit_test_fails_before_reaching_the_server(
    arch, listening_port
) -> None:
    port, server = listening_port
    client = _unanswered_client(port, arch)
    with pytest.raises(ModelRequestsBlockedError, match="tests/integration"):
        await client.chat(HI, ChatOptions(max_tokens=4))
    with pytest.raises(ModelRequestsBlockedError, match="MockTransport"):
        await client.check()
    assert not _accepted(server)  # nothing was sent
    await client.aclose()


async def test_with_requests_allowed_the_same_client_does_reach_the_server(
    arch, listening_port
) -> None:
    """The control of the test above: the switch, not the port, stops the request."""
    port, server = listening_port
    client = _unanswered_client(port, arch)
    with client_module.override_allow_model_requests(True), pytest.raises(ServerUnavailableError):
        await client.chat(
            HI, ChatOptions(max_tokens=4)
        )  # the port accepts but never answers: a timeout
    assert _accepted(server)
    await client.aclose()
    assert client_module.ALLOW_MODEL_REQUESTS is False  # restored after the block


async def test_an_engine_capture_asks_the_server_for_its_routed_experts_encoding(arch) -> None:
    body = recorded("chat_en_routed.json")
    for capture, want in (
        # the default: per-call counts, prefill and decode apart (issue 51)
        (EngineCapture(arch), {"routed_experts": "phase_counts"}),
        (EngineCapture(arch, encoding="counts"), {"routed_experts": "counts"}),  # combined
        (EngineCapture(arch, encoding="ids"), {"routed_experts": "ids"}),  # per-token views
        (NoCapture(arch), None),  # no engine capture: nothing vLLM-plugin specific is sent
    ):
        client, recorder, _ = _client(_answer(body), capture)
        await client.chat(HI, ChatOptions(max_tokens=4))
        sent = recorder.bodies[0]
        assert sent.get("vllm_xargs") == want
        assert sent["return_token_ids"] is True
    with pytest.raises(ValueError, match="'counts' for them summed"):
        EngineCapture(arch, encoding="count")


async def test_a_body_that_is_not_json_is_a_model_call_error(arch) -> None:
    def respond(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"<html>proxy error</html>")

    client, _, _ = _client(respond, EngineCapture(arch))
    with pytest.raises(ModelCallError, match="malformed response"):
        await client.chat(HI, ChatOptions(max_tokens=4))


async def test_a_shared_bound_holds_model_calls_in_flight_over_several_clients(arch) -> None:
    """Two clients sharing one semaphore of 2: six concurrent calls, never more than 2 on the
    wire (the batch runner's --concurrency over every endpoint)."""
    body = recorded("chat_en_routed.json")
    in_flight, peak = 0, 0

    async def respond(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.2)
        in_flight -= 1
        return httpx.Response(200, json=body)

    shared = asyncio.Semaphore(2)
    clients = []
    for _ in range(2):
        http = httpx.AsyncClient(transport=httpx.MockTransport(respond))
        client = VLLMClient(BASE_URL, "ernie", NoCapture(arch), http_client=http, max_retries=0)
        client.limit_in_flight(shared)
        clients.append(client)

    calls = await asyncio.gather(
        *(clients[i % 2].chat(HI, ChatOptions(max_tokens=4)) for i in range(6))
    )

    assert len(calls) == 6 and peak == 2
    # latency counts from the slot, not from the wait for it: the third wave of calls would
    # read about 600 ms if it counted its wait
    assert max(c.latency_ms for c in calls) < 500
    clients[0].limit_in_flight(None)
    in_flight = peak = 0
    await asyncio.gather(*(clients[0].chat(HI, ChatOptions(max_tokens=4)) for _ in range(4)))
    assert peak == 4  # no bound once removed
    for client in clients:
        await client.aclose()


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": {"message": "max_tokens is too large", "code": 400}}),
        (503, {"error": {"message": "模型正在加载", "code": 503}}),
    ],
)
async def test_an_error_status_keeps_its_code_and_body_through_the_gateway(
    arch, tmp_path: Path, status: int, body: dict[str, Any]
) -> None:
    from orchestrator.classifier import RuleClassifier
    from orchestrator.core.gateway import ModelGateway
    from orchestrator.request import Request
    from orchestrator.telemetry import TelemetryStore

    client, _, _ = _client(lambda request: httpx.Response(status, json=body), NoCapture(arch))
    with pytest.raises(ModelCallError) as direct:
        await client.chat(HI, ChatOptions(max_tokens=4))
    assert direct.value.status_code == status
    assert direct.value.body == body["error"]
    assert direct.value.request_id is None and direct.value.node is None

    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    request = Request(text="where is my order")
    classification = RuleClassifier().classify(request)
    await store.astart_request(request, classification, "test")
    gateway = ModelGateway(
        client, store, request_id=request.id, classification=classification, workflow="test"
    )
    with pytest.raises(ModelCallError) as via_gateway:
        await gateway.chat("draft_reply", HI)
    error = via_gateway.value
    assert (error.status_code, error.body) == (status, body["error"])
    assert (error.request_id, error.node) == (request.id, "draft_reply")
    assert str(error).endswith(f"(request {request.id}, node draft_reply)")
    assert f"HTTP {status}" in str(error)
    store.close()


def test_naming_the_call_keeps_what_was_named_first() -> None:
    error = ModelCallError("boom", request_id="r1", status_code=500, body="down")
    assert error.at(request_id="r2", node="n") is error
    assert (error.request_id, error.node, error.status_code) == ("r1", "n", 500)
    assert str(error) == "boom (request r1, node n)"
