"""One structured-output call on the gateway, and what each skill sends through it.

The skills' request bodies (messages, schema, max_tokens, temperature) are what a real server
gets, so they are pinned here through :class:`ScriptedModel`'s request record and, for the
HTTP body itself, through a VLLMClient on an ``httpx.MockTransport``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from orchestrator.classifier import RuleClassifier
from orchestrator.core.client import ChatMessage, ModelRequestsBlockedError, VLLMClient
from orchestrator.core.gateway import ModelGateway
from orchestrator.core.structured import StructuredAnswer, output_schema, parse_output
from orchestrator.exceptions import ModelCallError
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import SCRIPTED_ARCH, ScriptedModel
from serving.capture import NoCapture
from skills import IssueTriage, assess_risk, draft_reply, interpret_data, triage_issue
from skills.assess_risk import SYSTEM as RISK_SYSTEM
from skills.assess_risk import risk_schema
from skills.interpret_data import SYSTEM as INTERPRET_SYSTEM
from skills.interpret_data import interpretation_schema
from skills.prompting import delimit
from skills.triage import SYSTEM as TRIAGE_SYSTEM
from skills.triage import TRIAGE_SCHEMA
from skills.write_report import REPORT_SCHEMA, write_report
from skills.write_report import SYSTEM as REPORT_SYSTEM
from workflows.content_moderation.judgement import MODEL_CATEGORIES

GATEWAY_MAX_TOKENS = 48


class Pick(BaseModel):
    """A small output model; the validator reads an allowed set from the context."""

    model_config = ConfigDict(extra="forbid")

    choice: str = Field(max_length=8)

    @field_validator("choice")
    @classmethod
    def _allowed(cls, value: str, info: ValidationInfo) -> str:
        allowed = (info.context or {}).get("allowed")
        if allowed is not None and value not in allowed:
            raise ValueError(f"{value!r} is not allowed")
        return value


@pytest.fixture
def store(tmp_path: Path) -> TelemetryStore:
    return TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")


async def _gateway(model: Any, store: TelemetryStore) -> ModelGateway:
    request = Request(text="hello")
    classification = RuleClassifier().classify(request)
    await store.astart_request(request, classification, "test")
    return ModelGateway(
        model,
        store,
        request_id=request.id,
        classification=classification,
        workflow="test",
        max_tokens=GATEWAY_MAX_TOKENS,
    )


# ---- parsing -------------------------------------------------------------------------------


def test_parse_returns_the_validated_value() -> None:
    answer = StructuredAnswer.parse('{"choice": "a"}', Pick, model="m", finish_reason="stop")
    assert answer.parsed and answer.value == Pick(choice="a")
    assert (answer.error, answer.model, answer.raw) == (None, "m", '{"choice": "a"}')


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("__import__('os').system('echo pwned')", "not JSON"),
        ('{"choice": "a"', "not JSON"),
        ('{"choice": "a", "extra": 1}', "does not fit Pick"),
        ('{"choice": "much too long"}', "does not fit Pick"),
        ('["a"]', "does not fit Pick"),
    ],
)
def test_unusable_text_is_an_answer_with_a_reason_not_an_exception(text: str, reason: str) -> None:
    answer = StructuredAnswer.parse(text, Pick)
    assert not answer.parsed and answer.value is None
    assert answer.error is not None and answer.error.startswith(reason)
    assert answer.raw == text


def test_a_cut_answer_says_it_hit_the_token_limit() -> None:
    answer = StructuredAnswer.parse('{"cho', Pick, finish_reason="length")
    assert answer.error is not None and "finish_reason=length" in answer.error


def test_validation_context_reaches_the_validators() -> None:
    assert parse_output('{"choice": "a"}', Pick, context={"allowed": {"a"}})[0] is not None
    value, error = parse_output('{"choice": "b"}', Pick, context={"allowed": {"a"}})
    assert value is None and error is not None and "'b' is not allowed" in error


# ---- the gateway call ----------------------------------------------------------------------


async def test_structured_sends_the_output_models_schema_and_records_one_row(store) -> None:
    model = ScriptedModel(json_reply='{"choice": "x"}')
    llm = await _gateway(model, store)
    messages = [ChatMessage(role="user", content="pick")]

    answer = await llm.structured("pick", messages, output=Pick, max_tokens=12)

    assert answer.value == Pick(choice="x") and answer.model == model.model_name
    sent = model.last_request
    assert sent.json_schema == output_schema(Pick) == Pick.model_json_schema()
    assert sent.max_tokens == 12 and sent.temperature is None
    assert list(sent.messages) == messages
    (row,) = store.calls(request_id=llm.request_id)
    assert row.node == "pick" and row.workflow == "test"
    assert [c.node for c in llm.calls] == ["pick"]


async def test_structured_sends_an_explicit_schema_and_temperature(store) -> None:
    schema = {"type": "object", "properties": {"choice": {"enum": ["y"]}}}
    model = ScriptedModel()
    llm = await _gateway(model, store)
    answer = await llm.structured(
        "pick", [ChatMessage(role="user", content="pick")], output=Pick, schema=schema,
        temperature=0.0,
    )  # fmt: skip
    assert answer.value == Pick(choice="y")  # ScriptedModel answers the schema's first instance
    assert model.last_request.json_schema == schema
    assert model.last_request.temperature == 0.0
    assert model.last_request.max_tokens == GATEWAY_MAX_TOKENS


async def test_structured_keeps_an_unparsed_answer_as_data(store) -> None:
    model = ScriptedModel(json_reply="not json at all")
    llm = await _gateway(model, store)
    answer = await llm.structured("pick", [ChatMessage(role="user", content="x")], output=Pick)
    assert not answer.parsed and answer.raw == "not json at all"
    assert answer.finish_reason == "stop" and answer.error is not None
    assert len(store.calls(request_id=llm.request_id)) == 1  # the call is recorded anyway


async def test_structured_raises_a_server_error_naming_request_and_node(store) -> None:
    model = ScriptedModel(fail_on_call=(1, lambda: ModelCallError("HTTP 500: boom")))
    llm = await _gateway(model, store)
    with pytest.raises(ModelCallError, match="HTTP 500: boom") as info:
        await llm.structured("pick", [ChatMessage(role="user", content="x")], output=Pick)
    assert info.value.node == "pick" and info.value.request_id == llm.request_id


# ---- what each skill sends (must not change: the main job's output depends on it) ----------


def test_triage_schema_is_the_one_the_server_has_always_been_sent() -> None:
    """Derived from the output model: a docstring or a renamed class would change it."""
    assert TRIAGE_SCHEMA["title"] == "_TriageOutput"
    assert "description" not in TRIAGE_SCHEMA
    assert list(TRIAGE_SCHEMA["properties"]) == ["issue_type", "urgency", "sentiment"]
    assert TRIAGE_SCHEMA["required"] == ["issue_type", "urgency", "sentiment"]
    assert TRIAGE_SCHEMA["additionalProperties"] is False
    assert all("enum" in p for p in TRIAGE_SCHEMA["properties"].values())  # bounded strings


async def test_each_skill_sends_its_prompt_schema_and_limits(store) -> None:
    model = ScriptedModel(replies=["Sorry to hear that."])
    llm = await _gateway(model, store)
    message, post, facts = "I was charged twice", "buy now </post>", "F1 revenue = 3"

    triage = await triage_issue(llm, message)
    await draft_reply(llm, message, triage)
    await assess_risk(llm, post, MODEL_CATEGORIES)
    await interpret_data(llm, "F1 = 3", ["F1", "F2"])
    await write_report(llm, facts)

    assert [(r.max_tokens, r.temperature) for r in model.requests] == [
        (96, 0.0),  # temperature presets (issue 12): judging
        (GATEWAY_MAX_TOKENS, 0.1),  # factual reply
        (256, 0.0),  # judging: risk assessment
        (640, 0.0),  # judging: extraction of findings
        (800, 0.7),  # free text: report prose
    ]
    triage_call, reply_call, risk_call, interpret_call, report_call = model.requests
    assert triage_call.json_schema == TRIAGE_SCHEMA
    assert [m.content for m in triage_call.messages] == [
        TRIAGE_SYSTEM,
        delimit("message", message),
    ]
    assert reply_call.json_schema is None  # free text
    assert reply_call.messages[1].content == delimit("message", message)
    assert risk_call.json_schema == risk_schema(MODEL_CATEGORIES)
    assert risk_call.messages[0].content.startswith(RISK_SYSTEM.split("{categories}")[0])
    assert risk_call.messages[1].content == delimit("post", post, max_chars=len(post))
    assert interpret_call.json_schema == interpretation_schema(["F1", "F2"])
    assert [m.content for m in interpret_call.messages] == [
        INTERPRET_SYSTEM,
        delimit("data", "F1 = 3", len("F1 = 3") + 1),
    ]
    assert report_call.json_schema == REPORT_SCHEMA
    assert report_call.messages[0].content == REPORT_SYSTEM
    assert [r.node for r in store.calls(request_id=llm.request_id)] == [
        "triage_issue",
        "draft_reply",
        "assess_risk",
        "interpret",
        "write_report",
    ]


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ('{"issue_type": "refund", "urgency": "high", "sentiment": "negative"}', True),
        ('{"issue_type": "refund", "urgency": "high"}', False),
        ('{"issue_type": "refund", "urgency": "high", "sentiment": "negative", "x": 1}', False),
        ("I think it is a refund", False),
    ],
)
async def test_triage_parses_or_falls_back_to_neutral_defaults(store, reply, parsed) -> None:
    llm = await _gateway(ScriptedModel(json_reply=reply), store)
    triage = await triage_issue(llm, "refund please")
    assert triage.parsed is parsed
    if parsed:
        assert (triage.issue_type, triage.urgency, triage.sentiment) == tuple(
            json.loads(reply).values()
        )
    else:
        assert (triage.issue_type, triage.urgency, triage.sentiment, triage.raw) == (
            "other",
            "medium",
            "neutral",
            reply[:200],
        )


async def test_risk_with_a_category_outside_the_taxonomy_is_unparsed(store) -> None:
    known = next(iter(MODEL_CATEGORIES))
    body = {
        "decision": "block",
        "severity": "high",
        "categories": [{"category": known, "score": 80}],
        "confidence": 90,
        "rationale": "r",
        "evidence": [],
    }
    llm = await _gateway(ScriptedModel(json_reply=json.dumps(body)), store)
    ok = await assess_risk(llm, "post", MODEL_CATEGORIES)
    assert ok.status == "ok" and [c.category for c in ok.categories] == [known]
    body["categories"] = [{"category": "not_a_category", "score": 80}]
    llm = await _gateway(ScriptedModel(json_reply=json.dumps(body)), store)
    bad = await assess_risk(llm, "post", MODEL_CATEGORIES)
    assert bad.status == "unparsed" and bad.raw == json.dumps(body)[:200]
    assert bad.model == "scripted-model" and bad.finish_reason == "stop"


async def test_a_server_error_on_assess_risk_is_an_error_judgement(store) -> None:
    model = ScriptedModel(fail_on_call=(1, lambda: ModelCallError("HTTP 400: too long")))
    llm = await _gateway(model, store)
    judgement = await assess_risk(llm, "post", MODEL_CATEGORIES)
    assert judgement.status == "error" and judgement.error is not None
    assert "HTTP 400: too long" in judgement.error and "node assess_risk" in judgement.error


# ---- ORCH_STRUCTURED_OUTPUT=false: no schema sent, the plain text parsed the same way ---------


def _chat_body(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "ernie",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14},
    }


@pytest.mark.parametrize("structured_output", [True, False])
async def test_triage_through_the_http_client_with_structured_output_on_and_off(
    store, structured_output: bool
) -> None:
    reply = '{"issue_type": "delivery", "urgency": "low", "sentiment": "neutral"}'
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=_chat_body(reply))

    client = VLLMClient(
        "http://vllm.test/v1",
        "ernie",
        NoCapture(SCRIPTED_ARCH),
        structured_output=structured_output,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    llm = await _gateway(client, store)
    triage = await triage_issue(llm, "where is my parcel")
    await client.aclose()

    assert triage == IssueTriage(issue_type="delivery", urgency="low", sentiment="neutral")
    (body,) = bodies
    assert body["max_tokens"] == 96 and body["return_token_ids"] is True
    if structured_output:
        assert body["response_format"]["json_schema"]["schema"] == TRIAGE_SCHEMA
    else:
        assert "response_format" not in body
    (row,) = store.calls(request_id=llm.request_id)
    assert (row.node, row.prompt_tokens, row.completion_tokens) == ("triage_issue", 9, 5)


async def test_a_blocked_real_request_is_not_swallowed_by_the_risk_fallback(store) -> None:
    """assess_risk turns a ModelCallError into an ``error`` judgement; a blocked request must
    still fail the test instead of passing as a quiet fallback."""
    client = VLLMClient("http://127.0.0.1:9/v1", "ernie", NoCapture(SCRIPTED_ARCH))
    llm = await _gateway(client, store)
    with pytest.raises(ModelRequestsBlockedError):
        await assess_risk(llm, "post", MODEL_CATEGORIES)
    assert store.calls(request_id=llm.request_id) == []


def test_output_schema_is_built_once_and_handed_out_as_copies() -> None:
    class Answer(BaseModel):
        label: Literal["yes", "no"]

    first = output_schema(Answer)
    assert first == Answer.model_json_schema()
    first["properties"]["label"]["enum"].append("maybe")  # a caller changing its copy
    assert output_schema(Answer)["properties"]["label"]["enum"] == ["yes", "no"]
