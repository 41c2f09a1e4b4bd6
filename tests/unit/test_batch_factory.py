"""SettingsFactory builds the per-process parts once: one classifier and one set of workflows
shared by the orchestrators of every endpoint (the classifier took about 0.5 s of CPU to build,
once per endpoint)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.batch.factory import SettingsFactory
from orchestrator.config import Settings


async def test_every_endpoint_shares_one_classifier_and_the_workflows(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 't.db'}", profile="cpu")
    factory = SettingsFactory(settings, check=False)
    try:
        orchestrators = await factory.orchestrators(
            ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1", "http://127.0.0.1:11/v1"]
        )
        assert len(orchestrators) == 3
        assert len({id(o.classifier) for o in orchestrators}) == 1
        assert len({id(o.client) for o in orchestrators}) == 3  # one client per endpoint
        first = orchestrators[0].workflows
        assert all(o.workflows[r] is first[r] for o in orchestrators for r in first)
        assert {o.client.base_url for o in orchestrators} == {  # type: ignore[attr-defined]
            "http://127.0.0.1:9/v1",
            "http://127.0.0.1:10/v1",
            "http://127.0.0.1:11/v1",
        }
    finally:
        await factory.aclose()
        factory.store().close()
