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


def atomic_write_text(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` so that readers see the old file or the new one,
    never half of it.

    Raises:
        UserError: The folder does not exist, or ``path`` is a folder or not writable.
    """
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{target} is a folder; give a file name such as {target / 'skew.html'}")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"folder {folder} does not exist; create it or choose another path")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UserError(f"cannot write in {folder}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give a normal file's mode
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
