"""``POST /api/turn`` reads ``path`` only from the UI's upload folder: ``..``, an absolute path
elsewhere, a symlink out, a folder or a missing file are a 400 that says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from orchestrator.config import Settings
from orchestrator.testing import ScriptedModel
from orchestrator.ui import build_app
from orchestrator.ui.auth import Caller, sign_caller

SECRET = "upload-path-test-secret-0123456789abcdef"


@pytest.fixture
def uploads(tmp_path: Path) -> Path:
    folder = tmp_path / "uploads"
    folder.mkdir()
    (folder / "sub").mkdir()
    (tmp_path / "outside.xlsx").write_bytes(b"PK")
    (folder / "link.xlsx").symlink_to(tmp_path / "outside.xlsx")
    (folder / "sales.xlsx").write_bytes(b"PK")
    return folder


def _client(settings: Settings, uploads: Path) -> TestClient:
    model = ScriptedModel(replies=["ok"])
    token = sign_caller(SECRET, Caller(name="ann", role="customer", customer_id="C00001"))
    return TestClient(
        build_app(settings, client=model, upload_dir=uploads, secret=SECRET),
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../../etc/passwd", "outside the allowed folders"),
        ("/etc/passwd", "outside the allowed folders"),
        ("{uploads}/../outside.xlsx", "outside the allowed folders"),
        ("{uploads}/link.xlsx", "outside the allowed folders"),  # symlink out
        ("{uploads}/sub", "not a file"),
        ("{uploads}/missing.xlsx", "not a file"),
        ("{uploads}/bad\x00name.xlsx", "cannot be resolved"),
    ],
)
def test_a_path_outside_the_upload_folder_is_a_400(
    ui_settings: Settings, uploads: Path, path: str, message: str
) -> None:
    with _client(ui_settings, uploads) as client:
        response = client.post(
            "/api/turn",
            json={"text": "report please", "thread_id": "t", "path": path.format(uploads=uploads)},
        )
    assert response.status_code == 400
    error = response.json()["error"]
    assert message in error and "upload it again" in error
    assert error.count("again") == 1 and "allowed ones" not in error  # one advice, the customer's
    assert "root:" not in error  # nothing of the file is read back


def test_a_file_in_the_upload_folder_is_accepted(ui_settings: Settings, uploads: Path) -> None:
    with _client(ui_settings, uploads) as client:
        response = client.post(
            "/api/turn",
            json={"text": "report please", "thread_id": "t", "path": str(uploads / "sales.xlsx")},
        )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
