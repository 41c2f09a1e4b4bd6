"""serving.probe: the launcher's structured-output probe and the empty-500 hint.

A mock transport plays the server. The failing server answers what vLLM 0.24.0 answered to
every structured-output request when lm-format-enforcer was missing (an HTTP 500 whose message
is empty) and, like vLLM with --enable-log-requests, writes the cause to its log while it
answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from serving.probe import (
    EMPTY_500_HINT,
    LOG_REQUESTS_FLAG,
    empty_500_hint,
    error_lines,
    probe_structured_output,
)

URL = "http://vllm.test/v1"
CAUSE = "ERROR 11-30 [serving.py:200] ModuleNotFoundError: No module named 'lmformatenforcer'"


def _ok_body(content: str) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": content}}]}


def _client(handler) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(handler))


def test_probe_passes_on_a_schema_valid_answer(tmp_path: Path) -> None:
    seen = {}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.update(json.loads(request.content))
        return httpx.Response(200, json=_ok_body('{"label": "no"}'))

    probe = probe_structured_output(URL, "ernie", client=_client(handler), settle_s=0)
    assert probe.ok and probe.status == 200 and probe.log_lines == ()
    assert seen["response_format"]["type"] == "json_schema"
    assert seen["model"] == "ernie" and seen["max_tokens"] <= 16
    assert "works" in probe.explain()


@pytest.mark.parametrize(
    ("status", "content"),
    [(200, "not json"), (200, '{"label": "maybe"}'), (400, None)],
)
def test_probe_fails_on_a_wrong_answer(status: int, content: str | None) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if content is None:
            return httpx.Response(status, json={"message": "bad request"})
        return httpx.Response(status, json=_ok_body(content))

    probe = probe_structured_output(URL, "ernie", client=_client(handler), settle_s=0)
    assert not probe.ok
    assert f"HTTP {status}" in probe.explain()


def test_failed_probe_shows_the_log_line_that_names_the_cause(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("INFO earlier line that is not part of the probe\n")

    def handler(request: httpx.Request) -> httpx.Response:
        with log.open("a") as fh:  # the server logs while it answers
            fh.write("INFO Received request chatcmpl-1\n" + CAUSE + "\n")
        return httpx.Response(500, json={"message": "", "type": "InternalServerError"})

    command = ["python", "-m", "vllm.entrypoints.openai.api_server", LOG_REQUESTS_FLAG]
    probe = probe_structured_output(
        URL, "ernie", log_path=log, command=command, client=_client(handler), settle_s=0
    )
    assert not probe.ok and probe.status == 500
    assert "earlier line" not in " ".join(probe.log_lines)  # only what the probe caused
    assert error_lines(probe.log_lines) == [CAUSE]
    text = probe.explain()
    assert "HTTP 500" in text and CAUSE in text and "ORCH_STRUCTURED_OUTPUT=false" in text


def test_silent_log_without_the_flag_names_the_flag(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"message": ""})

    probe = probe_structured_output(
        URL, "ernie", log_path=log, command=["vllm", "serve"], client=_client(handler), settle_s=0
    )
    assert probe.log_flag_missing
    assert LOG_REQUESTS_FLAG in probe.explain()


def test_unreachable_server_is_reported_not_raised() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    probe = probe_structured_output(URL, "ernie", client=_client(handler), settle_s=0)
    assert not probe.ok and probe.status is None
    assert "ConnectError" in probe.body


@pytest.mark.parametrize(
    ("status", "body", "hinted"),
    [
        (500, {"message": "", "type": "InternalServerError", "code": 500}, True),
        (500, {"error": {"message": "  ", "code": 500}}, True),
        (502, None, True),
        (500, "", True),
        (500, {"message": "CUDA out of memory"}, False),
        (400, {"message": ""}, False),
    ],
)
def test_empty_500_hint(status: int, body: object, hinted: bool) -> None:
    hint = empty_500_hint(status, body)
    assert (hint == EMPTY_500_HINT) is hinted
    if hinted:
        assert LOG_REQUESTS_FLAG in hint
