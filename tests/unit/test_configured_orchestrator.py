"""Every command builds its Orchestrator through one function, so ``ORCH_MAX_COMPLETION_TOKENS``
and ``ORCH_TEMPERATURE_*`` hold for all of them (``chat`` and ``handoff resume`` ignored the
first, ``run``, ``report`` and batch the second)."""

from __future__ import annotations

import pytest

from orchestrator.config import Settings
from orchestrator.core.runtime import configured_orchestrator
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows.customer_service import CustomerServiceWorkflow


@pytest.fixture
def store() -> TelemetryStore:
    return TelemetryStore("sqlite://")


def test_the_settings_reach_the_orchestrator(
    monkeypatch: pytest.MonkeyPatch, store: TelemetryStore
) -> None:
    monkeypatch.setenv("ORCH_MAX_COMPLETION_TOKENS", "77")
    monkeypatch.setenv("ORCH_TEMPERATURE_JUDGING", "0.3")
    settings = Settings()
    orch = configured_orchestrator(settings, ScriptedModel(), store, [CustomerServiceWorkflow()])
    assert orch.max_tokens == 77
    assert orch.temperatures == {**settings.temperatures, "judging": 0.3}


def test_a_callers_option_wins_over_the_settings(store: TelemetryStore) -> None:
    settings = Settings(max_completion_tokens=90)
    preset = {"judging": 0.0, "factual": 0.0, "free_text": 0.0}
    orch = configured_orchestrator(
        settings, ScriptedModel(), store, [CustomerServiceWorkflow()], temperatures=preset
    )
    assert (orch.max_tokens, orch.temperatures) == (90, preset)


@pytest.mark.parametrize(
    "module",
    [
        "orchestrator.cli.chat",
        "orchestrator.cli.run",
        "orchestrator.batch.factory",
        "orchestrator.ui.service",
        "workflows.customer_service.cli",
        "workflows.excel_report.cli",
    ],
)
def test_no_command_builds_an_orchestrator_by_hand(module: str) -> None:
    import importlib
    import inspect

    source = inspect.getsource(importlib.import_module(module))
    assert "configured_orchestrator(" in source
    assert "Orchestrator(\n" not in source and " Orchestrator(client" not in source
