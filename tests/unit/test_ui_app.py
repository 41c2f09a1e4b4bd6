"""The Chainlit app's websocket messages around the first reply token (ui/app.py, run in
.venv-ui with Chainlit's own message path, ``chainlit.socket.process_message``, a recording
emitter and a scripted event service; no browser, no model).

Every websocket message is a render of the page on the machine that also runs the model, so
before the reply's first text the page gets only the turn's start and the reply's (empty)
message: no ``on_message`` run step, no ``first_interaction`` (no data layer), no tool step.
The tool steps come after the reply's text, nested in the reply; the reply ends with its
route, confidence, rules, tools and status.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.config import Settings

UI = Path(__file__).resolve().parents[2] / "ui"
PYTHON = Settings().ui_chainlit.parent / "python"

#: Runs in .venv-ui: three turns of one chat session through Chainlit's process_message; prints
#: each turn's emitted (event, payload) pairs as one JSON line, then what went to the service.
PROBE = r"""
import asyncio, json, os, sys, uuid
os.environ["ORCH_UI_SECRET"] = "probe-secret-0123456789abcdef0123"
import httpx
EVENTS = [
    {"kind": "classification", "route": "customer_service", "confidence": 0.91,
     "signals": [{"rule_id": "cs.where_is_order"}]},
    {"kind": "node_started", "node": "plan"},
    {"kind": "tool_call", "tool": "track_shipment", "arguments": "{\"order_id\": \"O1\"}",
     "valid": True},
    {"kind": "tool_result", "tool": "track_shipment", "facts": {"status": "shipped"}},
    {"kind": "tool_call", "tool": "refund", "arguments": "{}", "valid": False,
     "error": "missing order_id"},
    {"kind": "reply_facts", "text": "Order O1 shipped"},
    {"kind": "reply_token", "text": " today <b>"},
    {"kind": "call_experts", "moe_layers": [1], "expert_counts": [[2, 0, 6]],
     "expert_routing_source": "replay"},
    {"kind": "done", "status": "succeeded"},
    {"kind": "expert_grid", "layers": [1], "experts": [0, 2], "share": [[0.25, 0.75]],
     "sources": ["replay"], "figure": None,
     "summary": ["This reply leaned most on expert 2 in layer 1 (75%)."]},
]
POST = "you *are* a stupid idiot"
VERDICT = [
    {"kind": "classification", "route": "content_moderation", "confidence": 1.0, "signals": []},
    {"kind": "done", "status": "succeeded", "result": {
        "decision": "review", "severity": "medium",
        "categories": [{"category": "harassment", "score": 0.8}],
        "rationale": "insult <i>aimed</i> at the reader",
        "spans": [{"start": 19, "end": 24, "text": "idiot"}, {"start": 0, "end": 3, "text": "you"},
                  {"start": 1, "end": 2, "text": "o"}, {"start": 12, "end": 99, "text": "x"}],
        "lexicon": {"start": 4, "end": 9}}},
]
SENT = []
TOKENS = []
async def service(request):
    TOKENS.append(request.headers.get("authorization", ""))
    if request.url.path == "/api/health":
        return httpx.Response(200, json={"stats_line": "STATS running=0"})
    if request.url.path == "/api/routes":  # the moderation panel fixes the wraps_content route
        return httpx.Response(200, json=[{"name": "customer_service", "wraps_content": False},
                                         {"name": "content_moderation", "wraps_content": True}])
    if request.url.path.startswith("/api/threads/"):
        return httpx.Response(200, json={"customer_id": "C00001", "decisions": []})
    if request.url.path == "/api/handoffs":
        context = {"message": "refund <b>now</b>",
                   "tool_results": [{"tool": "lookup_order", "facts": {"total": "$90"}}]}
        return httpx.Response(200, json=[{"thread_id": "t-9", "customer_id": "C1",
                                          "reason": "refund over the limit", "created_at": "x",
                                          "context": context}])
    if request.url.path.endswith("/decide"):
        return httpx.Response(500, text="Internal Server Error")
    if json.loads(request.content)["text"] == "DOWN":
        raise httpx.ConnectError("connection refused")
    SENT.append(json.loads(request.content))
    events = VERDICT if SENT[-1].get("route") else EVENTS
    return httpx.Response(200, content="".join(json.dumps(e) + "\n" for e in events).encode())
