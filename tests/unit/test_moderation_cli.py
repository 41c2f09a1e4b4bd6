"""``orchestrator moderate`` and ``orchestrator moderation check`` (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from orchestrator.cli import app

runner = CliRunner()


def test_moderate_without_model_prints_a_json_verdict() -> None:
    result = runner.invoke(app, ["moderate", "what the f*ck", "--no-model", "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert verdict["decision"] == "review" and verdict["source"] == "lexicon"
    assert verdict["spans"][0]["text"] == "f*ck"


def test_moderate_reads_invalid_utf8_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "post.txt"
    path.write_bytes(b"nice \xff\xfe post")
    result = runner.invoke(app, ["moderate", "--file", str(path), "--no-model", "--json"])
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert verdict["input"]["invalid_utf8_bytes"] == 2 and verdict["decision"] == "allow"


def test_moderate_needs_exactly_one_post_source() -> None:
    result = runner.invoke(app, ["moderate", "--no-model"])
    assert result.exit_code == 2 and "argument or with --file" in result.output


def test_check_reports_a_bad_lexicon_file_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        'category = "hate"\n\n[[term]]\ntext = "x"\nseverity = "huge"\n', encoding="utf-8"
    )
    result = runner.invoke(app, ["moderation", "check", "--lexicon-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "bad.toml:5" in result.output.replace("\n", "")
    good = runner.invoke(app, ["moderation", "check"])
    assert good.exit_code == 0 and "terms" in good.output
