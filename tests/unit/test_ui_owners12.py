"""What the UI service keeps for one person stays theirs after it restarts (ui12).

Who owned an upload session and a report file was held in the service's memory: after a
restart the owner could no longer fetch their report, and, since Chainlit lets a browser choose
its session id, another customer naming the old session id could use its uploads. Now both are
recorded on disk (``orchestrator.ui.owners.OwnerRecords``): across a restart the owner keeps
them and anyone else reads the same 403/404 as before."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from test_ui_service import _hostile_sales
from test_ui_service_auth import SECRET

from orchestrator.config import Settings
from orchestrator.testing import ScriptedModel
from orchestrator.ui import build_app
from orchestrator.ui.auth import Caller, sign_caller
from orchestrator.ui.owners import OwnerRecords

REPORT_JSON = json.dumps({"findings": [], "title": "t", "summary": "s", "sections": []})


def _as(name: str, role: str, customer: str | None, session: str | None) -> dict[str, str]:
    caller = Caller(name=name, role=role, customer_id=customer, session=session)  # type: ignore[arg-type]
    return {"Authorization": f"Bearer {sign_caller(SECRET, caller)}"}


# Headers are signed when a test runs, not at collection: a token lives TOKEN_TTL_S (300 s),
# and the full suite reaches this file more than five minutes after collecting it.
def bob() -> dict[str, str]:
    return _as("bob", "customer", "C00002", "s-bob")


def ann_as_bobs_session() -> dict[str, str]:
    """ann after a restart of the app, her browser naming bob's old session id."""
    return _as("ann", "customer", "C00001", "s-bob")


def ann() -> dict[str, str]:
    return _as("ann", "customer", "C00001", "s-ann")


def olga() -> dict[str, str]:
    return _as("olga", "operator", None, "s-olga")


def _app(settings: Settings, uploads: Path) -> Any:
    model = ScriptedModel(json_reply=REPORT_JSON)
    return build_app(settings, client=model, upload_dir=uploads, secret=SECRET)


def test_an_upload_and_its_report_stay_their_owners_across_a_restart(
    ui_settings: Settings, tmp_path: Path
) -> None:
    uploads = tmp_path / "uploads"
    (uploads / "s-bob").mkdir(parents=True)
    sheet = _hostile_sales(uploads / "s-bob" / "sales.xlsx")
    turn = {"text": "Summarise the attached spreadsheet", "thread_id": "t", "path": str(sheet)}
    with TestClient(_app(ui_settings, uploads)) as client:
        answer = client.post("/api/turn", json=turn, headers=bob())
        assert answer.status_code == 200, answer.text
    events = [json.loads(line) for line in answer.text.splitlines() if line.strip()]
    done = next(e for e in events if e["kind"] == "done")
    assert done["status"] == "succeeded", done
    names = [done["result"]["markdown"], done["result"]["xlsx"]]
    assert all("/" not in n and (ui_settings.report_dir / n).is_file() for n in names)
    with TestClient(_app(ui_settings, uploads)) as client:  # the service restarted
        for name in names:
            assert client.get(f"/api/files/{name}", headers=bob()).status_code == 200, name
            for other in (ann(), ann_as_bobs_session(), olga()):
                refused = client.get(f"/api/files/{name}", headers=other)
                assert refused.status_code == 404, refused.text
                assert refused.json() == {
                    "error": "no such report file of yours; run the report again"
                }
        refused = client.post("/api/turn", json=turn, headers=ann_as_bobs_session())
        assert refused.status_code == 403, refused.text
        assert "not one of yours" in refused.json()["error"]
        assert client.post("/api/turn", json=turn, headers=bob()).status_code == 200


def _bind(args: tuple[str, str]) -> str:
    folder, key = args
    return OwnerRecords(Path(folder)).bind("s-1", key)


def test_racing_processes_record_one_owner(tmp_path: Path) -> None:
    keys = [f"customer:C{n:05d}" for n in range(8)]
    with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("fork")) as pool:
        owners = list(pool.map(_bind, [(str(tmp_path), k) for k in keys]))
    records = OwnerRecords(tmp_path)
    assert len(set(owners)) == 1 and owners[0] in keys
    assert records.owner("s-1") == owners[0] and records.owner("s-2") is None
    assert [p.name for p in records.root.iterdir() if p.suffix == ".tmp"] == []
    assert records.bind("s-1", "customer:other") == owners[0]  # the first owner stays
