"""Every option is checked before a model server is asked (app15): bad input is one line and
exit 2 at once, not exit 1 after a server check (or minutes of a co-hosted server's start).

``chat`` asked the server before it saw that a ``--message`` was no text (bytes that are not
UTF-8 on the command line), ``report`` before it saw that ``--out`` could not be made (and then
crashed with a traceback), ``batch`` before it saw that ``--attachments-dir`` does not exist.
(``report`` makes its folder once the workbook reads: a bad workbook leaves none.) The server
probe here fails the test if it is reached."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app

SERVER = ["--server-url", "http://127.0.0.1:9"]


@pytest.fixture(autouse=True)
def no_server_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Any health check of a model server fails the command (exit 1, not 2)."""

    def asked(url: str, *args: object, **kwargs: object) -> bool:
        raise AssertionError(f"the server at {url} was asked before the options were checked")

    monkeypatch.setattr("serving.launcher.server_is_healthy", asked)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.csv").write_text("text\nwhere is my refund\n", encoding="utf-8")
    (tmp_path / "a_file").write_text("not a folder", encoding="utf-8")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["chat", "--message", "a\udcffb", "--no-launch"], "--message is no text to send"),
        (["chat", "--message", "x" * 1_000_001, "--no-launch"], "--message is no text to send"),
        (["chat", "--message", "hi", "--message", "b\udcff", "--no-launch"], "--message"),
        (["report", "in.csv", "--out", "a_file/reports"], "cannot make the report folder"),
        (["report", "in.csv", "--no-model", "--out", "a_file/r"], "cannot make the report folder"),
        (
            ["batch", "in.csv", "--text-column", "text", "--attachments-dir", "nowhere"],
            "--attachments-dir nowhere does not exist",
        ),
        (
            ["batch", "in.csv", "--text-column", "text", "--attachments-dir", "a_file"],
            "--attachments-dir a_file is not a folder",
        ),
    ],
)
def test_bad_input_is_refused_before_any_server(args: list[str], said: str) -> None:
    done = CliRunner().invoke(app, [*args, *SERVER, "--db", "sqlite:///t.db"])
    assert done.exit_code == 2, (done.output, done.exception)
    assert said in " ".join(done.output.split())
    assert done.output.count("error:") == 1 and "Traceback" not in done.output
