"""Output files of every command: whole or not at all, and never in place of a special file.

The one writer behind ``skew --html/--json/--prom``, ``batch --out``, ``report --out``, the
moderation reports and scorer, the classifier's fitted files and the UI's user file:

* a regular file (or a name that does not exist yet) is written to a temporary sibling and
  renamed over the target only when complete, so a reader or a full disk never sees half a
  file and an old file is left whole when the write fails;
* a symbolic link is followed: its final target is replaced that way, and the link stays;
* a target that exists and is not a regular file (a device such as ``/dev/null`` or
  ``/dev/full``, a named pipe, a socket) and a name of an open descriptor (``/dev/stdout``,
  ``/dev/fd/3``, ``/proc/self/fd/1``) are written directly, never renamed over: renaming over
  ``/dev/full`` as root had replaced the device by a regular file (tester4 finding 6). This
  process's own descriptors (``/dev/stdout``, ``/dev/fd/N``) are written through the open
  descriptor, so ``--html /dev/stdout > log`` adds to the log after what was printed;
* a folder, or a missing folder, is refused with one line.

Every failure is a :class:`~orchestrator.exceptions.UserError` whose one-line message names
the file and the reason (``cannot write out.html: No space left on device``); no temporary
file is left behind.

Own code, not a library: ``atomicwrites`` (archived in 2022) and ``safer`` both rename over
the path as given, so they replace a symbolic link, a named pipe or a device just as the old
writers here did.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from orchestrator.exceptions import UserError

#: Names of open descriptors: a file reached through one is written, never renamed over.
_DESCRIPTORS = ("/proc/", "/dev/fd/", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def _umask() -> int:
    current = os.umask(0)  # the only portable way to read it is to set it
    os.umask(current)
    return current


@dataclass(frozen=True)
class _Target:
    """Where one output goes: ``path`` as given, ``real`` (the file the rename replaces, links
    followed) and ``direct`` (True: write straight into ``path``, no rename)."""

    path: Path
    real: Path
    direct: bool
    fd: int | None = None  # this process's open descriptor that ``path`` names


def _names_descriptor(path: Path) -> bool:
    """True when ``path`` or a link on its way names an open descriptor (``/dev/stdout`` ->
    ``/proc/self/fd/1`` -> the file the shell redirected to)."""
    seen = 0
    current = Path(os.path.abspath(path))
    while True:
        if str(current).startswith(_DESCRIPTORS):
            return True
        if not current.is_symlink() or seen > 40:
            return False
        current = Path(os.path.abspath(current.parent / os.readlink(current)))
        seen += 1


def _own_descriptor(path: Path) -> int | None:
    """The number of this process's descriptor that ``path`` names (``/dev/stdout`` is 1,
    ``/dev/fd/3`` and ``/proc/self/fd/3`` are 3), else None."""
    name = os.path.abspath(path)
    fixed = {"/dev/stdout": 1, "/dev/stderr": 2}
    if name in fixed:
        return fixed[name]
    found = re.fullmatch(rf"/(?:dev/fd|proc/self/fd|proc/{os.getpid()}/fd)/(\d+)", name)
    return int(found.group(1)) if found else None


def _target(path: Path | str) -> _Target:
    """Decide how ``path`` is written.

    Raises:
        UserError: ``path`` is a folder, or the folder it goes into is missing or a file.
    """
    given = Path(path)
    if given.is_dir():
        raise UserError(
            f"cannot write {given}: it is a folder; give a file name such as {given / 'out'}"
        )
    try:
        mode = given.stat().st_mode  # follows links
    except OSError:
        mode = None
    if mode is not None and (not stat.S_ISREG(mode) or _names_descriptor(given)):
        return _Target(given, given, direct=True, fd=_own_descriptor(given))
    real = Path(os.path.realpath(given))
    folder = real.parent
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise UserError(f"cannot write {given}: {folder} {what}; choose another path")
    return _Target(given, real, direct=False)


def _temp_for(target: _Target) -> Path:
    """An empty temporary file: beside the real target (so the rename stays on one file
    system), or in the system's temp folder for a direct write."""
    folder = None if target.direct else target.real.parent
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.real.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UserError(
            f"cannot write {target.path}: cannot create a file in "
            f"{folder or tempfile.gettempdir()} ({exc.strerror or exc})"
        ) from exc
    os.close(fd)
    return Path(name)


def _commit(target: _Target, temp: Path, mode: int | None) -> None:
    """Move a complete temporary file into place (or copy it into a special file)."""
    if target.direct:
        for stream in (sys.stdout, sys.stderr):  # what was printed comes first
            stream.flush()
        # the open descriptor itself (its offset is the one the shell's ``>`` file is at)
        sink = open(target.fd, "wb", closefd=False) if target.fd is not None else None  # noqa: SIM115
        with temp.open("rb") as source, sink or target.path.open("ab") as out:
            shutil.copyfileobj(source, out)
        return
    if mode is None:  # a replaced file keeps its mode; a new one gets a normal file's
        exists = target.real.exists()
        mode = stat.S_IMODE(target.real.stat().st_mode) if exists else 0o666 & ~_umask()
    os.chmod(temp, mode)
    os.replace(temp, target.real)


@contextmanager
def output_files(*paths: Path | str, mode: int | None = None) -> Iterator[tuple[Path, ...]]:
    """Yield one temporary path per output path; when the block ends without an error, put
    each in place (see the module's rules), all of them only after the block wrote them all.

    Args:
        paths: The output files, as the user named them.
        mode: Permission bits of the file written (``0o600`` for a secret); by default a
            replaced file keeps its own and a new one gets ``0o666`` less the umask.

    Yields:
        The temporary paths, in the order of ``paths``: write each completely.

    Raises:
        UserError: A path is a folder or its folder is missing, or writing, renaming or
            copying failed (a full disk, a read-only mount, a closed pipe): ``cannot write
            PATH: reason``. The temporary files are removed, old files are left whole.
    """
    targets = [_target(p) for p in paths]
    temps: list[Path] = []
    try:
        for target in targets:
            temps.append(_temp_for(target))
        try:
            yield tuple(temps)
            for target, temp in zip(targets, temps, strict=True):
                _commit(target, temp, mode)
        except OSError as exc:
            named = ", ".join(str(t.path) for t in targets)
            raise UserError(f"cannot write {named}: {exc.strerror or exc}") from exc
    finally:
        for temp in temps:
            temp.unlink(missing_ok=True)


def atomic_write_text(path: Path | str, text: str, *, mode: int | None = None) -> Path:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (:func:`output_files`).

    Returns:
        ``path`` as given.

    Raises:
        UserError: As :func:`output_files`.
    """
    with output_files(path, mode=mode) as (temp,):
        temp.write_text(text, encoding="utf-8")
    return Path(path)


def check_writable(path: Path | str) -> None:
    """Fail early, before long work, when :func:`atomic_write_text` could not write ``path``: a
    folder, a missing folder, or a folder where no file can be created (permissions, a
    read-only mount, /proc). A special file (a device, a pipe) is not opened here.

    Raises:
        UserError: As :func:`output_files`.
    """
    target = _target(path)
    if target.direct:
        if not os.access(target.path, os.W_OK) and target.path.exists():
            raise UserError(f"cannot write {target.path}: permission denied")
        return
    _temp_for(target).unlink(missing_ok=True)


__all__ = ["atomic_write_text", "check_writable", "output_files"]
