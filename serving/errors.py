"""Exceptions raised by the serving layer (checkpoints, the co-hosted server, expert-routing
capture).

:class:`ServingError` is an :class:`~orchestrator.exceptions.OrchestratorError`, so one
``except OrchestratorError`` catches these too. The whole tree, with these classes in it, is
drawn in :mod:`orchestrator.exceptions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from orchestrator.exceptions import OrchestratorError


class ServingError(OrchestratorError):
    """Base class of the serving layer's errors."""


class CheckpointError(ServingError, ValueError):
    """A checkpoint folder is missing, incomplete or not an ERNIE-4.5 model.

    Attributes:
        path: The checkpoint folder.
    """

    def __init__(self, path: Path | str, reason: str) -> None:
        self.path = Path(path)
        super().__init__(f"checkpoint {self.path}: {reason}")


class UnsupportedArchitectureError(CheckpointError):
    """A model config is an MoE of no supported family, or lacks a field its family needs.

    Attributes:
        model_type: The config's ``model_type``.
        architectures: The config's ``architectures``.
        missing: The fields (or alternatives, ``"a or b"``) the config lacks.
        path: The checkpoint folder, or ``config.json`` when the config came without one.
    """

    def __init__(
        self,
        model_type: str,
        architectures: Sequence[str],
        *,
        missing: Sequence[str] = (),
        reason: str = "not a supported MoE family",
        path: Path | str | None = None,
    ) -> None:
        self.model_type = model_type
        self.architectures = tuple(architectures)
        self.missing = tuple(missing)
        self.reason = reason
        lacks = f"; missing config fields: {', '.join(self.missing)}" if self.missing else ""
        message = f"model_type {model_type!r} (architectures {list(self.architectures)}): {reason}"
        super().__init__(path if path is not None else "config.json", message + lacks)
        if path is None:  # a config without a folder: no "checkpoint config.json:" prefix
            self.args = (f"model config: {message}{lacks}",)

    def __str__(self) -> str:
        return str(self.args[0])

    def at(self, path: Path | str) -> UnsupportedArchitectureError:
        """The same error, naming the checkpoint folder ``path``."""
        return UnsupportedArchitectureError(
            self.model_type, self.architectures, missing=self.missing, reason=self.reason, path=path
        )


class ServerStartError(ServingError, RuntimeError):
    """The vLLM server process exited or did not answer ``/health`` in time.

    Attributes:
        command: The command line that was run.
        log_path: The server's log file.
        log_tail: The last lines of that log, which usually name the cause.
    """

    def __init__(self, reason: str, *, command: list[str], log_path: Path, log_tail: str) -> None:
        self.command = command
        self.log_path = log_path
        self.log_tail = log_tail
        super().__init__(
            f"{reason}\ncommand: {' '.join(command)}\nlog: {log_path}\n"
            f"--- last lines of the server log ---\n{log_tail}"
        )


class ExpertRoutingDecodeError(ServingError, ValueError):
    """A routed-experts payload had an unexpected type, dtype or shape."""
