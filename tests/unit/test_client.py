"""VLLMClient's request shaping and error messages, with the SDK call replaced by a stub."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from orchestrator.core.client import ChatMessage, VLLMClient
from orchestrator.exceptions import ModelCallError
from serving.architecture import MoEArchitecture
from serving.capture import NoCapture

ARCH = MoEArchitecture(
    model_type="ernie4_5_moe",
    num_hidden_layers=2,
    moe_layers=(1,),
    num_experts=8,
    top_k=2,
    num_shared_experts=0,
)

SCHEMA = {"type": "object", "properties": {"a": {"enum": ["x"]}}, "required": ["a"]}


def _client(structured_output: bool, answer: Any) -> tuple[VLLMClient, list[dict[str, Any]]]:
    client = VLLMClient(
        "http://127.0.0.1:9/v1", "ernie", NoCapture(ARCH), structured_output=structured_output
    )
    sent: list[dict[str, Any]] = []

    async def create(**kwargs: Any) -> Any:
        sent.append(kwargs)
        raise answer

    client._client.chat.completions.create = create  # type: ignore[method-assign]
    return client, sent


def _server_error() -> openai.InternalServerError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(500, request=request, json={"error": {"message": ""}})
    return openai.InternalServerError("", response=response, body=None)


async def test_a_500_on_a_schema_request_names_the_structured_output_switch() -> None:
    client, sent = _client(True, _server_error())
    with pytest.raises(ModelCallError, match="ORCH_STRUCTURED_OUTPUT=false"):
        await client.chat(
            [ChatMessage(role="user", content="hi")], max_tokens=4, json_schema=SCHEMA
        )
    assert sent[0]["response_format"]["json_schema"]["schema"] == SCHEMA


async def test_structured_output_off_sends_no_response_format() -> None:
    client, sent = _client(False, _server_error())
    with pytest.raises(ModelCallError) as info:
        await client.chat(
            [ChatMessage(role="user", content="hi")], max_tokens=4, json_schema=SCHEMA
        )
    assert "response_format" not in sent[0]
    assert "ORCH_STRUCTURED_OUTPUT" not in str(info.value)  # no schema was asked for
