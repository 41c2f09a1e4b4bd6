"""Atomic file output: write a temporary sibling, then ``os.replace`` it into place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from orchestrator.exceptions import UserError


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _temp_sibling(target: Path) -> tuple[int, str]:
    """An open temporary file beside ``target`` (its descriptor and path).

    Raises:
        UserError: ``target`` is a folder, its folder does not exist (or is a file), or the
            folder is not writable (permissions, a read-only mount, /proc).
    """
    if target.is_dir():
        raise UserError(
            f"cannot write {target}: it is a folder; give a file name such as {target / 'out'}"
        )
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise UserError(f"cannot write {target}: {folder} {what}; choose another path")
    try:
        return tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UserError(
            f"cannot write {target}: cannot create a file in {folder} ({exc.strerror})"
        ) from exc


def check_writable(path: Path | str) -> None:
    """Fail early when :func:`atomic_write_text` could not write ``path``: creates and removes
    a temporary sibling, so a read-only mount or /proc is caught too, before any long work.

    Raises:
        UserError: As :func:`atomic_write_text`.
    """
    fd, tmp = _temp_sibling(Path(path))
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)


def atomic_write_text(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` so that readers see the old file or the new one,
    never half of it.

    Raises:
        UserError: The folder does not exist, or ``path`` is a folder or not writable.
        OSError: The write or the rename failed (a full disk); the temporary file is removed
            and an old file at ``path`` is left whole.
    """
    target = Path(path)
    fd, tmp = _temp_sibling(target)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give a normal file's mode
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
