"""What a path that should be a regular file really is, in words a user can act on.

``Path.is_file()`` is False for a missing path, a folder, ``/dev/null`` (a character
device), a named pipe, a socket and a dangling symlink alike, so commands said "no such file"
for all of them. :func:`file_problem` names which one it is; :func:`require_regular_file`
raises it as a :class:`~orchestrator.exceptions.UserError`. Standard library only (``os``,
``stat``), so any layer may use it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: ``stat`` test -> what the user is told the path is.
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device (like /dev/null or a terminal), not a file"),
    (stat.S_ISBLK, "a block device (a disk), not a file"),
    (stat.S_ISFIFO, "a named pipe (FIFO), not a file"),
    (stat.S_ISSOCK, "a socket, not a file"),
)


def file_problem(path: Path | str) -> str | None:
    """Why ``path`` is not a readable regular file (symlinks followed), or None when it is.

    Examples of the answers: ``does not exist``, ``is a folder``, ``is a character device
    (like /dev/null or a terminal), not a file``, ``is a symlink to /x, which does not
    exist``, ``cannot be read: Permission denied``.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            return f"is a symlink to {os.readlink(path)}, which does not exist"
        return "does not exist"
    except NotADirectoryError:
        return "does not exist (a part of the path before it is a file, not a folder)"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        if not os.access(path, os.R_OK):
            return "cannot be read: Permission denied"
        return None
    for test, kind in _KINDS:
        if test(mode):
            return f"is {kind}"
    return "is not a regular file"
