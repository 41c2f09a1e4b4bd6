"""Errors raised while reading a spreadsheet. Each names the file and says how to fix it.

All are :class:`SpreadsheetError`, a :class:`~orchestrator.exceptions.UserError` (so also a
``ValueError``): :class:`UnsupportedFileError` (not a spreadsheet, wrong extension,
unsupported format), :class:`PasswordProtectedError` (encrypted workbook: OOXML in a CFB
container, BIFF), :class:`CorruptFileError` (a spreadsheet, but damaged or unparseable),
:class:`EmptyWorkbookError` (no sheet has a single value) and
:class:`SpreadsheetTooLargeError` (over a reading limit such as rows or cells; memory stays
bounded). Their place in the project's one error tree is drawn in :mod:`orchestrator.exceptions`.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.exceptions import UserError


class SpreadsheetError(UserError):
    """A spreadsheet could not be read.

    Attributes:
        path: The file.
        problem: What is wrong, in a few words.
        fix: What the user can do about it.
    """

    def __init__(self, path: str | Path, problem: str, fix: str) -> None:
        self.path = Path(path)
        self.problem = problem
        self.fix = fix
        super().__init__(f"{self.path.name}: {problem}. {fix}")


class UnsupportedFileError(SpreadsheetError):
    """The file is not a spreadsheet this reader supports, or its extension lies about it."""


class PasswordProtectedError(SpreadsheetError):
    """The workbook is encrypted with a password."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            path,
            "the workbook is password-protected (encrypted)",
            "Remove the password in Excel (File > Info > Protect Workbook > Encrypt with "
            "Password, clear it) and send the file again",
        )


class CorruptFileError(SpreadsheetError):
    """The file claims to be a spreadsheet but cannot be parsed."""


class EmptyWorkbookError(SpreadsheetError):
    """No sheet holds any value."""


class SpreadsheetTooLargeError(SpreadsheetError):
    """A reading limit was hit; nothing partial is returned."""
