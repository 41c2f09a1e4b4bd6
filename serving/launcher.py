"""Start a vLLM OpenAI-compatible server as a child process on this host, and stop it.

>>> from serving.launcher import VLLMServer
>>> from serving.profiles import cpu_profile
>>> profile = cpu_profile(".cache/ernie45-moe-offline")
>>> with VLLMServer(profile, port=8000) as server:  # doctest: +SKIP
...     print(server.base_url)  # http://127.0.0.1:8000/v1, answering /health

:class:`ServerSupervisor` watches a started server from a thread: a server that dies (its
process exits, ``kill -9`` included) is noticed within ``poll_s`` seconds (0.5 s by default,
well inside the 5 s the project promises), its log tail is reported, and it is either given up
(the caller exits non-zero) or restarted with backoff (tenacity's wait strategies), each death
and restart counted in the log and in Prometheus (:mod:`orchestrator.observability.metrics`).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import httpx
from tenacity import RetryCallState, Retrying, wait_exponential, wait_random
from tenacity.wait import wait_base

from orchestrator.observability import metrics
from serving.errors import ServerStartError
from serving.placement import EngineCorePlacement, colocate_engine_core
from serving.probe import probe_structured_output
from serving.profiles import ServingProfile

logger = logging.getLogger(__name__)


def _tail(path: Path, lines: int = 40) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return "".join(deque(handle, maxlen=lines)).rstrip()
    except OSError:
        return "(no log written)"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Ask Linux to SIGTERM the server if this process dies without stopping it."""
    os.setsid()
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


#: The one thread that starts every server process. Linux sends the parent-death signal
#: (:func:`_die_with_parent`) when the *thread* that started the child ends, not the process:
#: a server restarted from a :class:`ServerSupervisor`'s thread was killed as soon as that
#: supervisor stopped. This pool's thread lives until the interpreter exits.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vllm-spawn")


