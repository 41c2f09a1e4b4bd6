"""Degraded modes (issue 18, part 2): the model server dies in the middle of a request.

The server is real: an asyncio HTTP/1.1 server on 127.0.0.1 that speaks the part of the
OpenAI API the client uses (``/v1/models``, non-streamed and streamed
``/v1/chat/completions``), answers each chat request from a script, and then **dies**: it cuts
the connection (before the answer, after part of a JSON body whose ``Content-Length`` it never
fulfils, or in the middle of a chunked SSE stream) and stops listening, so every later request
is refused like one to a killed process. The client is a real :class:`VLLMClient` over real
sockets with no retry; nothing is mocked between them.

What must hold, per workflow:

* **report** (``excel_report``): every figure is written (Markdown and .xlsx) with the narrative
  marked unavailable, and the request succeeds;
* **customer service**: the turn goes to a person (``needs_human``) with its context (message,
  customer, triage, tool results already found, the reason), the reply keeps code's facts and
  no half-streamed model text, and the person can resume it once; without an order store
  (no handoff queue) the request fails, so a batch can retry it;
* every request row ends ``succeeded``, ``needs_human`` or ``failed``: none is left
  ``running``.

* **batch** (``orchestrator batch``, in process): every row of a batch whose server dies on its
  first request is recorded ``unreachable`` (retryable with ``--retry-failed``), the results
  file is written, the command says how to resume.

Moderation's verdict without the model is tested the same way in
``tests/unit/test_moderation_dropped_connection.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.core.client import VLLMClient, override_allow_model_requests
from orchestrator.exceptions import ServerUnavailableError
from orchestrator.request import Attachment
from orchestrator.spreadsheet import read_workbook
from orchestrator.testing import SCRIPTED_ARCH
from serving.capture import NoCapture
from tests.raw_http import read_request
from workflows.customer_service import CustomerServiceWorkflow
from workflows.customer_service.graph import MODEL_DOWN_REASON
from workflows.customer_service.store import OrderStore, RefundPolicy
from workflows.excel_report import ExcelReportWorkflow, ReportConfig
from workflows.excel_report.analysis import analyse
from workflows.excel_report.encoding import ByteCounter
from workflows.excel_report.render import _md_cell, _md_value

pytestmark = pytest.mark.integration

#: A partial JSON answer: the headers promise 4,096 bytes, the body stops after a few.
PARTIAL = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n"
    b'{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"ro'
)


def _completion(message: dict[str, Any], finish: str = "stop") -> bytes:
    body = json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "ernie",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 6, "total_tokens": 18},
        }
    ).encode()
    head = (
        f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def _chunk(data: str) -> bytes:
    raw = f"data: {data}\n\n".encode()
    return f"{len(raw):x}\r\n".encode() + raw + b"\r\n"


def _delta(text: str) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "ernie",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
        }
    )


@dataclass
class DyingServer:
    """Answers chat requests from ``script``, then dies at the first ``die-*`` action.

    Actions: ``("json", text)`` a non-streamed answer; ``("tool", None)`` a call of the tool the
    request names, with the first allowed value of each argument; ``("die-before", None)``,
    ``("die-mid-body", None)``, ``("die-mid-stream", text)`` (a streamed answer cut after
    ``text``). After a die action, or past the script's end, the server stops listening.
    """

    script: list[tuple[str, Any]]
    port: int = 0
    chat_requests: int = 0
    dead: bool = False
    bodies: list[dict[str, Any]] = field(default_factory=list)
    server: asyncio.Server | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not self.dead:
                head, body = await read_request(reader)
                first = head.split(b"\r\n", 1)[0]
                if b"/models" in first:
                    models = json.dumps(
                        {"object": "list", "data": [{"id": "ernie", "object": "model"}]}
                    ).encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        + f"content-length: {len(models)}\r\n\r\n".encode()
                        + models
                    )
                    await writer.drain()
                    continue
                self.chat_requests += 1
                request = json.loads(body)
                self.bodies.append(request)
                action, arg = self.script.pop(0) if self.script else ("die-before", None)
                if action == "json":
                    writer.write(_completion({"role": "assistant", "content": arg}))
                elif action == "tool":
                    name = request["tool_choice"]["function"]["name"]
                    spec = next(t for t in request["tools"] if t["function"]["name"] == name)
                    props = spec["function"]["parameters"]["properties"]
                    args = {k: (v.get("enum") or ["ORD-000000"])[0] for k, v in props.items()}
                    call = {"id": "c1", "type": "function"}
                    call["function"] = {"name": name, "arguments": json.dumps(args)}
                    message = {"role": "assistant", "content": None, "tool_calls": [call]}
                    writer.write(_completion(message, "tool_calls"))
                else:
                    await self.die(writer, action, arg)
                    return
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.transport.abort()

    async def die(self, writer: asyncio.StreamWriter, action: str, text: str | None) -> None:
        if action == "die-mid-body":
            writer.write(PARTIAL)
        elif action == "die-mid-stream":
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            for word in (text or "").split(" "):
                writer.write(_chunk(_delta(word + " ")))
        await writer.drain()
        self.dead = True
        if self.server is not None:
            self.server.close()  # killed: later connections are refused


@contextlib.contextmanager
def dying_server(script: list[tuple[str, Any]]) -> Iterator[DyingServer]:
    """The server on its own event loop in a thread (it answers any loop's client)."""
    state = DyingServer(script=list(script))
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def serve() -> None:
        state.server = await asyncio.start_server(state.handle, "127.0.0.1", 0)
        state.port = state.server.sockets[0].getsockname()[1]
        started.set()
        with contextlib.suppress(asyncio.CancelledError):
            await state.server.serve_forever()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert started.wait(10), "the dying server did not start"
    try:
        yield state
    finally:
        for task in asyncio.all_tasks(loop):
            loop.call_soon_threadsafe(task.cancel)
        thread.join(10)
        loop.close()


def _client(server: DyingServer) -> VLLMClient:
    return VLLMClient(
        f"http://127.0.0.1:{server.port}/v1",
        "ernie",
        NoCapture(SCRIPTED_ARCH),
        max_retries=0,
        timeout_s=10.0,
    )


def _no_row_running(store: TelemetryStore) -> list[str]:
    statuses = [row.status for row in store.requests()]
    assert statuses and "running" not in statuses, statuses
    return statuses


# ------------------------------------------------------------------------------ report

WORKBOOK = Path(DEFAULT_DATA_DIR) / "fault_inputs" / "rates_by_channel_and_month.xlsx"


@pytest.mark.parametrize(
    "script",
    [
        [("die-before", None)],  # lost at interpret, before any byte of the answer
        [("die-mid-body", None)],  # lost at interpret, in the middle of the answer
        # interpret answered (a true finding: the claim check keeps it); lost at write_report
        [("json", '{"findings": [{"statement": "The Funnel table has {F1} data rows.", '
                  '"figure_ids": ["F1"]}]}'),
         ("die-mid-body", None)],
    ],
    ids=["interpret-before-answer", "interpret-mid-body", "write-report-mid-body"],
)  # fmt: skip
async def test_report_writes_every_figure_with_the_narrative_marked_unavailable(
    script: list[tuple[str, Any]], tmp_path: Path
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    out = tmp_path / "out"
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=out), ByteCounter())
    request = Request(
        text=f"Summarise the attached spreadsheet {WORKBOOK.name} as a report",
        attachments=(Attachment(filename=WORKBOOK.name, path=str(WORKBOOK)),),
    )
    with dying_server(script) as server:
        client = _client(server)
        try:
            with override_allow_model_requests(True):
                outcome = await Orchestrator(client, store, [workflow]).handle(request)
        finally:
            await client.aclose()
        assert server.dead and server.chat_requests == len(script)

    assert outcome.status == "succeeded", outcome.error
    result = outcome.result
    assert result is not None and result["status"] == "succeeded"
    assert result["narrative_unavailable"], result
    markdown = Path(result["markdown"]).read_text(encoding="utf-8")
    assert "Narrative unavailable" in markdown
    # every figure the code computes from the file is in the report, value and id
    analysis = analyse(read_workbook(WORKBOOK), ReportConfig().analysis)
    assert analysis.figures and result["figures"] == len(analysis.figures)
    for figure in analysis.figures:
        assert (
            f"| {figure.id} | {_md_cell(figure.label)} | {_md_value(figure.display)} |" in markdown
        )
    xlsx = openpyxl.load_workbook(result["xlsx"])
    values = {row[0].value: row[1].value for row in xlsx["Summary"].iter_rows(max_col=2)}
    assert str(values["Narrative"]).startswith("unavailable")
    ids = [row[0].value for row in xlsx["Figures"].iter_rows(min_row=2, max_col=1)]
    assert ids == [f.id for f in analysis.figures]
    if len(script) == 2:  # interpret answered before the server died: its finding is kept
        assert [f["figure_ids"] for f in result["findings"]] == [["F1"]]
    assert _no_row_running(store) == ["succeeded"]
    store.close()


