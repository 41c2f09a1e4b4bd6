"""``Settings.attachment_dirs`` (``ORCH_ATTACHMENT_DIRS``) and its use by the excel_report
workflow's :meth:`ReportConfig.from_settings`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pydantic
import pytest

from orchestrator.config import Settings
from workflows.excel_report.graph import ReportConfig, default_attachment_dirs


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ORCH_ATTACHMENT_DIRS", raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env file


def _dirs(tmp_path: Path, *names: str) -> list[Path]:
    out = []
    for name in names:
        (tmp_path / name).mkdir()
        out.append(tmp_path / name)
    return out


def test_default_is_empty_and_report_uses_the_built_in_folders() -> None:
    settings = Settings()
    assert settings.attachment_dirs == ()
    assert ReportConfig.from_settings(settings).attachment_dirs == default_attachment_dirs()


@pytest.mark.parametrize("form", ["json", "pathsep"])
def test_environment_forms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, form: str) -> None:
    a, b = _dirs(tmp_path, "uploads", "shared dir")
    value = json.dumps([str(a), str(b)]) if form == "json" else f"{a}{os.pathsep}{b}"
    monkeypatch.setenv("ORCH_ATTACHMENT_DIRS", value)
    settings = Settings()
    assert settings.attachment_dirs == (a, b)
    config = ReportConfig.from_settings(settings)
    assert config.attachment_dirs == (*default_attachment_dirs(), a, b)


def test_keyword_form_accepts_paths_and_strings(tmp_path: Path) -> None:
    (a,) = _dirs(tmp_path, "in")
    assert Settings(attachment_dirs=[str(a)]).attachment_dirs == (a,)
    assert Settings(attachment_dirs=(a,)).attachment_dirs == (a,)
    assert Settings(attachment_dirs="").attachment_dirs == ()


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    (good,) = _dirs(tmp_path, "ok")
    missing = tmp_path / "nope"
    with pytest.raises(pydantic.ValidationError) as info:
        Settings(attachment_dirs=[good, missing])
    message = str(info.value)
    assert f"{missing} does not exist" in message and "ORCH_ATTACHMENT_DIRS" in message
    assert str(good) + " " not in message  # only the bad folder is named


def test_a_file_is_not_a_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    file = tmp_path / "book.xlsx"
    file.write_bytes(b"x")
    monkeypatch.setenv("ORCH_ATTACHMENT_DIRS", str(file))
    with pytest.raises(pydantic.ValidationError, match="is not a folder"):
        Settings()


def test_malformed_json_list_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORCH_ATTACHMENT_DIRS", '["/tmp", ')
    with pytest.raises(pydantic.ValidationError, match="not a JSON list"):
        Settings()