async def main():
    import app
    from chainlit.context import init_ws_context
    from chainlit.session import WebsocketSession
    from chainlit.socket import process_message
    log = []
    async def emit(event, data):
        log.append([event, data])
    async def emit_call(*args):
        return None
    session = WebsocketSession(id=str(uuid.uuid4()), socket_id="s", emit=emit,
                               emit_call=emit_call, user_env={}, client_type="webapp")
    init_ws_context(session)
    customer = app.cl.User(identifier="ann", metadata={"role": "customer", "customer_id": "C00001"})
    operator = app.cl.User(identifier="olga", metadata={"role": "operator", "customer_id": None})
    session.user = customer
    import service_client
    service_client._http = httpx.AsyncClient(transport=httpx.MockTransport(service))
    await app.start()
    app.TICKERS.pop(session.id).cancel()  # the panel's tick: not part of these turns
    # a preset chosen in the side panel before the first message, as the page sends it
    from chainlit.socket import window_message
    log.clear()
    await window_message("s", {"harbor": "preset", "preset": "precise"})
    await window_message("s", {"harbor": "preset", "preset": "<b>hot</b>"})  # not a preset
    print("PRESET " + json.dumps({"events": [e for e, _ in log],
                                  "first": session.has_first_interaction,
                                  "preset": app.cl.user_session.get("preset")}))
    turns = (("Where is my order?", None), ("And now?", None), (POST, "Moderate"), ("DOWN", None),
             ("/handoffs", None))
    for text, command in turns:
        if text == "/handoffs":
            session.user = operator
        log.clear()
        await process_message(session, {"message": {
            "id": str(uuid.uuid4()), "type": "user_message", "name": "User", "output": text,
            "createdAt": "2026-12-01T00:00:00Z", "command": command}})
        print(json.dumps(log, default=str))
    log.clear()
    await app.on_approve(app.cl.Action(name="approve", payload={"thread": "t-9"}))
    print(json.dumps(log, default=str))
    print("SENT " + json.dumps(SENT))
    print("TOKENS " + json.dumps(TOKENS))
