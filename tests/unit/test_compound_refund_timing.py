"""tester4 finding 10 (the README's own example): a question about when a refund arrives gets
the refund intent's answer (where the refund stands, and what is needed to check it), never
the general "tell me a little more". The main job's stateless path: the real classifier and
workflows, ScriptedModel (the model's test double) writing nothing the checker keeps, so the
reply is code's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.testing import ScriptedModel
from tests.unit.customer_service_double import customer_service_only
from workflows import default_workflows

TIMING = [
    ("我的退款什么时候到账？", "退款进度"),
    ("退款多久能到账", "退款进度"),
    ("我的退款到账了吗", "退款进度"),
    ("When will my refund arrive?", "where your refund stands"),
    ("has my refund come through yet?", "where your refund stands"),
    ("how long until I get my money back?", "where your refund stands"),
]
GENERAL = ("Please tell me a little more", "请再告诉我一些细节")


@pytest.fixture
def telemetry(tmp_path: Path) -> TelemetryStore:
    return TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")


@pytest.mark.parametrize(("text", "answer"), TIMING)
async def test_a_refund_timing_question_gets_the_refund_answer(
    telemetry: TelemetryStore, text: str, answer: str
) -> None:
    orch = Orchestrator(ScriptedModel(replies=[""]), telemetry, default_workflows())
    outcome = await orch.handle(Request(text=text))
    assert outcome.workflow == "customer_service", outcome.headline
    assert answer in (outcome.output or ""), outcome.headline
    assert not any(g in (outcome.output or "") for g in GENERAL)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("When will the refund for ORD-100076 arrive?", "refund for ORD-100076 stands"),
        ("ORD-100076 的退款什么时候到账？", "ORD-100076的退款进度"),
    ],
)
async def test_with_its_order_id_the_id_is_not_asked_again(
    telemetry: TelemetryStore, text: str, answer: str
) -> None:
    orch = customer_service_only(ScriptedModel(replies=[""]), telemetry)
    outcome = await orch.handle(Request(text=text))
    assert answer in (outcome.output or ""), outcome.headline
