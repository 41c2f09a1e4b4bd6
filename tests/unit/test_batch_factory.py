"""SettingsFactory builds the per-process parts once: one classifier and one set of workflows
shared by the orchestrators of every endpoint (the classifier took about 0.5 s of CPU to build,
once per endpoint); and it warms the workflows before the first row."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from orchestrator.batch import factory as factory_module
from orchestrator.batch.factory import SettingsFactory, warm_workflows
from orchestrator.config import Settings
from workflows import ContentModerationWorkflow
from workflows.content_moderation.graph import WARM_POSTS


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


class Scorer:
    """A risk scorer double: records the posts it scores."""

    def __init__(self, fail: bool = False) -> None:
        self.posts: list[str] = []
        self.fail = fail

    def score(self, text: str, spans: object = None) -> object:
        if self.fail:
            raise RuntimeError("scorer file unreadable")
        self.posts.append(text)
        return object()


class OwnWarm:
    """A workflow with its own warm-up."""

    name = "own"

    def __init__(self) -> None:
        self.warmed = 0

    def warm(self) -> None:
        self.warmed += 1


def test_warm_up_runs_each_workflow_s_own_and_scores_the_moderation_posts() -> None:
    scorer = Scorer()
    moderation = ContentModerationWorkflow(scorer=scorer)  # type: ignore[arg-type]
    own = OwnWarm()
    warm_workflows([own, moderation])  # type: ignore[list-item]
    assert own.warmed == 1
    assert scorer.posts == list(WARM_POSTS)
    assert any(ord(c) > 0x4E00 for c in "".join(WARM_POSTS))  # Chinese too
    assert any(c.isascii() and c.isalpha() for c in "".join(WARM_POSTS))


def test_a_failing_warm_up_is_logged_and_left_to_the_rows(
    caplog: pytest.LogCaptureFixture,
) -> None:
    moderation = ContentModerationWorkflow(scorer=Scorer(fail=True))  # type: ignore[arg-type]
    own = OwnWarm()
    with caplog.at_level(logging.WARNING):
        warm_workflows([moderation, own])  # type: ignore[list-item]
    assert own.warmed == 1  # the next workflow is still warmed
    assert "could not warm workflow content_moderation" in caplog.text


async def test_the_pool_is_warmed_before_the_first_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warmed: list[list[str]] = []
    monkeypatch.setattr(
        factory_module, "warm_workflows", lambda ws: warmed.append([w.name for w in ws])
    )
    settings = Settings(database_url=f"sqlite:///{tmp_path / 't.db'}", profile="cpu")
    factory = SettingsFactory(settings, check=False)
    try:
        await factory.orchestrators(["http://127.0.0.1:9/v1"])
    finally:
        await factory.aclose()
        factory.store().close()
    # the installed workflows (entry points), whatever their order
    assert sorted(warmed[0]) == ["content_moderation", "customer_service", "excel_report"]


@pytest.mark.parametrize(("given", "expected"), [({}, 16), ({"batch_stream_interval": 1}, 1)])
async def test_batch_clients_stream_in_chunks_of_the_settings_interval(
    tmp_path: Path, given: dict[str, int], expected: int
) -> None:
    """A batch row's streamed calls ask vLLM for ``batch_stream_interval`` tokens per chunk
    (16 by default: nobody watches a batch row's stream); 1 streams token by token."""
    settings = Settings(database_url=f"sqlite:///{tmp_path / 't.db'}", profile="cpu", **given)
    factory = SettingsFactory(settings, check=False)
    try:
        orchestrators = await factory.orchestrators(["http://127.0.0.1:9/v1"])
        assert orchestrators[0].client.stream_interval == expected  # type: ignore[attr-defined]
    finally:
        await factory.aclose()
        factory.store().close()
