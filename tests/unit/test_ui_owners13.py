"""A report file's owner record lives as long as the file (orchestrator.ui.owners; ui13,
closing11). Until ui13 the records in ``<reports>/.owners/`` were never removed: one per report
file ever written, kept after the file was deleted. Now a deleted file's record goes at the
service's next start (the sweep) or at the next request for the file; a file still there keeps
its owner."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient
from test_ui_owners12 import _app, bob

from orchestrator.config import Settings
from orchestrator.ui.auth import Caller
from orchestrator.ui.owners import Ownership

BOB = Caller(name="bob", role="customer", customer_id="C00002", session="s-bob")


def _reports(folder: Path, *names: str) -> Ownership:
    own = Ownership(folder / "uploads", folder / "reports", {})
    own.reports.mkdir(parents=True, exist_ok=True)
    for name in names:
        (own.reports / name).write_text("report")
        own.files.bind(name, BOB.key)
    return own


def test_a_deleted_reports_record_goes_with_it_and_a_kept_one_stays(tmp_path: Path) -> None:
    own = _reports(tmp_path, "a.report.md", "b.report.md", "c.report.md")
    (own.reports / "a.report.md").unlink()
    (own.files.root / "stray.tmp").write_text("")  # not a record: never touched
    assert own.sweep_reports() == 1
    assert own.files.owner("a.report.md") is None
    assert own.files.owner("b.report.md") == BOB.key
    assert own.report_file(BOB, "b.report.md") == (own.reports / "b.report.md").resolve()
    (own.reports / "c.report.md").unlink()  # deleted while the service runs
    assert own.report_file(BOB, "c.report.md") is None
    assert own.files.owner("c.report.md") is None  # its record went at the request
    assert sorted(p.name for p in own.files.root.iterdir()) == sorted(
        [own.files._record("b.report.md").name, "stray.tmp"]
    )
    assert Ownership(tmp_path / "u", tmp_path / "none", {}).sweep_reports() == 0


def test_the_service_sweeps_when_it_starts(ui_settings: Settings, tmp_path: Path) -> None:
    own = _reports(tmp_path, "gone.report.md", "kept.report.md")
    settings = ui_settings.model_copy(update={"report_dir": own.reports})
    (own.reports / "gone.report.md").unlink()
    with TestClient(_app(settings, tmp_path / "uploads")) as client:
        assert own.files.owner("gone.report.md") is None
        assert client.get("/api/files/kept.report.md", headers=bob()).status_code == 200
