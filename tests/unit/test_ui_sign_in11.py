"""Sign-in of the Chat UI (ui/app.py) (cs11; tester11 K, auth). An unknown user name was checked
against a dummy bcrypt hash of 4 rounds while the users' hashes have 12, so a wrong password
for a known name took ~0.8 s and an unknown name ~0.01 s: names could be enumerated by timing.
And guessing was unlimited. Now the dummy hash has the rounds of the user file's hashes, and a
name with 5 failed sign-ins in 5 minutes from one client address is refused there, right
password or not (another name is not; another address: test_ui_sign_in12). Run in the .venv-ui
python (Chainlit); no timing is asserted (the rounds are)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import bcrypt
import pytest

from orchestrator.config import Settings

PYTHON = Settings().ui_chainlit.parent / "python"
UI = Path(__file__).resolve().parents[2] / "ui"
_SCRIPT = """
import asyncio
import app
def sign_in(name, password):
    return asyncio.run(app.sign_in(name, password))
dummy = app._dummy_hash(app._cost(app.read_users()))
print("rounds", dummy.decode()[4:6])
print("known", sign_in("ann", "right") is not None)
print("fails", [sign_in("ann", f"wrong{n}") is None for n in range(5)])
print("after", sign_in("ann", "right") is None, sign_in("bob", "pw-bob") is not None)
print("unknown", sign_in("zed", "x") is None)
"""


def run_ui_script(tmp_path: Path, script: str) -> dict[str, str]:
    """Run ``script`` in the .venv-ui python in ``ui/`` with a user file of ann (``right``)
    and bob (``pw-bob``), customers, hashed with 6 rounds; its ``key value`` lines."""
    if not PYTHON.exists():
        pytest.skip(f"no .venv-ui python at {PYTHON}: scripts/install.sh builds it")
    salt = bcrypt.gensalt(6)  # the file's rounds (6: quick here); the dummy must follow them
    users = {
        "ann": {"password_hash": bcrypt.hashpw(b"right", salt).decode(), "role": "customer",
                "customer_id": "C00001"},
        "bob": {"password_hash": bcrypt.hashpw(b"pw-bob", salt).decode(), "role": "customer",
                "customer_id": "C00002"},
    }  # fmt: skip
    (tmp_path / "users.json").write_text(json.dumps({"users": users}))
    env = {
        **os.environ,
        "ORCH_UI_USERS": str(tmp_path / "users.json"),
        "CHAINLIT_AUTH_SECRET": "sign-in-test-secret-0123456789abcdef",
    }
    out = subprocess.run(
        [str(PYTHON), "-c", script], cwd=UI, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return dict(line.split(" ", 1) for line in out.stdout.strip().splitlines())


def test_unknown_names_cost_as_much_and_guessing_is_limited(tmp_path: Path) -> None:
    assert run_ui_script(tmp_path, _SCRIPT) == {
        "rounds": "06",
        "known": "True",
        "fails": "[True, True, True, True, True]",
        "after": "True True",
        "unknown": "True",
    }
