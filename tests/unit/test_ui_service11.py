"""The UI service tells a caller nothing that is not theirs (ui11; tester11 kinds D and G).

* a report file (``GET /api/files/...``) is served only to the caller whose turn made it: the
  customer, or the operator by name; anyone else reads the same 404 as for no file;
* the ``done`` event's headline names a report by its file name, never its folder;
* ``GET /api/health`` gives a customer no server address (an operator keeps it);
* an upload is used only from the Chainlit session that uploaded it (the token's ``sid``);
* (G) in ``test_ui_service_auth``: another customer's thread and an unused id read the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from case_tables import cases
from starlette.testclient import TestClient
from test_ui_service_auth import SECRET, _auth

from orchestrator.config import Settings
from orchestrator.testing import ScriptedModel
from orchestrator.ui import build_app
from orchestrator.ui.auth import Caller, sign_caller
from orchestrator.ui.service import UiService, public_event, scrub

ANN, BOB = _auth("customer", "C00001"), _auth("customer", "C00002")
OLGA, OTTO = _auth("operator"), _auth("operator", "x")  # "operator-op" and "operator-x"


def _service(app: Any) -> UiService:
    return next(r.endpoint.__self__ for r in app.routes if r.path == "/api/turn")


def test_a_report_file_is_served_only_to_the_caller_whose_turn_made_it(
    ui_settings: Settings,
) -> None:
    app = build_app(ui_settings, client=ScriptedModel(replies=["ok"]), secret=SECRET)
    reports = ui_settings.report_dir
    reports.mkdir(parents=True, exist_ok=True)
    for name in ("ann.report.md", "ops.report.md"):
        (reports / name).write_text(f"# {name}\n")
    service = _service(app)
    done = {"result": {"markdown": str(reports / "ann.report.md")}}
    service.own.keep_files(done, Caller(name="ann", role="customer", customer_id="C00001"))
    done = {"result": {"markdown": str(reports / "ops.report.md")}}
    service.own.keep_files(done, Caller(name="operator-op", role="operator"))
    with TestClient(app) as client:
        got = {
            (who, name): client.get(f"/api/files/{name}", headers=headers)
            for who, headers in (("ann", ANN), ("bob", BOB), ("olga", OLGA), ("otto", OTTO))
            for name in ("ann.report.md", "ops.report.md", "none.report.md")
        }
    allowed = {("ann", "ann.report.md"), ("olga", "ops.report.md")}
    assert {k for k, r in got.items() if r.status_code == 200} == allowed
    assert got["ann", "ann.report.md"].text == "# ann.report.md\n"
    refused = {r.text for k, r in got.items() if k not in allowed}
    assert len(refused) == 1 and "no such report file of yours" in refused.pop()


@pytest.mark.parametrize(("text", "want"), cases("ui_service_auth.toml", "scrub_relative"))
def test_a_relative_path_is_cut_to_its_file_name(text: str, want: str) -> None:
    assert scrub(text) == want
    done = {"kind": "done", "status": "succeeded", "headline": text, "result": {}}
    operator = Caller(name="o", role="operator")
    assert public_event(done, operator)["headline"] == want


def test_a_customer_reads_no_server_address_in_the_health(
    ui_settings: Settings, fake_vllm: dict[str, float]
) -> None:
    settings = ui_settings.model_copy(update={"server_url": str(fake_vllm["url"])})
    with TestClient(build_app(settings, client=ScriptedModel(), secret=SECRET)) as client:
        customer = client.get("/api/health", headers=ANN)
        operator = client.get("/api/health", headers=OLGA)
    assert customer.status_code == operator.status_code == 200, customer.text
    assert "url" not in customer.json() and "://" not in customer.text
    assert "127.0.0.1" not in customer.text and customer.json()["sample"]
    assert operator.json()["url"].startswith("http://")


def test_an_upload_is_used_only_from_the_session_that_uploaded_it(
    ui_settings: Settings, tmp_path: Path
) -> None:
    """tester11 D: Chainlit keeps a session's uploads in ``.files/<session id>/``; a caller
    whose token names another session (another customer, an operator, or the same customer
    in another session) gets a 403 for that path; the uploading session gets its turn."""
    uploads = tmp_path / "uploads"
    (uploads / "s-bob").mkdir(parents=True)
    (uploads / "s-bob" / "secret.csv").write_text("name,ssn\nbob,1\n")
    app = build_app(ui_settings, client=ScriptedModel(replies=["ok"]), upload_dir=uploads,
                    secret=SECRET)  # fmt: skip
    turn = {"text": "Please summarise the attached sheet", "thread_id": "t-up",
            "path": str(uploads / "s-bob" / "secret.csv")}  # fmt: skip

    def who(role: str, customer: str | None, session: str) -> dict[str, str]:
        caller = Caller(name=f"{role}-{customer}", role=role, customer_id=customer, session=session)  # type: ignore[arg-type]
        return {"Authorization": f"Bearer {sign_caller(SECRET, caller)}"}

    with TestClient(app) as client:
        others = [who("customer", "C00001", "s-ann"), who("operator", None, "s-olga"),
                  who("customer", "C00002", "s-bob-2")]  # fmt: skip
        for headers in others:  # before bob's own turn, and after it
            refused = client.post("/api/turn", json=turn, headers=headers)
            assert refused.status_code == 403, refused.text
            assert refused.json() == {
                "error": "that upload is not one of yours; upload the file again"
            }
        own = client.post("/api/turn", json=turn, headers=who("customer", "C00002", "s-bob"))
        assert own.status_code == 200, own.text
        assert client.post("/api/turn", json=turn, headers=others[0]).status_code == 403
