"""Where ``orchestrator build-checkpoint`` and ``ensure_checkpoint`` may write a checkpoint.

Every refusal is one line with exit 2 and comes before the tokenizer is trained (20-70 s):
the tests replace the trainer with one that fails, so a check that came after it would show
its error instead. A rerun of the identical command says the checkpoint is ready without
training; ``serve`` keeps a built folder's own spec and never deletes files it did not write.
No test here trains a tokenizer or builds weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from orchestrator.cli import app
from serving import checkpoint as ck
from serving.checkpoint import _BUILTIN_CORPUS, CheckpointSpec, PlantedExpert
from serving.errors import CheckpointError


@pytest.fixture(autouse=True)
def no_training(monkeypatch: pytest.MonkeyPatch) -> None:
    def trained(*_args: object) -> None:
        raise AssertionError("the tokenizer was trained")

    monkeypatch.setattr(ck, "_train_tokenizer", trained)


def _manifest(folder: Path, spec: CheckpointSpec, fingerprint: str | None = None) -> Path:
    """A folder as build_checkpoint leaves it, weights left out (the tests never read them)."""
    folder.mkdir(parents=True, exist_ok=True)
    sha = ck._corpus_sha(list(_BUILTIN_CORPUS))
    manifest = {"fingerprint": fingerprint or spec.fingerprint(sha), "spec": spec.model_dump()}
    (folder / ck.MANIFEST).write_text(json.dumps(manifest))
    (folder / "config.json").write_text("{}")
    return folder


def _cli(out: Path | str, *flags: str, data: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(
        app,
        ["build-checkpoint", "--out", str(out), *flags],
        env={"COLUMNS": "300", "ORCH_DATA_DIR": str(data)},  # no data: the built-in corpus
    )
    return result.exit_code, result.output.strip().splitlines()


def test_an_unwritable_out_is_one_line_before_training(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    other = _manifest(tmp_path / "olmoe", CheckpointSpec.for_family("olmoe"))
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "file.txt").write_text("notes")
    cases = {
        afile: f"checkpoint {afile}: is a file, not a folder; choose a folder to build into",
        afile / "sub": f"checkpoint {afile / 'sub'}: {afile} is a file, not a folder; "
        "choose another path",
        Path("/proc/nope"): "checkpoint /proc/nope: cannot write in /proc: it does not accept "
        "new folders (No such file or directory)",
        loose: f"checkpoint {loose}: is not empty and holds no checkpoint; choose a new or "
        "empty folder",
        other: f"checkpoint {other}: holds a different checkpoint (olmoe); pass --overwrite to "
        "replace it, or choose another folder",
    }
    for out, line in cases.items():
        code, lines = _cli(out, "--family", "mixtral", data=tmp_path / "none")
        assert (code, lines) == (2, [f"error: {line}"]), out
    assert afile.read_text() == "keep me" and (loose / "file.txt").read_text() == "notes"
    code, lines = _cli(loose, "--family", "mixtral", "--overwrite", data=tmp_path / "none")
    assert code == 2 and "holds no checkpoint" in lines[0]  # --overwrite replaces checkpoints only
    assert (loose / "file.txt").is_file()


def test_overwrite_replaces_a_different_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.cli import serve as serve_cli

    built: list[CheckpointSpec] = []
    monkeypatch.setattr(
        serve_cli, "build_checkpoint", lambda out, spec, corpus, overwrite: built.append(spec)
    )
    other = _manifest(tmp_path / "ck", CheckpointSpec.for_family("olmoe"))
    code, _lines = _cli(other, "--family", "mixtral", "--overwrite", data=tmp_path / "none")
    assert code == 0 and [spec.family for spec in built] == ["mixtral"]


def test_rerunning_the_identical_command_does_not_train(tmp_path: Path) -> None:
    planted = (PlantedExpert.parse("1:3:hot"), PlantedExpert.parse("1:7:dead"))
    spec = CheckpointSpec.for_family("mixtral", planted=planted)
    folder = _manifest(tmp_path / "ck", spec)
    flags = ("--family", "mixtral", "--plant", "1:3:hot", "--plant", "1:7:dead")
    code, lines = _cli(folder, *flags, data=tmp_path / "none")
    assert (code, lines) == (0, [f"checkpoint ready: {folder} (already built with this spec)"])
    code, lines = _cli(folder, "--family", "mixtral", "--seed", "1", data=tmp_path / "none")
    assert code == 2 and "holds a different checkpoint (mixtral)" in lines[0]


def test_the_library_checks_before_training_too(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "a.txt").write_text("x")
    for out, match in ((loose, "holds no checkpoint"), (Path("/proc/x"), "cannot write in /proc")):
        with pytest.raises(CheckpointError, match=match):
            ck.build_checkpoint(out, CheckpointSpec(), overwrite=True)


def test_serve_keeps_a_planted_checkpoint_and_never_deletes_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tester3 finding 1, at unit level: ensure_checkpoint (serve, run, chat, batch, ui) builds
    a folder of build-checkpoint with its own spec (here a planted ERNIE whose corpus changed),
    serves a current one untouched, and refuses a folder of unrelated files in one line."""
    from orchestrator.cli.common import ensure_checkpoint
    from orchestrator.config import Settings

    built: list[CheckpointSpec] = []
    monkeypatch.setattr(
        ck, "build_checkpoint", lambda out, spec, corpus, overwrite: built.append(spec)
    )
    spec = CheckpointSpec(planted=(PlantedExpert.parse("2:5:hot"),))
    current = _manifest(tmp_path / "current", spec)
    stale = _manifest(tmp_path / "stale", spec, fingerprint="0" * 16)
    for folder in (current, stale):
        assert ensure_checkpoint(Settings(checkpoint_dir=folder, data_dir=tmp_path)) == folder
    assert built == [spec]  # only the stale one, with its plant
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")  # a model folder build-checkpoint did not write
    assert ensure_checkpoint(Settings(checkpoint_dir=model, data_dir=tmp_path)) == model
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "notes.txt").write_text("mine")
    with pytest.raises(typer.Exit) as exited:
        ensure_checkpoint(Settings(checkpoint_dir=loose, data_dir=tmp_path))
    assert exited.value.exit_code == 2 and (loose / "notes.txt").read_text() == "mine"
    assert built == [spec]