def server_is_healthy(
    base_url: str, timeout_s: float = 2.0, client: httpx.Client | None = None
) -> bool:
    """True when ``{server root}/health`` answers 200. ``base_url`` may end in ``/v1``.

    Pass a ``client`` when polling: each new ``httpx.Client`` loads a TLS context, which costs
    a large share of a CPU core per second on a 2-core host that is starting vLLM.
    """
    root = base_url.removesuffix("/").removesuffix("/v1")
    try:
        if client is not None:
            return client.get(f"{root}/health", timeout=timeout_s).status_code == 200
        return httpx.get(f"{root}/health", timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


class VLLMServer:
    """A co-hosted vLLM server: a child process, its log file, and a clean stop.

    Args:
        profile: What to serve and with which flags.
        host: Interface to bind (loopback by default).
        port: TCP port.
        log_path: File that receives the server's stdout and stderr.
        startup_timeout_s: Seconds to wait for ``/health`` (a few minutes for the offline
            checkpoint on 2 busy CPU cores, about 100 s for the 21B shape on an H200).

    Raises:
        ServerStartError: From :meth:`start`, when the process exits or ``/health`` does not
            answer in time; the error carries the command and the tail of the log.
    """

    def __init__(
        self,
        profile: ServingProfile,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        log_path: Path | str = "runs/vllm-server.log",
        startup_timeout_s: float = 600.0,
    ) -> None:
        self.profile = profile
        self.host = host
        self.port = port
        self.log_path = Path(log_path)
        self.startup_timeout_s = startup_timeout_s
        self.process: subprocess.Popen[bytes] | None = None
        #: Where the engine core went once the server answered (``colocate_engine_core``
        #: profiles; None before that, or for other profiles).
        self.engine_core_placement: EngineCorePlacement | None = None
        self._deadline = 0.0

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL, ``http://host:port/v1``."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def command(self) -> list[str]:
        return self.profile.command(sys.executable, self.host, self.port)

    def start(self) -> VLLMServer:
        """Start the process and block until ``/health`` answers (:meth:`launch`, then
        :meth:`wait_ready`).

        Raises:
            ServerStartError: Port already serving, process exited, or timeout.
        """
        return self.launch().wait_ready()

    def launch(self, *, append_log: bool = False) -> VLLMServer:
        """Start the process and return at once; :meth:`wait_ready` waits for it.

        Two servers launched one after the other, then waited for, start side by side: their
        imports and engine start-up overlap instead of running in turn.

        Args:
            append_log: Append to the log file (after a marker line) instead of replacing it;
                a restart keeps the dead server's log this way.

        Raises:
            ServerStartError: A server already answers on the port.
        """
        if server_is_healthy(self.base_url):
            raise ServerStartError(
                f"a server already answers on {self.base_url}; stop it or choose another port",
                command=self.command,
                log_path=self.log_path,
                log_tail="",
            )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.profile.env}
        with self.log_path.open("ab" if append_log else "wb") as log:
            if append_log:
                stamp = datetime.now(UTC).isoformat(timespec="seconds")
                log.write(f"\n--- server restarted at {stamp} ---\n".encode())
                log.flush()
            self.process = _SPAWNER.submit(
                subprocess.Popen,
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                preexec_fn=_die_with_parent,
            ).result()
        atexit.register(self.stop)
        self._deadline = time.monotonic() + self.startup_timeout_s
        return self

    def wait_ready(self) -> VLLMServer:
        """Block until the launched server answers ``/health``; then, for a profile with
        ``colocate_engine_core``, bind its engine core beside its worker
        (:attr:`engine_core_placement` says what moved).

        Raises:
            RuntimeError: :meth:`launch` was not called (a usage mistake).
            ServerStartError: The process exited, or ``startup_timeout_s`` seconds (counted
                from :meth:`launch`) passed; the server is stopped and the error carries the
                log's tail.
        """
        if self.process is None:
            raise RuntimeError("call launch() before wait_ready(), or use start()")
        # A plain loop rather than a retry library: each turn must also notice the child dying.
        with httpx.Client() as poller:
            while True:
                process = self.process
                if process is None:  # stop() was called from another thread meanwhile
                    raise ServerStartError(
                        "vLLM server was stopped while starting",
                        command=self.command,
                        log_path=self.log_path,
                        log_tail=_tail(self.log_path),
                    )
                code = process.poll()
                if code is not None:
                    self.process = None
                    raise ServerStartError(
                        f"vLLM server exited with code {code} during startup",
                        command=self.command,
                        log_path=self.log_path,
                        log_tail=_tail(self.log_path),
                    )
                if server_is_healthy(self.base_url, client=poller):
                    if self.profile.name == "gpu":
                        self.check_structured_output()
                    if self.profile.colocate_engine_core:
                        self.engine_core_placement = colocate_engine_core(process.pid)
                        logger.info("%s", self.engine_core_placement.describe())
                    return self
                if time.monotonic() > self._deadline:
                    self.stop()
                    raise ServerStartError(
                        f"vLLM server did not answer {self.base_url.removesuffix('/v1')}/health "
                        f"within {self.startup_timeout_s:.0f} s",
                        command=self.command,
                        log_path=self.log_path,
                        log_tail=_tail(self.log_path),
                    )
                time.sleep(1.0)

    def check_structured_output(self, client: httpx.Client | None = None) -> None:
        """Send one schema-constrained request (:func:`serving.probe.probe_structured_output`)
        to the healthy server; :meth:`wait_ready` does so for the GPU profile, where vLLM
        0.24.0 answered every structured-output request with an empty HTTP 500 while
        ``/health`` said 200.

        Args:
            client: An ``httpx.Client`` to send through (tests pass a mock transport).

        Raises:
            ServerStartError: The probe failed; the server is stopped and the message is
                :meth:`StructuredOutputProbe.explain` (what came back, the server log lines
                that name the cause, what to do).
        """
        probe = probe_structured_output(
            self.base_url,
            self.profile.served_model_name,
            log_path=self.log_path,
            command=self.command,
            client=client,
        )
        if not probe.ok:
            self.stop()
            raise ServerStartError(
                probe.explain(),
                command=self.command,
                log_path=self.log_path,
                log_tail=_tail(self.log_path),
            )

    def stop(self, grace_s: float = 20.0) -> None:
        """SIGTERM the API server, then SIGKILL what is left of its process group.

        Only the API server gets SIGTERM: it shuts its engine processes down itself. Signalling
        the whole group made each engine process stop on its own while the API server was
        still waiting for it, which vLLM logged as a dead engine and force-killed. Whatever
        is still running after ``grace_s`` seconds (or after the API server exited) gets
        SIGKILL. Safe to call twice; also registered with :mod:`atexit`.
        """
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=grace_s)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # leftovers; the group id is the leader's pid
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        atexit.unregister(self.stop)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


