"""tester15 T15-3/4/5: harm said as a construction (who + what + whom) with no lexicon word.
A first-person intent to die with a plan, means, time or goodbye, a call to kill a group, a
death wish, a threat whose verb is a letter, pinyin or emoji, and a pay-to-claim scam go to
review (never allowed, never cleared by the scorer); idioms, help lines and ordinary
customer-service sentences stay allowed. Inputs written for this file
(tests/data/cases/moderation_constructions15.toml)."""

from __future__ import annotations

import pytest

from tests.data.moderation_cases import judged
from tests.unit.case_tables import cases
from workflows.content_moderation.graph import ContentModerationWorkflow

_FILE = "moderation_constructions15.toml"


@pytest.mark.parametrize(
    ("post", "category"),
    [*cases(_FILE, "flagged"), *((p, None) for p in cases(_FILE, "allowed"))],
)
def test_a_construction_of_harm_goes_to_review_its_ordinary_look_alikes_stay_allowed(
    post: str, category: str | None, workflow: ContentModerationWorkflow
) -> None:
    verdict = judged(post, category is not None, workflow)
    if category is not None:
        found = {c.category.value for c in verdict.categories}
        assert found & set(category.split("|")), f"{post!r}: {verdict.rationale}"