# ------------------------------------------------------------------------------ customer service

TRIAGE = '{"issue_type": "order_status", "urgency": "medium", "sentiment": "neutral"}'
CUSTOMER = "C00002"


@pytest.fixture
def order_store(tmp_path: Path) -> OrderStore:
    store = OrderStore(f"sqlite:///{tmp_path / 'cs.db'}", policy=RefundPolicy())
    store.seed(10, seed=5)
    return store


def _message(order_store: OrderStore) -> str:
    (order_id, *_) = order_store.tools(CUSTOMER).order_ids(5)
    return f"Where is my order {order_id}? It has not arrived yet."


@pytest.mark.parametrize(
    ("script", "stage"),
    [
        ([("die-mid-body", None)], "triage_issue"),
        ([("json", TRIAGE), ("die-before", None)], "select_tool"),
        ([("json", TRIAGE), ("tool", None), ("die-mid-stream", "Your order is on")], "draft_reply"),
    ],
    ids=["triage", "select-tool", "reply-mid-stream"],
)  # fmt: skip
async def test_customer_service_hands_the_case_to_a_person_with_its_context(
    script: list[tuple[str, Any]], stage: str, order_store: OrderStore, tmp_path: Path
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    workflow = CustomerServiceWorkflow(order_store)
    text = _message(order_store)
    request = Request(text=text, thread_id="thread-1", customer_id=CUSTOMER)
    with dying_server(script) as server:
        client = _client(server)
        try:
            with override_allow_model_requests(True):
                orch = Orchestrator(client, store, [workflow])
                outcome = await orch.handle(request)
                assert server.dead and server.chat_requests == len(script)
                # the person resumes it once, the server still dead: the reply has code's facts
                assert outcome.status == "needs_human", (outcome.status, outcome.error)
                waiting = order_store.handoffs()
                resumed = await orch.resume("thread-1", approve=True, note="checked by hand")
        finally:
            await client.aclose()

    result = outcome.result
    assert result is not None and result["status"] == "needs_human"
    assert result["handoff"]["reason"] == MODEL_DOWN_REASON
    assert "colleague" in result["reply"]["text"].lower()
    # the person's queue has the case with its context
    (case,) = [h for h in waiting if h["thread_id"] == "thread-1"]
    context = case["context"]
    assert context["message"] == text and context["customer_id"] == CUSTOMER
    assert context["reason"] == MODEL_DOWN_REASON and context["detail"]
    assert context["triage"] is not None
    if stage == "draft_reply":
        # the order lookup done before the server died is in the context and the reply;
        # the half-streamed model text is not
        (found,) = context["tool_results"]
        assert found["ok"] and found["facts"]["order_id"] in text
        assert found["facts"]["order_id"] in result["reply"]["text"]
        assert "Your order is on" not in result["reply"]["text"]
    assert resumed.result is not None and resumed.result["handoff"]["decision"] == "approved"
    assert resumed.result["reply"]["text"]
    assert order_store.handoffs() == []  # resolved once
    # the turn and the person's resume: two rows, neither left running
    assert sorted(_no_row_running(store)) == sorted(["needs_human", resumed.status])
    store.close()


async def test_customer_service_without_a_handoff_queue_fails_the_request(
    tmp_path: Path,
) -> None:
    """No order store: nobody to hand the case to, so the request fails with
    :class:`ServerUnavailableError` (a batch retries it) and its row is ``failed``, never
    ``running``."""
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    with dying_server([("die-mid-body", None)]) as server:
        client = _client(server)
        try:
            with override_allow_model_requests(True), pytest.raises(ServerUnavailableError):
                await Orchestrator(client, store, [CustomerServiceWorkflow()]).handle(
                    Request(text="Where is my order? It has not arrived yet.")
                )
        finally:
            await client.aclose()
    assert _no_row_running(store) == ["failed"]
    (row,) = store.requests()
    assert "unreachable" in (row.error or "")
    store.close()


# ------------------------------------------------------------------------------ batch


def test_batch_rows_fail_with_a_retryable_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from orchestrator.cli import app

    sheet = tmp_path / "tickets.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["ticket", "body"])
    texts = [
        "Where is my order? It has not arrived yet.",
        "I was charged twice for the same order",
        "Please cancel my order, I no longer need it",
    ]
    for i, text in enumerate(texts):
        ws.append([f"T{i}", text])
    wb.save(sheet)
    out = tmp_path / "results.xlsx"
    monkeypatch.setenv("ORCH_DATABASE_URL", f"sqlite:///{tmp_path / 'telemetry.db'}")
    monkeypatch.setenv("ORCH_MAX_RETRIES", "0")
    with dying_server([("die-mid-body", None)]) as server:
        url = f"http://127.0.0.1:{server.port}/v1"
        args = ["batch", str(sheet), "--text-column", "body", "--id-column", "ticket"]
        result = CliRunner().invoke(app, [*args, "--out", str(out), "--server-url", url])
        assert server.dead and server.chat_requests >= 1  # it died mid-request
    assert result.exit_code == 1, result.output
    assert "--retry-failed" in result.output
    rows = openpyxl.load_workbook(out).active
    header = [c.value for c in rows[1]]
    statuses = [r[header.index("status")] for r in rows.iter_rows(min_row=2, values_only=True)]
    assert statuses == ["unreachable"] * len(texts), statuses
    store = TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")
    assert not store.requests(status="running")
    store.close()