def test_no_help_text_loses_an_angle_bracketed_word() -> None:
    """The CLI renders help as Markdown, where ``<family>`` is an HTML tag and vanished
    (tester3 finding 7: ``.cache/-moe-offline``). Every command's and option's help that
    holds ``<word>`` must still show the word."""
    import re

    from typer import _click as click

    def walk(command: click.Command, path: list[str]):
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])

    runner, tag = CliRunner(), re.compile(r"<([A-Za-z][\w-]*)>")
    for path, command in walk(typer.main.get_command(app), []):
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        words = {m for text in texts for m in tag.findall(text.split("\n\n")[0])}
        if words:
            shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "300"}).output
            assert all(f"<{word}>" in shown for word in words), (path, words)
    shown = runner.invoke(app, ["build-checkpoint", "--help"], env={"COLUMNS": "300"}).output
    assert ".cache/FAMILY-moe-offline" in shown


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("EROFS", "is on a read-only file system"),  # checked by hand on a ro tmpfs mount
        ("EACCES", "is not writable"),  # the tests run as root, so chmod cannot show it
        ("ENOSPC", "does not accept new folders (No space left on device)"),
    ],
)
def test_a_folder_that_refuses_new_folders_is_named_with_its_reason(
    code: str, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    def refuse(**_kwargs: object) -> str:
        number = getattr(errno, code)
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr(ck.tempfile, "mkdtemp", refuse)
    out = tmp_path / "new" / "ck"
    exit_code, lines = _cli(out, "--family", "olmoe", data=tmp_path / "none")
    assert (exit_code, lines) == (
        2,
        [f"error: checkpoint {out}: cannot write in {tmp_path}: it {reason}"],
    )
    assert not (tmp_path / "new").exists()
