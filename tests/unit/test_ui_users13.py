"""A hand-edited user file of the wrong shape (ui13): ``"users"`` a list, or a user that is not
an object. ``orchestrator ui-user`` (and ``orchestrator ui``) ended in a traceback, and the chat
app's sign-in raised on every attempt. Now the command says in one line what the file must
hold, and the app signs in the well-formed users only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_ui_sign_in11 import run_ui_script
from typer.testing import CliRunner

from orchestrator.cli import app

BAD = [{"users": [1, 2]}, {"users": {"bob": 1}}, {"users": "bob"}]


@pytest.mark.parametrize("content", BAD)
def test_ui_user_names_a_user_file_of_the_wrong_shape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: dict
) -> None:
    users = tmp_path / "users.json"
    users.write_text(json.dumps(content))
    monkeypatch.setenv("ORCH_UI_USERS", str(users))
    done = CliRunner().invoke(app, ["ui-user", "ann", "--remove"])
    assert done.exit_code == 2, done.output
    assert "is not a user file" in done.output and "Traceback" not in done.output
    assert len(done.output.strip().splitlines()) == 1


_SCRIPT = """
import asyncio, json
import app
users = json.loads(app.USERS.read_text())["users"]
for shape in ({bad}):
    app.USERS.write_text(json.dumps(shape))
    print("bad", json.dumps(shape), asyncio.run(app.sign_in("bob", "pw-bob")) is None)
app.USERS.write_text(json.dumps({{"users": {{**users, "zed": 1}}}}))
print("mixed", asyncio.run(app.sign_in("bob", "pw-bob")) is not None)
"""


def test_the_app_signs_in_only_well_formed_users(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT.format(bad=", ".join(map(repr, BAD))))
    assert got["mixed"] == "True", got  # bob still signs in beside a broken entry
    assert got["bad"] == '{"users": "bob"} True', got  # the last bad shape; none raised
