"""Issue 16, deliverable 5: when the model server drops the connection in the middle of a
request, the verdict still comes from the lexicon and the scorer, with the model marked
``unavailable`` and the request recorded as succeeded (never left running).

The server is real: an asyncio TCP server on 127.0.0.1 that reads the whole HTTP request and
then closes the socket, either before any byte of the answer or after the status line, the
headers and part of the JSON body (a Content-Length it never fulfils). The client is a real
:class:`VLLMClient` over real sockets (no mocked transport); real model requests are switched
on for these tests only (:func:`override_allow_model_requests`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from orchestrator.core.client import VLLMClient, override_allow_model_requests
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import SCRIPTED_ARCH
from serving.capture import NoCapture
from tests.raw_http import read_request
from workflows.content_moderation import ContentModerationWorkflow, Decision
from workflows.content_moderation.service import Moderator

#: A partial answer: headers promise 4,096 bytes, the body stops after a few.
PARTIAL = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n"
    b'{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"ro'
)


@dataclass
class DroppingServer:
    """Counts the chat requests it read in full before dropping each connection."""

    mode: str  # "before-answer" or "mid-body"
    port: int = 0
    chat_requests: int = 0
    bodies: list[bytes] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head, body = await read_request(reader)
            self.lines.append(head.split(b"\r\n", 1)[0])
            if b"/chat/completions" in head.split(b"\r\n", 1)[0]:
                self.chat_requests += 1
                self.bodies.append(body)
            if self.mode == "mid-body":
                writer.write(PARTIAL)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.transport.abort()  # RST/close with no more bytes: the drop


@pytest.fixture(params=["before-answer", "mid-body"])
def dropping_server(request: pytest.FixtureRequest) -> Iterator[DroppingServer]:
    """The server runs on its own event loop in a thread, so it answers whatever loop the
    test's client runs on."""
    state = DroppingServer(mode=request.param)
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def serve() -> None:
        server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
        state.port = server.sockets[0].getsockname()[1]
        started.set()
        async with server:
            with contextlib.suppress(asyncio.CancelledError):
                await server.serve_forever()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(10), "the dropping server did not start"
    yield state
    for task in asyncio.all_tasks(loop):
        loop.call_soon_threadsafe(task.cancel)
    thread.join(10)
    loop.close()


@pytest.mark.parametrize(
    ("post", "expected"),
    [
        ("You are a fucking idiot and I will find you", {Decision.REVIEW, Decision.BLOCK}),
        ("Thanks, the parcel arrived on time and the driver was friendly.", {Decision.ALLOW}),
        ("河南人都是骗子，素质太差了", {Decision.REVIEW, Decision.BLOCK}),
    ],
)
async def test_dropped_connection_gives_a_lexicon_and_scorer_verdict(
    dropping_server: DroppingServer,
    workflow: ContentModerationWorkflow,
    tmp_path: Path,
    post: str,
    expected: set[Decision],
) -> None:
    assert workflow.scorer is not None, workflow.scorer_note
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    client = VLLMClient(
        f"http://127.0.0.1:{dropping_server.port}/v1",
        "ernie",
        NoCapture(SCRIPTED_ARCH),
        max_retries=1,
        timeout_s=10.0,
    )
    try:
        with override_allow_model_requests(True):
            outcome = await Moderator(client, store, workflow=workflow).moderate(post)
    finally:
        await client.aclose()

    # the request really reached the server (and the SDK's one retry too) before each drop
    assert dropping_server.chat_requests == 2, (dropping_server.lines, outcome)
    sent = json.loads(dropping_server.bodies[0])
    assert any(post in str(m.get("content")) for m in sent["messages"])
    assert outcome.status == "succeeded", outcome.error
    verdict = outcome.verdict
    assert verdict is not None
    assert verdict.decision in expected, verdict.rationale
    assert verdict.assessment is not None and verdict.assessment.status == "error"
    assert "Model: unavailable" in verdict.rationale
    assert "does not object" not in verdict.rationale
    assert verdict.scorer is not None and verdict.scorer.status == "ok"
    assert "Scorer (" in verdict.rationale and "Lexicon:" in verdict.rationale
    # no request is left running in the store
    (row,) = store.requests()
    assert row.status == "succeeded"
    store.close()
