"""The customer-service commands without a server: store seed/info, handoff list, and the
usage errors of seed, resume and chat (exit 2 with a message naming the fix)."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.cli import chat as chat_cli
from orchestrator.core.events import HandoffEvent, StreamDone, StreamEvent
from orchestrator.request import Request
from workflows.customer_service.store import OrderStore


def test_seed_then_info_then_empty_handoff_list(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    runner = CliRunner()
    seeded = runner.invoke(
        app,
        [
            "store",
            "seed",
            "--customers",
            "12",
            "--seed",
            "4",
            "--as-of",
            "2026-11-30",
            "--database-url",
            url,
        ],
    )
    assert seeded.exit_code == 0, seeded.output
    counts = OrderStore(url).counts()
    assert counts["customers"] == 12 and f"{counts['orders']} orders" in seeded.output
    info = runner.invoke(app, ["store", "info", "--database-url", url])
    assert info.exit_code == 0 and "C00001: orders ORD-" in info.output
    shown = " ".join(info.output.split())
    assert f": 12 customers, {counts['orders']} orders C00001" in shown  # words, not a dict
    listed = runner.invoke(app, ["handoff", "list", "--json", "--database-url", url])
    assert listed.exit_code == 0 and listed.output.strip() == ""


def test_handoff_list_shows_waiting_cases_with_context(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    store = OrderStore(url)
    store.record_handoff(
        "t9",
        2,
        "C00001",
        "refund over the automatic limit",
        {"message": "[bold]refund[/] please", "action": {"tool": "start_refund"}},
    )
    result = CliRunner().invoke(app, ["handoff", "list", "--database-url", url])
    assert result.exit_code == 0
    assert "t9" in result.output and "[waiting]" in result.output
    assert "[bold]refund[/] please" in result.output  # customer text printed, not as markup
    as_json = CliRunner().invoke(app, ["handoff", "list", "--json", "--database-url", url])
    row = json.loads(as_json.output.strip())
    assert row["context"]["action"] == {"tool": "start_refund"} and row["turn"] == 2


@pytest.mark.parametrize(
    ("planted", "shown"),
    [
        ("\x1b[2J\x1b[31mred\x1b[0m", "red"),  # clear the screen, colours
        ("\x1b]8;;http://evil.example\x07click\x1b]8;;\x07", "click"),  # an OSC-8 hyperlink
        ("approved\rAPPROVE NOW", "approvedAPPROVE NOW"),  # a return that overwrites the line
        ("bell\x07\x9b31mred", "bellred"),  # BEL and the C1 CSI
    ],
)
def test_handoff_list_prints_no_control_characters(
    tmp_path: Path, planted: str, shown: str
) -> None:
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    OrderStore(url).record_handoff("t9", 2, "C00001", "refund", {"message": f"refund {planted}"})
    result = CliRunner().invoke(app, ["handoff", "list", "--database-url", url])
    assert result.exit_code == 0, result.output
    assert f"message: refund {shown}\n" in result.output
    assert not any((ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F for c in result.output)


def test_usage_errors_exit_2_and_say_what_to_fix(tmp_path: Path) -> None:
    runner = CliRunner()
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    bad_count = runner.invoke(app, ["store", "seed", "--customers", "0", "--database-url", url])
    assert bad_count.exit_code == 2 and "--customers" in bad_count.output
    bad_date = runner.invoke(app, ["store", "seed", "--as-of", "30/11/2026", "--database-url", url])
    assert bad_date.exit_code == 2 and "YYYY-MM-DD" in bad_date.output
    no_decision = runner.invoke(app, ["handoff", "resume", "t1", "--no-launch"])
    assert no_decision.exit_code == 2 and "--approve or --reject" in no_decision.output
    bad_thread = runner.invoke(app, ["chat", "--thread", "a b", "--no-launch", "--message", "x"])
    assert bad_thread.exit_code == 2 and "--thread 'a b' is not a conversation id" in " ".join(
        bad_thread.output.split()
    )
    assert "pattern" not in bad_thread.output  # the validator's regex is not the user's fix
    bad_customer = runner.invoke(
        app, ["chat", "--customer", "C 1", "--no-launch", "--message", "x"]
    )
    assert bad_customer.exit_code == 2 and "--customer 'C 1'" in bad_customer.output
    # nothing waits on the thread: said before any server is reached (port 9 answers nothing)
    OrderStore(url).close()  # a store with no handoff (a missing one is named: test_handoff_cli13)
    nothing = runner.invoke(
        app,
        ["handoff", "resume", "nosuch", "--approve", "--server-url", "http://127.0.0.1:9/v1",
         "--database-url", url],
    )  # fmt: skip
    assert nothing.exit_code == 2 and "no handoff waits on thread 'nosuch'" in nothing.output
    empty = runner.invoke(app, ["chat", "--no-launch", "--message", "hi", "--message", " "])
    assert empty.exit_code == 2 and "--message must not be empty" in empty.output


class _WaitingThread:
    """A stand-in Orchestrator whose thread already waits for a person: the turn ends
    needs_human with the dispatcher's headline and no handoff event of its own."""

    def __init__(self, handoff: bool) -> None:
        self.handoff = handoff

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        if self.handoff:
            yield HandoffEvent(thread_id="t1", reason="refund above the limit")
        yield StreamDone(
            request_id="r1",
            status="needs_human",
            headline="conversation t1 waits for a person; orchestrator handoff resume t1",
        )


@pytest.mark.parametrize("handoff", [False, True])
async def test_a_turn_on_a_waiting_thread_says_so(
    handoff: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(chat_cli, "console", Console(file=buffer, width=200))
    orch = _WaitingThread(handoff)
    await chat_cli._turn(orch, Request(text="hello?", thread_id="t1"), False)  # type: ignore[arg-type]
    shown = buffer.getvalue()
    assert ("waits for a person" in shown) is not handoff  # the headline only without handoff
    assert ("handed to a person" in shown) is handoff


def test_handoff_list_shows_what_was_found_before_the_model_server_was_lost(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'cs.db'}"
    store = OrderStore(url)
    store.record_handoff(
        "t10",
        1,
        "C00002",
        "the model server is unavailable",
        {
            "message": "where is my order ORD-000123",
            "detail": "vLLM server at http://127.0.0.1:1/v1 is unreachable",
            "tool_results": [
                {"tool": "lookup_order", "facts": {"order_id": "ORD-000123", "note": "[red]x[/]"}}
            ],
        },
    )
    result = CliRunner().invoke(
        app, ["handoff", "list", "--database-url", url], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 0, result.output
    assert "the model server is unavailable" in result.output
    assert "found (lookup_order)" in result.output and "ORD-000123" in result.output
    assert "[red]x[/]" in result.output  # facts printed as text, not as markup
