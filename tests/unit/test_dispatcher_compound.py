"""Issue 46 items 7 and 8: a compound request never claims what did not happen, and a long
message keeps its ask. The dispatcher and the real workflows with ScriptedModel (a test double
of the model) and a real SQLite telemetry file.

A compound request runs one workflow; every other part is handed to a person with a record of
its own (``<id>.part<n>``, ``needs_human``), and the outcome and the reply say exactly that.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import Workbook

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.request import Attachment
from orchestrator.routes import Route
from orchestrator.testing import ScriptedModel
from workflows import default_workflows
from workflows.customer_service.graph import MAX_MESSAGE_CHARS, CustomerServiceWorkflow


@pytest.fixture
def store(tmp_path: Path) -> TelemetryStore:
    return TelemetryStore(f"sqlite:///{tmp_path / 'telemetry.db'}")


@pytest.fixture
def sheet(tmp_path: Path) -> Path:
    wb = Workbook()
    ws = wb.active
    ws.append(["month", "region", "amount"])
    for i in range(12):
        ws.append([f"2026-{i % 12 + 1:02d}", ["north", "south"][i % 2], 100 + i])
    path = tmp_path / "invoices.xlsx"
    wb.save(path)
    return path


#: (text, the route that runs, the route handed to a person): English and Chinese, the sheet
#: asked for first or second, with and without a joining word.
COMPOUNDS = [
    ("Where is my parcel? Also, here is the spreadsheet to summarise", Route("customer_service")),
    ("Cancel my subscription; also chart this workbook by region", Route("customer_service")),
    ("我要退款，另外附上发票表格，帮我汇总一下", Route("customer_service")),
    ("帮我查一下快递到哪了，顺便把这个表格按月统计一下", Route("customer_service")),
    ("请帮我汇总附件里的发票表格，还有我上周的订单要退款", Route("excel_report")),
    ("Summarise the attached invoice sheet, and refund order 5512 while you're at it", None),
    ("Please refund order 5512. The attached sheet lists the invoices, total them by month", None),
]


@pytest.mark.parametrize(("text", "runs"), COMPOUNDS)
async def test_every_part_of_a_compound_request_is_run_or_handed_to_a_person(
    store: TelemetryStore, sheet: Path, text: str, runs: Route | None
) -> None:
    model = ScriptedModel(replies=["Thanks, we are on it."])
    orch = Orchestrator(model, store, default_workflows())
    request = Request(text=text, attachments=(Attachment(filename=str(sheet)),))
    outcome = await orch.handle(request)

    asked = {outcome.classification.route, *outcome.classification.secondary_routes}
    assert asked == {"customer_service", "excel_report"}, outcome.classification.reason
    if runs is not None:
        assert outcome.classification.route == runs
    ran = outcome.classification.route
    other = (asked - {ran}).pop()
    # the part not run has a record of its own, for a person, naming the request it came from
    assert [h.route for h in outcome.handed_on] == [other]
    part = outcome.handed_on[0]
    rows = {r.id: r for r in store.requests()}
    assert rows[part.request_id].status == "needs_human"
    assert rows[part.request_id].route == other
    assert request.id in (rows[part.request_id].error or "")
    assert rows[request.id].workflow == ran
    # and the outcome says so, and claims no workflow ran it
    assert f"handed to a person as request {part.request_id}" in outcome.headline
    reply = (outcome.result or {}).get("reply") or {}
    text_out = reply.get("text", "") if isinstance(reply, dict) else ""
    assert "workflow" not in text_out and "转交相应流程" not in text_out
    if ran == Route("customer_service") and outcome.status == "succeeded":
        assert "recorded separately for a colleague" in text_out or "转交人工跟进" in text_out


async def test_a_request_of_one_route_hands_nothing_on(store: TelemetryStore) -> None:
    orch = Orchestrator(ScriptedModel(replies=["ok"]), store, [CustomerServiceWorkflow()])
    outcome = await orch.handle(Request(text="where is my parcel, it was due on monday"))
    assert outcome.handed_on == [] and "also asked" not in outcome.headline
    assert len(store.requests()) == 1


async def test_the_stream_says_the_same_as_handle(store: TelemetryStore, sheet: Path) -> None:
    orch = Orchestrator(ScriptedModel(replies=["ok"]), store, default_workflows())
    request = Request(
        text="Where is my parcel? Also, here is the spreadsheet to summarise",
        attachments=(Attachment(filename=str(sheet)),),
    )
    events = [e async for e in orch.stream(request)]
    done = events[-1]
    assert f"handed to a person as request {request.id}.part1" in done.headline
    statuses = {r.id: r.status for r in store.requests()}
    assert statuses[f"{request.id}.part1"] == "needs_human"


# ------------------------------------------------------------------ item 8: long messages

STORY = (
    "Last spring we moved to a small town by the lake. The neighbours brought bread and jam, "
    "the children learned to row, and every evening the swallows came back to the barn. "
)


@pytest.mark.parametrize(
    "ask",
    [
        "Can you refund order 88123? It never arrived.",
        "So, where is my parcel? The tracking has not moved since Monday.",
        "请问我的订单88123什么时候退款？",
    ],
)
def test_a_long_message_keeps_its_head_and_its_ask_at_the_end(ask: str) -> None:
    text = STORY * 60 + ask  # about 10,000 characters
    assert len(text) > MAX_MESSAGE_CHARS
    state = CustomerServiceWorkflow().initial_state(Request(text=text))
    message = state["message"]
    assert message.startswith(STORY[:40])
    assert message.endswith(ask)
    assert "characters cut" in message
    assert len(message) <= MAX_MESSAGE_CHARS  # a reader of the first MAX chars sees the ask


def test_a_message_within_the_limit_is_kept_whole() -> None:
    text = STORY * 5 + "Where is my parcel?"
    assert CustomerServiceWorkflow().initial_state(Request(text=text))["message"] == text


async def test_the_outcome_says_a_long_message_was_cut(store: TelemetryStore) -> None:
    orch = Orchestrator(ScriptedModel(replies=["ok"]), store, [CustomerServiceWorkflow()])
    long = await orch.handle(Request(text=STORY * 60 + " Can you refund order 88123?"))
    short = await orch.handle(Request(text="Can you refund order 88123?"))
    assert long.classification.route == Route("customer_service"), long.classification.reason
    assert long.truncated is True
    assert short.truncated is False