#: Backoff before restart attempt n (1, 2, ...): 2, 4, 8... s up to 60 s, plus up to 1 s of
#: jitter so several supervisors on one host do not restart in step.
DEFAULT_RESTART_WAIT: wait_base = wait_exponential(multiplier=1, min=2, max=60) + wait_random(0, 1)


def backoff_s(wait: wait_base, attempt: int) -> float:
    """Seconds that tenacity's ``wait`` strategy gives before attempt ``attempt`` (1-based).

    The supervisor sleeps itself (it must stay stoppable and keep counting), so it asks the
    strategy for the delay with a bare :class:`tenacity.RetryCallState` instead of running a
    ``Retrying`` loop.
    """
    state = RetryCallState(Retrying(), None, (), {})
    state.attempt_number = attempt
    return float(wait(state))


class ServerSupervisor:
    """Watch a started :class:`VLLMServer` from a daemon thread; notice when it dies.

    Every ``poll_s`` seconds the thread checks the server's process (``Popen.poll``, so a
    ``kill -9`` is seen at the next check). When the process has exited:

    1. the death is reported through ``report`` (default: this module's logger at ERROR) with
       the exit code, the uptime and the last ``tail_lines`` lines of the server log, and
       counted in ``orchestrator_server_exits_total``;
    2. without ``restart``, or once ``max_restarts`` consecutive restarts failed or died again
       before ``stable_s`` seconds of uptime, the supervisor gives up: :attr:`error` holds a
       :class:`~serving.errors.ServerStartError` (message, command, log tail), :meth:`wait`
       returns it and ``on_give_up`` is called with it;
    3. otherwise the server is started again (its log is appended to, not replaced) after
       :func:`backoff_s` seconds of ``wait`` (tenacity; exponential, see
       :data:`DEFAULT_RESTART_WAIT`), and each successful restart is reported and counted in
       ``orchestrator_server_restarts_total``. A restart that fails to start counts as a
       further attempt, with a longer wait.

    Args:
        server: The started server.
        restart: Restart a dead server (``--restart``) instead of giving up.
        max_restarts: Consecutive restart attempts before giving up (at least 0).
        poll_s: Seconds between checks (0 < poll_s <= 5).
        wait: A tenacity wait strategy for the backoff.
        stable_s: Uptime after which a restart no longer counts as consecutive.
        report: Called with each human-readable event line (death with log tail, restart).
        on_give_up: Called once, from the supervisor thread, with the error when it gives up.
        tail_lines: Log lines reported with a death.

    Raises:
        ValueError: ``poll_s`` outside (0, 5] or ``max_restarts`` below 0.

    Example:
        >>> supervisor = ServerSupervisor(server, restart=True).start()  # doctest: +SKIP
        >>> error = supervisor.wait()  # doctest: +SKIP
    """

    def __init__(
        self,
        server: VLLMServer,
        *,
        restart: bool = False,
        max_restarts: int = 5,
        poll_s: float = 0.5,
        wait: wait_base = DEFAULT_RESTART_WAIT,
        stable_s: float = 300.0,
        report: Callable[[str], None] | None = None,
        on_give_up: Callable[[ServerStartError], None] | None = None,
        tail_lines: int = 40,
    ) -> None:
        if not 0 < poll_s <= 5:
            raise ValueError(f"poll_s must be within (0, 5] seconds, got {poll_s}")
        if max_restarts < 0:
            raise ValueError(f"max_restarts must be 0 or more, got {max_restarts}")
        self.server = server
        self.restart = restart
        self.max_restarts = max_restarts
        self.poll_s = poll_s
        self.wait_strategy = wait
        self.stable_s = stable_s
        self.report = report or (lambda line: logger.error("%s", line))
        self.on_give_up = on_give_up
        self.tail_lines = tail_lines
        #: Successful restarts so far.
        self.restarts = 0
        #: Deaths noticed so far.
        self.deaths = 0
        #: Set when the supervisor gave up; the reason, with the log tail.
        self.error: ServerStartError | None = None
        self._stop = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> ServerSupervisor:
        """Start watching (the server must have been started)."""
        if self.server.process is None:
            raise RuntimeError("start the server before supervising it")
        metrics.observe_server_up()
        self._thread = threading.Thread(target=self._watch, name="vllm-supervisor", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching (before stopping the server on purpose). After it returns,
        ``on_give_up`` is never called. Safe to call twice."""
        with self._lock:
            self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.poll_s + 30)

    def wait(self, timeout: float | None = None) -> ServerStartError | None:
        """Block until the supervisor gives up or is stopped (or ``timeout`` seconds pass);
        return :attr:`error` (None when stopped, or still watching)."""
        self._done.wait(timeout)
        return self.error

    def _event(self, line: str) -> None:
        try:
            self.report(line)
        except Exception:  # a broken console must not kill the supervisor
            logger.exception("could not report a server event")

    def _watch(self) -> None:
        try:
            self._watch_loop()
        finally:
            self._done.set()

    def _watch_loop(self) -> None:
        attempt = 0  # consecutive restart attempts
        up_since = time.monotonic()
        while not self._stop.wait(self.poll_s):
            process = self.server.process
            if process is None:  # stopped by its owner
                return
            code = process.poll()
            if code is None:
                continue
            with self._lock:
                if self._stop.is_set():
                    return  # the owner is stopping it: not a death
            self.deaths += 1
            uptime = time.monotonic() - up_since
            metrics.observe_server_exit(code)
            tail = _tail(self.server.log_path, self.tail_lines)
            self._event(
                f"vLLM server (pid {process.pid}, {self.server.base_url}) died with exit code "
                f"{code}{_signal_name(code)} after {uptime:.0f} s up; last lines of "
                f"{self.server.log_path}:\n{tail}"
            )
            if uptime >= self.stable_s:
                attempt = 0
            self.server.stop(grace_s=0)  # kill what is left of its process group
            error = ServerStartError(
                f"vLLM server died with exit code {code}{_signal_name(code)}"
                + (
                    f" and {attempt} restart attempt(s) did not keep it up"
                    if self.restart
                    else "; run with --restart to restart it automatically"
                ),
                command=self.server.command,
                log_path=self.server.log_path,
                log_tail=tail,
            )
            while True:
                if not self.restart or attempt >= self.max_restarts:
                    self._give_up(error)
                    return
                attempt += 1
                delay = backoff_s(self.wait_strategy, attempt)
                self._event(
                    f"restarting the vLLM server in {delay:.1f} s (attempt {attempt} of "
                    f"{self.max_restarts})"
                )
                if self._stop.wait(delay):
                    return
                try:
                    self.server.launch(append_log=True)
                    if self._stop.is_set():  # stopped while launching: leave nothing behind
                        self.server.stop(grace_s=0)
                        return
                    self.server.wait_ready()
                except ServerStartError as exc:
                    if self._stop.is_set():
                        return
                    metrics.observe_server_exit(None)
                    self._event(f"restart attempt {attempt} failed: {exc}")
                    error = exc
                    continue
                if self._stop.is_set():
                    return
                self.restarts += 1
                metrics.observe_server_restart()
                up_since = time.monotonic()
                self._event(
                    f"vLLM server restarted on {self.server.base_url} (pid "
                    f"{self.server.process.pid if self.server.process else '?'}; restart "
                    f"{self.restarts} of this run)"
                )
                break

    def _give_up(self, error: ServerStartError) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            self.error = error
            if self.on_give_up is not None:
                self.on_give_up(error)


def _signal_name(code: int) -> str:
    if code >= 0:
        return ""
    with contextlib.suppress(ValueError):
        return f" ({signal.Signals(-code).name})"
    return ""
