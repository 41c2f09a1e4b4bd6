"""The shared shape of the moderation kind tests (issue 47): posts of a kind that must be
flagged beside ordinary posts that must stay allowed, as one parametrize table, judged on the
lexicon + scorer path (what ``orchestrator moderate --no-model`` does)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only
from workflows.content_moderation.verdict import Verdict


def flag_cases(flagged: Sequence[Any], allowed: Sequence[Any] = ()) -> list[Any]:
    """``pytest.param(post, True)`` for each post of ``flagged`` and ``(post, False)`` for
    each of ``allowed``; a post already wrapped in ``pytest.param`` keeps its marks."""

    def one(post: Any, flag: bool) -> Any:
        if isinstance(post, type(pytest.param(""))):
            return pytest.param(*post.values, flag, marks=post.marks, id=post.id)
        return pytest.param(post, flag)

    return [*(one(p, True) for p in flagged), *(one(p, False) for p in allowed)]


def judged(post: str, flagged: bool, workflow: ContentModerationWorkflow, **want: str) -> Verdict:
    """The verdict on ``post``, asserting it is flagged (review or block) or allowed; a
    flagged one also with ``want["category"]`` among its categories and a span found
    ``want["how"]``, where given."""
    verdict = moderate_lexicon_only(post, workflow)
    assert (verdict.decision.value != "allow") is flagged, f"{post!r}: {verdict.rationale}"
    if flagged and "category" in want:
        assert want["category"] in {c.category.value for c in verdict.categories}, verdict.rationale
    if flagged and "how" in want:
        assert want["how"] in {s.how for s in verdict.spans}, verdict.rationale
    return verdict
