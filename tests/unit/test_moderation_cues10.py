"""Issue 47, session 10: the posts of ``tests/data/moderation_cues10.toml`` (written for it; en,
zh-Hans, zh-Hant), one data-driven test per table: multi-word terms with a doubled letter
dropped or stretched, misspelled insult variants and looks remarks with a 到 degree complement
are flagged on the lexicon + scorer path while their ordinary look-alikes stay allowed; and
each cue of the dev study ``benchmarks/moderation_dev_generalise.py`` fires where it should."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only

DATA = tomllib.loads(
    (Path(__file__).resolve().parents[1] / "data" / "moderation_cues10.toml").read_text("utf-8")
)


@pytest.fixture(scope="module")
def workflow() -> ContentModerationWorkflow:
    return ContentModerationWorkflow()


def _post_failures(workflow: ContentModerationWorkflow) -> list[str]:
    out = []
    for case in DATA["post"]:
        verdict = moderate_lexicon_only(case["text"], workflow)
        if (verdict.decision.value != "allow") is not case["flagged"]:
            out.append(f"{case['text']!r}: {verdict.decision.value} ({verdict.policy_rule})")
    return out


def _cue_failures() -> list[str]:
    from benchmarks.moderation_dev_generalise import CUES, cue_features

    out = []
    for case in DATA["cue"]:
        got = sorted(f[2:] for f in cue_features(case["text"], tuple(CUES)) if "&" not in f)
        if got != sorted(case["cues"]):
            out.append(f"{case['text']!r}: {got} != {sorted(case['cues'])}")
    return out


@pytest.mark.parametrize("table", ["post", "cue"])
def test_session10_posts_and_cues(table: str, workflow: ContentModerationWorkflow) -> None:
    cases = DATA[table]
    assert len(cases) >= 10  # the file is read, not empty
    failures = _post_failures(workflow) if table == "post" else _cue_failures()
    assert not failures, "\n".join(failures)
