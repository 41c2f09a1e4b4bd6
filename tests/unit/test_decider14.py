"""Who decided a handoff is a person's user name, on every path (tester14 H14).

``handoff resume --by`` took any text: two lines ("olga" then "person:oscar" for a line-wise
reader), the customer's own id (``person:C00001`` reads as self-approval), ``policy``, 300
characters for a 120-character column. ``Orchestrator.resume`` (the CLI, the UI service and a
library caller all decide through it) now takes only a user name as ``orchestrator ui-user``
does, and never one that reads as the policy or an id; nothing is decided otherwise."""

from __future__ import annotations

import pytest
from customer_service_double import ScriptedToolModel
from test_handoff_withdraw import _approve, waiting  # noqa: F401  (a fixture)
from typer.testing import CliRunner

from orchestrator import Orchestrator, TelemetryStore
from orchestrator.config import Settings
from orchestrator.exceptions import UserError
from workflows.customer_service import open_workflow
from workflows.customer_service.store import OrderStore

NOT_NAMES = [
    "olga\nperson:oscar",
    "C00001",
    "policy",
    "Policy",
    "x" * 300,
    "olga k",
    "person:olga",
    "ORD-100057",
    "olga\u202e",
]


async def test_a_decider_must_be_a_persons_user_name(
    waiting: tuple[Settings, OrderStore, str, str],  # noqa: F811  (the imported fixture)
) -> None:
    for by in NOT_NAMES:  # each refused before anything is claimed
        with pytest.raises(UserError, match="--by"):
            await _approve(waiting[0], by=by)
    settings, store, customer, order = waiting
    assert store.handoffs("waiting") and store.tools(customer).refund_count(order) == 0
    outcome = await _approve(settings, by="oscar.k@ops")
    assert outcome.status == "succeeded"
    (row,) = store.handoffs(None)
    assert row["status"] == "approved"


def test_the_cli_refuses_it_in_one_line(
    waiting: tuple[Settings, OrderStore, str, str],  # noqa: F811  (the imported fixture)
) -> None:
    from orchestrator.cli import app

    settings, store, customer, order = waiting
    url = str(settings.cs_database_url)
    for by in ("olga\nperson:oscar", "C00001"):
        cli = CliRunner().invoke(
            app, ["handoff", "resume", "w", "--approve", "--by", by, "--db", url]
        )
        assert cli.exit_code != 0, cli.output
        assert len(cli.output.strip().splitlines()) == 1 and "Traceback" not in cli.output
    assert store.handoffs("waiting") and store.tools(customer).refund_count(order) == 0


async def test_a_refused_decision_is_no_crash(
    waiting: tuple[Settings, OrderStore, str, str],  # noqa: F811  (the imported fixture)
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A decision the workflow refuses (a note over 2,000 characters) was logged as a crash,
    with its traceback, before the one-line error (tester14 J14): it is the caller's to fix."""
    settings, store, customer, order = waiting
    telemetry = TelemetryStore(settings.database_url)
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
        with pytest.raises(UserError, match="2,000 characters"):
            await orch.resume("w", approve=True, note="n" * 2500, by="olga")
    rows = [r for r in telemetry.requests() if r.error and "2,000" in r.error]
    telemetry.close()
    assert "crashed" not in caplog.text and "Traceback" not in caplog.text
    assert [r.status for r in rows] == ["rejected"]
    assert store.handoffs("waiting") and store.tools(customer).refund_count(order) == 0
