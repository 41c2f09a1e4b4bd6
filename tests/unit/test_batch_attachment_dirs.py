"""A batch's attachments folder is an allowed attachment folder of its excel report workflow
(:meth:`SettingsFactory.workflows`), even outside the working, data and temporary folders; a
path outside it (``..``, a symlink out) is still refused."""

from __future__ import annotations

import pickle
import tempfile
from pathlib import Path

import pytest

from orchestrator.batch.factory import SettingsFactory
from orchestrator.config import Settings
from orchestrator.exceptions import UserError
from orchestrator.request import resolve_attachment_path
from workflows import ExcelReportWorkflow


@pytest.fixture
def folders(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    """Working, data and temporary folders that do not contain ``attachments`` or ``elsewhere``."""
    out = {n: tmp_path / n for n in ("work", "data", "systmp", "attachments", "elsewhere")}
    for folder in out.values():
        folder.mkdir()
    monkeypatch.chdir(out["work"])
    monkeypatch.setenv("ORCH_DATA_DIR", str(out["data"]))
    monkeypatch.delenv("ORCH_ATTACHMENT_DIRS", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(out["systmp"]))
    (out["attachments"] / "sales.xlsx").write_bytes(b"PK")
    (out["elsewhere"] / "secret.xlsx").write_bytes(b"PK")
    (out["attachments"] / "link.xlsx").symlink_to(out["elsewhere"] / "secret.xlsx")
    return out


def _report_dirs(factory: SettingsFactory) -> tuple[Path, ...]:
    (report,) = [w for w in factory.workflows() if isinstance(w, ExcelReportWorkflow)]
    return report.config.attachment_dirs


def test_the_batch_attachments_folder_is_allowed_and_nothing_outside_it(
    folders: dict[str, Path],
) -> None:
    factory = SettingsFactory(Settings(), check=False, attachment_dirs=[folders["attachments"]])
    allowed = _report_dirs(factory)
    inside = folders["attachments"] / "sales.xlsx"
    assert resolve_attachment_path(inside, allowed) == inside.resolve()
    for hostile in (
        folders["elsewhere"] / "secret.xlsx",
        folders["attachments"] / ".." / "elsewhere" / "secret.xlsx",
        folders["attachments"] / "link.xlsx",  # a symlink out of the folder
    ):
        with pytest.raises(UserError, match="outside the allowed folders"):
            resolve_attachment_path(hostile, allowed)
    # the other workflows are the defaults, one per route
    assert len(factory.workflows()) == 3


def test_without_the_batch_folder_the_attachment_is_refused(folders: dict[str, Path]) -> None:
    allowed = _report_dirs(SettingsFactory(Settings(), check=False))
    with pytest.raises(UserError, match="outside the allowed folders"):
        resolve_attachment_path(folders["attachments"] / "sales.xlsx", allowed)


def test_the_folder_survives_pickling_for_ray_workers(folders: dict[str, Path]) -> None:
    factory = SettingsFactory(Settings(), check=False, attachment_dirs=[folders["attachments"]])
    copy = pickle.loads(pickle.dumps(factory))
    assert copy.attachment_dirs == (folders["attachments"],)
    assert folders["attachments"] in _report_dirs(copy)
