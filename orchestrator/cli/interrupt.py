"""Ctrl-C for the commands that start a co-hosted vLLM server (``serve``, ``run``).

A command stopped by Ctrl-C prints one line on standard error at once, stops its server, and
exits with :data:`INTERRUPTED_EXIT` (130 = 128 + SIGINT, what a shell reports for a program
ended by Ctrl-C, so a script can tell a stop by the user from a failure, exit 1).

While a server is still starting it is not worth stopping politely: a vLLM server that was
importing and loading used the whole 20 s grace of :meth:`~serving.launcher.VLLMServer.stop`,
silently (issue 46). So a Ctrl-C in that phase kills the server's process
group at once (:func:`kill_child_servers`); a server that is up gets SIGTERM and shuts its
engine down itself (:meth:`serving.launcher.VLLMServer.stop`).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from types import FrameType

import psutil
import typer

from orchestrator.cli.common import err

#: Exit status of a command stopped by Ctrl-C (128 + SIGINT).
INTERRUPTED_EXIT = 130


def kill_child_servers() -> int:
    """SIGKILL the process group of every child of this process that leads its own session.

    :class:`~serving.launcher.VLLMServer` starts each server with ``setsid``, so a child that
    leads a session is a co-hosted server, and its group holds the server's engine processes.

    Returns:
        How many process groups were signalled.
    """
    killed = 0
    for child in psutil.Process().children():
        with contextlib.suppress(ProcessLookupError, PermissionError, psutil.Error):
            if os.getsid(child.pid) == child.pid:
                os.killpg(child.pid, signal.SIGKILL)
                killed += 1
    return killed


class CtrlC:
    """A SIGINT handler: the first Ctrl-C prints ``message`` and raises ``KeyboardInterrupt``
    (killing starting servers first while :attr:`starting` is True); a second one kills every
    child server at once and returns, so the stop already under way is never broken off by a
    traceback."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.starting = True
        self.seen = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.seen:
            kill_child_servers()
            return
        self.seen = True
        err.print(self.message, markup=False, highlight=False, soft_wrap=True)
        if self.starting:
            kill_child_servers()
        raise KeyboardInterrupt


@contextlib.contextmanager
def ctrl_c(message: str) -> Iterator[CtrlC]:
    """Install a :class:`CtrlC` handler for the block (the previous one is put back after).

    Args:
        message: The one line printed when Ctrl-C arrives, e.g. ``"stopping (Ctrl-C)"``.

    Yields:
        The handler; set its ``starting`` to False once the server answers.
    """
    handler = CtrlC(message)
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield handler
    finally:
        signal.signal(signal.SIGINT, previous)


def interrupted() -> typer.Exit:
    """The exit to raise after a Ctrl-C was handled (status :data:`INTERRUPTED_EXIT`)."""
    return typer.Exit(INTERRUPTED_EXIT)
