"""Every option is checked before a model server is asked (app15): bad input is one line and
exit 2 at once, not exit 1 after a server check (or minutes of a co-hosted server's start).

``handoff resume`` asked the server before it checked ``--by`` (a user name, not the policy
or an id) and ``--note`` (at most 2,000 characters of UTF-8); ``chat`` before it saw that a
``--message`` was no text (bytes that are not UTF-8 on the command line); ``report`` before it
saw that ``--out`` could not be made (and then crashed with a traceback); ``batch`` before it
saw that ``--attachments-dir`` does not exist. (``report`` makes its folder once the workbook
reads: a bad workbook leaves none.) The server probe here fails the test if it is reached."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_handoff_withdraw import waiting  # noqa: F401  (a fixture)
from typer.testing import CliRunner

from orchestrator.cli import app
from orchestrator.config import Settings
from workflows.customer_service.store import OrderStore

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
        # the --db below names no file: chat does not make an empty store there (user49)
        (["chat", "--message", "hi", "--no-launch"], "order store t.db does not exist"),
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
    assert not Path("t.db").exists()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--by", "olga k"], "name who decided (--by NAME)"),
        (["--by", "policy"], "does not name a person"),
        (["--by", "C00001"], "does not name a person"),
        (["--by", "olga", "--note", "n" * 2001], "the note is over 2,000 characters"),
        (["--by", "olga", "--note", "ok \udcff"], "--note holds a lone surrogate"),
    ],
)
def test_a_decision_is_checked_before_any_server(
    waiting: tuple[Settings, OrderStore, str, str],  # noqa: F811  (the imported fixture)
    flags: list[str],
    said: str,
) -> None:
    settings, store, customer, order = waiting
    args = ["handoff", "resume", "w", "--approve", *flags, "--db", str(settings.cs_database_url)]
    done = CliRunner().invoke(app, [*args, *SERVER])
    assert done.exit_code == 2, (done.output, done.exception)
    assert said in " ".join(done.output.split()) and "Traceback" not in done.output
    assert store.handoffs("waiting") and store.tools(customer).refund_count(order) == 0
