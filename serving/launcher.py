"""Start a vLLM OpenAI-compatible server as a child process on this host, and stop it.

>>> from serving.launcher import VLLMServer
>>> from serving.profiles import cpu_profile
>>> profile = cpu_profile(".cache/ernie45-moe-offline")
>>> with VLLMServer(profile, port=8000) as server:  # doctest: +SKIP
...     print(server.base_url)  # http://127.0.0.1:8000/v1, answering /health
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from types import TracebackType

import httpx

from serving.errors import ServerStartError
from serving.profiles import ServingProfile


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

    def launch(self) -> VLLMServer:
        """Start the process and return at once; :meth:`wait_ready` waits for it.

        Two servers launched one after the other, then waited for, start side by side: their
        imports and engine start-up overlap instead of running in turn.

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
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                preexec_fn=_die_with_parent,
            )
        atexit.register(self.stop)
        self._deadline = time.monotonic() + self.startup_timeout_s
        return self

    def wait_ready(self) -> VLLMServer:
        """Block until the launched server answers ``/health``.

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
                code = self.process.poll()
                if code is not None:
                    self.process = None
                    raise ServerStartError(
                        f"vLLM server exited with code {code} during startup",
                        command=self.command,
                        log_path=self.log_path,
                        log_tail=_tail(self.log_path),
                    )
                if server_is_healthy(self.base_url, client=poller):
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
