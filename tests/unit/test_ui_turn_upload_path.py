"""``POST /api/turn`` reads ``path`` only from the UI's upload folder: ``..``, an absolute path
elsewhere, a symlink out, a folder or a missing file are a 400 that says why; a file of the
upload folder outside the caller's own session folder (Chainlit: ``.files/<session id>/``,
the token's ``sid``) is a 403 (tester11 D)."""

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
    (folder / "sales.xlsx").write_bytes(b"PK")  # in no session's folder
    (folder / "s-ann").mkdir()
    (folder / "s-ann" / "sales.xlsx").write_bytes(b"PK")
    return folder


def _client(settings: Settings, uploads: Path) -> TestClient:
    model = ScriptedModel(replies=["ok"])
    ann = Caller(name="ann", role="customer", customer_id="C00001", session="s-ann")
    token = sign_caller(SECRET, ann)
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
            json={
                "text": "report please",
                "thread_id": "t",
                "path": str(uploads / "s-ann" / "sales.xlsx"),
            },
        )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")


def test_an_upload_is_used_only_from_the_session_that_uploaded_it(
    ui_settings: Settings, uploads: Path
) -> None:
    """tester11 D: any customer could run a report on another session's upload by its path.
    Only the session whose folder holds the file may use it (the token's ``sid``): another
    customer, an operator, the same customer in another session, a token naming no session,
    and any caller for a file in no session's folder get a 403; the owner's session a 200."""
    (uploads / "sess-of-bob").mkdir()
    secret = uploads / "sess-of-bob" / "secret.xlsx"
    secret.write_bytes(b"PK")
    app = build_app(
        ui_settings, client=ScriptedModel(replies=["ok"]), upload_dir=uploads, secret=SECRET
    )
    people = {
        name: {"Authorization": f"Bearer {sign_caller(SECRET, Caller(name=name, **who))}"}
        for name, who in (
            ("bob", {"role": "customer", "customer_id": "C00002", "session": "sess-of-bob"}),
            ("bob-elsewhere", {"role": "customer", "customer_id": "C00002", "session": "s-2"}),
            ("ann", {"role": "customer", "customer_id": "C00001", "session": "s-ann"}),
            ("olga", {"role": "operator", "session": "s-olga"}),
            ("no-session", {"role": "customer", "customer_id": "C00002"}),
        )
    }
    turn = {"text": "Please summarise the attached sheet", "thread_id": "t", "path": str(secret)}
    loose = {**turn, "path": str(uploads / "sales.xlsx")}  # in no session's folder
    with TestClient(app) as client:
        for other in ("ann", "olga", "bob-elsewhere", "no-session"):
            refused = client.post("/api/turn", json=turn, headers=people[other])
            assert refused.status_code == 403, (other, refused.text)
            assert "not one of yours" in refused.json()["error"]
        assert client.post("/api/turn", json=turn, headers=people["bob"]).status_code == 200
        assert client.post("/api/turn", json=loose, headers=people["bob"]).status_code == 403
        assert client.post("/api/turn", json=turn, headers=people["ann"]).status_code == 403
