"""``orchestrator moderate`` and ``orchestrator moderation check`` (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from orchestrator.cli import app
from tests.unit.moderation_data import DATA, needs_data

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


def test_a_post_file_that_cannot_be_read_is_named_in_one_line(tmp_path: Path) -> None:
    for path, why in ((tmp_path / "nope.txt", "does not exist"), (tmp_path, "is a folder")):
        result = runner.invoke(app, ["moderate", "--file", str(path), "--no-model"])
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and f"--file {path} {why}" in said, said
        assert "Errno" not in said and "Traceback" not in said


def test_moderate_needs_exactly_one_post_source() -> None:
    result = runner.invoke(app, ["moderate", "--no-model"])
    assert result.exit_code == 2 and "argument or with --file" in result.output


def test_an_empty_post_is_an_error_in_one_line_not_allow(tmp_path: Path) -> None:
    """cs11: ``moderate ""`` printed ALLOW and exited 0; an empty post is bad input."""
    path = tmp_path / "empty.txt"
    path.write_bytes(b" \n\t")
    for args in ([""], ["   "], ["\u200b\u3000"], ["\n\n"], ["--file", str(path)], ["--file", "-"]):
        result = runner.invoke(app, ["moderate", *args, "--no-model"], input="")
        said = " ".join(result.output.split())
        assert result.exit_code == 2 and "the post is empty" in said, (args, said)
        assert "ALLOW" not in said and len(result.output.strip().splitlines()) == 1, said
    kept = runner.invoke(app, ["moderate", "\U0001f600", "--no-model", "--json"])  # an emoji
    assert kept.exit_code == 0, kept.output


def test_check_reports_a_bad_lexicon_file_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        'category = "hate"\n\n[[term]]\ntext = "x"\nseverity = "huge"\n', encoding="utf-8"
    )
    result = runner.invoke(app, ["moderation", "check", "--lexicon-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "bad.toml:5" in result.output.replace("\n", "")
    good = runner.invoke(app, ["moderation", "check"])
    assert good.exit_code == 0 and "terms" in good.output


def _subset(src: Path, dst: Path, keep_every: int) -> None:
    """Copy every ``keep_every``-th row of ``src`` (header kept) to ``dst``."""
    import csv

    with src.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    dst.parent.mkdir(parents=True, exist_ok=True)
    with dst.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([rows[0], *rows[1::keep_every]])


@needs_data
def test_moderation_fit_writes_a_scorer_that_loads(tmp_path: Path) -> None:
    from workflows.content_moderation.scorer import load_scorer

    data = tmp_path / "data"
    for path in sorted((DATA / "moderation").glob("*.csv")):
        _subset(path, data / "moderation" / path.name, 1 if "jigsaw" in path.name else 4)
    for path in sorted((DATA / "customer_service").glob("*.csv")):
        _subset(path, data / "customer_service" / path.name, 20)
    out = tmp_path / "scorer.npz"
    result = runner.invoke(app, ["moderation", "fit", "--data-dir", str(data), "--out", str(out)])
    assert result.exit_code == 0, result.output
    scorer = load_scorer(out)
    assert scorer.version in result.output and "zh/flagged" in result.output
    assert scorer.meta["ordinary_rows"] > 0

    missing = runner.invoke(app, ["moderation", "fit", "--data-dir", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "moderation" in missing.output


def test_moderate_without_a_server_names_the_signals_that_judged(
    tmp_path: Path, monkeypatch
) -> None:
    """No server: the message names the lexicon AND the learned scorer (not "lexicon alone"),
    and says "lexicon alone" with the reason only when the scorer file cannot be read."""
    from workflows.content_moderation import cli
    from workflows.content_moderation.graph import ContentModerationWorkflow

    args = ["moderate", "you idiot", "--server-url", "http://127.0.0.1:9", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "lexicon and learned risk scorer v" in said and "lexicon alone" not in said
    assert "without the model" in said

    missing = tmp_path / "absent.npz"
    monkeypatch.setattr(
        cli, "ContentModerationWorkflow", lambda: ContentModerationWorkflow(scorer_path=missing)
    )
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "lexicon alone (risk scorer unavailable" in said and "absent.npz" in said


def test_eval_names_the_splits_on_a_bad_one() -> None:
    result = runner.invoke(app, ["moderation", "eval", "--split", "everything"])
    assert result.exit_code == 2
    assert "heldout-topic" in result.output and "Traceback" not in result.output


@needs_data
def test_eval_of_dev_prints_the_summary_and_is_no_logged_look(tmp_path: Path) -> None:
    """Dev is looked at freely (only test and heldout-topic looks are logged; the log line
    itself is tested in test_moderation_protocol.py without printing held-out figures)."""
    log = tmp_path / "looks.log"
    args = ["moderation", "eval", "--split", "dev", "--brief", "--log", str(log)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "anti-bias" in result.output and "macro F1" in result.output
    assert not log.exists()
