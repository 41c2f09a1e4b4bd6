"""The UI service tells a caller nothing that is not theirs (ui11; tester11 kinds D and G).

* a report file (``GET /api/files/...``) is served only to the caller whose turn made it: the
  customer, or the operator by name; anyone else reads the same 404 as for no file;
* the ``done`` event's headline names a report by its file name, never its folder;
* ``GET /api/health`` gives a customer no server address (an operator keeps it);
* (G) in ``test_ui_service_auth``: another customer's thread and an unused id read the same.
"""

from __future__ import annotations

from typing import Any

import pytest
from case_tables import cases
from starlette.testclient import TestClient
from test_ui_service_auth import SECRET, _auth

from orchestrator.config import Settings
from orchestrator.testing import ScriptedModel
from orchestrator.ui import build_app
from orchestrator.ui.auth import Caller
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
    service.keep_files(done, Caller(name="ann", role="customer", customer_id="C00001"))
    done = {"result": {"markdown": str(reports / "ops.report.md")}}
    service.keep_files(done, Caller(name="operator-op", role="operator"))
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
