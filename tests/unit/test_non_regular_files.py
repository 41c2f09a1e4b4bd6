"""Inputs that are not regular files get an error naming what they are (issue: `orchestrator
report /dev/null` said "no such file"): a character device, a named pipe, a socket, a folder,
a dangling symlink, a missing path; for ``report``, ``batch`` and a batch row's attachment."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.batch.files import file_problem
from orchestrator.batch.inputs import resolve_attachment
from orchestrator.cli.app import app

runner = CliRunner()


@pytest.fixture
def kinds(tmp_path: Path) -> Iterator[dict[str, tuple[Path, str]]]:
    """A path of each kind, with the words the error must use."""
    fifo = tmp_path / "pipe.xlsx"
    os.mkfifo(fifo)
    sock_path = tmp_path / "s.csv"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    dangling = tmp_path / "gone.csv"
    dangling.symlink_to(tmp_path / "nowhere.csv")
    folder = tmp_path / "folder.xlsx"
    folder.mkdir()
    try:
        yield {
            "device": (Path("/dev/null"), "character device"),
            "fifo": (fifo, "named pipe"),
            "socket": (sock_path, "socket"),
            "dangling": (dangling, "symlink to"),
            "missing": (tmp_path / "missing.xlsx", "does not exist"),
            "folder": (folder, "is a folder"),
        }
    finally:
        sock.close()


def test_file_problem_names_each_kind(kinds: dict[str, tuple[Path, str]], tmp_path: Path) -> None:
    for name, (path, words) in kinds.items():
        problem = file_problem(path)
        assert problem is not None and words in problem, (name, problem)
    regular = tmp_path / "ok.csv"
    regular.write_text("text\nhello\n")
    assert file_problem(regular) is None
    assert file_problem(tmp_path / "ok.csv" / "below") is not None  # a file used as a folder


@pytest.mark.parametrize("kind", ["device", "fifo", "socket", "dangling", "missing"])
def test_report_names_what_a_non_regular_file_is(
    kind: str, kinds: dict[str, tuple[Path, str]]
) -> None:
    path, words = kinds[kind]
    result = runner.invoke(app, ["report", str(path), "--no-model"], env={"COLUMNS": "300"})
    shown = " ".join(result.output.split())
    assert result.exit_code == 2, shown
    assert words in shown and str(path) in shown and "pass a spreadsheet file" in shown
    if kind != "missing":
        assert "no such file" not in shown


@pytest.mark.parametrize("kind", ["device", "fifo", "socket", "dangling"])
def test_batch_names_what_a_non_regular_input_is(
    kind: str, kinds: dict[str, tuple[Path, str]], tmp_path: Path
) -> None:
    path, words = kinds[kind]
    for extra in ([], ["--text-column", "text"]):  # before and after the column check
        result = runner.invoke(
            app,
            ["batch", str(path), *extra, "--out", str(tmp_path / "r.xlsx")],
            env={"COLUMNS": "300"},
        )
        shown = " ".join(result.output.split())
        assert result.exit_code == 2, shown
        assert words in shown and "give an .xlsx" in shown


def test_an_attachment_that_is_a_device_or_a_pipe_is_named(
    kinds: dict[str, tuple[Path, str]],
) -> None:
    fifo, _ = kinds["fifo"]
    resolved, why = resolve_attachment(fifo.name, fifo.parent)
    assert resolved is None and why is not None and "named pipe" in why
    resolved, why = resolve_attachment("null", Path("/dev"))
    assert resolved is None and why is not None and "character device" in why
    resolved, why = resolve_attachment("missing.xlsx", fifo.parent)
    assert resolved is None and why is not None and "does not exist" in why
