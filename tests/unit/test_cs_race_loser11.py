"""The loser of a handoff decision is a refusal, not a crash (cs11; tester11 J). A second
decision on a handoff decided already raised HandoffDecidedError (right), but the dispatcher
logged "request … crashed in workflow customer_service" with a traceback and recorded the row
``failed`` / "internal error: …", which counts an expected outcome as an internal error. Now the
row is ``rejected`` with the one-line message and nothing is logged as a crash. The race is
made by hand: the loser read the handoff waiting before the winner decided (``pending_handoff``
stale), then its claim fails."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from customer_service_double import ScriptedToolModel
from handoff_races import one_waiting_handoff

from orchestrator import Orchestrator, TelemetryStore
from orchestrator.config import Settings
from orchestrator.exceptions import HandoffDecidedError
from workflows.customer_service import open_workflow


async def test_a_second_decision_is_recorded_rejected_not_crashed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(cs_database_url=f"sqlite:///{tmp_path / 'cs.db'}")
    store, customer, order = await one_waiting_handoff(settings, "t-j")
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
        stale = await workflow.pending_handoff("t-j")  # what the loser read before the winner

        async def still_waiting(thread_id: str) -> dict[str, Any] | None:
            return stale  # the race: it read the handoff waiting, then claims after the winner

        assert (await orch.resume("t-j", approve=False, by="olga")).status == "succeeded"
        workflow.pending_handoff = still_waiting  # type: ignore[method-assign]
        with caplog.at_level(logging.ERROR), pytest.raises(HandoffDecidedError):
            await orch.resume("t-j", approve=True, by="oscar")
    assert not [r for r in caplog.records if "crashed" in r.getMessage()], caplog.text
    rows = telemetry.requests()
    statuses = sorted(r.status for r in rows)
    assert statuses == ["rejected", "succeeded"], statuses
    (lost,) = [r for r in rows if r.status == "rejected"]
    assert "decided already by olga" in str(lost.error) and "internal error" not in str(lost.error)
    assert store.tools(customer).refund_count(order) == 0
