"""``orchestrator chat``: a turn that fails on a bug is one line, never a traceback (ui11;
tester11 kind A: an amount of 30 nines raised ``decimal.InvalidOperation`` in a turn and the
chat printed a rich traceback). The failed turn is recorded as failed by the dispatcher, the
conversation goes on with the next turn, and the command exits 1."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest
from customer_service_double import ScriptedToolModel
from typer.testing import CliRunner

from orchestrator.cli import app, common
from orchestrator.cli import chat as chat_cli
from orchestrator.telemetry import TelemetryStore
from tests.unit.test_customer_service_safety import _find
from workflows.customer_service import deciding
from workflows.customer_service.store import OrderStore


def test_a_bug_in_a_turn_is_one_line_and_the_next_turn_is_answered(
    orders_url: Callable[[int, int], str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = orders_url(60, 6)
    customer, order = _find(OrderStore(url), want="refundable")
    telemetry = tmp_path / "tel.db"
    monkeypatch.setenv("ORCH_DATABASE_URL", f"sqlite:///{telemetry}")
    monkeypatch.setattr(
        common, "model_server", lambda *a, **k: contextlib.nullcontext("http://x/v1")
    )
    monkeypatch.setattr(chat_cli, "make_client", lambda settings: ScriptedToolModel())
    real = deciding.offered_amount  # the amount of a refund ask, read by the decide node

    def buggy(message: str, amended: str = "") -> object:
        if "boom" in message:
            raise ArithmeticError("a bug in reading the amount")
        return real(message, amended)

    monkeypatch.setattr(deciding, "offered_amount", buggy)
    args = ["chat", "--thread", "c-err", "--db", url, "--customer", customer]
    out = CliRunner().invoke(
        app,
        [*args, "--message", f"Please refund {order}, it arrived broken (boom)", "--message", "hi"],
    )
    assert out.exit_code == 1, out.output
    assert "Traceback" not in out.output and "ArithmeticError(" not in out.output
    said = " ".join(out.output.split())  # the console wraps long lines
    assert (
        "error: this turn failed on an internal error (ArithmeticError); it is recorded as "
        "failed and the conversation goes on: try again or say it differently." in said
    ), out.output
    assert out.output.count("> ") == 2  # both turns were sent; the second was answered
    store = TelemetryStore(f"sqlite:///{telemetry}")
    try:
        statuses = [r.status for r in store.requests()]
    finally:
        store.close()
    assert sorted(statuses) == ["failed", "succeeded"], statuses
