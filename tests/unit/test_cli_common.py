"""The CLI's shared helpers: settings from flags, fail, model_server (no vLLM started).

Servers here are stand-ins on loopback: a thread answering ``/health`` in this process, or a
short Python child process in place of vLLM (as in ``test_launcher.py``).
"""

from __future__ import annotations

import http.server
import io
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import typer
import typer.core
import typer.main
from rich.console import Console
from typer.testing import CliRunner

from orchestrator.cli import app, common
from orchestrator.config import Settings
from orchestrator.exceptions import ModelCallError, ServerUnavailableError, UserError
from serving.launcher import VLLMServer
from tests.fixtures.servers import HEALTH_HANDLER, StandInProfile, free_port

runner = CliRunner()

#: A stand-in vLLM: answers 200 on /health, 404 elsewhere, on the port after ``--port``.
HEALTH_SERVER = (
    "import http.server, sys\n"
    + HEALTH_HANDLER
    + 'http.server.HTTPServer(("127.0.0.1", int(sys.argv[2])), Health).serve_forever()\n'
)


@pytest.fixture
def stderr(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """What the helpers print on standard error, one message per line (no wrapping)."""
    buffer = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=buffer, width=1000))
    return buffer


@contextmanager
def stand_in_server(models: bytes | None) -> Iterator[str]:
    """A loopback HTTP server that answers 200 on /health and ``models`` (raw body) on
    /v1/models (404 when None); yields its base URL."""

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/v1/models" and models is not None:
                self.send_response(200)
                self.end_headers()
                self.wfile.write(models)
                return
            self.send_response(200 if self.path == "/health" else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def models_body(*names: str) -> bytes:
    return json.dumps({"object": "list", "data": [{"id": n} for n in names]}).encode()


class _StartedError(Exception):
    """Raised by the stand-in for starting a co-hosted server (see :func:`started`)."""


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ports at which ``model_server`` tried to start its own server: the attempt is
    recorded, then refused with :class:`_StartedError` (no checkpoint is built)."""
    ports: list[int] = []

    def co_hosted(settings: Settings) -> VLLMServer:
        ports.append(settings.server_port)
        raise _StartedError

    monkeypatch.setattr(common, "ensure_checkpoint", lambda s: s.checkpoint_dir)
    monkeypatch.setattr(common, "co_hosted_server", co_hosted)
    return ports


@pytest.fixture
def healthy_url() -> Iterator[str]:
    """The base URL of a loopback stand-in that answers /health and lists the default
    served model (``ernie``) on /v1/models."""
    with stand_in_server(models_body("ernie")) as url:
        yield url


@pytest.fixture
def no_launch(monkeypatch: pytest.MonkeyPatch) -> list[Settings]:
    """Record (and refuse) every attempt to build a checkpoint or start a co-hosted server."""
    attempts: list[Settings] = []

    def refuse(settings: Settings) -> VLLMServer:
        attempts.append(settings)
        raise AssertionError("model_server tried to start a co-hosted server")

    monkeypatch.setattr(common, "ensure_checkpoint", refuse)
    monkeypatch.setattr(common, "co_hosted_server", refuse)
    return attempts


# settings_from_flags


def test_settings_from_flags_ignores_flags_left_at_none() -> None:
    settings = common.settings_from_flags(server_url=None, concurrency=7, database_url=None)
    assert settings.concurrency == 7
    assert settings.server_url == Settings().server_url
    assert settings.database_url == Settings().database_url


def test_settings_from_flags_reports_a_bad_value_on_one_line_naming_the_field(
    stderr: io.StringIO,
) -> None:
    with pytest.raises(typer.Exit) as info:
        common.settings_from_flags(concurrency=0, server_url="http://127.0.0.1:1/v1")
    assert info.value.exit_code == 2
    printed = stderr.getvalue()
    assert printed.count("\n") == 1, printed
    assert printed.startswith("error: invalid setting: concurrency = 0: ")
    assert "greater than or equal to 1" in printed and "ORCH_CONCURRENCY" in printed
    assert "pydantic" not in printed and "Traceback" not in printed


def test_a_command_with_a_bad_flag_exits_2_naming_it() -> None:
    result = runner.invoke(app, ["run", "--concurrency", "0", "--no-launch"])
    assert result.exit_code == 2, result.output
    assert "invalid setting: concurrency = 0" in " ".join(result.output.split())


# fail


def test_fail_prints_the_message_as_text_and_returns_the_exit(stderr: io.StringIO) -> None:
    exit_ = common.fail(UserError("column [b] of [sheet1] is empty"), 2)
    assert isinstance(exit_, typer.Exit) and exit_.exit_code == 2
    assert stderr.getvalue() == "error: column [b] of [sheet1] is empty\n"  # text, not markup
    assert common.fail("the store is locked").exit_code == 1


# model_server


def test_model_server_uses_a_server_that_answers_without_launching(
    healthy_url: str, no_launch: list[Settings]
) -> None:
    settings = Settings(server_url=healthy_url)
    for launch in (True, False):
        with common.model_server(settings, launch=launch) as url:
            assert url == healthy_url
    assert no_launch == []


def test_model_server_refuses_when_none_answers_and_launch_is_false(
    no_launch: list[Settings],
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    body_ran = False
    with (
        pytest.raises(ServerUnavailableError) as info,
        common.model_server(Settings(server_url=url), launch=False),
    ):
        body_ran = True
    assert not body_ran and no_launch == []
    assert url in str(info.value) and "orchestrator serve" in str(info.value)


def test_model_server_starts_a_co_hosted_server_and_stops_it_on_ctrl_c(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    port = free_port()
    profile = StandInProfile(name="cpu", model="stand-in", routing="replay", source=HEALTH_SERVER)
    server = VLLMServer(profile, port=port, log_path=tmp_path / "server.log", startup_timeout_s=60)
    built: list[Path] = []
    monkeypatch.setattr(common, "ensure_checkpoint", lambda s: built.append(s.checkpoint_dir))
    monkeypatch.setattr(common, "co_hosted_server", lambda s: server)
    settings = Settings(server_url=f"http://127.0.0.1:{free_port()}/v1", checkpoint_dir=tmp_path)
    with (
        pytest.raises(KeyboardInterrupt),
        common.model_server(settings, launch=True) as url,
    ):
        assert url == f"http://127.0.0.1:{port}/v1" and server.running
        pid = server.process.pid if server.process else -1
        raise KeyboardInterrupt
    assert built == [tmp_path]
    assert not server.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # the stand-in is gone, not left behind


def test_a_command_without_a_server_and_with_no_launch_exits_1_naming_the_url(
    tmp_path: Path, no_launch: list[Settings]
) -> None:
    (tmp_path / "customer_service").mkdir()
    (tmp_path / "customer_service" / "tickets.csv").write_text(
        "text\nmy invoice is wrong\n", encoding="utf-8"
    )
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = runner.invoke(
        app,
        [
            "run",
            "--limit",
            "1",
            "--no-launch",
            "--server-url",
            url,
            "--data-dir",
            str(tmp_path),
            "--database-url",
            f"sqlite:///{tmp_path / 't.db'}",
        ],
    )
    assert result.exit_code == 1, result.output
    flat = "".join(result.output.split())
    assert url in flat and "orchestratorserve" in flat
    assert no_launch == []


# the root app


def test_the_root_app_has_every_feature_modules_commands() -> None:
    """Each feature module registers its own commands; the root lists them all."""

    def names(command: object) -> set[str]:
        assert isinstance(command, typer.core.TyperGroup)
        return set(command.commands)

    root = typer.main.get_command(app)
    assert names(root) >= {
        "run", "load", "classify", "build-checkpoint", "serve", "report", "skew",
        "moderate", "moderation", "classifier",
    }  # fmt: skip
    assert isinstance(root, typer.core.TyperGroup)
    assert names(root.commands["moderation"]) >= {"eval", "check"}
    assert names(root.commands["classifier"]) >= {"eval", "fit-thresholds", "build-set"}


def test_python_dash_m_runs_the_same_app() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert "build-checkpoint" in done.stdout and "moderation" in done.stdout


# model_server: a server already on the port that serves something else


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (models_body("other-model"), "serves 'other-model'"),
        (models_body(), "serves no model"),
        (b"<html>not json</html>", "does not list its models"),
        (None, "does not list its models on /v1/models (HTTP 404)"),
    ],
)
def test_model_server_refuses_a_server_that_does_not_serve_the_model(
    body: bytes | None, said: str, no_launch: list[Settings]
) -> None:
    with (
        stand_in_server(body) as url,
        pytest.raises(ModelCallError) as info,
        common.model_server(Settings(server_url=url), launch=False),
    ):
        pytest.fail("the block ran against the wrong server")
    message = str(info.value)
    assert url in message and said in message and "'ernie'" in message
    assert "--server-url" in message and no_launch == []


def test_model_server_starts_its_own_server_on_a_free_port_when_the_port_serves_another_model(
    started: list[int], stderr: io.StringIO
) -> None:
    with stand_in_server(models_body("someone-elses-model")) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with (
            pytest.raises(_StartedError),
            common.model_server(Settings(server_url=url, server_port=port), launch=True),
        ):
            pass
    assert started and started[0] != port
    note = stderr.getvalue()
    assert "someone-elses-model" in note and f"port {started[0]}" in note


def test_model_server_says_which_server_it_uses(healthy_url: str, stderr: io.StringIO) -> None:
    with common.model_server(Settings(server_url=healthy_url), launch=True) as url:
        assert url == healthy_url
    assert f"using the server already at {healthy_url} (it serves ernie)" in stderr.getvalue()


def test_model_server_picks_a_free_port_when_the_port_is_taken_by_a_non_server(
    started: list[int], stderr: io.StringIO
) -> None:
    with socket.socket() as taken:  # bound and listening, answers no HTTP
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = Settings(server_url=f"http://127.0.0.1:{free_port()}/v1", server_port=port)
        with pytest.raises(_StartedError), common.model_server(settings, launch=True):
            pass
    assert started and started[0] != port
    assert f"port {port} is taken" in stderr.getvalue()


# --db / --database-url: a path or a URL, the same way everywhere


@pytest.mark.parametrize(
    ("value", "url"),
    [
        ("runs/t.db", "sqlite:///runs/t.db"),
        ("/abs/t.db", "sqlite:////abs/t.db"),
        ("sqlite:///runs/t.db", "sqlite:///runs/t.db"),
        ("postgresql+psycopg://u@localhost/db", "postgresql+psycopg://u@localhost/db"),
        ("odd:name.db", "sqlite:///odd:name.db"),  # a colon in a file name is still a path
    ],
)
def test_database_url_takes_a_path_or_a_url(value: str, url: str) -> None:
    assert common.database_url(value) == url


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("a\x00b.db", "NUL"),
        ("sqlite:runs/t.db", "needs '//'"),
        ("http://example.com/db", "neither a SQLAlchemy URL"),
        ("postgresql+nosuchdriver://h/db", "neither a SQLAlchemy URL"),
    ],
)
def test_database_url_refuses_what_is_neither(value: str, why: str) -> None:
    with pytest.raises(UserError, match="--db") as info:
        common.database_url(value)
    assert why in str(info.value) and "file path" in str(info.value)


def test_database_url_refuses_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a folder"):
        common.database_url(str(tmp_path))


@pytest.mark.parametrize(
    "command",
    [
        ["load"],
        ["skew", "--window", "all"],
        ["telemetry", "pending"],
        ["telemetry", "fill-routing"],
    ],
)
def test_every_telemetry_command_reads_a_path_and_a_url_for_db_alike(
    command: list[str], tmp_path: Path
) -> None:
    """--db and --database-url each take a path or a URL; the same missing file gets the same
    error either way, and a value that is neither is refused before anything is opened."""
    db = tmp_path / "missing.db"
    outputs = []
    for flag in ("--db", "--database-url"):
        for value in (str(db), f"sqlite:///{db}"):
            result = runner.invoke(app, [*command, flag, value], env={"COLUMNS": "300"})
            assert result.exit_code == 2, (flag, value, result.output)
            outputs.append(" ".join(result.output.split()))
            assert "does not exist" in outputs[-1] and "missing.db" in outputs[-1]
    assert not db.exists()  # nothing created by a read command
    bad = runner.invoke(app, [*command, "--db", "sqlite:x.db"], env={"COLUMNS": "300"})
    assert bad.exit_code == 2 and "needs '//'" in " ".join(bad.output.split())
    if command[0] != "load":  # load's --db is an alias of --database-url (one option)
        both = runner.invoke(app, [*command, "--db", "a.db", "--database-url", "b.db"])
        assert both.exit_code == 2 and "not both" in both.output


def test_a_long_step_says_what_runs_when_no_spinner_can_be_drawn(
    stderr: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "console", Console(file=io.StringIO()))  # a log, not a terminal
    with common.working("starting co-hosted vLLM; log: runs/vllm-server.log") as status:
        status.update("still starting")
    assert stderr.getvalue() == "starting co-hosted vLLM; log: runs/vllm-server.log ...\n"
    terminal = Console(file=io.StringIO(), force_terminal=True)
    monkeypatch.setattr(common, "console", terminal)
    with common.working("on a terminal, a spinner") as status:
        status.update("updated")
    assert stderr.getvalue().count("\n") == 1  # the spinner, not a line
