"""A person's rights are read from the user file at every request, not kept from the sign-in
(ui/service_client.py ``current``; ui13, tester13 N2). A removed operator kept the console and
approved a refund; a customer moved to another customer id kept acting as the old one. Now
the service token carries the role and customer the file has now, and a person the file no
longer has gets no token (the service answers 401)."""

from __future__ import annotations

from pathlib import Path

from test_ui_sign_in11 import run_ui_script

_SCRIPT = """
import json
import service_client as sc
users = json.loads(sc.USERS.read_text())["users"]
def save():
    sc.USERS.write_text(json.dumps({"users": users}))
users["bob"]["role"], users["bob"]["customer_id"] = "operator", None
save()
print("operator", sc.current("bob")["role"])
users["bob"]["role"], users["bob"]["customer_id"] = "customer", "C00009"  # demoted, moved
save()
print("demoted", sc.current("bob")["role"], sc.current("bob")["customer_id"])
del users["bob"]
save()
print("removed", sc.current("bob")["role"])
sc.me = lambda: sc.current("bob")
print("headers", sc.auth())
"""


def test_rights_follow_the_user_file_while_signed_in(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT)
    assert got["operator"] == "operator"
    assert got["demoted"] == "customer C00009"
    assert got["removed"] == "None"
    assert got["headers"] == "{}", got  # no token: the service answers 401