asyncio.run(main())
"""


@pytest.fixture(scope="module")
def turns(tmp_path_factory: pytest.TempPathFactory) -> list[list[tuple[str, Any]]]:
    """The emitted messages of five turns of one session (two chat turns, a post sent with the
    moderation panel's command, a turn while the service is down, ``/handoffs``), of an
    approval the service fails with a non-JSON 500, then the bodies the app sent to the
    service."""
    if not PYTHON.is_file():
        pytest.skip(f"no .venv-ui python at {PYTHON}: scripts/install.sh builds it")
    script = tmp_path_factory.mktemp("ui_app") / "probe.py"
    script.write_text(PROBE)
    # the app reads each person's role from the user file at every request (ui13)
    users = {
        "ann": {"role": "customer", "customer_id": "C00001", "password_hash": "-"},
        "olga": {"role": "operator", "customer_id": None, "password_hash": "-"},
    }
    (script.parent / "users.json").write_text(json.dumps({"users": users}))
    env = {**os.environ, "CHAINLIT_APP_ROOT": str(UI), "PYTHONPATH": str(UI)}
    env["ORCH_UI_USERS"] = str(script.parent / "users.json")
    done = subprocess.run(
        [str(PYTHON), str(script)], cwd=UI, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith(("[", "SENT "))]
    assert len(lines) == 7, done.stdout[-2000:]
    turns = [[(event, data) for event, data in json.loads(line)] for line in lines[:6]]
    turns.append([("sent", body) for body in json.loads(lines[6].removeprefix("SENT "))])
    tokens = next(line for line in done.stdout.splitlines() if line.startswith("TOKENS "))
    turns.append([("token", t) for t in json.loads(tokens.removeprefix("TOKENS "))])
    preset = next(line for line in done.stdout.splitlines() if line.startswith("PRESET "))
    turns.append([("preset", json.loads(preset.removeprefix("PRESET ")))])
    return turns


def _first_token(turn: list[tuple[str, Any]]) -> int:
    return next(i for i, (e, d) in enumerate(turn) if e == "stream_token" and d.get("token"))


@pytest.mark.parametrize("index", [0, 1])
def test_before_the_first_token_the_page_gets_only_the_turn_start_and_the_reply(
    turns: list[list[tuple[str, Any]]], index: int
) -> None:
    turn = turns[index]
    first = _first_token(turn)
    before = [event for event, _ in turn[:first]]
    # the turn's start (with the session's first interaction on its first turn: the page shows
    # Stop only after it), its run step (Copy and thumbs need one), the reply's empty message
    head = ["task_start", "first_interaction"] if index == 0 else ["task_start"]
    assert before == [*head, "new_message", "stream_start"], turn[:first]
    run, reply = turn[len(head)][1], turn[len(head) + 1][1]
    assert run["type"] == "run" and run["name"] == "on_message"
    reply_id = reply["id"]
    assert reply["type"] == "assistant_message" and reply["output"] == ""
    assert reply["parentId"] == run["id"]  # the reply sits in the run
    assert turn[first][1]["id"] == reply_id and turn[first][1]["token"].startswith("Order O1")


@pytest.mark.parametrize("index", [0, 1])
def test_one_run_step_per_turn_ended_after_the_reply(
    turns: list[list[tuple[str, Any]]], index: int
) -> None:
    runs = [(e, d) for e, d in turns[index] if d.get("type") == "run"]
    assert [e for e, _ in runs] == ["new_message", "update_message"], runs
    assert runs[0][1]["id"] == runs[1][1]["id"] and runs[1][1]["end"]
    assert turns[index].index(runs[1]) > max(
        i for i, (e, _) in enumerate(turns[index]) if e == "stream_token"
    )


def test_tool_steps_follow_the_reply_text_nested_in_the_reply(
    turns: list[list[tuple[str, Any]]],
) -> None:
    turn = turns[0]
    reply_id = turn[3][1]["id"]
    last_token = max(i for i, (e, _) in enumerate(turn) if e == "stream_token")
    tools = [(i, d) for i, (e, d) in enumerate(turn) if e == "new_message" and d["type"] == "tool"]
    assert [d["name"] for _, d in tools] == ["tool track_shipment", "tool refund"]
    assert all(i > last_token and d["parentId"] == reply_id for i, d in tools)
    assert "shipped" in tools[0][1]["output"] and "missing order" in tools[1][1]["output"]


def test_the_reply_ends_with_route_rules_tools_trace_and_status(
    turns: list[list[tuple[str, Any]]],
) -> None:
    turn = turns[0]
    reply_id = turn[3][1]["id"]
    final = [d for e, d in turn if e == "new_message" and d["id"] == reply_id][-1]["output"]
    assert final.startswith("Order O1 shipped  today \\<b\\>")  # model text escaped
    for part in (
        "**route** customer\\_service",
        "**confidence** 0.91",
        "cs\\.where\\_is\\_order",
        "track\\_shipment(valid), refund(invalid)",
        "**experts** This reply leaned most on expert 2 in layer 1 \\(75%\\)\\.",
        "**status** succeeded",
    ):
        assert part in final, final
    assert turn[-1][0] == "task_end"


def test_the_moderation_panel_fixes_the_route_and_shows_the_verdict_with_its_spans(
    turns: list[list[tuple[str, Any]]],
) -> None:
    sent = [body for _, body in turns[6]]
    assert [b.get("route") for b in sent] == [None, None, "content_moderation"]
    assert sent[2]["text"] == "you *are* a stupid idiot"
    shown = [d["output"] for e, d in turns[2] if e == "new_message" and d["type"] != "tool"]
    verdict = shown[-1]
    assert "decision **review**" in verdict and "harassment 0.80" in verdict
    # the verdict's own spans, in bold, the text escaped; overlapping, out-of-range and
    # non-verdict offsets (the lexicon's) are not drawn
    assert "> **you** \\*are\\* a stupid **idiot**" in verdict, verdict
    assert "\\<i\\>aimed\\</i\\>" in verdict  # model text escaped


def _shown(turn: list[tuple[str, Any]]) -> str:
    return "\n".join(
        str(d.get("output", "")) + str(d.get("token", ""))
        for e, d in turn
        if e in ("new_message", "update_message", "stream_token")
    )


def test_a_turn_while_the_service_is_down_says_so_in_the_reply(
    turns: list[list[tuple[str, Any]]],
) -> None:
    shown = _shown(turns[3])
    assert "**Sorry:** the assistant" in shown and "not answering" in shown, shown
    assert "ConnectError" not in shown and "http" not in shown  # no exception, no address
    assert turns[3][-1][0] == "task_end"


def test_handoffs_lists_the_waiting_cases_with_approve_and_reject(
    turns: list[list[tuple[str, Any]]],
) -> None:
    messages = [d for e, d in turns[4] if e == "new_message"]
    case = next(m for m in messages if "handoff waiting" in m["output"])
    assert "refund over the limit" in case["output"]
    assert "refund \\<b\\>now\\</b\\>" in case["output"]  # the customer's words, escaped
    assert "lookup\\_order" in case["output"] and "$90" in case["output"]
    actions = [d for e, d in turns[4] if e == "action" and d["forId"] == case["id"]]
    assert sorted((a["name"], a["payload"]["thread"]) for a in actions) == [
        ("approve", "t-9"),
        ("reject", "t-9"),
    ]


def test_an_approval_the_service_fails_says_why(turns: list[list[tuple[str, Any]]]) -> None:
    shown = _shown(turns[5])
    assert "**not decided:**" in shown and "500" in shown, shown
    assert "Internal Server Error" not in shown  # the service's page is not shown


def test_every_request_to_the_service_carries_a_signed_caller_token(
    turns: list[list[tuple[str, Any]]],
) -> None:
    from orchestrator.ui.auth import read_caller

    tokens = [t for _, t in turns[7]]
    assert tokens and all(t.startswith("Bearer ") for t in tokens)
    # read by the service's own reader: the app's tokens carry every claim it requires
    callers = [read_caller("probe-secret-0123456789abcdef0123", t) for t in tokens]
    assert {(c.name, c.role, c.customer_id) for c in callers} == {
        ("ann", "customer", "C00001"),
        ("olga", "operator", None),
    }
    # and the Chainlit session, whose uploads alone the caller may name (tester11 D)
    assert all(c.session and len(c.session) >= 32 for c in callers), callers


def test_a_preset_chosen_before_the_first_message_leaves_the_naming_to_that_message(
    turns: list[list[tuple[str, Any]]],
) -> None:
    chosen = turns[8][0][1]
    # the panel is redrawn with the choice, but the thread is not started (no first
    # interaction, which would make and name it in Chainlit's data layer)
    assert chosen["preset"] == "precise" and chosen["first"] is False, chosen
    assert (
        "first_interaction" not in chosen["events"] and "set_sidebar_elements" in chosen["events"]
    )
    first = [d for e, d in turns[0] if e == "first_interaction"]
    assert [d["interaction"] for d in first] == ["Where is my order?"]  # named by the message
    assert next(b["preset"] for _, b in turns[6]) == "precise"  # and the preset is used


#: Runs in .venv-ui: the app's one-line answers to bad input, for each kind of it.
BAD_INPUT_PROBE = r"""
import json, types
import app, reports
def msg(text, files=()):
    return types.SimpleNamespace(content=text, elements=list(files))
def upload(name, size=100):
    return types.SimpleNamespace(name=name, path="/srv/.files/s1/x", size=size)
print(json.dumps({
    "refusal": [app.refusal(msg(t)) for t in ("", "   ", "\n\t", "x" * 8001, "问" * 8001,
                                               "x" * 8000, "hi")],
    "empty_with_file": app.refusal(msg("", [upload("a.csv")])),
    "files": [reports.file_problem(f) for f in (
        [upload("notes.txt")], [upload("<b>报告</b> ../../etc `x` *.pdf")],
        [upload("报告 `x` *[y](z) <i>.pdf")],
        [upload("big.CSV", 21 * 1024 * 1024)], [upload("ok.xlsx")],
        [upload("a.txt"), upload("b.tsv")])],
    "why_not": [reports.why_not(r, upload("Q3 销售 <b>.xlsx")) for r in (
        {"error": "x: the extension says .xlsx but the content is plain text"}, {})],
    "names": [reports.safe_name(n) for n in ("../../etc/passwd", "C:\\Users\\x\\a.xlsx",
                                             "\x00\x1f<>:|?*.csv", "", "x" * 200 + ".xlsx")],
}))
"""


def test_bad_input_gets_a_one_line_answer_naming_the_problem(tmp_path: Path) -> None:
    if not PYTHON.is_file():
        pytest.skip(f"no .venv-ui python at {PYTHON}: scripts/install.sh builds it")
    script = tmp_path / "bad_input.py"
    script.write_text(BAD_INPUT_PROBE)
    env = {**os.environ, "CHAINLIT_APP_ROOT": str(UI), "PYTHONPATH": str(UI)}
    env["ORCH_UI_USERS"] = str(tmp_path / "users.json")
    done = subprocess.run(
        [str(PYTHON), str(script)], cwd=UI, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    empty, blank, tabs, long_en, long_zh, at_limit, ok = seen["refusal"]
    assert empty == blank == tabs and "empty" in empty
    assert "8,001 characters; the limit is 8,000" in long_en and long_en == long_zh
    assert at_limit is None and ok is None and seen["empty_with_file"] is None
    text, odd, odd_zh, big, fine, mixed = seen["files"]
    assert text.startswith("**Not a spreadsheet:** notes\\.txt") and ".xlsx" in text
    # an odd name is shown by its last part, escaped: no path, no HTML, no live Markdown
    assert odd.startswith("**Not a spreadsheet:** etc \\`x\\` \\.pdf.") and "../" not in odd
    assert odd_zh.startswith("**Not a spreadsheet:** 报告 \\`x\\` \\[y\\]\\(z\\) i\\.pdf.")
    assert big == "**Too large:** big\\.CSV is 21 MB; the limit is 20 MB."
    assert fine is None and mixed is None  # one spreadsheet among the files is read
    assert all("\n" not in line for line in (empty, long_en, text, odd, odd_zh, big))
    assert seen["names"][:3] == ["passwd", "a.xlsx", "csv"]  # no path, no hidden name
    # a failed report names the workbook as the person named it, not the stored upload
    assert (
        seen["why_not"][0]
        == "Q3 销售 b.xlsx: the extension says .xlsx but the content is plain text"
    )
    assert "try again" in seen["why_not"][1]
    assert seen["names"][3] == "file" and len(seen["names"][4]) <= 60
    assert seen["names"][4].endswith(".xlsx")


def test_the_composer_says_the_message_limit_in_every_kept_language() -> None:
    """Chainlit copies its default translation of a language that has none in
    ``ui/.chainlit/translations``; the kept ones (English, Simplified and Traditional Chinese)
    say the limit the app enforces in the composer's placeholder."""
    import re

    limit = re.search(r"^MAX_CHARS = (\d+)$", (UI / "app.py").read_text(), re.M)
    assert limit is not None
    shown = f"{int(limit.group(1)):,}"
    for language in ("en-US", "zh-CN", "zh-TW"):
        text = json.loads((UI / ".chainlit" / "translations" / f"{language}.json").read_text())
        assert shown in text["chat"]["input"]["placeholder"], language


#: Runs in .venv-ui: Chainlit's access check on the history layer for a thread id nobody wrote
#: and for one a customer wrote.
THREAD_PROBE = r"""
import asyncio, json, os
import app
from chainlit.data.acl import is_thread_author
from fastapi import HTTPException
async def main():
    layer = app.data_layer()
    await layer.execute_sql('INSERT INTO users ("id", "identifier", "metadata", "createdAt") '
                            "VALUES ('u1', 'ann', '{}', '2026-12-05')", {})
    await layer.execute_sql('INSERT INTO threads ("id", "userId", "userIdentifier") '
                            "VALUES ('t-ann', 'u1', 'ann')", {})
    answers = {}
    for user, thread in (("ann", "t-none"), ("ann", "t-ann"), ("bob", "t-ann")):
        try:
            answers[f"{user} {thread}"] = await is_thread_author(user, thread)
        except HTTPException as exc:
            answers[f"{user} {thread}"] = exc.status_code
    print("ACL " + json.dumps(answers))
asyncio.run(main())
"""


def test_an_unknown_thread_is_a_404_and_anothers_thread_is_refused(tmp_path: Path) -> None:
    if not PYTHON.is_file():
        pytest.skip(f"no .venv-ui python at {PYTHON}: scripts/install.sh builds it")
    script = tmp_path / "probe.py"
    script.write_text(THREAD_PROBE)
    # ann is a customer of the user file: a thread is shown only to an author it has now
    users = {"users": {"ann": {"role": "customer", "customer_id": "C00001"}}}
    (tmp_path / "users.json").write_text(json.dumps(users))
    env = {
        **os.environ,
        "ORCH_UI_USERS": str(tmp_path / "users.json"),
        "CHAINLIT_APP_ROOT": str(UI),
        "PYTHONPATH": str(UI),
        "ORCH_UI_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'history.db'}",
        "ORCH_UI_FILES": str(tmp_path / "files"),
    }
    done = subprocess.run(
        [str(PYTHON), str(script)], cwd=UI, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("ACL "))
    assert json.loads(line.removeprefix("ACL ")) == {
        "ann t-none": 404,  # Chainlit's own layer raised ValueError here: a 500
        "ann t-ann": True,
        "bob t-ann": 401,
    }
